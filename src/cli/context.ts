import { createRequire } from 'node:module'
import { setFlagsFromString } from 'node:v8'
import type Pino from 'pino'
import type { FolderHolder } from '../app/locate.js'
import { folderHolder, holdsData } from '../app/locate.js'
import type { KnowHub } from '../app/open.js'
import type { PackSource } from '../app/packs.js'
import type { AgentBackend, KnowHubBackend } from '../core/backend.js'
import type { KnowHubConfig } from '../core/config.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { cliEnv, processEnv } from './env.js'
import { processIo, progress, type Io } from './output.js'
import { currentTiming } from './timing.js'

/** How log lines look: JSON lines, or human lines (`HH:MM:ss INFO GET /api/… 200 3 ms`). */
export type LogFormat = 'json' | 'pretty'

/** The request-log fields a pretty line shows in its message instead of below it. */
const REQUEST_FIELDS = ['request_id', 'method', 'path', 'status', 'duration_ms', 'caller']

/** A pino-pretty stream on stderr (loaded only when a terminal or KNOWHUB_LOG_FORMAT=pretty asks for it). */
function prettyStream(colorize: boolean): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: Record<string, unknown>) => NodeJS.WritableStream
  return pretty({
    destination: 2,
    sync: true,
    colorize,
    translateTime: 'SYS:HH:MM:ss',
    ignore: ['pid', 'hostname', ...REQUEST_FIELDS].join(','),
    messageFormat: (log: Record<string, unknown>, messageKey: string) =>
      log[messageKey] === 'http.request'
        ? `${String(log.method)} ${String(log.path)} ${String(log.status)} ${String(log.duration_ms)} ms  (${String(log.caller ?? '-')}, ${String(log.request_id)})`
        : String(log[messageKey] ?? ''),
  })
}

/**
 * A pino logger on stderr, behind the library Logger interface. The default level is
 * KNOWHUB_LOG_LEVEL, else `error`: one-shot commands report problems themselves, in words,
 * and a JSON warning line beside that message would say it twice. Long-running commands
 * pass their own default (`warn` for `knowhub mcp`, `info` for `knowhub start`). Lines are
 * human-readable on a terminal and JSON otherwise; KNOWHUB_LOG_FORMAT (json | pretty) decides.
 * @example
 * const logger = createCliLogger(cliEnv().logLevel ?? 'warn')
 */
export function createCliLogger(
  level = cliEnv().logLevel ?? 'error',
  format: LogFormat = cliEnv().logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json'),
): Logger {
  // Loaded on first use: commands that log nothing (and `--help`) never pay for it.
  const pino = createRequire(import.meta.url)('pino') as typeof Pino
  const options = { level, redact: { paths: ['*.apiKey', '*.secure_body', '*.token', '*.password'], censor: '[redacted]' } }
  const log = pino(options, format === 'pretty' ? prettyStream(Boolean(process.stderr.isTTY)) : pino.destination(2))
  return {
    debug: (message, fields) => log.debug(fields ?? {}, message),
    info: (message, fields) => log.info(fields ?? {}, message),
    warn: (message, fields) => log.warn(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
  }
}

/** Global options every command accepts. */
export interface GlobalOptions {
  config?: string
  /** `--allow-download`: the local embedder may download its model (`embedder.download`). */
  allowDownload?: boolean
}

/** How long a command runs in this process: `bulk` (import, export, reindex, migrate) works through many rows. */
export interface WorkloadOptions {
  /** The server or the MCP server: kept open, full database settings and the in-memory indexes. */
  longRunning?: boolean
  /** Works through every entry: worth V8's optimised WebAssembly code. */
  bulk?: boolean
  /**
   * Embeds text soon (a search, a server): the embedder's model loads beside the database; the
   * texts when known (a search's query: a model it does not need is not loaded).
   */
  embeds?: boolean | readonly string[]
  /** What `search.whileModelLoads: auto` means here (default `wait`): `knowhub start` answers full-text-only meanwhile. */
  whileModelLoads?: 'full-text' | 'wait'
  /** Report to a Prometheus registry (`knowhub start`: `GET /metrics`). */
  metrics?: boolean
  /** Threads of the sentence embedder's model (`knowhub start --embed-threads`): wins over the config. */
  embedThreads?: number
}

/** The port as the CLI has it: in this process or over HTTP, always with agents. */
export type CliBackend = KnowHubBackend & { readonly agent: AgentBackend }

/** Options of the commands that may run on a server: `--url` (KNOWHUB_URL) and `--token` (KNOWHUB_TOKEN). */
export interface SessionOptions extends GlobalOptions {
  url?: string
  token?: string
  /**
   * The command only reads (status, list, search, show, export, …): where the data folder holds
   * no database yet it says so and creates nothing (no folder, database or secret key).
   */
  readsOnly?: boolean
}

/**
 * The configuration of a command: env + config file (`--config`). Its schema loads here, when a
 * command first needs it: `--help` and commands that run on a server never do.
 */
export async function readConfig(options: GlobalOptions): Promise<KnowHubConfig> {
  const { loadConfig } = await import('./config.js')
  const config = loadConfig(processEnv(), options.config ? { configFile: options.config } : {})
  if (options.allowDownload && config.embedder.provider === 'local') config.embedder.download = true
  return config
}

/** A progress bar per file of the local embedder's model download, on stderr. */
function downloadProgress(): (p: { file: string; received: number; total: number }) => void {
  let current: { file: string; bar: ReturnType<typeof progress> } | undefined
  return ({ file, received, total }) => {
    if (current?.file !== file) {
      current?.bar.stop()
      current = { file, bar: progress(processIo, `downloading ${file}`) }
    }
    current.bar.update(received, total)
    if (received >= total) current.bar.stop()
  }
}

/** The answer of a command that only reads, in a data folder without a database. */
function noDataYet(config: KnowHubConfig): KnowHubError {
  return new KnowHubError(
    'not_found',
    `No KnowHub data in ${config.dataDir} yet, and this command only reads: it created nothing. \`knowhub save\` or \`knowhub start\` makes the database there; KNOWHUB_DATA_DIR (or DATABASE_URL) points at another.`,
    { data_dir: config.dataDir },
  )
}

/** The error of a held embedded database, for a command that needs the database itself. */
export function heldError(config: KnowHubConfig, holder: FolderHolder): KnowHubError {
  const owner = holder.owner
  const who = owner ? `process ${owner.pid} on ${owner.host}, since ${owner.started_at}` : 'another process'
  const message = owner?.url
    ? `The embedded database in ${config.dataDir} is held by the KnowHub server at ${owner.url} (${who}). This command needs the database itself: stop that server first (Ctrl-C), then run it again.`
    : `The embedded database in ${config.dataDir} is in use by ${who}. The embedded database serves one process at a time: stop the other process, talk to a KnowHub server over HTTP (--url, KNOWHUB_URL), or use a PostgreSQL server (DATABASE_URL). If no KnowHub process runs, delete ${holder.lockFile}.`
  return new KnowHubError('database_error', message, {
    lockFile: holder.lockFile,
    ...(owner ? { pid: owner.pid, host: owner.host } : {}),
    ...(owner?.url ? { url: owner.url } : {}),
  })
}

/** shared_buffers of the embedded database for a one-shot command: PGlite zeroes the pool at every open. */
const ONE_SHOT_SHARED_BUFFERS = '16MB'

/**
 * A one-shot command runs PGlite's 9 MB WebAssembly module for well under a second. By default
 * V8 compiles it twice: baseline code (Liftoff) to start, then optimised code (TurboFan) on the
 * other core, and the process waits for those compile jobs before it can exit. Baseline code
 * only halves the CPU of opening the database (1.2-1.4 s -> 0.6 s of CPU; 1.2 -> 0.85 s of wall
 * time, PGlite alone, 2-core VM) and changes nothing a command returns. Set before the first
 * module compiles; the server, the MCP server and bulk commands keep the optimising tier.
 */
function preferBaselineWasm(): void {
  setFlagsFromString('--liftoff-only')
}

/**
 * The server, the MCP server and bulk commands keep the optimising tier for the code that runs
 * hot, but not for the rest: with V8's default tiering budget, opening PGlite alone tiers up
 * enough of its module to cost ~1.1 s more CPU and ~60 MB more memory than baseline code
 * (2.3 s against 1.2 s of CPU, RSS 213 against 180 MB, 2-core VM). A budget 100 times larger
 * (V8's "bytes executed" before a function is optimised) leaves the start on baseline code and
 * still optimises the functions a long run keeps calling.
 */
export function preferHotWasmTiering(): void {
  setFlagsFromString('--wasm-tiering-budget=180000000')
}

/**
 * Keeps the event loop alive (a referenced timer) until the returned function is called.
 * When an await waits on nothing libuv knows (a WebAssembly compile, a promise PGlite resolves
 * from its WebAssembly), Node finds the loop empty and, before looking again, waits for every
 * background task of the platform to finish, V8's optimising compiles of PGlite's module
 * included: the main thread then sits idle. Opening the embedded database met this ~0.2 s after
 * PGlite's start (the next setImmediate ran 180-200 ms late; 0.3 ms with a timer referenced).
 */
export function keepLoopAlive(): () => void {
  const timer = setInterval(() => {}, 2 ** 30)
  return () => clearInterval(timer)
}

/**
 * Opens KnowHub from env + config file, runs `fn`, and always closes it. A held embedded
 * database is refused at once, before any model loads. A one-shot command (the default)
 * searches in SQL when the config says `search.fulltext: auto`: building the in-memory
 * index would cost more than the one search it serves; and it opens the embedded database
 * with a small buffer pool unless told otherwise, on baseline WebAssembly code unless it is
 * `bulk`. `longRunning` commands (the server, the MCP server) keep `auto`, which is the
 * in-memory index on the embedded database. The event loop is kept alive meanwhile
 * ({@link keepLoopAlive}).
 */
export async function withHub<T>(options: GlobalOptions & WorkloadOptions & { packs?: PackSource }, fn: (hub: KnowHub) => Promise<T>): Promise<T> {
  const config = await readConfig(options)
  const holder = folderHolder(config)
  if (holder) throw heldError(config, holder)
  if (options.embedThreads !== undefined) {
    if (config.embedder.provider !== 'sentence') {
      throw new KnowHubError(
        'config_error',
        `--embed-threads sets the threads of the sentence embedder's model; the configured embedder is ${config.embedder.provider}`,
        { embedder: config.embedder.provider },
      )
    }
    config.embedder.threads = options.embedThreads
  }
  if (!options.longRunning && config.search.fulltext === 'auto') config.search.fulltext = 'sql'
  if (config.search.whileModelLoads === 'auto') config.search.whileModelLoads = options.whileModelLoads ?? 'wait'
  if (!options.longRunning) config.embedded.sharedBuffers ??= ONE_SHOT_SHARED_BUFFERS
  if (!options.longRunning && !options.bulk) preferBaselineWasm()
  else preferHotWasmTiering()
  const release = keepLoopAlive()
  const timing = currentTiming()
  try {
    timing.mark('open')
    const { openKnowHub } = await import('../app/open.js')
    const metrics = options.metrics ? (await import('../app/metrics.js')).createMetrics() : undefined
    const hub = await openKnowHub(config, {
      ...(metrics ? { metrics } : {}),
      ...(timing.search && !metrics ? { search: { observer: timing.search } } : {}),
      logger: createCliLogger(cliEnv().logLevel ?? (options.longRunning ? 'warn' : 'error')),
      onModelDownload: downloadProgress(),
      ...(options.packs === undefined ? {} : { packs: options.packs }),
      // A server that answers full-text while the model loads (knowhub start) loads it once it listens (serve()'s warm-up).
      ...(options.embeds
        ? { warmEmbedder: options.embeds }
        : options.longRunning && config.search.whileModelLoads !== 'full-text'
          ? { warmEmbedder: true }
          : {}),
    })
    timing.mark('opened')
    if (timing.enabled && options.embeds) {
      hub.embedder.warmUp?.(options.embeds === true ? undefined : options.embeds).then(
        () => timing.mark('model'),
        () => undefined,
      )
    }
    try {
      return await fn(hub)
    } finally {
      timing.mark('done')
      await hub.close()
      timing.mark('closed')
    }
  } finally {
    release()
  }
}

/**
 * Where a one-shot command runs, decided before anything heavy loads: on the server at
 * `--url`/KNOWHUB_URL when given; on the KnowHub server that holds the embedded database
 * when one does (its lock file says where it listens, and holds the local key that acts
 * as its local principal), saying so in one line on stderr; else in this process.
 * @example
 * const page = await withSession(options, io, (session) => session.knowledge.list({ limit: 10 }))
 */
export async function withSession<T>(
  options: SessionOptions & Pick<WorkloadOptions, 'bulk' | 'embeds'> & { besideNote?: string; localNote?: string },
  io: Io,
  fn: (session: CliBackend) => Promise<T>,
): Promise<T> {
  const env = cliEnv()
  const url = options.url ?? env.url
  if (url) return fn(await remoteSession(url, options.token ?? env.token))
  const config = await readConfig(options)
  const holder = folderHolder(config)
  if (holder?.owner?.url) {
    io.err(
      `knowhub: the KnowHub server at ${holder.owner.url} (process ${holder.owner.pid}) holds ${config.dataDir}: ${options.besideNote ?? 'running this command there'}`,
    )
    return fn(await remoteSession(holder.owner.url, options.token ?? holder.owner.key))
  }
  if (holder) throw heldError(config, holder)
  if (options.readsOnly && !holdsData(config)) throw noDataYet(config)
  if (options.localNote) io.err(`knowhub: no KnowHub server holds ${config.dataDir}: ${options.localNote}`)
  const { localBackend } = await import('../app/backend.js')
  return withHub(options, (hub) => fn(localBackend(hub, hub.config.principal, { site: { via: 'cli', route: 'knowhub resource get' } })))
}

/**
 * The backend of the server at `url`, over `node:http` (src/cli/http-requester.ts): no undici in a
 * one-shot command. A local agent's folder is read here (loaded when a command needs it).
 */
async function remoteSession(url: string, token: string | undefined): Promise<CliBackend> {
  const [{ createClientOver }, { requesterFor }, { clientBackend }] = await Promise.all([
    import('../client/client.js'),
    import('./http-requester.js'),
    import('../client/backend.js'),
  ])
  const client = createClientOver(requesterFor(url), { baseUrl: url, ...(token ? { token } : {}) })
  return clientBackend(client, { agentFiles: async () => (await import('../app/agent-files.js')).localAgentFiles })
}
