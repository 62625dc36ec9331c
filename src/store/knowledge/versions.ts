/**
 * Version history of knowledge entries: every edit, evolve or merge keeps the previous text.
 */
import type { KnowledgeVersion } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import { manageableSql, type KnowledgeContext } from './rows.js'

/** The version queries of the knowledge store. */
export interface KnowledgeVersionQueries {
  /** The earlier versions of an entry visible through `visible`, oldest first (none for an entry it cannot see). */
  versions(id: string, visible: readonly string[]): Promise<KnowledgeVersion[]>
  /** The earlier versions of the visible entries of `ids` (one query), oldest first; an entry without any is absent from the map. */
  versionsOf(ids: readonly string[], visible: readonly string[]): Promise<Map<string, KnowledgeVersion[]>>
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
export async function keepCurrentVersion(q: Queryable, id: string, access: WriteAccess, expectedVersion: number, reason: string): Promise<boolean> {
  const saved = await q.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
    SELECT k.id, k.version, k.task, k.content, k.types, k.tags, k.scopes, k.resource_ids, ${reason}, k.updated_at FROM knowledge k
    WHERE k.id = ${id} AND k.version = ${expectedVersion} AND ${manageableSql(access)}
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
    async versions(id, visible) {
      const rows = await reader.query(sql`SELECT v.version, v.task, v.content, v.types, v.tags, v.scopes, v.resource_ids, v.reason, v.created_at
        FROM knowledge_version v JOIN knowledge k ON k.id = v.knowledge_id
        WHERE v.knowledge_id = ${id} AND k.scopes && ${visible}::text[] ORDER BY v.version`)
      return rows.map((row) => ({ ...(row as unknown as KnowledgeVersion), created_at: new Date(row.created_at as string).toISOString() }))
    },
    async versionsOf(ids, visible) {
      const out = new Map<string, KnowledgeVersion[]>()
      if (ids.length === 0) return out
      const rows = await reader.query(sql`SELECT v.knowledge_id, v.version, v.task, v.content, v.types, v.tags, v.scopes, v.resource_ids, v.reason, v.created_at
        FROM knowledge_version v JOIN knowledge k ON k.id = v.knowledge_id
        WHERE v.knowledge_id = ANY(${[...ids]}::text[]) AND k.scopes && ${visible}::text[] ORDER BY v.knowledge_id, v.version`)
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
