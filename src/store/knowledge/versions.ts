/**
 * Version history of knowledge entries: every edit, evolve or merge keeps the previous text.
 */
import type { KnowledgeVersion } from '../../core/knowledge.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import type { KnowledgeContext } from './rows.js'

/** The version queries of the knowledge store. */
export interface KnowledgeVersionQueries {
  /** An entry's earlier versions, oldest first. */
  versions(id: string): Promise<KnowledgeVersion[]>
  /** The earlier versions of several entries (one query), oldest first; an entry without any is absent from the map. */
  versionsOf(ids: readonly string[]): Promise<Map<string, KnowledgeVersion[]>>
}

/** Inserts one given version row (import). */
export async function insertVersion(q: Queryable, id: string, v: KnowledgeVersion): Promise<void> {
  await q.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
    VALUES (${id}, ${v.version}, ${v.task}, ${v.content}, ${v.types}::text[], ${JSON.stringify(v.tags)}::jsonb, ${v.scopes}::text[],
      ${v.resource_ids}::text[], ${v.reason}, ${v.created_at})`)
}

/**
 * Keeps an entry's current text as a version, if it is visible and still at
 * `expectedVersion`; false (nothing kept) otherwise.
 */
export async function keepCurrentVersion(q: Queryable, id: string, visible: readonly string[], expectedVersion: number, reason: string): Promise<boolean> {
  const saved = await q.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
    SELECT id, version, task, content, types, tags, scopes, resource_ids, ${reason}, updated_at FROM knowledge
    WHERE id = ${id} AND version = ${expectedVersion} AND scopes && ${visible}::text[]
    RETURNING version`)
  return saved.length > 0
}

/**
 * The version queries over a database.
 * @example
 * const history = await versionQueries({ db, getDialect }).versions(id)
 */
export function versionQueries({ db, reads }: KnowledgeContext): KnowledgeVersionQueries {
  const reader = reads ?? db
  return {
    async versions(id) {
      const rows = await reader.query(sql`SELECT version, task, content, types, tags, scopes, resource_ids, reason, created_at
        FROM knowledge_version WHERE knowledge_id = ${id} ORDER BY version`)
      return rows.map((row) => ({ ...(row as unknown as KnowledgeVersion), created_at: new Date(row.created_at as string).toISOString() }))
    },
    async versionsOf(ids) {
      const out = new Map<string, KnowledgeVersion[]>()
      if (ids.length === 0) return out
      const rows = await reader.query(sql`SELECT knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at
        FROM knowledge_version WHERE knowledge_id = ANY(${[...ids]}::text[]) ORDER BY knowledge_id, version`)
      for (const row of rows) {
        const { knowledge_id: id, ...rest } = row as unknown as KnowledgeVersion & { knowledge_id: string }
        const version = { ...rest, created_at: new Date(row.created_at as string).toISOString() }
        const list = out.get(id)
        if (list) list.push(version)
        else out.set(id, [version])
      }
      return out
    },
  }
}
