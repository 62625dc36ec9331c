/**
 * The HTTP API as a Hono app over Web Request/Response. `createApp` composes the named
 * middleware of src/server/middleware/ in one place — request id + access log, the raw
 * path check, Host/Origin checks (local mode), authentication, the per-caller rate limit,
 * the body limit — then the routes, and one `onError` that maps every error to the JSON
 * error shape. `serve.ts` binds it to a socket; tests call `app.request()` in-process.
 *
 * Two realms share the middleware: the API (`/api/*`, `/mcp`) authenticates with bearer
 * tokens; a dashboard, when given, is mounted at `/` with its own authenticator (a cookie
 * session) for every other path.
 */
import { Hono } from 'hono'
import type { AgentService } from '../agent/service.js'
import type { Authenticator } from '../auth/authenticate.js'
import type { Clock } from '../core/clock.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { McpServerOptions } from '../mcp/server.js'
import type { ResourceService } from '../resources/service.js'
import type { AdminService } from '../admin/admin.js'
import type { ErasureService } from '../users/erasure.js'
import type { UsersService } from '../users/profile.js'
import type { HubMetrics } from '../app/metrics.js'
import { servicesBackend } from '../app/backend.js'
import { toolPackService } from '../tools/packs.js'
import { errorHandler, notFoundHandler } from './errors.js'
import { caller, type AppEnv, type Connection } from './http.js'
import { authenticate } from './middleware/auth.js'
import { trustedProxies } from './middleware/client-address.js'
import { bodyLimit } from './middleware/body-limit.js'
import { callerScope, type CallerScope } from './middleware/caller-scope.js'
import { dotSegments } from './middleware/dot-segments.js'
import { hostCheck } from './middleware/host-check.js'
import { createRateLimiter, rateLimit } from './middleware/rate-limit.js'
import { httpMetrics } from './middleware/metrics.js'
import { requestLog } from './middleware/request-log.js'
import { redactingLogger } from './redact.js'
import { agentRoutes } from './routes/agent.js'
import { adminRoutes } from './routes/admin.js'
import { knowledgeRoutes } from './routes/knowledge.js'
import { knowledgeFolderRoutes } from './routes/knowledge-folder.js'
import { metaRoutes } from './routes/meta.js'
import { metricsRoutes } from './routes/metrics.js'
import { resourceRoutes, secretReadRoutes } from './routes/resources.js'
import { mountOperations } from './routes/operations.js'
import { USER_OPERATIONS } from '../core/operations.js'
import type { SlimService } from '../knowledge/slim/slim.js'
import type { ExtractionService } from '../knowledge/extract/extract.js'

/**
 * Pages served beside the API, at `/`, with their own authentication (a cookie session,
 * say) instead of the API's bearer tokens. Every path outside `/api`, `/mcp` and the
 * public meta routes belongs to the dashboard.
 */
export interface DashboardMount {
  /** The dashboard's routes, mounted at `/`. Handlers read the caller with `caller(c)`. */
  routes: Hono<AppEnv>
  /** Resolves the caller of a dashboard request, or throws `unauthenticated`. */
  authenticate: Authenticator
  /** Dashboard paths served without a caller (a login page, static assets). */
  isPublic?: (path: string) => boolean
  /**
   * Public requests that check a credential themselves (the sign-in): they go through the same
   * failed-authentication limit as the API — refused with `rate_limited` past it, and each
   * `unauthenticated` answer counted.
   */
  signInPaths?: (method: string, path: string) => boolean
}

export interface AppDeps {
  knowledge: KnowledgeService
  resources: ResourceService
  slim: SlimService
  /** Knowledge extraction (`POST /api/knowledge/extract`, the knowledge_extract tool); absent: `llm_not_configured`. */
  extraction?: ExtractionService
  /** Agent contexts and goal trees (`/api/agent/context`, `/api/goals`, the `goal` tool); absent: not served. */
  agent?: AgentService
  /** Resolves the caller of an API request (see `createAuthenticator`). */
  authenticate: Authenticator
  /** Access and error logs go here (secret-named fields are redacted). */
  logger?: Logger
  clock?: Clock
  /** Reported by /healthz and the OpenAPI document. */
  version?: string
  /** Largest request body in bytes (default 2 MiB): 413 beyond. */
  bodyLimit?: number
  /** Per-caller rate limit; `perSecond: 0` (the default here) turns it off. */
  rateLimit?: { perSecond: number; burst: number }
  /**
   * Host header values (`host:port`, lower case) accepted, for DNS-rebinding protection
   * in local mode; cross-site browser requests (Origin/Sec-Fetch-Site) are refused too.
   * Undefined: no check (token mode). A function, because the port is known only once bound.
   */
  allowedHosts?: () => ReadonlySet<string> | undefined
  /** MCP over streamable HTTP at `/mcp` (same auth as the API): packs, tool defaults. */
  mcp?: Omit<McpServerOptions, 'backend'>
  /**
   * Failed authentications (missing, malformed, unknown, revoked or expired token) per
   * client address and per presented token prefix: after `burst` failures, one more per
   * `1 / perSecond` s; beyond that a failed attempt answers `rate_limited`. A valid token
   * is always checked first and never refused by this limit. Default 1/s, burst 20;
   * `perSecond: 0` turns it off.
   */
  authFailureLimit?: { perSecond: number; burst: number }
  /** The client address and raw request target (see {@link Connection}); `serve.ts` reads them from Node's request. */
  connection?: Connection
  /** Reverse proxies (addresses or CIDR ranges) whose `X-Forwarded-For` names the client; default none (the header is ignored). */
  trustedProxies?: readonly string[]
  /** A dashboard at `/` with its own authentication (see {@link DashboardMount}). */
  dashboard?: DashboardMount
  /** `/api/status` and `/api/tokens` for callers with the `admin` permission. */
  admin?: AdminService
  /** Forget (`DELETE /api/principals/{principal}`) and purge (`POST /api/admin/purge`); absent: not served. */
  erasure?: ErasureService
  /** Users' profiles (`GET /api/users/{id}/profile`); absent: not served. */
  users?: UsersService
  /** Whether the embedder's model has loaded, for `/healthz` (`embedder: loading | ready`); absent: not reported. */
  embedderReady?: () => boolean
  /** Request metrics, and `GET /metrics` for an administrator or a loopback local caller; absent: neither. */
  metrics?: Pick<HubMetrics, 'http' | 'scrape'>
  /** With read replicas: each authenticated request runs in its caller's scope (`hub.store.replicas`), see middleware/caller-scope.ts. */
  callerScope?: CallerScope
}

/** Paths anyone may call: liveness and the API description. */
const PUBLIC_PATHS = new Set(['/healthz', '/api/openapi.json'])

function isApiPath(path: string): boolean {
  return path === '/metrics' || path === '/api' || path.startsWith('/api/') || path === '/mcp' || path.startsWith('/mcp/')
}

/**
 * Which authenticator guards a path: none for the public meta routes; the API's bearer
 * tokens for `/api` and `/mcp` — and for every path when there is no dashboard (so an
 * unknown path answers 401 before 404 to a stranger); the dashboard's own elsewhere.
 */
function authenticatorFor(deps: AppDeps): (path: string) => Authenticator | undefined {
  const { dashboard } = deps
  return (path) => {
    if (PUBLIC_PATHS.has(path)) return undefined
    if (!dashboard || isApiPath(path)) return deps.authenticate
    return dashboard.isPublic?.(path) ? undefined : dashboard.authenticate
  }
}

/**
 * Builds the API (and the dashboard, when given).
 * @example
 * const authenticate = createAuthenticator({ tokens: hub.tokens, localPrincipal: hub.config.principal, localMode: true })
 * const app = createApp({ knowledge: hub.knowledge, resources: hub.resources, slim: hub.slim, authenticate })
 * const res = await app.request('/api/knowledge/search?q=selenium')
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const logger = redactingLogger(deps.logger ?? noopLogger)
  const clock = deps.clock
  const app = new Hono<AppEnv>()

  // Outermost first: the access log sees the final status of every request. Authentication
  // comes before the per-caller limit and the body limit: nothing is buffered for strangers.
  app.use('*', requestLog({ logger }))
  if (deps.metrics) app.use('*', httpMetrics({ observer: deps.metrics.http }))
  app.use('*', dotSegments({ connection: deps.connection }))
  app.use('*', hostCheck({ allowedHosts: deps.allowedHosts }))
  const failures = createRateLimiter({ perSecond: deps.authFailureLimit?.perSecond ?? 1, burst: deps.authFailureLimit?.burst ?? 20, clock })
  const proxies = deps.trustedProxies && deps.trustedProxies.length > 0 ? trustedProxies(deps.trustedProxies) : undefined
  app.use(
    '*',
    authenticate({
      authenticatorFor: authenticatorFor(deps),
      failures,
      connection: deps.connection,
      trustedProxies: proxies,
      ...(deps.dashboard?.signInPaths ? { signIn: deps.dashboard.signInPaths } : {}),
    }),
  )
  if (deps.callerScope) app.use('*', callerScope({ scope: deps.callerScope }))
  app.use('*', rateLimit({ limiter: createRateLimiter({ perSecond: deps.rateLimit?.perSecond ?? 0, burst: deps.rateLimit?.burst ?? 1, clock }) }))
  app.use('*', bodyLimit({ maxBytes: deps.bodyLimit }))

  app.route('/', metaRoutes({ version: deps.version ?? '0.0.0', embedderReady: deps.embedderReady }))
  if (deps.metrics) app.route('/', metricsRoutes({ metrics: deps.metrics, connection: deps.connection }))
  // Before the knowledge routes, whose `/:id` would take `folder` for an id.
  app.route('/api/knowledge/folder', knowledgeFolderRoutes({ knowledge: deps.knowledge }))
  app.route('/api/knowledge', knowledgeRoutes({ knowledge: deps.knowledge, resources: deps.resources, slim: deps.slim, extraction: deps.extraction }))
  app.route('/api/resource', resourceRoutes({ resources: deps.resources }))
  app.route('/api/secret-reads', secretReadRoutes({ resources: deps.resources }))
  if (deps.agent) app.route('/api', agentRoutes({ agent: deps.agent }))
  // The table's admin and user operations (each only with its service) and the backup.
  app.route('/api', adminRoutes(deps))
  mountOperations(app, '', USER_OPERATIONS, deps)
  // Pack tools and resources at /mcp: the packs the caller may see, by pack-relative paths (packs.access).
  const packs = deps.mcp?.packService ?? toolPackService({ ...deps.mcp, logger })
  // The MCP SDK (~7 MB of heap) loads with the first /mcp request, not with every server.
  app.all('/mcp', async (c) => {
    const { principal, key } = caller(c)
    const { handleMcpRequest } = await import('../mcp/http.js')
    return handleMcpRequest(c.req.raw, {
      version: deps.version ?? '0.0.0',
      logger,
      ...deps.mcp,
      ...(packs ? { packService: packs.forCaller(principal) } : {}),
      backend: servicesBackend(deps, principal, { remote: true, site: { via: 'mcp', caller: key } }),
    })
  })
  if (deps.dashboard) app.route('/', deps.dashboard.routes)

  app.notFound(notFoundHandler)
  app.onError(errorHandler(logger))
  return app
}
