/**
 * Import of knowledge entries with their histories and versions, in batches, all or
 * nothing or batch by batch.
 */
import type { FeedbackRecord, KnowledgeVersion } from '../../core/knowledge.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import { insertFeedback } from './feedback.js'
import { embeddingSql, insertRecord, type KnowledgeContext, type KnowledgeRecord, type SearchDocument } from './rows.js'
import { insertVersion } from './versions.js'

/** One entry to import, with everything an export line carries. */
export interface ImportItem {
  record: KnowledgeRecord
  doc: SearchDocument
  embedding: Float32Array | undefined
  helpful_history: FeedbackRecord[]
  harmful_history: FeedbackRecord[]
  versions: KnowledgeVersion[]
  /** Replace an existing entry with the same id. */
  replace: boolean
}

/** The import query of the knowledge store. */
export interface KnowledgeImportQueries {
  /**
   * Inserts entries with their histories and versions (import). With `atomic`, all batches
   * run in one transaction (all or nothing); otherwise each batch commits on its own.
   */
  importBatches(batches: AsyncIterable<ImportItem[]>, atomic: boolean): Promise<number>
}

/**
 * The import query over a database.
 * @example
 * const imported = await importQueries({ db, getDialect }).importBatches(batches, true)
 */
export function importQueries({ db, getDialect }: KnowledgeContext): KnowledgeImportQueries {
  const insertBatch = async (tx: Queryable, items: ImportItem[]): Promise<void> => {
    for (const item of items) {
      const r = item.record
      if (item.replace) await tx.query(sql`DELETE FROM knowledge WHERE id = ${r.id}`)
      await insertRecord(tx, r, item.doc, embeddingSql(getDialect(), item.embedding), sql.empty)
      const at = r.updated_at.toISOString()
      for (const body of item.helpful_history) await insertFeedback(tx, r.id, 'helpful', body, at)
      for (const body of item.harmful_history) await insertFeedback(tx, r.id, 'harmful', body, at)
      for (const v of item.versions) await insertVersion(tx, r.id, v)
    }
  }
  return {
    async importBatches(batches, atomic) {
      let count = 0
      if (atomic) {
        await db.transaction(async (tx) => {
          for await (const items of batches) {
            await insertBatch(tx, items)
            count += items.length
          }
        })
      } else {
        for await (const items of batches) {
          await db.transaction((tx) => insertBatch(tx, items))
          count += items.length
        }
      }
      return count
    },
  }
}
