/**
 * Read replicas: searches, lists and reads of a caller go to a PostgreSQL streaming replica when
 * one is fresh enough, everything else to the primary (docs/scale.md, "Read replicas").
 *
 * The rules, all decided here in the store (nothing above it knows a replica exists):
 * - Only reads the store marks as such (`reads`, used by search, list, get, versions) may leave
 *   the primary, and only inside a caller scope ({@link ReplicaRouter.run}) of a read-only
 *   request (GET/HEAD). Writes, transactions, locks and every other statement go to the primary,
 *   and so does every read of a request once it has written.
 * - Read your writes: when a scope that wrote ends, the primary's WAL insert position
 *   (`pg_current_wal_insert_lsn()`, past the scope's commits) is remembered for its caller and
 *   sent to the other KnowHub processes on the same primary (`pg_notify`). Until a replica has
 *   replayed past it (`pg_last_wal_replay_lsn()`), that caller's reads stay on the primary — for
 *   at most the lag bound plus two polls and a second: by then any replica that has not caught up is lagging
 *   past the bound and skipped anyway. For the first such bound after this process starts, every
 *   caller waits so for the primary's position at start (writes made before, through another
 *   process or a previous run, are known to no one here).
 * - Health without a query per request: every `pollMs` one statement on the primary (its WAL
 *   flush position) and one on each replica (recovery, replay position, paused). A replica that
 *   fails its poll, has left recovery (promoted), or lags more than `maxLagMs` behind the primary
 *   is skipped until a poll finds it well again. The lag is measured against the primary's own
 *   positions (the time since the primary was where the replica is now), not against clocks.
 * - A read that fails on a replica because it is gone, or is cancelled by a recovery conflict, is
 *   retried on the primary at once, and a replica that is gone is skipped from then on.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'
import { KnowHubError, isKnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { isUnavailable, openPostgres, type Database, type PostgresOptions, type Queryable, type Row } from './database.js'
import { sql, type Sql } from './sql.js'

/** Options of {@link openReplicaRouter}. */
export interface ReplicaOptions {
  /** Connection strings of the replicas (streaming standbys of the primary). */
  urls: readonly string[]
  /** The primary's connection string (its notifications of other processes' writes). */
  primaryUrl: string
  /** A replica further behind the primary than this is skipped (default 5,000 ms). */
  maxLagMs?: number
  /** How often the primary and each replica are polled (default 250 ms). */
  pollMs?: number
  /** Connections per replica pool (default 10). */
  max?: number
  logger?: Logger
}

/** Why a read went where it went (the `reason` label of the metrics). */
export type ReadRoute =
  /** A fresh replica that has replayed the caller's last write. */
  | 'replica'
  /** Outside a caller scope (CLI commands, start-up, background work): the primary. */
  | 'no_caller'
  /** A request that may write (not GET/HEAD): all of it on the primary. */
  | 'write_request'
  /** The caller wrote in this request, or no usable replica has replayed its last write yet. */
  | 'read_your_writes'
  /** Every replica is down or lagging past the bound. */
  | 'no_fresh_replica'
  /** The replica failed the read (gone, or a recovery conflict): retried on the primary. */
  | 'replica_failed'

/** One replica as the last poll saw it. */
export interface ReplicaStatus {
  /** `host:port/database` of its URL (no credentials): the metrics' `replica` label. */
  name: string
  /** Answered its last poll, in recovery, within the lag bound. */
  usable: boolean
  up: boolean
  /** Seconds behind the primary (0 when caught up); undefined before a poll or while down. */
  lagSeconds: number | undefined
  /** WAL bytes behind the primary's flush position at the last poll. */
  lagBytes: number | undefined
  paused: boolean
  /** Times it was passed over for a read: down (or promoted), lagging past the bound, behind the caller's last write. */
  skipped: { down: number; lagging: number; behind_caller: number }
  /** Reads it answered. */
  reads: number
}

/** What the metrics read at each scrape. */
export interface ReplicaStats {
  replicas: ReplicaStatus[]
  /** Reads answered by the primary, by reason. */
  primaryReads: Record<Exclude<ReadRoute, 'replica'>, number>
  /** Callers whose last write some replica has not replayed yet (remembered in this process). */
  pendingCallers: number
}

/** Routes reads; see the file comment. */
export interface ReplicaRouter {
  /** A read that may go to a replica (search, list, get). */
  readonly reads: Queryable
  /**
   * Runs `fn` as `caller` (a stable key: the token's id, `local`, …). `readOnly`: the request
   * cannot write (GET/HEAD), so its reads may use a replica.
   */
  run<T>(caller: string, readOnly: boolean, fn: () => Promise<T>): Promise<T>
  /** Marks the current scope as having written (called by the primary's wrapper). */
  wrote(): void
  stats(): ReplicaStats
  /** Polls now (tests; the timer does it every `pollMs`). */
  poll(): Promise<void>
  close(): Promise<void>
}

interface Scope {
  key: string
  readOnly: boolean
  wrote: boolean
}

interface Replica {
  name: string
  db: Database
  up: boolean
  inRecovery: boolean
  replay: bigint | undefined
  paused: boolean
  lagMs: number | undefined
  lagBytes: number | undefined
  skipped: ReplicaStatus['skipped']
  reads: number
}

const NOTIFY_CHANNEL = 'knowhub_replica_lsn'
/** SQLSTATE of a standby's query cancelled by a conflict with recovery (and serialization failures alike). */
const RECOVERY_CONFLICT = '40001'
/** A replica that takes longer than this to answer a read (a network cut without a reset) is given up on: the primary answers. */
const REPLICA_QUERY_TIMEOUT_MS = 15_000
/** node-postgres's message when `query_timeout` passes. */
const QUERY_TIMEOUT = /Query read timeout/iu

/** `X/Y` (two hex halves) as a number. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/')
  if (hi === undefined || lo === undefined || !/^[0-9A-F]+$/iu.test(hi) || !/^[0-9A-F]+$/iu.test(lo)) throw new Error(`not an LSN: ${text}`)
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`)
}

/** `host:port/database` of a connection string, without credentials. */
export function replicaName(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
  } catch {
    return 'replica'
  }
}

/** A caller's key as sent to other processes: a digest, so no token id travels. */
function callerDigest(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 22)
}

/** What a router keeps: its settings, the replicas as last polled, what it knows of callers' writes, its counters. */
interface RouterState {
  primary: Database
  logger: Logger
  maxLagMs: number
  pollMs: number
  /**
   * How long a caller's last write keeps its reads off the replicas that have not replayed it:
   * past this, a replica still behind it lags more than the bound (the lag is measured from the
   * primary's flush position, which an asynchronous commit reaches within 3 × wal_writer_delay,
   * 600 ms by default: hence the extra second) and is skipped anyway.
   */
  rememberMs: number
  scopes: AsyncLocalStorage<Scope>
  replicas: Replica[]
  /** Caller digest → its last write's LSN and when it was remembered. */
  lastWrites: Map<string, { lsn: bigint; at: number }>
  /** The primary's flush position over the last polls, oldest first: how far behind a replica is, in time. */
  samples: Array<{ at: number; lsn: bigint }>
  primaryReads: ReplicaStats['primaryReads']
  /** The replica the next read tries first (round robin). */
  next: number
  /** The primary's position when this process started: every caller waits for it during the first bound. */
  floor: { lsn: bigint; at: number }
}

async function routerState(primary: Database, options: ReplicaOptions): Promise<RouterState> {
  const logger = options.logger ?? noopLogger
  const maxLagMs = options.maxLagMs ?? 5_000
  const pollMs = options.pollMs ?? 250
  const replicas: Replica[] = []
  for (const url of options.urls) {
    replicas.push({
      name: replicaName(url),
      db: await openPostgresLazily(url, options.max ?? 10, logger),
      up: false,
      inRecovery: false,
      replay: undefined,
      paused: false,
      lagMs: undefined,
      lagBytes: undefined,
      skipped: { down: 0, lagging: 0, behind_caller: 0 },
      reads: 0,
    })
  }
  return {
    primary,
    logger,
    maxLagMs,
    pollMs,
    rememberMs: maxLagMs + 2 * pollMs + 1_000,
    scopes: new AsyncLocalStorage<Scope>(),
    replicas,
    lastWrites: new Map(),
    samples: [],
    primaryReads: { no_caller: 0, write_request: 0, read_your_writes: 0, no_fresh_replica: 0, replica_failed: 0 },
    next: 0,
    floor: { lsn: 0n, at: Date.now() },
  }
}

function remember(state: RouterState, digest: string, lsn: bigint, at = Date.now()): void {
  const known = state.lastWrites.get(digest)
  if (!known || known.lsn < lsn) state.lastWrites.set(digest, { lsn, at })
  else known.at = at
}

/** Forgets the writes every replica has replayed, or that are older than the bound. */
function forgetOld(state: RouterState, now: number): void {
  const settled = state.replicas.filter((r) => r.up && r.inRecovery && r.replay !== undefined)
  for (const [digest, write] of state.lastWrites) {
    if (now - write.at > state.rememberMs || (settled.length === state.replicas.length && settled.every((r) => r.replay! >= write.lsn))) {
      state.lastWrites.delete(digest)
    }
  }
}

/** How far behind a replica at `replay` is, in ms: since the newest sample it has replayed (the primary was at least there then). */
function lagOf(samples: RouterState['samples'], replay: bigint, now: number): number {
  for (let i = samples.length - 1; i >= 0; i--) if (samples[i]!.lsn <= replay) return i === samples.length - 1 ? 0 : now - samples[i]!.at
  return samples.length > 0 ? now - samples[0]!.at : Number.POSITIVE_INFINITY
}

/** One replica's poll: recovery, replay position, paused; down when it does not answer in time. */
async function pollReplica(state: RouterState, replica: Replica, now: number, primaryLsn: bigint | undefined): Promise<void> {
  const { logger } = state
  try {
    const [row] = await withTimeout(
      replica.db.query<{ recovery: boolean; replay: string | null; paused: boolean }>(
        sql`SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replay,
          CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS paused`,
      ),
      Math.max(1_000, state.pollMs * 4),
    )
    const wasUp = replica.up && replica.inRecovery
    replica.up = true
    replica.inRecovery = row?.recovery === true
    replica.paused = row?.paused === true
    replica.replay = row?.replay ? parseLsn(row.replay) : undefined
    replica.lagMs = replica.replay === undefined ? undefined : lagOf(state.samples, replica.replay, now)
    replica.lagBytes = replica.replay !== undefined && primaryLsn !== undefined ? Math.max(0, Number(primaryLsn - replica.replay)) : undefined
    if (!replica.inRecovery)
      logger.warn('store.replica.not_in_recovery', { replica: replica.name, message: 'this server is not a standby (promoted?): it gets no reads' })
    else if (!wasUp) logger.info('store.replica.up', { replica: replica.name })
  } catch (error) {
    if (replica.up) logger.warn('store.replica.down', { replica: replica.name, message: (error as Error).message })
    replica.up = false
    replica.lagMs = undefined
    replica.lagBytes = undefined
  }
}

/** One poll: the primary's flush position (a sample), then every replica. */
async function pollOnce(state: RouterState): Promise<void> {
  const now = Date.now()
  try {
    const [row] = await state.primary.query<{ lsn: string }>(sql`SELECT pg_current_wal_flush_lsn()::text AS lsn`)
    if (row) {
      state.samples.push({ at: now, lsn: parseLsn(row.lsn) })
      while (state.samples.length > 2 && now - state.samples[1]!.at > state.rememberMs * 2) state.samples.shift()
    }
  } catch (error) {
    state.logger.warn('store.replica.primary_poll_failed', { message: (error as Error).message })
  }
  const primaryLsn = state.samples.at(-1)?.lsn
  await Promise.all(state.replicas.map((replica) => pollReplica(state, replica, now, primaryLsn)))
  forgetOld(state, Date.now())
}

/** The write position a caller's reads must see: its last write's, or the start floor's, whichever is later and still within the bound. */
function pendingFor(state: RouterState, key: string): bigint | undefined {
  const write = state.lastWrites.get(callerDigest(key))
  const now = Date.now()
  const callerLsn = write && now - write.at <= state.rememberMs ? write.lsn : undefined
  const floorLsn = now - state.floor.at <= state.rememberMs ? state.floor.lsn : undefined
  return callerLsn === undefined ? floorLsn : floorLsn === undefined || callerLsn > floorLsn ? callerLsn : floorLsn
}

/** A replica for this caller now, or why not. */
function choose(state: RouterState, scope: Scope | undefined): Replica | Exclude<ReadRoute, 'replica' | 'replica_failed'> {
  if (!scope) return 'no_caller'
  if (!scope.readOnly) return 'write_request'
  if (scope.wrote) return 'read_your_writes'
  const pending = pendingFor(state, scope.key)
  const { replicas, maxLagMs } = state
  let behindCaller = false
  for (let i = 0; i < replicas.length; i++) {
    const replica = replicas[(state.next + i) % replicas.length]!
    if (!replica.up || !replica.inRecovery || replica.replay === undefined) replica.skipped.down++
    else if (replica.lagMs === undefined || replica.lagMs > maxLagMs) replica.skipped.lagging++
    else if (pending !== undefined && replica.replay < pending) {
      replica.skipped.behind_caller++
      behindCaller = true
    } else {
      state.next = (state.next + i + 1) % replicas.length
      return replica
    }
  }
  return behindCaller ? 'read_your_writes' : 'no_fresh_replica'
}

/** The reads that may leave the primary: on the replica `choose` picks, back on the primary when it is gone or conflicts. */
function routedReads(state: RouterState): Queryable {
  const { primary, primaryReads, logger } = state
  return {
    async query<T extends Row = Row>(query: Sql): Promise<T[]> {
      const target = choose(state, state.scopes.getStore())
      if (typeof target === 'string') {
        primaryReads[target]++
        return primary.query<T>(query)
      }
      try {
        const rows = await target.db.query<T>(query)
        target.reads++
        return rows
      } catch (error) {
        const conflict = isKnowHubError(error) && error.details?.sqlstate === RECOVERY_CONFLICT
        const gone = isUnavailable(error) || QUERY_TIMEOUT.test((error as Error).message)
        if (!gone && !conflict) throw error
        if (gone) {
          target.up = false
          logger.warn('store.replica.down', { replica: target.name, message: (error as Error).message })
        }
        primaryReads.replica_failed++
        return primary.query<T>(query)
      }
    },
  }
}

/** After a scope that wrote: the primary's position past its commits, remembered and sent to the other processes. */
async function rememberScopeWrites(state: RouterState, caller: string): Promise<void> {
  const digest = callerDigest(caller)
  try {
    const [row] = await state.primary.query<{ lsn: string }>(
      sql`SELECT l::text AS lsn, pg_notify(${NOTIFY_CHANNEL}, ${digest} || ' ' || l::text) FROM pg_current_wal_insert_lsn() AS l`,
    )
    if (row) remember(state, digest, parseLsn(row.lsn))
  } catch (error) {
    // Without the position, keep this caller on the primary for the whole bound.
    remember(state, digest, 2n ** 64n - 1n)
    state.logger.warn('store.replica.write_position_unknown', { message: (error as Error).message })
  }
}

function routerStats(state: RouterState): ReplicaStats {
  return {
    replicas: state.replicas.map((r) => ({
      name: r.name,
      usable: r.up && r.inRecovery && r.lagMs !== undefined && r.lagMs <= state.maxLagMs,
      up: r.up && r.inRecovery,
      lagSeconds: r.lagMs === undefined || !Number.isFinite(r.lagMs) ? undefined : r.lagMs / 1000,
      lagBytes: r.lagBytes,
      paused: r.paused,
      skipped: { ...r.skipped },
      reads: r.reads,
    })),
    primaryReads: { ...state.primaryReads },
    pendingCallers: state.lastWrites.size,
  }
}

/**
 * Opens a pool per replica and starts polling them. The replicas need not be up: one that
 * cannot be reached is skipped until it answers a poll.
 * @example
 * const router = await openReplicaRouter(primary, { urls: ['postgres://…replica…'], primaryUrl })
 * await router.run('token:tok_1', true, () => router.reads.query(sql`SELECT 1`))
 */
export async function openReplicaRouter(primary: Database, options: ReplicaOptions): Promise<ReplicaRouter> {
  const state = await routerState(primary, options)
  const listener = await listenForWrites(options.primaryUrl, state.logger, (payload) => {
    const [digest, lsn] = payload.split(' ')
    if (!digest || !lsn) return
    try {
      remember(state, digest, parseLsn(lsn))
    } catch {
      // not ours
    }
  })
  let polling: Promise<void> | undefined
  const poll = (): Promise<void> => (polling ??= pollOnce(state).finally(() => (polling = undefined)))
  // A process knows no caller's writes from before it started (through another process, or a
  // previous run of this one): for the first bound, every caller waits for the primary's position at start.
  const [start] = await primary.query<{ lsn: string }>(sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`)
  state.floor = { lsn: start ? parseLsn(start.lsn) : 0n, at: Date.now() }
  await poll()
  const timer = setInterval(() => void poll(), state.pollMs)
  timer.unref()
  return {
    reads: routedReads(state),
    async run(caller, readOnly, fn) {
      const scope: Scope = { key: caller, readOnly, wrote: false }
      try {
        return await state.scopes.run(scope, fn)
      } finally {
        // Past every commit of this scope: a replica that replayed this far shows them all.
        if (scope.wrote) await rememberScopeWrites(state, caller)
      }
    },
    wrote() {
      const scope = state.scopes.getStore()
      if (scope) scope.wrote = true
    },
    stats: () => routerStats(state),
    poll,
    async close() {
      clearInterval(timer)
      await polling?.catch(() => {})
      await listener.close()
      await Promise.all(state.replicas.map((r) => r.db.close().catch(() => {})))
    },
  }
}

/**
 * Which statements write: anything but a plain SELECT (a SELECT … FOR UPDATE, a data-modifying
 * CTE and DDL included). Statement text is code, never input, so a word here is a keyword or a
 * function of ours; a false "write" only keeps a caller on the primary a little longer.
 */
const WRITES =
  /\b(?:insert|update|delete|merge|truncate|create|alter|drop|vacuum|analyze|reindex|cluster|grant|revoke|lock|nextval|setval|pg_notify|for\s+(?:no\s+key\s+)?update|for\s+(?:key\s+)?share)\b/iu

/**
 * The primary with every write marked on the current caller scope (so that the scope's later
 * reads, and its caller's next requests until a replica catches up, stay on the primary).
 */
export function markingWrites(primary: Database, router: ReplicaRouter): Database {
  const mark = <T>(result: () => Promise<T>): Promise<T> => {
    router.wrote()
    return result()
  }
  return {
    ...primary,
    kind: primary.kind,
    query: <T extends Row = Row>(query: Sql) => (WRITES.test(query.build().text) ? mark(() => primary.query<T>(query)) : primary.query<T>(query)),
    transaction: (fn) => mark(() => primary.transaction(fn)),
    withLock: (key, fn) => mark(() => primary.withLock(key, fn)),
    close: async () => {
      await router.close()
      await primary.close()
    },
  }
}

function replicaPoolOptions(url: string, max: number, logger: Logger): PostgresOptions {
  return {
    connectionString: url,
    max,
    logger,
    connectTimeoutMs: 2_000,
    queryTimeoutMs: REPLICA_QUERY_TIMEOUT_MS,
    onConnect: ['SET hnsw.iterative_scan = relaxed_order'],
  }
}

/** A replica pool whose first connection may fail: the poll marks the replica down and retries. */
async function openPostgresLazily(url: string, max: number, logger: Logger): Promise<Database> {
  try {
    return await openPostgres(replicaPoolOptions(url, max, logger))
  } catch (error) {
    logger.warn('store.replica.down', { replica: replicaName(url), message: (error as Error).message })
    // One pool, made by the first statement after the replica answers (a failed attempt is retried by the next).
    let opened: Promise<Database> | undefined
    const open = (): Promise<Database> =>
      (opened ??= openPostgres(replicaPoolOptions(url, max, logger)).catch((reason: unknown) => {
        opened = undefined
        throw new KnowHubError('database_unavailable', `The replica ${replicaName(url)} is unavailable: ${(reason as Error).message}`, {}, { cause: reason })
      }))
    return {
      kind: 'postgres',
      query: async (query) => (await open()).query(query),
      transaction: async (fn) => (await open()).transaction(fn),
      withLock: async (key, fn) => (await open()).withLock(key, fn),
      close: async () => (await opened?.catch(() => undefined))?.close(),
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
    }),
  ])
}

/** One connection to the primary listening for other processes' write positions; reconnects after a loss. */
async function listenForWrites(url: string, logger: Logger, onPayload: (payload: string) => void): Promise<{ close(): Promise<void> }> {
  const { default: pg } = await import('pg')
  let closed = false
  let client: InstanceType<typeof pg.Client> | undefined
  let retry: NodeJS.Timeout | undefined
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, keepAlive: true })
    next.on('notification', (message) => {
      if (message.channel === NOTIFY_CHANNEL && message.payload) onPayload(message.payload)
    })
    next.on('error', (error) => {
      logger.warn('store.replica.listener_lost', { message: error.message })
      void next.end().catch(() => {})
      if (client === next) client = undefined
      if (!closed) retry = setTimeout(() => void connect().catch(() => {}), 1_000).unref()
    })
    try {
      await next.connect()
      await next.query(`LISTEN ${NOTIFY_CHANNEL}`)
      client = next
    } catch (error) {
      await next.end().catch(() => {})
      if (!closed) retry = setTimeout(() => void connect().catch(() => {}), 1_000).unref()
      throw error
    }
  }
  await connect().catch((error: Error) => logger.warn('store.replica.listener_lost', { message: error.message }))
  return {
    async close() {
      closed = true
      clearTimeout(retry)
      await client?.end().catch(() => {})
    },
  }
}
