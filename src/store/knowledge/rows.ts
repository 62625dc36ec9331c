/**
 * The knowledge row as the store returns it, and the SQL fragments every part of the
 * knowledge store shares: the selected columns, the row conversion, the visibility and
 * filter clause, the stored full-text columns and the embedding parameter.
 */
import type { KnowledgeStatus, KnowledgeType, Source, Tags } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { Database, Queryable } from '../database.js'
import { sql, type Sql } from '../sql.js'
import type { EntryFilter, ValidityFilter } from '../text-index/query.js'
import type { VectorDialect } from './vectors.js'

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
  /**
   * The owner of the resource each of `resource_ids` was resolved to when the entry was saved
   * or edited (issue 15.8); an id without one resolves in the entry owner's namespace.
   * Absent on a record not read from the store: nothing pinned.
   */
  resource_owners?: Record<string, string>
  source: Source
  score: number
  helpful: number
  harmful: number
  /**
   * The harmful figure of seed 003's quality formula: each principal's n-th harmful case
   * on the entry weighs 4^-(n-1) (docs/feedback.md). Absent on a record not read from the
   * store, where it equals `harmful`.
   */
  harmful_weight?: number
  confidence: number
  status: KnowledgeStatus
  merged_into: string | null
  version: number
  created_at: Date
  updated_at: Date
  /**
   * Validity in time (issue 31, migration 0048): when the fact became true (the source
   * message's time when known, else `created_at`) and when it stopped (null while current).
   */
  valid_from: Date
  valid_to: Date | null
  /** The entry that superseded this one (then `valid_to` is set), and the one this one superseded. */
  superseded_by: string | null
  supersedes: string | null
  /** Retention: past it the entry leaves search and the agent context (null: never). */
  expires_at: Date | null
}

/**
 * An entry's full-text document: its search terms, in order, per field (normalised
 * by the caller, see `searchDocument`). The title field weighs more at query time.
 */
export interface SearchDocument {
  title: string[]
  body: string[]
}

/** What the knowledge queries run on: the database, and the vector dialect once a vector table exists. */
export interface KnowledgeContext {
  db: Database
  getDialect: () => VectorDialect | undefined
  /**
   * Where searches, lists and reads go: read replicas when configured (src/store/replicas.ts,
   * which keeps a caller that wrote on the primary), else `db`.
   */
  reads?: Queryable
}

/** The columns of a {@link KnowledgeRecord}, from `knowledge k`. */
export const COLUMNS = sql.raw(`k.id, k.message_id, k.types, k.task, k.tags, k.scopes, k.owner, k.content, k.resource_ids, k.resource_owners,
  k.source, k.score, k.helpful, k.harmful, k.harmful_weight, k.confidence, k.status, k.merged_into, k.version, k.created_at, k.updated_at,
  k.valid_from, k.valid_to, k.superseded_by, k.supersedes, k.expires_at`)

/** A selected row as a {@link KnowledgeRecord} (numbers and dates converted). */
export function toRecord(row: Record<string, unknown>): KnowledgeRecord {
  return {
    ...(row as unknown as KnowledgeRecord),
    score: Number(row.score),
    helpful: Number(row.helpful),
    harmful: Number(row.harmful),
    harmful_weight: Number(row.harmful_weight),
    resource_owners: (row.resource_owners ?? {}) as Record<string, string>,
    confidence: Math.round(Number(row.confidence) * 1e6) / 1e6,
    created_at: new Date(row.created_at as string | Date),
    updated_at: new Date(row.updated_at as string | Date),
    valid_from: new Date(row.valid_from as string | Date),
    valid_to: dateOrNull(row.valid_to),
    superseded_by: (row.superseded_by as string | null) ?? null,
    supersedes: (row.supersedes as string | null) ?? null,
    expires_at: dateOrNull(row.expires_at),
  }
}

function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(value as string | Date)
}

/** A date as a `timestamptz` parameter (NULL for null). */
export function timestampParam(value: Date | null): Sql {
  return value ? sql`${value.toISOString()}::timestamptz` : sql`NULL::timestamptz`
}

/**
 * The validity condition (issue 31) of a filter over the entries aliased `alias`: see
 * `ValidityFilter`. Nothing for `ANY_VALIDITY`.
 * @example
 * sql`SELECT id FROM knowledge k WHERE ${validitySql('k', { now })}`
 */
export function validitySql(alias: 'k' | 'n' | 'm' | 'c', validity: ValidityFilter = {}): Sql | undefined {
  const a = sql.raw(alias)
  const parts: Sql[] = []
  const at = validity.asOf ?? validity.now
  if (validity.asOf) parts.push(sql`${a}.valid_from <= ${validity.asOf.toISOString()}::timestamptz`)
  if (!validity.superseded) {
    parts.push(validity.asOf ? sql`(${a}.valid_to IS NULL OR ${a}.valid_to > ${validity.asOf.toISOString()}::timestamptz)` : sql`${a}.valid_to IS NULL`)
  }
  if (!validity.expired && at) parts.push(sql`(${a}.expires_at IS NULL OR ${a}.expires_at > ${at.toISOString()}::timestamptz)`)
  return parts.length > 0 ? sql.join(parts, ' AND ') : undefined
}

/**
 * The entries (aliased `k`) a caller may add feedback to or vote on: those it sees, when it
 * may write at all ({@link WriteAccess}).
 * @example
 * sql`SELECT k.id FROM knowledge k WHERE k.id = ${id} AND ${writableSql(access)} FOR UPDATE`
 */
export function writableSql(access: WriteAccess): Sql {
  return sql`k.scopes && ${access.visible}::text[]`
}

/**
 * The entries (aliased `k`) a caller may change, replace, merge or close: those it sees, owned
 * by one of its ids or in a scope it manages (src/auth/policy.ts `mayManage`, as SQL). Every
 * statement that changes an entry by id carries it.
 * @example
 * sql`UPDATE knowledge k SET … WHERE k.id = ${id} AND ${manageableSql(access)}`
 */
export function manageableSql(access: WriteAccess): Sql {
  return sql`(k.scopes && ${access.visible}::text[] AND (k.owner = ANY(${access.owners}::text[]) OR k.scopes && ${access.scopes}::text[]))`
}

/** The WHERE clause of a filter over `knowledge k`: visibility first, always. */
export function filterSql(filter: EntryFilter): Sql {
  const parts: Sql[] = [sql`k.scopes && ${filter.visible}::text[]`]
  parts.push(sql`k.status = ANY(${filter.status ?? ['active']}::text[])`)
  const valid = validitySql('k', filter.validity)
  if (valid) parts.push(valid)
  if (filter.types && filter.types.length > 0) parts.push(sql`k.types && ${filter.types}::text[]`)
  if (filter.scopes && filter.scopes.length > 0) parts.push(sql`k.scopes && ${filter.scopes}::text[]`)
  if (filter.visibility && filter.visibility.length > 0) parts.push(sql`k.visibility = ANY(${filter.visibility}::text[])`)
  for (const [key, value] of Object.entries(filter.tags ?? {})) {
    parts.push(sql`(k.tags ->> ${key} = ${value} OR (jsonb_typeof(k.tags -> ${key}) = 'array' AND (k.tags -> ${key}) ? ${value}))`)
  }
  if (filter.minScore !== undefined) parts.push(sql`k.score >= ${filter.minScore}`)
  if (filter.nonNegativeQuality) parts.push(sql`(k.score + k.helpful - 2 * k.harmful_weight) >= 0`)
  return sql.join(parts, ' AND ')
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
export function termFrequencies(doc: SearchDocument): Map<string, number> {
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
export function documentColumns(doc: SearchDocument): { tsvector: Sql; tf: Sql; length: number } {
  const tf = termFrequencies(doc)
  return {
    tsvector: sql`array_to_tsvector(${[...tf.keys()]}::text[])`,
    tf: sql`${JSON.stringify(Object.fromEntries(tf))}::jsonb`,
    length: doc.title.length + doc.body.length,
  }
}

/** The keyset condition of a page after `(created_at, id)` in newest-first order. */
export function olderThan(after: { created_at: Date; id: string } | undefined): Sql {
  return after ? sql` AND (k.created_at, k.id) < (${after.created_at.toISOString()}::timestamptz, ${after.id})` : sql.empty
}

/** The embedding as a query parameter, when there is a vector table and a vector. */
export function embeddingSql(dialect: VectorDialect | undefined, embedding: Float32Array | undefined): Sql | undefined {
  return dialect && embedding ? dialect.param(embedding) : undefined
}

/** Sets an entry's embedding (nothing without a vector parameter). */
export async function setEmbedding(q: Queryable, id: string, value: Sql | undefined): Promise<void> {
  if (value) await q.query(sql`UPDATE knowledge SET embedding = ${value} WHERE id = ${id}`)
}

/** The inserted columns of an entry row, in the order of {@link recordValues}. */
const INSERT_COLUMNS = sql.raw(`id, message_id, types, task, tags, scopes, owner, content, resource_ids, resource_owners, source,
      score, owner_score, helpful, harmful, harmful_weight, confidence, status, merged_into, version, search_doc, search_tf, search_len, created_at, updated_at,
      valid_from, valid_to, superseded_by, supersedes, expires_at`)

/** One entry row's values (`(…)`), with its full-text columns and, when given, its embedding. */
function recordValues(r: KnowledgeRecord, doc: SearchDocument, embedding: Sql | undefined): Sql {
  const vectorValue = embedding ? sql`, ${embedding}` : sql.empty
  const text = documentColumns(doc)
  return sql`(${r.id}, ${r.message_id}, ${r.types}::text[], ${r.task}, ${JSON.stringify(r.tags)}::jsonb, ${r.scopes}::text[], ${r.owner},
      ${r.content}, ${r.resource_ids}::text[], ${JSON.stringify(r.resource_owners ?? {})}::jsonb, ${JSON.stringify(r.source)}::jsonb, ${r.score}, ${r.score}, ${r.helpful}, ${r.harmful}, ${r.harmful_weight ?? r.harmful},
      ${r.confidence}, ${r.status}, ${r.merged_into}, ${r.version}, ${text.tsvector}, ${text.tf}, ${text.length}, ${r.created_at.toISOString()}, ${r.updated_at.toISOString()},
      ${r.valid_from.toISOString()}, ${timestampParam(r.valid_to)}, ${r.superseded_by}, ${r.supersedes}, ${timestampParam(r.expires_at)}${vectorValue})`
}

/** Inserts one entry row with its full-text columns (and embedding); false when `onConflict` skipped it. */
export async function insertRecord(q: Queryable, r: KnowledgeRecord, doc: SearchDocument, embedding: Sql | undefined, onConflict: Sql): Promise<boolean> {
  const vectorColumn = embedding ? sql.raw(', embedding') : sql.empty
  const rows = await q.query(sql`INSERT INTO knowledge (${INSERT_COLUMNS}${vectorColumn})
    VALUES ${recordValues(r, doc, embedding)}
    ${onConflict}
    RETURNING id`)
  return rows.length > 0
}

/** Rows per multi-row INSERT: 31 parameters a row, within PostgreSQL's 65,535 parameters a statement. */
export const INSERT_ROWS_PER_STATEMENT = 500

/**
 * Inserts entry rows with one multi-row INSERT per {@link INSERT_ROWS_PER_STATEMENT} rows (a
 * bulk import: one round trip and one statement instead of one a row). `embeddings[i]` is the
 * vector parameter of `rows[i]` (NULL where undefined); `withEmbedding` adds the column.
 */
export async function insertRecords(
  q: Queryable,
  rows: ReadonlyArray<{ record: KnowledgeRecord; doc: SearchDocument; embedding: Sql | undefined }>,
  withEmbedding: boolean,
): Promise<void> {
  const vectorColumn = withEmbedding ? sql.raw(', embedding') : sql.empty
  for (let i = 0; i < rows.length; i += INSERT_ROWS_PER_STATEMENT) {
    const values = rows
      .slice(i, i + INSERT_ROWS_PER_STATEMENT)
      .map((row) => recordValues(row.record, row.doc, withEmbedding ? (row.embedding ?? sql`NULL`) : undefined))
    await q.query(sql`INSERT INTO knowledge (${INSERT_COLUMNS}${vectorColumn}) VALUES ${sql.join(values)}`)
  }
}
