/**
 * Keeps an in-memory index (`text-index.ts`: full text and vectors) equal to the knowledge
 * table of an embedded database. The table's triggers log every changed entry id in `knowledge_change`
 * (migration 0006) whatever path writes; before each search the index reads the log past
 * the last sequence number it applied, re-reads those entries, and applies them. A
 * TRUNCATE, a long log or the first search rebuild the whole index.
 *
 * On PGlite the triggers also notify a channel (migration 0030) that the index listens on:
 * while no notification came since the last read of the log, a sync runs no query at all.
 *
 * This relies on the embedded database running one statement at a time, in order (PGlite):
 * an entry read after a log row always reflects at least that change. On a PostgreSQL
 * server (`search.fulltext: memory`, issue 32), concurrent transactions can commit out of
 * sequence order: there the log is read by `server-log.ts` (numbers not yet seen are asked for
 * again until they appear or cannot), every search reads the log (no notifications: another
 * process's write must be seen at once), and the index holds no vectors (pgvector's HNSW
 * index answers vector search in SQL).
 */
import type { Logger } from '../../core/logger.js'
import { noopLogger } from '../../core/logger.js'
import type { Database } from '../database.js'
import { sql, type Sql } from '../sql.js'
import type { ServerChangeLog } from './server-log.js'
import { createTextIndex, type IndexedEntry, type TextIndex } from './text-index.js'
import { tagPairs } from './entries.js'

/** The channel the change log's triggers notify (migration 0030). */
const CHANGE_CHANNEL = 'knowhub_knowledge_change'
/** More changes than this since the last sync: rebuild instead of applying them one by one. */
const MAX_INCREMENTAL = 5_000
/** Rows read per page when rebuilding: each page is parsed at once (terms and vectors as JSON text), so a smaller page keeps the build's transient heap, which the process keeps, small. */
const PAGE = 1_000
/** Applied log rows kept before they are pruned. */
const PRUNE_AFTER = 2_000

type Row = {
  id: string
  scopes: string[]
  types: string[]
  status: string
  visibility: string
  tags: string
  score: number
  helpful: number
  harmful: number
  search_tf: string
  search_len: number
  trace: string | null
  created_us: string
  valid_from_ms: number
  valid_to_ms: number | null
  expires_ms: number | null
  embedding?: string | null
}

// search_tf as text: JSON.parse is several times faster than the driver's jsonb conversion.
// The index's harmful figure is the weighted one that seed 003's quality formula uses (docs/feedback.md).
// A trace's order is creation order to the microsecond (knowledge/search/neighbours.ts): as an integer,
// exact in a JS number until the year 2255.
const TEXT_COLUMNS =
  "id, scopes, types, status, visibility, tags::text AS tags, score, helpful, harmful_weight AS harmful, search_tf::text AS search_tf, search_len, source->>'trace_id' AS trace, (extract(epoch FROM created_at) * 1000000)::int8::text AS created_us, " +
  '(extract(epoch FROM valid_from) * 1000)::float8 AS valid_from_ms, (extract(epoch FROM valid_to) * 1000)::float8 AS valid_to_ms, ' +
  '(extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms'
const COLUMNS = sql.raw(TEXT_COLUMNS)
// With a vector column: the embedding too, as JSON text (pgvector's `[…]`, real[]'s `{…}`
// turned into `[…]`): JSON.parse reads it several times faster than the driver parses arrays.
const WITH_VECTORS = sql.raw(`${TEXT_COLUMNS}, translate(embedding::text, '{}', '[]') AS embedding`)

function toEntry(row: Row): IndexedEntry {
  return {
    id: row.id,
    scopes: row.scopes,
    types: row.types,
    status: row.status,
    visibility: row.visibility,
    tagPairs: tagPairs(JSON.parse(row.tags) as Record<string, unknown>),
    score: Number(row.score),
    helpful: Number(row.helpful),
    harmful: Number(row.harmful),
    tf: JSON.parse(row.search_tf) as Record<string, number>,
    length: Number(row.search_len),
    embedding: row.embedding ? (JSON.parse(row.embedding) as number[]) : null,
    trace: row.trace,
    created: Number(row.created_us),
    validFrom: Number(row.valid_from_ms),
    validTo: row.valid_to_ms === null ? null : Number(row.valid_to_ms),
    expires: row.expires_ms === null ? null : Number(row.expires_ms),
  }
}

export interface SyncedTextIndex {
  /**
   * Applies every change logged since the last sync (the first call builds the index).
   * Concurrent callers share one run; a caller never gets a run that started before it.
   */
  sync(): Promise<void>
  /** The index as of the last sync. */
  readonly index: TextIndex
  /**
   * The last change-log sequence number applied: where {@link SyncedTextIndex.cacheable},
   * equal numbers mean the same table contents (a cache key for search results). 0 before the
   * first sync.
   */
  readonly generation: number
  /**
   * Whether equal generations mean equal table contents (a response cache may key on them):
   * true on the embedded database; false on a server, where a change can fill a gap below the
   * position (`server-log.ts`).
   */
  readonly cacheable: boolean
  /** Whether the index holds the entries' vectors (`vectorKey` given): vector search may use it. */
  readonly holdsVectors: boolean
  /**
   * Syncs, then true: the index answers. On a server, while the index's first build runs (a
   * minute or two at a million entries), false at once instead, the build going on in the
   * background: the caller answers in SQL meanwhile. On the embedded database it always waits.
   */
  ready(): Promise<boolean>
  /** Stops reading the log (a server reader unregisters). */
  close(): Promise<void>
}

/** Options of {@link syncedTextIndex}. */
export interface SyncedTextIndexOptions {
  logger?: Logger
  /**
   * Whether the table has a vector column the index should hold, as a key that changes
   * whenever its contents may change wholesale (another embedder, a conversion): undefined
   * while there is none. A new key rebuilds the index on the next sync.
   */
  vectorKey?: () => string | undefined
  /**
   * Called with the ids of the entries a sync found changed, right after it read them from the
   * log and before the sync resolves; with undefined when it rebuilt the whole index (anything
   * may have changed). A record cache drops them (`record-cache.ts`).
   */
  onChange?: (ids?: readonly string[]) => void
  /**
   * A PostgreSQL server's log reader (`server-log.ts`, registered): the log is read with its
   * rules for concurrent writers. Absent on the embedded database.
   */
  serverLog?: ServerChangeLog
}

/** Reads the whole table into a new index; returns it with the log position it reflects. */
async function buildIndex(db: Database, columns: Sql, logger: Logger, serverLog?: ServerChangeLog): Promise<{ index: TextIndex; applied: number }> {
  const started = performance.now()
  const top = serverLog
    ? [{ position: String(await serverLog.beforeRebuild()) }]
    : await db.query<{ position: string | null }>(sql`SELECT max(seq)::text AS position FROM knowledge_change`)
  const index = createTextIndex()
  let after = ''
  for (;;) {
    const rows = await db.query<Row>(sql`SELECT ${columns} FROM knowledge WHERE id > ${after} ORDER BY id LIMIT ${PAGE}`)
    for (const row of rows) index.upsert(toEntry(row))
    if (rows.length < PAGE) break
    after = rows[rows.length - 1]!.id
  }
  index.compact()
  logger.info('store.text_index.built', { entries: index.size, ms: Math.round(performance.now() - started) })
  // Rows read after the log's top reflect at least every change up to it.
  return { index, applied: Number(top[0]?.position ?? 0) }
}

/** Re-reads the entries with these ids into the index; ids no longer in the table are removed. */
async function applyChanges(db: Database, columns: Sql, index: TextIndex, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  const rows = await db.query<Row>(sql`SELECT ${columns} FROM knowledge WHERE id = ANY(${ids}::text[])`)
  const present = new Set<string>()
  for (const row of rows) {
    index.upsert(toEntry(row))
    present.add(row.id)
  }
  for (const id of ids) if (!present.has(id)) index.remove(id)
}

/**
 * An in-memory full-text index kept in step with `db`'s knowledge table.
 * @example
 * const text = syncedTextIndex(db)
 * await text.sync()
 * text.index.search(['selenium'], { visible }, 50, DEFAULT_TEXT_RANKING)
 */
export function syncedTextIndex(db: Database, options: SyncedTextIndexOptions = {}): SyncedTextIndex {
  const logger = options.logger ?? noopLogger
  const vectorKey = options.vectorKey ?? (() => undefined)
  const onChange = options.onChange ?? (() => {})
  const serverLog = options.serverLog
  let index: TextIndex = createTextIndex()
  let applied = 0
  let built = false
  // The vector key the index was built with.
  let builtWith: string | undefined
  let pruned = 0
  let running: Promise<void> | undefined
  let queued: Promise<void> | undefined
  // With LISTEN on the change channel (PGlite): whether a change may have been logged since
  // the last read of the log. While false, a sync has nothing to read.
  let listening = false
  let dirty = true

  const columns = () => (builtWith === undefined ? COLUMNS : WITH_VECTORS)

  async function rebuild(): Promise<void> {
    builtWith = vectorKey()
    ;({ index, applied } = await buildIndex(db, columns(), logger, serverLog))
    built = true
    // After the log was read: rows fetched from now on reflect every change up to its top.
    onChange(undefined)
  }

  async function run(): Promise<void> {
    if (!listening && db.listen) {
      // Before the first read of the log: every change after it notifies.
      await db.listen(CHANGE_CHANNEL, () => {
        dirty = true
      })
      listening = true
    }
    dirty = false
    try {
      await apply()
    } catch (error) {
      dirty = true
      throw error
    }
  }

  async function apply(): Promise<void> {
    if (!built || builtWith !== vectorKey()) return rebuild()
    if (serverLog) return applyServer(serverLog)
    // (The position is read as text: int8 may exceed a JS number in other drivers' hands; order by the column.)
    const changes = await db.query<{ position: string; id: string | null }>(
      sql`SELECT seq::text AS position, id FROM knowledge_change WHERE seq > ${applied} ORDER BY seq LIMIT ${MAX_INCREMENTAL + 1}`,
    )
    if (changes.length === 0) return
    if (changes.length > MAX_INCREMENTAL || changes.some((c) => c.id === null)) {
      await rebuild()
    } else {
      const ids = [...new Set(changes.map((c) => c.id!))]
      onChange(ids)
      await applyChanges(db, columns(), index, ids)
      applied = Number(changes[changes.length - 1]!.position)
    }
    if (applied - pruned >= PRUNE_AFTER) {
      // This process is the only reader of the embedded database's log.
      await db.query(sql`DELETE FROM knowledge_change WHERE seq <= ${applied}`)
      pruned = applied
    }
  }

  /** A server's log: page by page until caught up; a rebuild when the reader says so. */
  async function applyServer(log: ServerChangeLog): Promise<void> {
    for (;;) {
      const read = await log.read()
      if (read.kind === 'rebuild') {
        logger.info('store.text_index.rebuild', { reason: read.reason })
        return rebuild()
      }
      if (read.ids.length > 0) {
        onChange(read.ids)
        await applyChanges(db, columns(), index, read.ids)
      }
      applied = log.position
      if (!read.more) break
    }
    await log.prune()
  }

  function sync(): Promise<void> {
    // Nothing logged since the last read began: a run in flight (it began after every change
    // so far) or none at all is up to date.
    if (listening && !dirty && built && builtWith === vectorKey()) return running ?? Promise.resolve()
    if (queued) return queued
    if (running) {
      queued = running
        .catch(() => {})
        .then(() => {
          queued = undefined
          return sync()
        })
      return queued
    }
    running = run().finally(() => {
      running = undefined
    })
    return running
  }

  return {
    sync,
    get index() {
      return index
    },
    get generation() {
      return applied
    },
    async ready() {
      if (serverLog && !built) {
        sync().catch((error: Error) => logger.warn('store.text_index.build_failed', { message: error.message }))
        return false
      }
      await sync()
      return true
    },
    cacheable: serverLog === undefined,
    holdsVectors: options.vectorKey !== undefined,
    close: async () => serverLog?.close(),
  }
}
