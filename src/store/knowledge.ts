/**
 * All SQL about knowledge entries. Every read takes the caller's visible scopes
 * and puts them in the WHERE clause (`scopes && visible`): visibility is enforced
 * here, for search, list, get, feedback and export alike.
 */
import type { FeedbackRecord, KnowledgeStatus, KnowledgeType, KnowledgeVersion, Source, Tags } from '../core/knowledge.js'
import type { Database, Queryable } from './database.js'
import type { Sql } from './sql.js'
import { sql } from './sql.js'
import type { VectorDialect } from './vectors.js'
import type { SyncedTextIndex } from './text-sync.js'
import { planTextQuery, DEFAULT_TEXT_RANKING, type EntryFilter, type RankedId, type TextQuery, type TextRanking, type WeightedTerm } from './text-query.js'

export {
  MAX_QUERY_TERMS,
  DEFAULT_TEXT_RANKING,
  planTextQuery,
  type EntryFilter,
  type RankedId,
  type TextQuery,
  type TextQueryPlan,
  type TextRanking,
  type WeightedTerm,
} from './text-query.js'

/**
 * An entry's full-text document: its search terms, in order, per field (normalised
 * by the caller, see `searchDocument`). The title field weighs more at query time.
 */
export interface SearchDocument {
  title: string[]
  body: string[]
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

/** Hits by score, best first, ties by id (as the SQL orders them), at most `limit`. */
function bestFirst(rows: Array<{ id: string; score: number }>, limit: number): Array<{ id: string; score: number }> {
  return rows.sort((x, y) => Number(y.score) - Number(x.score) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)).slice(0, limit)
}

/** A lexeme quoted for tsquery input. */
function quoteLexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/**
 * How much one occurrence in the title (task, tags) counts against one in the body. It is
 * applied when an entry is indexed (the stored term frequencies are weighted): changing it
 * means bumping `SEARCH_DOC_VERSION` so that stored documents are rebuilt.
 */
export const TITLE_WEIGHT = 2

/** Longest term kept in the index (longer "words" are noise: hashes, base64). */
const MAX_TERM_LENGTH = 200

/** Weighted term frequencies of a document: title occurrences count {@link TITLE_WEIGHT}. */
function termFrequencies(doc: SearchDocument): Map<string, number> {
  const tf = new Map<string, number>()
  const add = (terms: readonly string[], weight: number) => {
    for (const term of terms) if (term.length > 0 && term.length <= MAX_TERM_LENGTH) tf.set(term, (tf.get(term) ?? 0) + weight)
  }
  add(doc.title, TITLE_WEIGHT)
  add(doc.body, 1)
  return tf
}

/**
 * The stored full-text columns of a document, from its terms as they are (no text search
 * configuration in between): `search_doc`, a tsvector of its distinct terms (the GIN
 * index finds candidates with it); `search_tf`, their weighted frequencies (BM25 reads
 * them); `search_len`, its length in terms.
 */
function documentColumns(doc: SearchDocument): { tsvector: Sql; tf: Sql; length: number } {
  const tf = termFrequencies(doc)
  return {
    tsvector: sql`array_to_tsvector(${[...tf.keys()]}::text[])`,
    tf: sql`${JSON.stringify(Object.fromEntries(tf))}::jsonb`,
    length: doc.title.length + doc.body.length,
  }
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
  /**
   * Full-text search ranked by BM25 over the entries matching `filter`, best first (ties by
   * id). With an in-memory index (the embedded database's default) every match is scored;
   * in SQL the work is bounded by `ranking.candidates` (see {@link planTextQuery}).
   */
  searchText(query: TextQuery, filter: EntryFilter, limit: number, ranking?: TextRanking): Promise<RankedId[]>
  /**
   * With an in-memory full-text index: syncs it and returns the change-log position it
   * reflects, equal only while the table is unchanged (a cache key for search results).
   * Undefined when searches run in SQL (no such guarantee across server processes).
   */
  searchGeneration(): Promise<number | undefined>
  searchVector(vector: Float32Array, filter: EntryFilter, limit: number): Promise<RankedId[]>
  count(): Promise<number>
  /** Merges GIN pending lists, vacuums the BM25 statistics and refreshes planner statistics (PGlite runs no autovacuum). */
  analyze(): Promise<void>
  /** The version of the stored full-text documents (undefined before the first check). */
  searchDocVersion(): Promise<number | undefined>
  setSearchDocVersion(version: number): Promise<void>
  /** Replaces stored full-text documents (after a change of their format). */
  setSearchDocs(items: Array<{ id: string; doc: SearchDocument }>): Promise<void>
  /** Pages through all entries (any status), for reindexing. */
  scan(afterId: string, limit: number): Promise<Array<{ id: string; task: string; content: string; tags: Tags }>>
  setEmbeddings(items: Array<{ id: string; embedding: Float32Array }>): Promise<void>
  /**
   * Ids and stored vectors of the entries matching `filter` (visibility included), newest
   * first, at most `limit`, older than `before` when given: the input of near-duplicate
   * detection (slim).
   */
  vectors(filter: EntryFilter, limit: number, before?: { created_at: Date; id: string }): Promise<Array<{ id: string; embedding: Float32Array }>>
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
  const text = documentColumns(doc)
  const rows = await q.query(sql`INSERT INTO knowledge (id, message_id, types, task, tags, scopes, owner, content, resource_ids, source,
      score, helpful, harmful, confidence, status, merged_into, version, search_doc, search_tf, search_len, created_at, updated_at${vectorColumn})
    VALUES (${r.id}, ${r.message_id}, ${r.types}::text[], ${r.task}, ${JSON.stringify(r.tags)}::jsonb, ${r.scopes}::text[], ${r.owner},
      ${r.content}, ${r.resource_ids}::text[], ${JSON.stringify(r.source)}::jsonb, ${r.score}, ${r.helpful}, ${r.harmful},
      ${r.confidence}, ${r.status}, ${r.merged_into}, ${r.version}, ${text.tsvector}, ${text.tf}, ${text.length}, ${r.created_at.toISOString()}, ${r.updated_at.toISOString()}${vectorValue})
    ${onConflict}
    RETURNING id`)
  return rows.length > 0
}

/**
 * The knowledge queries over a database. `dialect` is undefined until a vector
 * table exists for the configured embedder.
 */
export function knowledgeStore(db: Database, getDialect: () => VectorDialect | undefined, textIndex?: SyncedTextIndex): KnowledgeStore {
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
          for (const [kind, history] of [
            ['helpful', item.helpful_history],
            ['harmful', item.harmful_history],
          ] as const) {
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
      const text = documentColumns(doc)
      return db.transaction(async (tx) => {
        const saved =
          await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
          SELECT id, version, task, content, types, tags, scopes, resource_ids, ${reason}, updated_at FROM knowledge
          WHERE id = ${id} AND version = ${expectedVersion} AND scopes && ${visible}::text[]
          RETURNING version`)
        if (saved.length === 0) return undefined
        const rows = await tx.query(sql`UPDATE knowledge k SET task = ${change.task}, content = ${change.content}, types = ${change.types}::text[],
            tags = ${JSON.stringify(change.tags)}::jsonb, scopes = ${change.scopes}::text[], resource_ids = ${change.resource_ids}::text[],
            search_doc = ${text.tsvector}, search_tf = ${text.tf}, search_len = ${text.length}, version = k.version + 1, updated_at = ${at.toISOString()}
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
        await tx.query(
          sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, created_at) VALUES (${id}, ${kind}, ${JSON.stringify(body)}::jsonb, ${at.toISOString()})`,
        )
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

    async searchText(query, filter, limit, ranking = DEFAULT_TEXT_RANKING) {
      if (query.terms.length === 0) return []
      if (textIndex) {
        await textIndex.sync()
        return textIndex.index.search(query.terms, filter, limit, ranking)
      }
      // Document frequencies of the query terms and the collection size: index lookups.
      const stats = await db.query<{ term: string; df: number; docs: string; total_len: string }>(sql`SELECT t.term, t.df, s.docs, s.total_len
        FROM knowledge_term t CROSS JOIN knowledge_text_stats s WHERE t.term = ANY(${query.terms}::text[]) AND t.df > 0`)
      if (stats.length === 0) return []
      const docs = Math.max(1, Number(stats[0]!.docs))
      const avgLength = Math.max(1, Number(stats[0]!.total_len) / docs)
      const plan = planTextQuery(
        stats.map((row) => ({ term: row.term, df: Number(row.df) })),
        docs,
        ranking,
      )
      const { k1, b } = ranking
      // One BM25 summand per query term, reading the entry's stored frequency of the term.
      const summands = plan.terms.map(({ term, idf }) => {
        const tf = sql`(c.search_tf->>${term})::float8`
        return sql`coalesce(${idf * (k1 + 1)}::float8 * ${tf} / (${tf} + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * c.search_len / ${avgLength}::float8)), 0)`
      })
      const score = sql.join(summands, ' + ')
      const tsquery = (terms: readonly WeightedTerm[]) => terms.map(({ term }) => quoteLexeme(term)).join(' | ')
      // Candidates: entries with one of the rarer terms (bounded, see planTextQuery), each scored on every term.
      const scored = (where: Sql) =>
        db.query<{ id: string; score: number }>(sql`SELECT c.id, (${score}) AS score
        FROM (SELECT k.id, k.search_tf, k.search_len FROM knowledge k WHERE ${where} AND ${filterSql(filter)} LIMIT ${plan.budget}) c
        ORDER BY score DESC, c.id LIMIT ${limit}`)
      const anyCandidate = sql`k.search_doc @@ ${tsquery(plan.candidates)}::tsquery`
      let rows: Array<{ id: string; score: number }>
      if (plan.sampled && plan.terms.length > 1) {
        // Common words only: sample the entries with every term first (the best BM25 scores
        // are among them), then entries with the rarest term.
        const every = sql`k.search_doc @@ ${plan.terms.map(({ term }) => quoteLexeme(term)).join(' & ')}::tsquery`
        rows = await scored(every)
        if (rows.length < limit) rows = bestFirst([...rows, ...(await scored(sql`${anyCandidate} AND NOT (${every})`))], limit)
      } else {
        rows = await scored(anyCandidate)
      }
      // Entries with only the common terms score at most `plan.commonBound`: look at (a bounded
      // number of) them only when they could still enter the list.
      if (plan.common.length > 0 && !plan.sampled && (rows.length < limit || Number(rows[rows.length - 1]!.score) < plan.commonBound)) {
        const rest = await scored(sql`k.search_doc @@ ${tsquery(plan.common)}::tsquery AND NOT (${anyCandidate})`)
        rows = bestFirst([...rows, ...rest], limit)
      }
      return rows.map((row) => ({ id: row.id, score: Number(row.score) }))
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

    async searchGeneration() {
      if (!textIndex) return undefined
      await textIndex.sync()
      return textIndex.generation
    },

    async count() {
      const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`)
      return rows[0]?.n ?? 0
    },

    async analyze() {
      // Merge the GIN indexes' pending lists (searches scan them linearly), clear the dead
      // rows the BM25 statistics triggers leave (every write updates the stats row), and
      // refresh the planner's statistics. PGlite runs no autovacuum to do any of this.
      await db.query(sql`SELECT gin_clean_pending_list(i::regclass)
        FROM unnest(ARRAY['knowledge_search_idx', 'knowledge_scopes_idx', 'knowledge_types_idx']) AS i`)
      // Without an in-memory index nobody reads the change log (this session writes none, see
      // migration 0008): drop what sessions with an index left.
      if (!textIndex) await db.query(sql`DELETE FROM knowledge_change`)
      await db.query(sql`VACUUM knowledge_text_stats, knowledge_term, knowledge_change`)
      await db.query(sql`ANALYZE knowledge`)
    },

    async searchDocVersion() {
      const rows = await db.query<{ value: { version?: number } }>(sql`SELECT value FROM knowhub_meta WHERE key = 'fulltext'`)
      return rows[0]?.value.version
    },

    async setSearchDocVersion(version) {
      await db.query(sql`INSERT INTO knowhub_meta (key, value) VALUES ('fulltext', ${JSON.stringify({ version })}::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`)
    },

    async setSearchDocs(items) {
      await db.transaction(async (tx) => {
        for (const item of items) {
          const text = documentColumns(item.doc)
          await tx.query(sql`UPDATE knowledge SET search_doc = ${text.tsvector}, search_tf = ${text.tf}, search_len = ${text.length} WHERE id = ${item.id}`)
        }
      })
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

    async vectors(filter, limit, before) {
      if (!getDialect()) return []
      const page = before ? sql` AND (k.created_at, k.id) < (${before.created_at.toISOString()}::timestamptz, ${before.id})` : sql.empty
      const rows = await db.query<{ id: string; embedding: number[] }>(sql`SELECT k.id, k.embedding::real[] AS embedding
        FROM knowledge k WHERE k.embedding IS NOT NULL AND ${filterSql(filter)}${page}
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
      const rows = await db.query(
        sql`SELECT ${COLUMNS}, (k.scopes && ${visible}::text[]) AS visible FROM knowledge k WHERE k.merged_into = ${id} ORDER BY k.id`,
      )
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
