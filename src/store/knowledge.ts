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
  /** Pages through all entries (any status), for reindexing. */
  scan(afterId: string, limit: number): Promise<Array<{ id: string; task: string; content: string; tags: Tags }>>
  setEmbeddings(items: Array<{ id: string; embedding: Float32Array }>): Promise<void>
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

async function insertVector(q: Queryable, dialect: VectorDialect | undefined, id: string, embedding: Float32Array | undefined): Promise<void> {
  if (!dialect || !embedding) return
  await q.query(sql`INSERT INTO knowledge_vector (knowledge_id, embedding) VALUES (${id}, ${dialect.param(embedding)})
    ON CONFLICT (knowledge_id) DO UPDATE SET embedding = EXCLUDED.embedding`)
}

async function insertRecord(q: Queryable, r: KnowledgeRecord, doc: SearchDocument, onConflict: Sql): Promise<boolean> {
  const rows = await q.query(sql`INSERT INTO knowledge (id, message_id, types, task, tags, scopes, owner, content, resource_ids, source,
      score, helpful, harmful, confidence, status, merged_into, version, search_doc, created_at, updated_at)
    VALUES (${r.id}, ${r.message_id}, ${r.types}::text[], ${r.task}, ${JSON.stringify(r.tags)}::jsonb, ${r.scopes}::text[], ${r.owner},
      ${r.content}, ${r.resource_ids}::text[], ${JSON.stringify(r.source)}::jsonb, ${r.score}, ${r.helpful}, ${r.harmful},
      ${r.confidence}, ${r.status}, ${r.merged_into}, ${r.version}, ${documentSql(doc)}, ${r.created_at.toISOString()}, ${r.updated_at.toISOString()})
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
        const inserted = await insertRecord(tx, record, doc, sql`ON CONFLICT (id) DO NOTHING`)
        if (inserted) await insertVector(tx, getDialect(), record.id, embedding)
        return inserted
      })
    },

    async importBatches(batches, atomic) {
      const insertBatch = async (tx: Queryable, items: ImportItem[]): Promise<void> => {
        for (const item of items) {
          const r = item.record
          if (item.replace) await tx.query(sql`DELETE FROM knowledge WHERE id = ${r.id}`)
          await insertRecord(tx, r, item.doc, sql.empty)
          await insertVector(tx, getDialect(), r.id, item.embedding)
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
        await insertVector(tx, getDialect(), id, embedding)
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
      const distance = dialect.distance(sql.raw('v.embedding'), dialect.param(vector))
      const rows = await db.query<{ id: string; distance: number }>(sql`SELECT v.knowledge_id AS id, ${distance} AS distance
        FROM knowledge_vector v JOIN knowledge k ON k.id = v.knowledge_id
        WHERE ${filterSql(filter)}
        ORDER BY distance LIMIT ${limit}`)
      return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }))
    },

    async count() {
      const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`)
      return rows[0]?.n ?? 0
    },

    async scan(afterId, limit) {
      return db.query<{ id: string; task: string; content: string; tags: Tags }>(
        sql`SELECT id, task, content, tags FROM knowledge WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`,
      )
    },

    async setEmbeddings(items) {
      await db.transaction(async (tx) => {
        for (const item of items) await insertVector(tx, getDialect(), item.id, item.embedding)
      })
    },
  }
}
