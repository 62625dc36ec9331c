import { join } from 'node:path'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { openPGlite, openPostgres, type Database } from './database.js'
import { EMBEDDED_DB_FOLDER } from './lockfile.js'
import { usableTemplate } from './template.js'
import { knowledgeStore, type KnowledgeStore } from './knowledge/knowledge.js'
import { llmUsageStore, type LlmUsageStore } from './llm-usage.js'
import { migrate } from './migrate.js'
import { resourceStore, type ResourceStore } from './resources/resources.js'
import { secretReadStore, type SecretReadStore } from './resources/secret-reads.js'
import { RecordCache } from './knowledge/record-cache.js'
import { markingWrites, openReplicaRouter, type ReplicaRouter } from './replicas.js'
import { sql } from './sql.js'
import { ServerChangeLog } from './text-index/server-log.js'
import { syncedTextIndex } from './text-index/sync.js'
import {
  convertToPgvector,
  dropHnswIndex,
  detectPgvectorOnce,
  ensureVectorColumn,
  pgvectorInstalled,
  vectorDialect,
  type VectorConversion,
  type VectorDialect,
  type VectorIndexInfo,
} from './knowledge/vectors.js'

export type { VectorConversion } from './knowledge/vectors.js'

export interface OpenStoreOptions {
  /** Folder of the embedded database (PGlite). Ignored when `databaseUrl` is set. Default `.knowhub`. */
  dataDir?: string
  /** A PostgreSQL connection string: use a server instead of the embedded database. */
  databaseUrl?: string
  /**
   * Where full-text search runs: `memory` (an in-memory BM25 index kept in step with the
   * table through its change log: exact and fast) or `sql` (BM25 in SQL with bounded work).
   * Default: `memory` for the embedded database, `sql` for a server. On a server `memory`
   * holds no vectors (pgvector answers vector search) and costs about 1.5 GB of the process's
   * memory per million entries (docs/scale.md); every process that keeps one reads the log.
   */
  fulltext?: 'memory' | 'sql'
  /** The embedded database's `shared_buffers` (e.g. `16MB`); default 16MB (`DEFAULT_SHARED_BUFFERS`). Ignored for a server. */
  sharedBuffers?: string
  /**
   * Streaming replicas of the `databaseUrl` server that take searches, lists and reads
   * (src/store/replicas.ts). Refused (`config_error`) on the embedded database.
   */
  replicas?: { urls: readonly string[]; maxLagMs?: number; pollMs?: number }
  logger?: Logger
}

/** The state of the vector index against the configured embedder. */
export type VectorState =
  { status: 'ready'; info: VectorIndexInfo } | { status: 'mismatch'; stored: VectorIndexInfo; wanted: { model: string; dimension: number } }

/**
 * The storage layer: one database and the repositories over it.
 * Open it with {@link openStore}; close it with `close()`.
 */
export interface Store {
  readonly db: Database
  readonly knowledge: KnowledgeStore
  /** Resources (code, credentials, cookies); secrets stay encrypted here. */
  readonly resources: ResourceStore
  /** Token usage of the LLM per task and model. */
  readonly llmUsage: LlmUsageStore
  /** The audit of secret reads (every `secure_body` returned, through any surface). */
  readonly secretReads: SecretReadStore
  /** Whether pgvector is usable on this database. */
  readonly pgvector: boolean
  /**
   * The read replicas' router, when replicas are configured: an entry point runs each request in
   * its caller's scope (`run`) so that the caller reads its own writes; `stats` for the metrics.
   */
  readonly replicas?: ReplicaRouter
  /**
   * Makes sure vectors for this embedder can be stored: creates the vector table the first
   * time, and reports a mismatch (without changing anything) when the stored model or
   * dimension differ. `rebuild` drops the vectors and starts over for the new embedder.
   */
  prepareVectors(embedder: { model: string; dimension: number }, options?: { rebuild?: boolean }): Promise<VectorState>
  vectorState(): VectorState | undefined
  /**
   * Converts vectors stored as `real[]` (written while the server lacked pgvector) to
   * pgvector's `vector(N)` with an HNSW index, once the extension is installed
   * (`knowhub reindex --vectors`). No re-embedding; all or nothing. `config_error` when
   * pgvector is still not usable here.
   */
  convertVectors(): Promise<VectorConversion>
  /**
   * Tells one-shot commands where this process serves the API (the embedded database's
   * lock file); false where nothing holds the database exclusively (PostgreSQL, memory://).
   */
  announceServer(server: { url: string; key: string }): boolean
  /**
   * After an erasure: drops the given entries from the record cache and brings the in-memory
   * full-text and vector index up to date with the table (erased entries and their terms leave
   * it). Returns the caches it touched (none on a server, where search runs in SQL).
   */
  refreshCaches(entryIds: readonly string[]): Promise<string[]>
  close(): Promise<void>
}

/**
 * Opens the store: PGlite in `dataDir` (default), or a PostgreSQL server when
 * `databaseUrl` is given, then applies pending migrations.
 * @example
 * const store = await openStore({ dataDir: '.knowhub' })
 * try { … } finally { await store.close() }
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const logger = options.logger ?? noopLogger
  const fulltext = options.fulltext ?? (options.databaseUrl ? 'sql' : 'memory')
  const replicaUrls = options.replicas?.urls ?? []
  if (replicaUrls.length > 0 && !options.databaseUrl) {
    throw new KnowHubError(
      'config_error',
      'Read replicas (DATABASE_REPLICA_URLS) need a PostgreSQL primary (DATABASE_URL): the embedded database (PGlite) has no replicas. Unset DATABASE_REPLICA_URLS, or move the data to PostgreSQL (knowhub migrate --to postgres://…).',
    )
  }
  const primary = await openDatabase(options, fulltext, logger)
  let db = primary
  try {
    if (fulltext === 'sql' && db.kind === 'pglite') await db.query(sql.raw(CHANGE_LOG_OFF))
    await migrate(db, { logger })
    // PGlite always carries pgvector (openPGlite loads it): once the extension is installed, one catalog row says so.
    // On a server, decided under the migration lock: processes opening a new database together must agree.
    const pgvector = (db.kind === 'pglite' && (await pgvectorInstalled(db))) || (await detectPgvectorOnce(db, logger))
    // The embedded database keeps no HNSW index (see dropHnswIndex): one made by an earlier version goes.
    if (pgvector && db.kind === 'pglite') await dropHnswIndex(db)
    if (!pgvector) {
      logger.warn('store.vector.fallback', {
        message:
          'pgvector is not installed on this PostgreSQL server: vectors are stored as real[] and searched exactly (correct, slower). Install the vector extension for HNSW search.',
      })
    }
    const router =
      replicaUrls.length > 0 && options.databaseUrl
        ? await openReplicaRouter(primary, {
            urls: replicaUrls,
            primaryUrl: options.databaseUrl,
            logger,
            ...(options.replicas?.maxLagMs !== undefined ? { maxLagMs: options.replicas.maxLagMs } : {}),
            ...(options.replicas?.pollMs !== undefined ? { pollMs: options.replicas.pollMs } : {}),
          })
        : undefined
    // Every write through the store marks the caller's scope, so that its reads stay on the primary.
    if (router) db = markingWrites(primary, router)
    const reads = router?.reads ?? db
    const vectors = vectorSlot(db, pgvector, logger)
    // The embedded store: candidates from the in-memory index, the records of a search's
    // shortlist from a cache that the index's sync keeps current.
    // On a server (issue 32): the full-text index only, read from the log by a registered
    // reader; vectors and records stay in SQL (pgvector's HNSW index; no record cache).
    const server = primary.kind === 'postgres'
    const records = fulltext === 'memory' && !server ? new RecordCache() : undefined
    const textIndex =
      fulltext !== 'memory'
        ? undefined
        : server
          ? syncedTextIndex(primary, { logger, serverLog: await ServerChangeLog.register(primary, logger) })
          : syncedTextIndex(db, { logger, vectorKey: () => vectors.key(), onChange: (ids) => records?.drop(ids) })
    return {
      db,
      pgvector,
      ...(router ? { replicas: router } : {}),
      knowledge: knowledgeStore(db, () => vectors.dialect(), textIndex, records, reads),
      resources: resourceStore(db, reads),
      llmUsage: llmUsageStore(db),
      secretReads: secretReadStore(db),
      prepareVectors: (embedder, prepareOptions) => vectors.prepare(embedder, prepareOptions),
      vectorState: () => vectors.state(),
      convertVectors: () => vectors.convert(),
      announceServer: (server) => {
        if (!db.announce) return false
        db.announce(server)
        return true
      },
      async refreshCaches(entryIds) {
        if (!textIndex) return []
        records?.drop(entryIds)
        await textIndex.sync()
        return records ? ['records', 'text_index'] : ['text_index']
      },
      close: async () => {
        await textIndex?.close().catch((error: Error) => logger.warn('store.text_index.close_failed', { message: error.message }))
        await db.close()
      },
    }
  } catch (error) {
    await db.close().catch(() => {})
    throw error instanceof KnowHubError ? error : new KnowHubError('database_error', `Cannot open the store: ${(error as Error).message}`, {}, { cause: error })
  }
}

// Only an in-memory index reads the knowledge change log (migrations 0006, 0008): without
// one, a session's writes skip it.
const CHANGE_LOG_OFF = 'SET knowhub.change_log = off'

/**
 * The database: a PostgreSQL server pool (its sessions skip the change log unless it keeps an
 * in-memory index, or another process that keeps one is registered: migration 0053), or PGlite
 * in the data folder.
 */
async function openDatabase(options: OpenStoreOptions, fulltext: 'memory' | 'sql', logger: Logger): Promise<Database> {
  if (options.databaseUrl) {
    const onConnect = ['SET hnsw.iterative_scan = relaxed_order', ...(fulltext === 'memory' ? [] : [CHANGE_LOG_OFF])]
    return openPostgres({ connectionString: options.databaseUrl, logger, onConnect })
  }
  const dataDir = options.dataDir ?? '.knowhub'
  const template = await usableTemplate()
  return openPGlite({
    dataDir: dataDir.startsWith('memory://') ? dataDir : join(dataDir, EMBEDDED_DB_FOLDER),
    logger,
    ...(template ? { template } : {}),
    ...(options.sharedBuffers ? { sharedBuffers: options.sharedBuffers } : {}),
  })
}

/** The vector column's state against the configured embedder, and the operations that change it. */
interface VectorSlot {
  dialect(): VectorDialect | undefined
  state(): VectorState | undefined
  /**
   * While vectors can be searched: a key that changes whenever the vector column may have
   * changed wholesale without row writes (created, dropped, converted); else undefined.
   */
  key(): string | undefined
  prepare(embedder: { model: string; dimension: number }, options?: { rebuild?: boolean }): Promise<VectorState>
  convert(): Promise<VectorConversion>
}

/** See {@link Store.prepareVectors} and {@link Store.convertVectors}. */
function vectorSlot(db: Database, pgvector: boolean, logger: Logger): VectorSlot {
  let dialect: VectorDialect | undefined
  let state: VectorState | undefined
  // Counts column changes that write no rows (a rebuild drops the column; a conversion retypes it).
  let epoch = 0
  return {
    dialect: () => dialect,
    state: () => state,
    key: () => (dialect && state?.status === 'ready' ? `${epoch}:${state.info.backend}:${state.info.model}:${state.info.dimension}` : undefined),
    async prepare(embedder, prepareOptions = {}) {
      const wanted: VectorIndexInfo = { model: embedder.model, dimension: embedder.dimension, backend: pgvector ? 'pgvector' : 'array' }
      // Under the migration lock: the column another process made first (its type included) is the one used.
      const { info: stored, created } = await ensureVectorColumn(db, wanted, { rebuild: prepareOptions.rebuild ?? false, hnsw: db.kind !== 'pglite' })
      if (created) {
        epoch++
        dialect = vectorDialect(stored.backend)
        state = { status: 'ready', info: stored }
      } else if (stored.model !== embedder.model || stored.dimension !== embedder.dimension) {
        dialect = undefined
        state = { status: 'mismatch', stored, wanted: { model: embedder.model, dimension: embedder.dimension } }
      } else {
        dialect = vectorDialect(stored.backend)
        state = { status: 'ready', info: stored }
        if (pgvector && stored.backend === 'array') {
          logger.warn('store.vector.convertible', {
            message:
              'pgvector is installed but the vectors are stored as real[] (searched exactly): run `knowhub reindex --vectors` to move them to an HNSW index',
          })
        }
      }
      return state
    },
    async convert() {
      if (!pgvector) {
        throw new KnowHubError(
          'config_error',
          'pgvector is not usable on this PostgreSQL server: install the extension and run CREATE EXTENSION vector in this database as a superuser, then run this again',
        )
      }
      let conversion: VectorConversion
      try {
        conversion = await convertToPgvector(db)
      } catch (error) {
        if (error instanceof KnowHubError) throw error
        throw new KnowHubError('database_error', `Cannot convert the vectors: ${(error as Error).message}`, {}, { cause: error })
      }
      epoch++
      if (conversion.info && state?.status === 'ready') {
        dialect = vectorDialect(conversion.info.backend)
        state = { status: 'ready', info: conversion.info }
      }
      logger.info('store.vector.converted', { status: conversion.status, vectors: conversion.vectors })
      return conversion
    },
  }
}
