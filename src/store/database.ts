/**
 * One small interface over the two PostgreSQL drivers: PGlite (embedded, WASM,
 * with pgvector) and node-postgres (a PostgreSQL server). Everything above the
 * store speaks to this interface; SQL is built only with the `sql` tag.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { KnowHubError, isKnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { prepareDataDir } from './data-dir.js'
import { lockDirectory, type DirectoryLock } from './lockfile.js'
import type { Sql } from './sql.js'

export type Row = Record<string, unknown>

/** Runs queries: a database, or a transaction on it. */
export interface Queryable {
  query<T extends Row = Row>(query: Sql): Promise<T[]>
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres'
  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * Runs `fn` holding a session-level advisory lock (`pg_advisory_lock`) on one connection,
   * so that two processes never run it at once (migrations, vector DDL).
   */
  withLock<T>(key: string, fn: (conn: Queryable & { exec(text: string): Promise<void> }) => Promise<T>): Promise<T>
  /**
   * Writes a server's address and local key into the embedded database's lock file, so a
   * one-shot CLI finds that server (src/store/lockfile.ts). Absent on a PostgreSQL server
   * and an in-memory database: nothing holds them exclusively.
   */
  announce?(server: { url: string; key: string }): void
  /**
   * Calls `onNotify` for every notification on `channel` (LISTEN), from when the returned
   * promise resolves. PGlite only: its notifications arrive with the response of the
   * committing statement, before that statement's promise resolves. Absent on a server pool.
   */
  listen?(channel: string, onNotify: () => void): Promise<void>
  /** The embedded database's files as a gzipped tarball (PGlite only: how a template is made). */
  dumpDataDir?(): Promise<Uint8Array>
  /** The connection pool's use now (metrics); PostgreSQL only: PGlite is one connection in the process. */
  pool?(): PoolUse
  close(): Promise<void>
}

/** Connections of a PostgreSQL pool: open, idle of them, callers waiting for one, and the pool's size. */
export interface PoolUse {
  total: number
  idle: number
  waiting: number
  max: number
}

/** SQLSTATEs of a lost or refused connection: class 08, admin/crash shutdown, starting up, too many connections. */
const UNAVAILABLE_SQLSTATES = /^(?:08...|57P0[1-3]|53300)$/u
/** Socket errors and node-postgres messages of a connection that is gone or cannot be made. */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const UNAVAILABLE_MESSAGE = /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect/iu

/**
 * True when a driver error means the database cannot be reached right now (a server restart,
 * a network cut), as opposed to a failing statement.
 * @example
 * if (isUnavailable(error)) client.release(true) // do not return a dead connection to the pool
 */
export function isUnavailable(error: unknown): boolean {
  if (isKnowHubError(error)) return error.code === 'database_unavailable'
  const e = error as { code?: unknown; message?: unknown } | undefined
  const code = typeof e?.code === 'string' ? e.code : ''
  return UNAVAILABLE_SQLSTATES.test(code) || UNAVAILABLE_ERRNO.has(code) || (typeof e?.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message))
}

function databaseError(error: unknown, query: { text: string; values: unknown[] }): KnowHubError {
  const pgError = error as { message?: string; code?: string }
  if (isUnavailable(error)) {
    return new KnowHubError(
      'database_unavailable',
      'The database is unavailable (connection lost, or the server is restarting); nothing was changed, try again',
      { ...(pgError.code ? { sqlstate: pgError.code } : {}) },
      { cause: error },
    )
  }
  // Parameters are left out: they may carry user content. The query text is code.
  return new KnowHubError(
    'database_error',
    `Database error: ${pgError.message ?? String(error)}`,
    {
      query: query.text.replace(/\s+/g, ' ').slice(0, 500),
      sqlstate: pgError.code,
    },
    { cause: error },
  )
}

async function run<T>(query: Sql, exec: (text: string, values: unknown[]) => Promise<T>): Promise<T> {
  const built = query.build()
  try {
    return await exec(built.text, built.values)
  } catch (error) {
    throw databaseError(error, built)
  }
}

/** Options of {@link openPGlite}. */
export interface PGliteOptions {
  /** A folder for the data, or `memory://` for a throwaway in-memory database. */
  dataDir: string
  logger?: Logger
  /**
   * An initialised database that a new folder starts from instead of running initdb, which
   * costs most of a first start: a data directory shut down cleanly (src/store/template.ts),
   * copied; or a gzipped dump (a backup), which PGlite unpacks. Ignored for a folder that
   * holds a database already, or when it does not exist.
   */
  template?: string
  /**
   * PostgreSQL's `shared_buffers` (e.g. `16MB`; default {@link DEFAULT_SHARED_BUFFERS}). PGlite
   * zeroes the whole pool at every open and never gives its memory back: a one-shot command
   * that reads a few pages opens ~0.5 s faster and ~150 MB smaller with 16MB. The data itself
   * is unaffected.
   */
  sharedBuffers?: string
}

/**
 * The embedded database's `shared_buffers` unless told otherwise: 16MB, not initdb's 128MB. A
 * server answers searches, `get` and neighbours from its in-memory indexes and record cache
 * (issue 18), so the pool mostly serves writes and listings; 32MB kept ~100 MB less resident
 * than 128MB, and 16MB another ~14 MB with no change in search throughput (issue 32;
 * docs/scale.md, "Memory").
 */
export const DEFAULT_SHARED_BUFFERS = '16MB'

/**
 * The folders of a PostgreSQL data directory, as initdb makes them (PostgreSQL 18's `subdirs`,
 * which PGlite runs). Most are empty in a cleanly shut down database, and a package manager drops
 * empty folders (`npm pack` keeps files only): a template copied from an installed package lacks
 * them, and PostgreSQL does not start without them (issue 42). Every copy makes them all.
 */
export const DATA_DIRECTORY_FOLDERS = [
  'global',
  'pg_wal/archive_status',
  'pg_wal/summaries',
  'pg_commit_ts',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_subtrans',
  'pg_twophase',
  'pg_multixact/members',
  'pg_multixact/offsets',
  'base/1',
  'pg_replslot',
  'pg_tblspc',
  'pg_stat',
  'pg_stat_tmp',
  'pg_xact',
  'pg_logical/snapshots',
  'pg_logical/mappings',
] as const

/**
 * Copies a data directory into a new folder, PG_VERSION last: a folder without it counts as
 * new, so a copy cut short (a full disk, a kill) is simply made again at the next open. The
 * folders PostgreSQL needs are made whether or not the source has them (an installed package
 * has no empty folder).
 */
function copyDataDirectory(from: string, to: string): void {
  for (const name of readdirSync(from)) {
    if (name !== 'PG_VERSION') cpSync(join(from, name), join(to, name), { recursive: true, force: true })
  }
  for (const folder of DATA_DIRECTORY_FOLDERS) mkdirSync(join(to, folder), { recursive: true })
  copyFileSync(join(from, 'PG_VERSION'), join(to, 'PG_VERSION'))
}

/**
 * Opens the embedded database (PGlite with the pgvector extension).
 * @example
 * const db = await openPGlite({ dataDir: '.knowhub/db' })
 */
export async function openPGlite(options: PGliteOptions): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite')
  const { vector } = await import('@electric-sql/pglite-pgvector')
  let lock: DirectoryLock | undefined
  if (!options.dataDir.startsWith('memory://')) {
    prepareDataDir(options.dataDir)
    lock = lockDirectory(options.dataDir)
  }
  const fresh = !options.dataDir.startsWith('memory://') && !existsSync(join(options.dataDir, 'PG_VERSION'))
  const source = fresh && options.template && existsSync(options.template) ? options.template : undefined
  let template: Blob | undefined
  if (source) {
    options.logger?.info('store.template', { template: source })
    try {
      if (statSync(source).isDirectory()) copyDataDirectory(source, options.dataDir)
      else template = new Blob([readFileSync(source)])
    } catch (error) {
      lock?.release()
      throw new KnowHubError(
        'database_error',
        `Cannot start ${options.dataDir} from ${source}: ${(error as Error).message}`,
        { dataDir: options.dataDir },
        { cause: error },
      )
    }
  }
  let pglite
  try {
    pglite = await PGlite.create({
      dataDir: options.dataDir,
      extensions: { vector },
      ...(template ? { loadDataDir: template } : {}),
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS}`],
    })
  } catch (error) {
    lock?.release()
    const reason = error instanceof Error && error.message ? error.message : String((error as { errno?: unknown })?.errno ?? error)
    throw new KnowHubError(
      'database_error',
      `Cannot open the embedded database in ${options.dataDir}: ${reason}`,
      { dataDir: options.dataDir },
      { cause: error },
    )
  }
  const db = pglite
  // A byte-array parameter goes in binary (the type's receive function, e.g. pgvector's
  // vector_recv for an imported embedding) instead of through PGlite's text serializers.
  const defaultSerializers = db.serializers as Record<number, ((value: unknown) => string) | undefined>
  const binaryAware = {
    serializers: new Proxy({} as Record<number, (value: unknown) => unknown>, {
      get: (_target, type) => (value: unknown) => (value instanceof Uint8Array ? value : (defaultSerializers[Number(type)]?.(value) ?? String(value))),
    }),
  }
  const queryOn = (target: { query: (text: string, values: unknown[], options?: object) => Promise<{ rows: unknown[] }> }): Queryable => ({
    query: <T extends Row>(query: Sql) =>
      run(query, async (text, values) => (await target.query(text, values, values.some((v) => v instanceof Uint8Array) ? binaryAware : undefined)).rows as T[]),
  })
  return {
    kind: 'pglite',
    ...queryOn(db),
    transaction: (fn) => db.transaction((tx) => fn(queryOn(tx))),
    // PGlite is single-connection and single-process: a lock is only a formality,
    // but taking it keeps the two backends on one code path.
    withLock: async (key, fn) => {
      const conn = { ...queryOn(db), exec: async (text: string) => void (await db.exec(text)) }
      await db.query('SELECT pg_advisory_lock(hashtext($1))', [key])
      try {
        return await fn(conn)
      } finally {
        await db.query('SELECT pg_advisory_unlock(hashtext($1))', [key])
      }
    },
    ...(lock ? { announce: lock.announce } : {}),
    listen: async (channel, onNotify) => void (await db.listen(channel, () => onNotify())),
    dumpDataDir: async () => new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer()),
    close: async () => {
      try {
        await db.close()
      } finally {
        lock?.release()
      }
    },
  }
}

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  connectionString: string
  /** Pool size (default 10). */
  max?: number
  logger?: Logger
  /** Statements run on every new connection (e.g. `SET hnsw.iterative_scan = relaxed_order`). */
  onConnect?: string[]
  /** Longest wait for a new connection before a request fails with `database_unavailable` (default 5 s): nothing hangs while the server is down. */
  connectTimeoutMs?: number
  /**
   * Longest wait for a query's answer, at the client (node-postgres `query_timeout`): a server
   * that stops answering without closing the connection (a network cut) fails the query instead
   * of hanging it. Default none (a long statement on the primary is allowed to run).
   */
  queryTimeoutMs?: number
}

/**
 * Connects to a PostgreSQL server with a connection pool (node-postgres).
 * @example
 * const db = await openPostgres({ connectionString: process.env.DATABASE_URL! })
 */
export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const { default: pg } = await import('pg')
  const logger = options.logger ?? noopLogger
  const onConnect = options.onConnect ?? []
  // The pool awaits `onConnect` before it hands a new connection out, so the statements run
  // one after another and before any query of ours (a 'connect' listener cannot be awaited).
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    // Dead connections are noticed by the kernel too, not only on the next query.
    keepAlive: true,
    ...(onConnect.length > 0
      ? {
          onConnect: async (client: { query: (text: string) => Promise<unknown> }) => {
            for (const statement of onConnect) {
              await client.query(statement).catch((error: Error) => logger.warn('store.pool.on_connect_failed', { statement, message: error.message }))
            }
          },
        }
      : {}),
  })
  pool.on('error', (error) => logger.error('store.pool.error', { message: error.message }))
  try {
    const client = await pool.connect()
    client.release()
  } catch (error) {
    await pool.end().catch(() => {})
    throw new KnowHubError('database_error', `Cannot connect to PostgreSQL: ${(error as Error).message}`, {}, { cause: error })
  }
  type Client = { query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> }
  const queryOn = (target: Client): Queryable => ({
    query: <T extends Row>(query: Sql) => run(query, async (text, values) => (await target.query(text, values)).rows as T[]),
  })
  // A connection of our own (transactions, locks): a failure to get one is `database_unavailable`,
  // and one that lost its server is destroyed on release instead of going back to the pool.
  // While checked out, a connection whose server goes away between two queries emits 'error' on
  // the client: without a listener that would crash the process. It is logged, and the next query fails.
  const onClientError = (error: Error) => logger.warn('store.connection_lost', { message: error.message })
  const connect = async () => {
    let client
    try {
      client = await pool.connect()
    } catch (error) {
      throw databaseError(error, { text: 'connect', values: [] })
    }
    client.on('error', onClientError)
    return client
  }
  const release = (client: Awaited<ReturnType<typeof connect>>, broken: boolean): void => {
    client.off('error', onClientError)
    client.release(broken)
  }
  const statement = async (client: Client, text: string): Promise<void> => {
    try {
      await client.query(text, [])
    } catch (error) {
      throw databaseError(error, { text, values: [] })
    }
  }
  return {
    kind: 'postgres',
    ...queryOn(pool),
    async transaction(fn) {
      const client = await connect()
      let broken = false
      try {
        await statement(client, 'BEGIN')
        const result = await fn(queryOn(client))
        await statement(client, 'COMMIT')
        return result
      } catch (error) {
        broken = isUnavailable(error)
        if (!broken) await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        release(client, broken)
      }
    },
    async withLock(key, fn) {
      const client = await connect()
      let broken = false
      try {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [key])
        try {
          return await fn({ ...queryOn(client), exec: async (text: string) => void (await client.query(text)) })
        } finally {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch((error: unknown) => {
            broken = isUnavailable(error)
            if (!broken) throw error
          })
        }
      } catch (error) {
        broken ||= isUnavailable(error)
        throw isKnowHubError(error) ? error : databaseError(error, { text: 'advisory lock', values: [] })
      } finally {
        release(client, broken)
      }
    },
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: options.max ?? 10 }),
    close: () => pool.end(),
  }
}
