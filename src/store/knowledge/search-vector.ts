/**
 * Embeddings of knowledge entries: vector search, stored vectors (slim) and reindexing.
 */
import { sql } from '../sql.js'
import type { SyncedTextIndex } from '../text-index/sync.js'
import type { EntryFilter, RankedId } from '../text-index/query.js'
import { embeddingSql, filterSql, olderThan, setEmbedding, type KnowledgeContext } from './rows.js'

/** The vector queries of the knowledge store. */
export interface KnowledgeVectorQueries {
  /** The entries matching `filter` nearest to `vector`, by cosine similarity, at most `limit`. */
  searchVector(vector: Float32Array, filter: EntryFilter, limit: number): Promise<RankedId[]>
  setEmbeddings(items: Array<{ id: string; embedding: Float32Array }>): Promise<void>
  /**
   * Ids and stored vectors of the entries matching `filter` (visibility included), newest
   * first, at most `limit`, older than `before` when given: the input of near-duplicate
   * detection (slim).
   */
  vectors(filter: EntryFilter, limit: number, before?: { created_at: Date; id: string }): Promise<Array<{ id: string; embedding: Float32Array }>>
}

/**
 * The vector queries over a database; they find nothing until a vector table exists. With
 * `textIndex` holding vectors (the embedded database's in-memory index; on a server it holds
 * none and pgvector's HNSW index answers), vector search is its exact scan
 * over the same visible, filtered entries instead of SQL (PGlite's HNSW index: approximate
 * and tens of milliseconds a query).
 * @example
 * const hits = await vectorQueries({ db, getDialect }).searchVector(queryVector, { visible }, 20)
 */
export function vectorQueries({ db, getDialect, reads }: KnowledgeContext, textIndex?: SyncedTextIndex): KnowledgeVectorQueries {
  const reader = reads ?? db
  return {
    async searchVector(vector, filter, limit) {
      const dialect = getDialect()
      if (!dialect) return []
      if (textIndex?.holdsVectors) {
        await textIndex.sync()
        return textIndex.index.searchVector(vector, filter, limit)
      }
      const distance = dialect.distance(sql.raw('k.embedding'), dialect.param(vector))
      const rows = await reader.query<{ id: string; distance: number }>(sql`SELECT k.id, ${distance} AS distance
        FROM knowledge k
        WHERE k.embedding IS NOT NULL AND ${filterSql(filter)}
        ORDER BY distance LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }))
    },

    async setEmbeddings(items) {
      await db.transaction(async (tx) => {
        for (const item of items) await setEmbedding(tx, item.id, embeddingSql(getDialect(), item.embedding))
      })
    },

    async vectors(filter, limit, before) {
      if (!getDialect()) return []
      const rows = await db.query<{ id: string; embedding: number[] }>(sql`SELECT k.id, k.embedding::real[] AS embedding
        FROM knowledge k WHERE k.embedding IS NOT NULL AND ${filterSql(filter)}${olderThan(before)}
        ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, embedding: Float32Array.from(row.embedding, Number) }))
    },
  }
}
