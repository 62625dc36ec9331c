/**
 * All SQL about knowledge entries. Every read takes the caller's visible scopes
 * and puts them in the WHERE clause (`scopes && visible`): visibility is enforced
 * here, for search, list, get, feedback and export alike.
 */
import type { FeedbackRecord, KnowledgeStatus, KnowledgeType, KnowledgeVersion, Source, Tags } from '../core/knowledge.js'
import type { Database, Queryable } from './database.js'
import type { Sql} from './sql.js';
import { sql } from './sql.js'
import type { VectorDialect } from './vectors.js'

/** Text prepared for the full-text index: Latin words and CJK words/bigrams, per field. */
export interface SearchDocument {
  titleLatin: string
  titleCjk: string
  bodyLatin: string
  bodyCjk: string
}

/** A full-text query: space-separated Latin words and CJK tokens (any may be empty). */
export interface TextQuery {
  latin: string[]
  cjk: string[]
}

/** The stored part of an entry (histories and versions are kept in their own tables). */
export interface KnowledgeRecord {
  id: string
  message_id: string
  types: KnowledgeType[]
  task: string
  tags: Tags
  scopes: string[]
  owner: string
  content: string
  resource_ids: string[]
  source: Source
  score: number
  helpful: number
  harmful: number
  confidence: number
  status: KnowledgeStatus
  merged_into: string | null
  version: number
  created_at: Date
  updated_at: Date
}

/** Filters shared by search and list. */
export interface EntryFilter {
  visible: readonly string[]
  types?: readonly string[] | undefined
  /** Narrow to entries in any of these scopes (still intersected with `visible`). */
  scopes?: readonly string[] | undefined
  status?: readonly KnowledgeStatus[] | undefined
  minScore?: number | undefined
  /** Drop entries whose quality score is below 0. */
  nonNegativeQuality?: boolean | undefined
}

export interface RankedId {
  id: string
  score: number
}

const COLUMNS = sql.raw(`k.id, k.message_id, k.types, k.task, k.tags, k.scopes, k.owner, k.content, k.resource_ids,
  k.source, k.score, k.helpful, k.harmful, k.confidence, k.status, k.merged_into, k.version, k.created_at, k.updated_at`)

function toRecord(row: Record<string, unknown>): KnowledgeRecord {
  return {
    ...(row as unknown as KnowledgeRecord),
    score: Number(row.score),
    helpful: Number(row.helpful),
    harmful: Number(row.harmful),
    confidence: Math.round(Number(row.confidence) * 1e6) / 1e6,
    created_at: new Date(row.created_at as string | Date),
    updated_at: new Date(row.updated_at as string | Date),
  }
}

function filterSql(filter: EntryFilter): Sql {
  const parts: Sql[] = [sql`k.scopes && ${filter.visible}::text[]`]
  parts.push(sql`k.status = ANY(${filter.status ?? ['active']}::text[])`)
  if (filter.types && filter.types.length > 0) parts.push(sql`k.types && ${filter.types}::text[]`)
  if (filter.scopes && filter.scopes.length > 0) parts.push(sql`k.scopes && ${filter.scopes}::text[]`)
  if (filter.minScore !== undefined) parts.push(sql`k.score >= ${filter.minScore}`)
  if (filter.nonNegativeQuality) parts.push(sql`(k.score + k.helpful - 2 * k.harmful) >= 0`)
  return sql.join(parts, ' AND ')
}

function documentSql(doc: SearchDocument): Sql {
  return sql`setweight(to_tsvector('english', ${doc.titleLatin}), 'A') || setweight(to_tsvector('simple', ${doc.titleCjk}), 'A')
    || setweight(to_tsvector('english', ${doc.bodyLatin}), 'B') || setweight(to_tsvector('simple', ${doc.bodyCjk}), 'B')`
}

/** `websearch_to_tsquery` never fails on odd input; words are ORed. */
function tsquerySql(query: TextQuery): Sql {
  const latin = query.latin.filter((w) => w !== 'or').join(' or ')
  const cjk = query.cjk.join(' or ')
  return sql`(websearch_to_tsquery('english', ${latin}) || websearch_to_tsquery('simple', ${cjk}))`
}

export interface KnowledgeStore {
  /** Inserts an entry; returns false when the id is taken. */
  insert(record: KnowledgeRecord, doc: SearchDocument, embedding: Float32Array | undefined): Promise<boolean>
  /**
   * Inserts entries with their histories and versions (import). With `atomic`, all batches
   * run in one transaction (all or nothing); otherwise each batch commits on its own.
   */
  importBatches(batches: AsyncIterable<ImportItem[]>, atomic: boolean): Promise<number>
  get(id: string, visible: readonly string[]): Promise<KnowledgeRecord | undefined>
  getMany(ids: readonly string[], visible: readonly string[]): Promise<KnowledgeRecord[]>
  exists(ids: readonly string[]): Promise<string[]>
  list(filter: EntryFilter, limit: number, after?: { created_at: Date; id: string }): Promise<KnowledgeRecord[]>
  histories(ids: readonly string[]): Promise<Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>>
  versions(id: string): Promise<KnowledgeVersion[]>
  /**
   * Replaces editable fields, keeping the previous text as a version, if the entry is
   * visible and still at `expectedVersion`. Returns the new record or undefined.
   */
  update(
    id: string,
    visible: readonly string[],
    expectedVersion: number,
    change: Pick<KnowledgeRecord, 'task' | 'content' | 'types' | 'tags' | 'scopes' | 'resource_ids'>,
    doc: SearchDocument,
    embedding: Float32Array | undefined,
    reason: string,
    at: Date,
  ): Promise<KnowledgeRecord | undefined>
  /** Atomically adds one helpful or harmful case. Returns the updated record, or undefined if not visible. */
  addFeedback(id: string, visible: readonly string[], kind: 'helpful' | 'harmful', body: FeedbackRecord, at: Date): Promise<KnowledgeRecord | undefined>
  setScore(id: string, visible: readonly string[], score: number, at: Date): Promise<KnowledgeRecord | undefined>
  setStatus(id: string, visible: readonly string[], status: KnowledgeStatus, mergedInto: string | null, at: Date): Promise<KnowledgeRecord | undefined>
  delete(id: string, visible: readonly string[]): Promise<boolean>
  searchText(query: TextQuery, filter: EntryFilter, limit: number): Promise<RankedId[]>
  searchVector(vector: Float32Array, filter: EntryFilter, limit: number): Promise<RankedId[]>
  count(): Promise<number>
  /** Refreshes planner statistics (PGlite runs no autovacuum). */
  analyze(): Promise<void>
  /** Pages through all entries (any status), for reindexing. */
  scan(afterId: string, limit: number): Promise<Array<{ id: string; task: string; content: string; tags: Tags }>>
  setEmbeddings(items: Array<{ id: string; embedding: Float32Array }>): Promise<void>
  /**
   * Ids and stored vectors of the entries matching `filter` (visibility included), newest
   * first, at most `limit`: the input of near-duplicate detection (slim).
   */
  vectors(filter: EntryFilter, limit: number): Promise<Array<{ id: string; embedding: Float32Array }>>
  /**
   * Merges `originalIds` into the new entry `merged` in one transaction: marks the originals
   * `merged` with `merged_into` (only those still active and visible: otherwise nothing
   * changes), inserts the merged entry with `helpful`/`harmful` set to the sums of the
   * originals' counters read under lock, keeps each original's text as a version of the
   * merged entry (`merged from <id>`), and copies their feedback rows to it in order.
   * Returns the stored merged record, or `{ conflict }` when nothing was changed.
   */
  merge(
    merged: { record: KnowledgeRecord; doc: SearchDocument; embedding: Float32Array | undefined },
    originalIds: readonly string[],
    visible: readonly string[],
  ): Promise<KnowledgeRecord | { conflict: 'originals_changed' | 'id_taken' }>
  /** The entries merged into `id` that the caller can see, and how many there are in all. */
  mergedFrom(id: string, visible: readonly string[]): Promise<{ records: KnowledgeRecord[]; total: number }>
  /**
   * Undoes a merge in one transaction: the originals become active again (`merged_into`
   * cleared) and the merged entry is archived. Returns false, changing nothing, unless
   * every one of `originalIds` is still merged into `id` and `id` is active and visible.
   */
  unmerge(id: string, originalIds: readonly string[], visible: readonly string[], at: Date): Promise<boolean>
}

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

function embeddingSql(dialect: VectorDialect | undefined, embedding: Float32Array | undefined): Sql | undefined {
  return dialect && embedding ? dialect.param(embedding) : undefined
}

async function setEmbedding(q: Queryable, id: string, value: Sql | undefined): Promise<void> {
  if (value) await q.query(sql`UPDATE knowledge SET embedding = ${value} WHERE id = ${id}`)
}

async function insertRecord(q: Queryable, r: KnowledgeRecord, doc: SearchDocument, embedding: Sql | undefined, onConflict: Sql): Promise<boolean> {
  const vectorColumn = embedding ? sql.raw(', embedding') : sql.empty
  const vectorValue = embedding ? sql`, ${embedding}` : sql.empty
  const rows = await q.query(sql`INSERT INTO knowledge (id, message_id, types, task, tags, scopes, owner, content, resource_ids, source,
      score, helpful, harmful, confidence, status, merged_into, version, search_doc, created_at, updated_at${vectorColumn})
    VALUES (${r.id}, ${r.message_id}, ${r.types}::text[], ${r.task}, ${JSON.stringify(r.tags)}::jsonb, ${r.scopes}::text[], ${r.owner},
      ${r.content}, ${r.resource_ids}::text[], ${JSON.stringify(r.source)}::jsonb, ${r.score}, ${r.helpful}, ${r.harmful},
      ${r.confidence}, ${r.status}, ${r.merged_into}, ${r.version}, ${documentSql(doc)}, ${r.created_at.toISOString()}, ${r.updated_at.toISOString()}${vectorValue})
    ${onConflict}
    RETURNING id`)
  return rows.length > 0
}

/**
 * The knowledge queries over a database. `dialect` is undefined until a vector
 * table exists for the configured embedder.
 */
export function knowledgeStore(db: Database, getDialect: () => VectorDialect | undefined): KnowledgeStore {
  return {
    async insert(record, doc, embedding) {
      return db.transaction(async (tx) => {
        return insertRecord(tx, record, doc, embeddingSql(getDialect(), embedding), sql`ON CONFLICT (id) DO NOTHING`)
      })
    },

    async importBatches(batches, atomic) {
      const insertBatch = async (tx: Queryable, items: ImportItem[]): Promise<void> => {
        for (const item of items) {
          const r = item.record
          if (item.replace) await tx.query(sql`DELETE FROM knowledge WHERE id = ${r.id}`)
          await insertRecord(tx, r, item.doc, embeddingSql(getDialect(), item.embedding), sql.empty)
          for (const [kind, history] of [['helpful', item.helpful_history], ['harmful', item.harmful_history]] as const) {
            for (const body of history) {
              await tx.query(sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, created_at)
                VALUES (${r.id}, ${kind}, ${JSON.stringify(body)}::jsonb, ${r.updated_at.toISOString()})`)
            }
          }
          for (const v of item.versions) {
            await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
              VALUES (${r.id}, ${v.version}, ${v.task}, ${v.content}, ${v.types}::text[], ${JSON.stringify(v.tags)}::jsonb, ${v.scopes}::text[],
                ${v.resource_ids}::text[], ${v.reason}, ${v.created_at})`)
          }
        }
      }
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

    async get(id, visible) {
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id = ${id} AND k.scopes && ${visible}::text[]`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },

    async getMany(ids, visible) {
      if (ids.length === 0) return []
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id = ANY(${ids}::text[]) AND k.scopes && ${visible}::text[]`)
      return rows.map(toRecord)
    },

    async exists(ids) {
      if (ids.length === 0) return []
      const rows = await db.query<{ id: string }>(sql`SELECT id FROM knowledge WHERE id = ANY(${ids}::text[])`)
      return rows.map((row) => row.id)
    },

    async list(filter, limit, after) {
      const page = after ? sql` AND (k.created_at, k.id) < (${after.created_at.toISOString()}::timestamptz, ${after.id})` : sql.empty
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE ${filterSql(filter)}${page}
        ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit}`)
      return rows.map(toRecord)
    },

    async histories(ids) {
      const result = new Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>()
      for (const id of ids) result.set(id, { helpful: [], harmful: [] })
      if (ids.length === 0) return result
      const rows = await db.query<{ knowledge_id: string; kind: 'helpful' | 'harmful'; body: FeedbackRecord }>(
        sql`SELECT knowledge_id, kind, body FROM knowledge_feedback WHERE knowledge_id = ANY(${ids}::text[]) ORDER BY seq`,
      )
      for (const row of rows) result.get(row.knowledge_id)?.[row.kind].push(row.body)
      return result
    },

    async versions(id) {
      const rows = await db.query(sql`SELECT version, task, content, types, tags, scopes, resource_ids, reason, created_at
        FROM knowledge_version WHERE knowledge_id = ${id} ORDER BY version`)
      return rows.map((row) => ({ ...(row as unknown as KnowledgeVersion), created_at: new Date(row.created_at as string).toISOString() }))
    },

    async update(id, visible, expectedVersion, change, doc, embedding, reason, at) {
      return db.transaction(async (tx) => {
        const saved = await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
          SELECT id, version, task, content, types, tags, scopes, resource_ids, ${reason}, updated_at FROM knowledge
          WHERE id = ${id} AND version = ${expectedVersion} AND scopes && ${visible}::text[]
          RETURNING version`)
        if (saved.length === 0) return undefined
        const rows = await tx.query(sql`UPDATE knowledge k SET task = ${change.task}, content = ${change.content}, types = ${change.types}::text[],
            tags = ${JSON.stringify(change.tags)}::jsonb, scopes = ${change.scopes}::text[], resource_ids = ${change.resource_ids}::text[],
            search_doc = ${documentSql(doc)}, version = k.version + 1, updated_at = ${at.toISOString()}
          WHERE k.id = ${id} AND k.version = ${expectedVersion}
          RETURNING ${COLUMNS}`)
        if (rows.length === 0) return undefined
        await setEmbedding(tx, id, embeddingSql(getDialect(), embedding))
        return toRecord(rows[0]!)
      })
    },

    async addFeedback(id, visible, kind, body, at) {
      return db.transaction(async (tx) => {
        const counter = kind === 'helpful' ? sql.raw('helpful = k.helpful + 1') : sql.raw('harmful = k.harmful + 1')
        const rows = await tx.query(sql`UPDATE knowledge k SET ${counter}, updated_at = ${at.toISOString()}
          WHERE k.id = ${id} AND k.scopes && ${visible}::text[] RETURNING ${COLUMNS}`)
        if (rows.length === 0) return undefined
        await tx.query(sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, created_at) VALUES (${id}, ${kind}, ${JSON.stringify(body)}::jsonb, ${at.toISOString()})`)
        return toRecord(rows[0]!)
      })
    },

    async setScore(id, visible, score, at) {
      const rows = await db.query(sql`UPDATE knowledge k SET score = ${score}, updated_at = ${at.toISOString()}
        WHERE k.id = ${id} AND k.scopes && ${visible}::text[] RETURNING ${COLUMNS}`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },

    async setStatus(id, visible, status, mergedInto, at) {
      const rows = await db.query(sql`UPDATE knowledge k SET status = ${status}, merged_into = ${mergedInto}, updated_at = ${at.toISOString()}
        WHERE k.id = ${id} AND k.scopes && ${visible}::text[] RETURNING ${COLUMNS}`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },

    async delete(id, visible) {
      const rows = await db.query(sql`DELETE FROM knowledge WHERE id = ${id} AND scopes && ${visible}::text[] RETURNING id`)
      return rows.length > 0
    },

    async searchText(query, filter, limit) {
      if (query.latin.length === 0 && query.cjk.length === 0) return []
      const rows = await db.query<{ id: string; rank: number }>(sql`SELECT k.id, ts_rank(k.search_doc, q.query, 1) AS rank
        FROM knowledge k, (SELECT ${tsquerySql(query)} AS query) q
        WHERE k.search_doc @@ q.query AND ${filterSql(filter)}
        ORDER BY rank DESC, k.id LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, score: Number(row.rank) }))
    },

    async searchVector(vector, filter, limit) {
      const dialect = getDialect()
      if (!dialect) return []
      const distance = dialect.distance(sql.raw('k.embedding'), dialect.param(vector))
      const rows = await db.query<{ id: string; distance: number }>(sql`SELECT k.id, ${distance} AS distance
        FROM knowledge k
        WHERE k.embedding IS NOT NULL AND ${filterSql(filter)}
        ORDER BY distance LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }))
    },

    async count() {
      const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`)
      return rows[0]?.n ?? 0
    },

    async analyze() {
      await db.query(sql`ANALYZE knowledge`)
    },

    async scan(afterId, limit) {
      return db.query<{ id: string; task: string; content: string; tags: Tags }>(
        sql`SELECT id, task, content, tags FROM knowledge WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`,
      )
    },

    async setEmbeddings(items) {
      await db.transaction(async (tx) => {
        for (const item of items) await setEmbedding(tx, item.id, embeddingSql(getDialect(), item.embedding))
      })
    },

    async vectors(filter, limit) {
      if (!getDialect()) return []
      const rows = await db.query<{ id: string; embedding: number[] }>(sql`SELECT k.id, k.embedding::real[] AS embedding
        FROM knowledge k WHERE k.embedding IS NOT NULL AND ${filterSql(filter)}
        ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, embedding: Float32Array.from(row.embedding, Number) }))
    },

    async merge(merged, originalIds, visible) {
      const ROLLBACK = Symbol('rollback')
      let conflict: 'originals_changed' | 'id_taken' = 'originals_changed'
      try {
        return await db.transaction(async (tx) => {
          const id = merged.record.id
          const marked = await tx.query<{ helpful: number; harmful: number }>(sql`UPDATE knowledge k SET status = 'merged', merged_into = ${id}
            WHERE k.id = ANY(${originalIds}::text[]) AND k.status = 'active' AND k.scopes && ${visible}::text[]
            RETURNING k.helpful, k.harmful`)
          if (marked.length !== new Set(originalIds).size) throw ROLLBACK
          const record: KnowledgeRecord = {
            ...merged.record,
            helpful: marked.reduce((sum, row) => sum + Number(row.helpful), 0),
            harmful: marked.reduce((sum, row) => sum + Number(row.harmful), 0),
          }
          if (!(await insertRecord(tx, record, merged.doc, embeddingSql(getDialect(), merged.embedding), sql`ON CONFLICT (id) DO NOTHING`))) {
            conflict = 'id_taken'
            throw ROLLBACK
          }
          await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
            SELECT ${id}, o.n, k.task, k.content, k.types, k.tags, k.scopes, k.resource_ids, 'merged from ' || k.id, k.updated_at
            FROM unnest(${originalIds}::text[]) WITH ORDINALITY AS o(id, n) JOIN knowledge k ON k.id = o.id`)
          await tx.query(sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, created_at)
            SELECT ${id}, f.kind, f.body, f.created_at
            FROM unnest(${originalIds}::text[]) WITH ORDINALITY AS o(id, n) JOIN knowledge_feedback f ON f.knowledge_id = o.id
            ORDER BY o.n, f.seq`)
          return record
        })
      } catch (error) {
        if (error === ROLLBACK) return { conflict }
        throw error
      }
    },

    async mergedFrom(id, visible) {
      const rows = await db.query(sql`SELECT ${COLUMNS}, (k.scopes && ${visible}::text[]) AS visible FROM knowledge k WHERE k.merged_into = ${id} ORDER BY k.id`)
      return { records: rows.filter((row) => row.visible === true).map(toRecord), total: rows.length }
    },

    async unmerge(id, originalIds, visible, at) {
      const ROLLBACK = Symbol('rollback')
      try {
        return await db.transaction(async (tx) => {
          const restored = await tx.query(sql`UPDATE knowledge k SET status = 'active', merged_into = NULL
            WHERE k.merged_into = ${id} AND k.status = 'merged' AND k.id = ANY(${originalIds}::text[]) AND k.scopes && ${visible}::text[]
            RETURNING k.id`)
          const remaining = await tx.query(sql`SELECT 1 FROM knowledge WHERE merged_into = ${id} LIMIT 1`)
          if (restored.length !== new Set(originalIds).size || remaining.length > 0) throw ROLLBACK
          const archived = await tx.query(sql`UPDATE knowledge k SET status = 'archived', updated_at = ${at.toISOString()}
            WHERE k.id = ${id} AND k.status = 'active' AND k.scopes && ${visible}::text[] RETURNING k.id`)
          if (archived.length !== 1) throw ROLLBACK
          return true
        })
      } catch (error) {
        if (error === ROLLBACK) return false
        throw error
      }
    },
  }
}
