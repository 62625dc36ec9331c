/**
 * Merging near-duplicate entries (slim) and undoing a merge, each in one transaction.
 */
import type { WriteAccess } from '../../core/principal.js'
import { sql } from '../sql.js'
import { COLUMNS, embeddingSql, insertRecord, manageableSql, toRecord, type KnowledgeContext, type KnowledgeRecord, type SearchDocument } from './rows.js'

/** The merge queries of the knowledge store. */
export interface KnowledgeMergeQueries {
  /**
   * Merges `originalIds` into the new entry `merged` in one transaction: marks the originals
   * `merged` with `merged_into` (only those still active and that the caller may change
   * (`access`): otherwise nothing changes), inserts the merged entry with `helpful`/`harmful` set to the sums of the
   * originals' counters read under lock, keeps each original's text as a version of the
   * merged entry (`merged from <id>`), and copies their feedback rows to it in order.
   * Returns the stored merged record, or `{ conflict }` when nothing was changed.
   */
  merge(
    merged: { record: KnowledgeRecord; doc: SearchDocument; embedding: Float32Array | undefined },
    originalIds: readonly string[],
    access: WriteAccess,
  ): Promise<KnowledgeRecord | { conflict: 'originals_changed' | 'id_taken' }>
  /** The entries merged into `id` that the caller can see, and how many there are in all. */
  mergedFrom(id: string, visible: readonly string[]): Promise<{ records: KnowledgeRecord[]; total: number }>
  /**
   * Undoes a merge in one transaction: the originals become active again (`merged_into`
   * cleared) and the merged entry is archived. Returns false, changing nothing, unless
   * every one of `originalIds` is still merged into `id`, `id` is active, and the caller may
   * change all of them (`access`).
   */
  unmerge(id: string, originalIds: readonly string[], access: WriteAccess, at: Date): Promise<boolean>
}

/** Thrown inside a transaction to roll it back; never escapes this module. */
class Rollback {
  constructor(readonly reason: 'originals_changed' | 'id_taken') {}
}

/**
 * The merge queries over a database.
 * @example
 * const result = await mergeQueries({ db, getDialect }).merge({ record, doc, embedding }, [a, b], writeAccess(principal))
 */
export function mergeQueries({ db, getDialect }: KnowledgeContext): KnowledgeMergeQueries {
  return {
    async merge(merged, originalIds, access) {
      try {
        return await db.transaction(async (tx) => {
          const id = merged.record.id
          const marked = await tx.query<{
            helpful: number
            harmful: number
            harmful_weight: number
          }>(sql`UPDATE knowledge k SET status = 'merged', merged_into = ${id}
            WHERE k.id = ANY(${originalIds}::text[]) AND k.status = 'active' AND ${manageableSql(access)}
            RETURNING k.helpful, k.harmful, k.harmful_weight`)
          if (marked.length !== new Set(originalIds).size) throw new Rollback('originals_changed')
          const record: KnowledgeRecord = {
            ...merged.record,
            helpful: marked.reduce((sum, row) => sum + Number(row.helpful), 0),
            harmful: marked.reduce((sum, row) => sum + Number(row.harmful), 0),
            harmful_weight: marked.reduce((sum, row) => sum + Number(row.harmful_weight), 0),
          }
          if (!(await insertRecord(tx, record, merged.doc, embeddingSql(getDialect(), merged.embedding), sql`ON CONFLICT (id) DO NOTHING`))) {
            throw new Rollback('id_taken')
          }
          await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
            SELECT ${id}, o.n, k.task, k.content, k.types, k.tags, k.scopes, k.resource_ids, 'merged from ' || k.id, k.updated_at
            FROM unnest(${originalIds}::text[]) WITH ORDINALITY AS o(id, n) JOIN knowledge k ON k.id = o.id`)
          await tx.query(sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, giver, created_at)
            SELECT ${id}, f.kind, f.body, f.giver, f.created_at
            FROM unnest(${originalIds}::text[]) WITH ORDINALITY AS o(id, n) JOIN knowledge_feedback f ON f.knowledge_id = o.id
            ORDER BY o.n, f.seq`)
          return record
        })
      } catch (error) {
        if (error instanceof Rollback) return { conflict: error.reason }
        throw error
      }
    },

    async mergedFrom(id, visible) {
      const rows = await db.query(
        sql`SELECT ${COLUMNS}, (k.scopes && ${visible}::text[]) AS visible FROM knowledge k WHERE k.merged_into = ${id} ORDER BY k.id`,
      )
      return { records: rows.filter((row) => row.visible === true).map(toRecord), total: rows.length }
    },

    async unmerge(id, originalIds, access, at) {
      try {
        return await db.transaction(async (tx) => {
          const restored = await tx.query(sql`UPDATE knowledge k SET status = 'active', merged_into = NULL
            WHERE k.merged_into = ${id} AND k.status = 'merged' AND k.id = ANY(${originalIds}::text[]) AND ${manageableSql(access)}
            RETURNING k.id`)
          const remaining = await tx.query(sql`SELECT 1 FROM knowledge WHERE merged_into = ${id} LIMIT 1`)
          if (restored.length !== new Set(originalIds).size || remaining.length > 0) throw new Rollback('originals_changed')
          const archived = await tx.query(sql`UPDATE knowledge k SET status = 'archived', updated_at = ${at.toISOString()}
            WHERE k.id = ${id} AND k.status = 'active' AND ${manageableSql(access)} RETURNING k.id`)
          if (archived.length !== 1) throw new Rollback('originals_changed')
          return true
        })
      } catch (error) {
        if (error instanceof Rollback) return false
        throw error
      }
    },
  }
}
