/**
 * Binds the API to a socket with @hono/node-server. Decides the mode at start:
 * - token mode (some API token exists): every API request needs a token;
 * - local mode (no token): requests without a token are the config's principal, so
 *   the server only binds a loopback address and only answers to local Host headers
 *   (DNS-rebinding protection). Binding elsewhere without a token is refused.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { serve, type ServerType } from '@hono/node-server'
import type { KnowHub } from '../app/open.js'
import { compactHeap } from './heap.js'
import { packageVersion } from '../app/version.js'
import type { Clock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { createApp, type DashboardMount } from './app.js'
import { createAuthenticator, type Authenticator } from '../auth/authenticate.js'
import { createLatencyWindow, timedSearch, type LatencyWindow } from './dashboard/latency.js'
import type { McpServerOptions } from '../mcp/server.js'

export interface StartServerOptions {
  hub: KnowHub
  /** Default: the config's `server.host` (127.0.0.1). */
  host?: string
  /** Default: the config's `server.port` (8420); 0 picks a free port. */
  port?: number
  logger?: Logger
  clock?: Clock
  /** MCP at `/mcp`: knowledge packs for the pack tools, tool defaults (default: no packs). */
  mcp?: Omit<McpServerOptions, 'backend'>
  /**
   * A dashboard at `/` with its own authentication (see `DashboardMount` in app.ts), or a
   * function building it on the API's authenticator and search latency window
   * (`createDashboard` of src/server/dashboard/).
   */
  dashboard?: DashboardMount | ((api: { authenticate: Authenticator; latency: LatencyWindow }) => DashboardMount)
  /**
   * After the warm-up (the in-memory index built, the record cache filled), one compacting
   * garbage collection gives the heap its build left behind back to the system
   * (`src/server/heap.ts`; `knowhub start`: RSS at 100k entries 823 -> 643 MB). Default false.
   */
  compactHeapAfterWarmUp?: boolean
}

export interface RunningServer {
  /** `http://127.0.0.1:8420` */
  readonly url: string
  readonly host: string
  readonly port: number
  /** True in local mode (no token existed at start). */
  readonly local: boolean
  /**
   * Every route the server answers (method and path pattern as registered, middleware left
   * out): what the tenancy suite walks, so a new route without a case fails it.
   */
  readonly routes: ReadonlyArray<{ method: string; path: string }>
  /**
   * Graceful stop: stops accepting connections, lets requests in flight finish (at most
   * `timeoutMs`, default the config's `server.shutdownTimeoutMs`, then their connections are cut),
   * and closes idle keep-alive connections. The hub (database) is the caller's to close after.
   */
  close(options?: { timeoutMs?: number }): Promise<void>
}

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1'
}

function describePrincipal(p: KnowHub['config']['principal']): string {
  return (['user', 'agent', 'project', 'team', 'org'] as const).flatMap((k) => (p[k] ? [`${k}:${p[k]}`] : [])).join(' ') || '(no ids)'
}

/** The client address and raw request target of a request served by @hono/node-server. */
function nodeConnection(env: unknown): { address?: string | undefined; rawTarget?: string | undefined } {
  const incoming = (env as { incoming?: { url?: string; socket?: { remoteAddress?: string } } } | undefined)?.incoming
  return { address: incoming?.socket?.remoteAddress, rawTarget: incoming?.url }
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Local mode answers every request as the local principal: only on a loopback address. */
function assertSafeBind(local: boolean, host: string, principal: KnowHub['config']['principal']): void {
  if (local && !isLoopback(host)) {
    throw new KnowHubError(
      'config_error',
      `Refusing to listen on ${host}: no API token exists, so every request would act as the local principal (${describePrincipal(principal)}) with no authentication. ` +
        'Create a token first (knowhub token create --user ID --org ID), or listen on 127.0.0.1.',
      { host },
    )
  }
}

/** Binds `fetch` to host:port; a port in use or another bind failure is a `config_error`. */
function listen(fetch: (request: Request, env: unknown) => Response | Promise<Response>, host: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const s = serve({ fetch, hostname: host, port }, () => resolve(s))
    s.on('clientError', answerMalformed)
    s.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new KnowHubError('config_error', `Port ${port} on ${host} is in use: pick another with --port or KNOWHUB_PORT`, { host, port })
          : new KnowHubError('config_error', `Cannot listen on ${host}:${port}: ${error.message}`, { host, port }),
      )
    })
  })
}

/**
 * A request Node's HTTP parser refuses (raw non-ASCII bytes in the URL, a broken request line or
 * header) gets a JSON error body that says what to fix, instead of Node's bare 400.
 */
function answerMalformed(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || !error.code?.startsWith('HPE_')) return void socket.destroy()
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
  const message = tooLarge
    ? 'The request headers are too large'
    : 'The request is not valid HTTP. A URL must be ASCII: percent-encode other characters (q=%E6%97%A5%E6%9C%AC for q=日本, as encodeURIComponent does; curl -G --data-urlencode "q=日本")'
  const body = JSON.stringify({ error: { code: 'validation_error', message, details: { reason: error.code } } })
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'
  socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
}

/** Counts the server's requests in flight — from the request to the last byte of its response — and resolves `idle()` once none is. */
function inFlight(server: ServerType): { idle(): Promise<void> } {
  let count = 0
  let waiters: Array<() => void> = []
  server.on('request', (_request: unknown, response: { once(event: 'close', listener: () => void): void }) => {
    count++
    response.once('close', () => {
      if (--count === 0) {
        for (const wake of waiters) wake()
        waiters = []
      }
    })
  })
  return { idle: () => (count === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))) }
}

/**
 * Stops accepting, closes idle keep-alive connections, waits for the requests in flight (at most
 * `timeoutMs`), then ends every connection left.
 */
async function closeServer(server: ServerType, requests: ReturnType<typeof inFlight>, timeoutMs: number, logger: Logger): Promise<void> {
  const s = server as ServerType & { closeAllConnections?: () => void; closeIdleConnections?: () => void }
  const closed = new Promise<void>((resolve, reject) => s.close((error) => (error ? reject(error) : resolve())))
  s.closeIdleConnections?.()
  let timer: NodeJS.Timeout | undefined
  const timedOut = await Promise.race([
    requests.idle().then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
  ])
  clearTimeout(timer)
  if (timedOut) logger.warn('server.shutdown_timeout', { timeoutMs })
  s.closeAllConnections?.()
  await closed
}

/** The app's routes without its middleware (handlers taking `next`), each once. */
function serverRoutes(app: ReturnType<typeof createApp>): Array<{ method: string; path: string }> {
  const seen = new Map<string, { method: string; path: string }>()
  for (const route of app.routes) if (route.handler.length < 2) seen.set(`${route.method} ${route.path}`, { method: route.method, path: route.path })
  return [...seen.values()]
}

/**
 * Starts the HTTP server.
 * @example
 * const hub = await openKnowHub(config)
 * const server = await startServer({ hub, port: 0 })
 * console.log(server.url)
 * await server.close(); await hub.close()
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { hub } = options
  const settings = hub.config.server
  const host = options.host ?? settings.host
  const logger = options.logger ?? noopLogger
  const clock = options.clock ? { clock: options.clock } : {}
  const local = !(await hub.tokens.hasAny())
  assertSafeBind(local, host, hub.config.principal)

  // Filled in once the port is known (it may be 0 until bound).
  const bound: { hosts?: ReadonlySet<string> } = {}
  const extraHosts = settings.allowedHosts.map((h) => h.toLowerCase())
  const allowedHosts = local || extraHosts.length > 0 ? () => bound.hosts ?? new Set<string>() : undefined

  // The local key goes into the embedded database's lock file once bound: the CLI beside this server acts as the local principal with it.
  const localKey = `khl_${randomBytes(24).toString('base64url')}`
  const authenticate = createAuthenticator({ tokens: hub.tokens, localPrincipal: hub.config.principal, localMode: local, localKey, ...clock })
  // Every search (API, MCP, dashboard) is timed: the dashboard's overview shows the percentiles.
  const latency = createLatencyWindow()
  const dashboard = typeof options.dashboard === 'function' ? options.dashboard({ authenticate, latency }) : options.dashboard
  const app = createApp({
    knowledge: timedSearch(hub.knowledge, latency),
    resources: hub.resources,
    slim: hub.slim,
    extraction: hub.extraction,
    agent: hub.agent,
    admin: hub.admin,
    erasure: hub.erasure,
    users: hub.users,
    embedderReady: () => hub.embedder.ready?.() ?? true,
    ...(hub.metrics ? { metrics: hub.metrics } : {}),
    ...(hub.store.replicas ? { callerScope: hub.store.replicas } : {}),
    authenticate,
    logger,
    version: packageVersion(),
    bodyLimit: settings.bodyLimit,
    rateLimit: { perSecond: settings.rateLimit, burst: settings.rateBurst },
    ...(allowedHosts ? { allowedHosts } : {}),
    ...clock,
    mcp: { embedder: hub.embedder, ...options.mcp },
    connection: nodeConnection,
    trustedProxies: settings.trustedProxies,
    ...(dashboard ? { dashboard } : {}),
  })

  let stopping: Promise<unknown> | undefined
  const server = await listen(app.fetch, host, options.port ?? settings.port)
  const requests = inFlight(server)
  const port = (server.address() as AddressInfo).port
  bound.hosts = local
    ? new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${urlHost(host).toLowerCase()}:${port}`, ...extraHosts])
    : new Set(extraHosts)
  const url = `http://${urlHost(host)}:${port}`
  // Where a process on this machine reaches the server (a wildcard address is not one to connect to).
  hub.store.announceServer({ url: host === '0.0.0.0' || host === '::' ? `http://127.0.0.1:${port}` : url, key: localKey })
  logger.info('server.started', { url, mode: local ? 'local' : 'token' })
  // Build the search index now rather than on the first request; a search meanwhile waits for it.
  const warming = Promise.all([hub.knowledge.warmUp(), hub.embedder.warmUp?.()]).then(
    () => {
      if (!options.compactHeapAfterWarmUp) return
      const { before, after, ms } = compactHeap()
      logger.info('server.heap_compacted', { heapMbBefore: Math.round(before / 2 ** 20), heapMbAfter: Math.round(after / 2 ** 20), ms })
    },
    (error: Error) => logger.warn('server.warmup_failed', { message: error.message }),
  )

  return {
    url,
    host,
    port,
    local,
    routes: serverRoutes(app),
    close(closeOptions = {}) {
      // Idempotent: a second call (a second signal) waits for the same shutdown.
      stopping ??= closeServer(server, requests, closeOptions.timeoutMs ?? settings.shutdownTimeoutMs, logger).then(() => warming)
      return stopping.then(() => undefined)
    },
  }
}
