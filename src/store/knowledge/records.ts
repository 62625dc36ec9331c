/**
 * Knowledge entries themselves: insert, read, list, edit, score, status, delete. Every
 * read and every change of an existing entry takes the caller's visible scopes.
 */
import type { KnowledgeStatus, Tags } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { RecordCache } from './record-cache.js'
import { sql, type Sql } from '../sql.js'
import type { EntryFilter } from '../text-index/query.js'
import {
  COLUMNS,
  documentColumns,
  embeddingSql,
  filterSql,
  insertRecord,
  manageableSql,
  olderThan,
  setEmbedding,
  toRecord,
  type KnowledgeContext,
  type KnowledgeRecord,
  type SearchDocument,
} from './rows.js'
import { keepCurrentVersion } from './versions.js'

/** The entry queries of the knowledge store. */
export interface KnowledgeRecordQueries {
  /** Inserts an entry; returns false when the id is taken. */
  insert(record: KnowledgeRecord, doc: SearchDocument, embedding: Float32Array | undefined): Promise<boolean>
  get(id: string, visible: readonly string[]): Promise<KnowledgeRecord | undefined>
  /** With a record cache (the embedded store): fills it with the table's records and waits; else nothing. */
  warmRecords(): Promise<void>
  getMany(ids: readonly string[], visible: readonly string[]): Promise<KnowledgeRecord[]>
  /**
   * What each of `ids` is to a caller that writes with `access`: `manage` (it may change or
   * replace it), `see` (visible, not its to change) or `hidden` (taken by an entry it cannot
   * see). Absent: no entry has the id. A `hidden` id is an unknown id to the caller: a service
   * draws a new one and says nothing of the hidden entry.
   */
  claims(ids: readonly string[], access: WriteAccess): Promise<Map<string, IdClaim>>
  list(filter: EntryFilter, limit: number, after?: { created_at: Date; id: string }): Promise<KnowledgeRecord[]>
  /** The most trusted entries of a filter: confidence, then helpful cases, highest first (seed 002's user profile order). */
  topByConfidence(filter: EntryFilter, limit: number): Promise<KnowledgeRecord[]>
  /**
   * Replaces editable fields, keeping the previous text as a version, if the caller may
   * change the entry (`access`) and it is still at `expectedVersion`. Returns the new record or undefined.
   */
  update(
    id: string,
    access: WriteAccess,
    expectedVersion: number,
    change: Pick<KnowledgeRecord, 'task' | 'content' | 'types' | 'tags' | 'scopes' | 'resource_ids' | 'resource_owners'>,
    doc: SearchDocument,
    embedding: Float32Array | undefined,
    reason: string,
    at: Date,
  ): Promise<KnowledgeRecord | undefined>
  /** The entry owner and resource pins of each visible entry, for expanding `resource_ids` (issue 15.8). */
  resourcePins(ids: readonly string[], visible: readonly string[]): Promise<Map<string, { owner: string; pins: Record<string, string> }>>
  /** Moves the confidence a share `rate` (0-1) of the way to `target` (0-1), atomically, if the caller may change the entry. */
  moveConfidence(id: string, access: WriteAccess, target: number, rate: number, at: Date): Promise<KnowledgeRecord | undefined>
  /** Sets the status of an entry the caller may change; undefined when it may not (or there is none). */
  setStatus(id: string, access: WriteAccess, status: KnowledgeStatus, mergedInto: string | null, at: Date): Promise<KnowledgeRecord | undefined>
  /** Deletes an entry the caller may change; false when it may not (or there is none). */
  delete(id: string, access: WriteAccess): Promise<boolean>
  /** Entries (any status); with `visible`, only those visible through these scopes. */
  count(visible?: readonly string[]): Promise<number>
  /** Pages through all entries (any status), for reindexing. */
  scan(afterId: string, limit: number): Promise<Array<{ id: string; task: string; content: string; tags: Tags }>>
}

/** What an id is to a caller: see {@link KnowledgeRecordQueries.claims}. */
export type IdClaim = 'manage' | 'see' | 'hidden'

/**
 * Records kept in memory (the embedded store): the cache, and the sync of the change log
 * that drops what changed from it. Every read through the cache syncs first.
 */
export interface CachedRecords {
  cache: RecordCache
  sync(): Promise<void>
}

/** Whether an entry with these scopes is visible to a caller seeing `visible` (SQL's `scopes && visible`). */
function visibleTo(scopes: readonly string[], visible: readonly string[]): boolean {
  for (const scope of scopes) if (visible.includes(scope)) return true
  return false
}

/** Records read per page when filling the cache. */
const FILL_PAGE = 500

/**
 * `getMany` through the record cache: synced with the change log first, the records held and
 * visible to the caller from memory, the others from the database with the same visibility
 * clause (and kept). After the cache was emptied (the index rebuilt), a fill reads the table
 * into it page by page, in the background of the reads that follow. Callers get copies:
 * nothing they change reaches the cache.
 */
function cachedReader(db: KnowledgeContext['db'], cached: CachedRecords) {
  const { cache } = cached
  let filledFor = 0
  let filling: Promise<void> = Promise.resolve()

  async function fill(cleared: number): Promise<void> {
    let after = ''
    while (cache.clears === cleared && cache.size < cache.max) {
      const mark = cache.mark()
      const rows = (await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id > ${after} ORDER BY k.id LIMIT ${FILL_PAGE}`)).map(toRecord)
      cache.put(mark, rows)
      if (rows.length < FILL_PAGE) return
      after = rows[rows.length - 1]!.id
    }
  }

  /** Syncs, and starts a fill when the cache was emptied since the last one. */
  async function sync(): Promise<void> {
    await cached.sync()
    if (cache.clears !== filledFor) {
      filledFor = cache.clears
      // Only an optimisation: a failed page (e.g. the store closing) leaves reads to the database.
      filling = fill(filledFor).catch(() => {})
    }
  }

  return {
    async getMany(ids: readonly string[], visible: readonly string[]): Promise<KnowledgeRecord[]> {
      await sync()
      const found: KnowledgeRecord[] = []
      const missing: string[] = []
      for (const id of new Set(ids)) {
        const record = cache.get(id)
        if (!record) missing.push(id)
        else if (visibleTo(record.scopes, visible)) found.push(record)
      }
      if (missing.length > 0) {
        const mark = cache.mark()
        const rows = (await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id = ANY(${missing}::text[]) AND k.scopes && ${visible}::text[]`)).map(
          toRecord,
        )
        cache.put(mark, rows)
        found.push(...rows)
      }
      return found.map(copyRecord)
    },

    /** Syncs and waits for the fill to finish. */
    async warm(): Promise<void> {
      await sync()
      await filling
    },
  }
}

/** A copy of a record whose arrays and objects are its own. */
function copyRecord(r: KnowledgeRecord): KnowledgeRecord {
  return {
    ...r,
    types: [...r.types],
    tags: Object.fromEntries(Object.entries(r.tags).map(([key, value]) => [key, Array.isArray(value) ? [...value] : value])),
    scopes: [...r.scopes],
    resource_ids: [...r.resource_ids],
    ...(r.resource_owners ? { resource_owners: { ...r.resource_owners } } : {}),
    source: { ...r.source, ...(Array.isArray(r.source.urls) ? { urls: [...r.source.urls] } : {}) },
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
    valid_from: new Date(r.valid_from),
    valid_to: r.valid_to ? new Date(r.valid_to) : null,
    expires_at: r.expires_at ? new Date(r.expires_at) : null,
  }
}

/**
 * The entry queries over a database; with `cached` (the embedded store), `get` and `getMany`
 * read through its record cache.
 * @example
 * const records = recordQueries({ db, getDialect })
 * const entry = await records.get(id, visibleScopes(principal))
 */
export function recordQueries({ db, getDialect, reads: replicaReads }: KnowledgeContext, cached?: CachedRecords): KnowledgeRecordQueries {
  const reads = replicaReads ?? db
  /** An UPDATE of one entry the caller may change, returning it. */
  const updateManaged = async (id: string, access: WriteAccess, set: Sql) => {
    const rows = await db.query(sql`UPDATE knowledge k SET ${set} WHERE k.id = ${id} AND ${manageableSql(access)} RETURNING ${COLUMNS}`)
    return rows[0] ? toRecord(rows[0]) : undefined
  }
  const reader = cached ? cachedReader(db, cached) : undefined
  return {
    async warmRecords() {
      await reader?.warm()
    },

    async insert(record, doc, embedding) {
      return db.transaction(async (tx) => {
        return insertRecord(tx, record, doc, embeddingSql(getDialect(), embedding), sql`ON CONFLICT (id) DO NOTHING`)
      })
    },

    async get(id, visible) {
      if (reader) return (await reader.getMany([id], visible))[0]
      const rows = await reads.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id = ${id} AND k.scopes && ${visible}::text[]`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },

    async getMany(ids, visible) {
      if (ids.length === 0) return []
      if (reader) return reader.getMany(ids, visible)
      const rows = await reads.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE k.id = ANY(${ids}::text[]) AND k.scopes && ${visible}::text[]`)
      return rows.map(toRecord)
    },

    async claims(ids, access) {
      if (ids.length === 0) return new Map()
      const rows = await db.query<{ id: string; manage: boolean; see: boolean }>(sql`SELECT k.id, ${manageableSql(access)} AS manage,
          (k.scopes && ${access.visible}::text[]) AS see
        FROM knowledge k WHERE k.id = ANY(${ids}::text[])`)
      return new Map(rows.map((row) => [row.id, row.manage ? 'manage' : row.see ? 'see' : 'hidden']))
    },

    async list(filter, limit, after) {
      const rows = await reads.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE ${filterSql(filter)}${olderThan(after)}
        ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit}`)
      return rows.map(toRecord)
    },

    async topByConfidence(filter, limit) {
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowledge k WHERE ${filterSql(filter)}
        ORDER BY k.confidence DESC, k.helpful DESC, k.created_at DESC, k.id LIMIT ${limit}`)
      return rows.map(toRecord)
    },

    async resourcePins(ids, visible) {
      if (ids.length === 0) return new Map()
      const rows = await db.query<{ id: string; owner: string; resource_owners: Record<string, string> }>(
        sql`SELECT k.id, k.owner, k.resource_owners FROM knowledge k WHERE k.id = ANY(${ids}::text[]) AND k.scopes && ${visible}::text[]`,
      )
      return new Map(rows.map((row) => [row.id, { owner: row.owner, pins: row.resource_owners ?? {} }]))
    },

    async update(id, access, expectedVersion, change, doc, embedding, reason, at) {
      const text = documentColumns(doc)
      return db.transaction(async (tx) => {
        if (!(await keepCurrentVersion(tx, id, access, expectedVersion, reason))) return undefined
        const pins = change.resource_owners ? sql`, resource_owners = ${JSON.stringify(change.resource_owners)}::jsonb` : sql.empty
        const rows = await tx.query(sql`UPDATE knowledge k SET task = ${change.task}, content = ${change.content}, types = ${change.types}::text[],
            tags = ${JSON.stringify(change.tags)}::jsonb, scopes = ${change.scopes}::text[], resource_ids = ${change.resource_ids}::text[]${pins},
            search_doc = ${text.tsvector}, search_tf = ${text.tf}, search_len = ${text.length}, version = k.version + 1, updated_at = ${at.toISOString()}
          WHERE k.id = ${id} AND k.version = ${expectedVersion} AND ${manageableSql(access)}
          RETURNING ${COLUMNS}`)
        if (rows.length === 0) return undefined
        await setEmbedding(tx, id, embeddingSql(getDialect(), embedding))
        return toRecord(rows[0]!)
      })
    },

    async moveConfidence(id, access, target, rate, at) {
      return updateManaged(
        id,
        access,
        sql`confidence = confidence + (${target}::double precision - confidence) * ${rate}::double precision, updated_at = ${at.toISOString()}`,
      )
    },

    async setStatus(id, access, status, mergedInto, at) {
      return updateManaged(id, access, sql`status = ${status}, merged_into = ${mergedInto}, updated_at = ${at.toISOString()}`)
    },

    async delete(id, access) {
      const rows = await db.query(sql`DELETE FROM knowledge k WHERE k.id = ${id} AND ${manageableSql(access)} RETURNING k.id`)
      return rows.length > 0
    },

    async count(visible) {
      const where = visible ? sql`WHERE scopes && ${visible}::text[]` : sql``
      const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge ${where}`)
      return rows[0]?.n ?? 0
    },

    async scan(afterId, limit) {
      return db.query<{ id: string; task: string; content: string; tags: Tags }>(
        sql`SELECT id, task, content, tags FROM knowledge WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`,
      )
    },
  }
}
