/**
 * Import of knowledge entries with their histories and versions, in batches, all or
 * nothing or batch by batch.
 */
import { KnowHubError } from '../../core/errors.js'
import type { FeedbackRecord, KnowledgeVersion } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { Queryable } from '../database.js'
import { sql, type Sql } from '../sql.js'
import type { VectorDialect } from './vectors.js'
import { insertFeedback } from './feedback.js'
import { embeddingSql, insertRecords, manageableSql, type KnowledgeContext, type KnowledgeRecord, type SearchDocument } from './rows.js'
import { insertVersion } from './versions.js'

/** One entry to import, with everything an export line carries. */
export interface ImportItem {
  record: KnowledgeRecord
  doc: SearchDocument
  embedding: Float32Array | undefined
  helpful_history: FeedbackRecord[]
  harmful_history: FeedbackRecord[]
  versions: KnowledgeVersion[]
  /** Replace an existing entry with the same id (one the importer may change: see `importBatches`). */
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
 * An imported embedding as a parameter: binary wherever the column is pgvector's (node-pg and
 * the PGlite adapter send a byte array in binary format; in PGlite, parsing the decimal text
 * was ~0.3 ms of an entry's ~1.9 ms of import CPU), else the dialect's text form (`real[]`).
 */
function importedEmbedding(dialect: VectorDialect | undefined, embedding: Float32Array | undefined): Sql | undefined {
  if (dialect?.backend === 'pgvector' && embedding) return sql`${vectorBinary(embedding)}::vector`
  return embeddingSql(dialect, embedding)
}

/** The import query of the knowledge store. */
export interface KnowledgeImportQueries {
  /**
   * Inserts entries with their histories and versions (import). With `atomic`, all batches
   * run in one transaction (all or nothing); otherwise each batch commits on its own. An item
   * with `replace` replaces the entry of its id only if the importer may change it (`access`,
   * in the DELETE's own WHERE clause); naming one it may not fails the batch with `not_found`,
   * as an unknown id would, and writes nothing of it.
   */
  importBatches(batches: AsyncIterable<ImportItem[]>, atomic: boolean, access: WriteAccess): Promise<number>
}

/**
 * The import query over a database.
 * @example
 * const imported = await importQueries({ db, getDialect }).importBatches(batches, true)
 */
export function importQueries({ db, getDialect }: KnowledgeContext): KnowledgeImportQueries {
  // One DELETE for the replaced entries, multi-row INSERTs for the rows, then histories and
  // versions; `inserted` collects the ids for the statistics added at the end (deferStats).
  const insertBatch = async (tx: Queryable, items: ImportItem[], inserted: string[], access: WriteAccess): Promise<void> => {
    await deleteReplaced(
      tx,
      items.filter((item) => item.replace).map((item) => item.record.id),
      access,
    )
    const dialect = getDialect()
    await insertRecords(
      tx,
      items.map((item) => ({ record: item.record, doc: item.doc, embedding: importedEmbedding(dialect, item.embedding) })),
      dialect !== undefined,
    )
    for (const item of items) {
      const r = item.record
      inserted.push(r.id)
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
  // The embedded database: the statement trigger that keeps the per-scope BM25 statistics
  // (migration 0035) is off inside the import's transaction, and the statistics of all its
  // rows are added once before it commits (migration 0022): one upsert per (term, scope) of the
  // import instead of one per (term, scope) of every statement. The ALTER is transactional
  // (a failure restores the trigger with everything else); PGlite has one connection, so the
  // table lock it takes holds no other writer back. A PostgreSQL server keeps the trigger.
  const deferStats = async <T>(tx: Queryable, run: (inserted: string[]) => Promise<T>): Promise<T> => {
    if (db.kind !== 'pglite') return run([])
    await tx.query(sql`ALTER TABLE knowledge DISABLE TRIGGER knowledge_scope_search_stats_insert`)
    const inserted: string[] = []
    const result = await run(inserted)
    if (inserted.length > 0) await tx.query(sql`SELECT knowledge_scope_search_stats_add(${inserted}::text[])`)
    await tx.query(sql`ALTER TABLE knowledge ENABLE TRIGGER knowledge_scope_search_stats_insert`)
    return result
  }
  return {
    async importBatches(batches, atomic, access) {
      if (atomic) return db.transaction((tx) => deferStats(tx, (inserted) => eachBatch(batches, (items) => insertBatch(tx, items, inserted, access))))
      return eachBatch(batches, (items) => db.transaction((tx) => deferStats(tx, (inserted) => insertBatch(tx, items, inserted, access))))
    },
  }
}

/**
 * Deletes the entries an import replaces, only those the importer may change; throws
 * `not_found` (rolling the batch back) naming the first id it may not, as an unknown id.
 */
async function deleteReplaced(tx: Queryable, ids: readonly string[], access: WriteAccess): Promise<void> {
  if (ids.length === 0) return
  const rows = await tx.query<{ id: string }>(sql`DELETE FROM knowledge k WHERE k.id = ANY(${ids}::text[]) AND ${manageableSql(access)} RETURNING k.id`)
  if (rows.length === new Set(ids).size) return
  const deleted = new Set(rows.map((row) => row.id))
  const refused = ids.find((id) => !deleted.has(id))!
  throw new KnowHubError('not_found', `No entry ${refused} that you may replace`, { id: refused })
}
