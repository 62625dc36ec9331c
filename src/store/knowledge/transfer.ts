/**
 * Import of knowledge entries with their histories and versions, in batches, all or
 * nothing or batch by batch.
 */
import type { FeedbackRecord, KnowledgeVersion } from '../../core/knowledge.js'
import type { Queryable } from '../database.js'
import { sql, type Sql } from '../sql.js'
import type { VectorDialect } from '../vectors.js'
import { insertFeedback } from './feedback.js'
import { embeddingSql, insertRecords, type KnowledgeContext, type KnowledgeRecord, type SearchDocument } from './rows.js'
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

/**
 * pgvector's binary input (`vector_recv`: dimension and an unused word as int16, then each
 * float4, big-endian): the same stored values as the text form (a non-finite component is
 * stored as 0, as there), without formatting ~10 kB of decimals per entry here and parsing
 * them in the server (0.4 ms of an entry's ~0.9 ms of import CPU in this process).
 */
export function vectorBinary(vector: Float32Array): Buffer {
  const buffer = Buffer.allocUnsafe(4 + 4 * vector.length)
  buffer.writeInt16BE(vector.length, 0)
  buffer.writeInt16BE(0, 2)
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i]!
    buffer.writeFloatBE(Number.isFinite(value) ? value : 0, 4 + 4 * i)
  }
  return buffer
}

/**
 * An imported embedding as a parameter: binary on a PostgreSQL server with pgvector (node-pg
 * sends a Buffer in binary format), else the dialect's text form (PGlite, `real[]`).
 */
function importedEmbedding(kind: 'pglite' | 'postgres', dialect: VectorDialect | undefined, embedding: Float32Array | undefined): Sql | undefined {
  if (kind === 'postgres' && dialect?.backend === 'pgvector' && embedding) return sql`${vectorBinary(embedding)}::vector`
  return embeddingSql(dialect, embedding)
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
  // One DELETE for the replaced entries, multi-row INSERTs for the rows, then histories and versions.
  const insertBatch = async (tx: Queryable, items: ImportItem[]): Promise<void> => {
    const replaced = items.filter((item) => item.replace).map((item) => item.record.id)
    if (replaced.length > 0) await tx.query(sql`DELETE FROM knowledge WHERE id = ANY(${replaced}::text[])`)
    const dialect = getDialect()
    await insertRecords(
      tx,
      items.map((item) => ({ record: item.record, doc: item.doc, embedding: importedEmbedding(db.kind, dialect, item.embedding) })),
      dialect !== undefined,
    )
    for (const item of items) {
      const r = item.record
      const at = r.updated_at.toISOString()
      for (const body of item.helpful_history) await insertFeedback(tx, r.id, 'helpful', body, at)
      for (const body of item.harmful_history) await insertFeedback(tx, r.id, 'harmful', body, at)
      for (const v of item.versions) await insertVersion(tx, r.id, v)
    }
  }
  // The next batch is prepared (parsed, embedded: CPU in this process) while the database
  // inserts the current one; a failure of either stops the import.
  const eachBatch = async (batches: AsyncIterable<ImportItem[]>, insert: (items: ImportItem[]) => Promise<void>): Promise<number> => {
    const iterator = batches[Symbol.asyncIterator]()
    let count = 0
    let next = iterator.next()
    for (;;) {
      const current = await next
      if (current.done) return count
      const inserted = insert(current.value)
      next = iterator.next()
      // Seen by `await next` on the next turn; not an unhandled rejection meanwhile.
      next.catch(() => {})
      try {
        await inserted
      } catch (error) {
        await iterator.return?.()
        throw error
      }
      count += current.value.length
    }
  }
  return {
    async importBatches(batches, atomic) {
      if (atomic) return db.transaction((tx) => eachBatch(batches, (items) => insertBatch(tx, items)))
      return eachBatch(batches, (items) => db.transaction((tx) => insertBatch(tx, items)))
    },
  }
}
