/**
 * The HTTP API as a Hono app over Web Request/Response: middleware (request ids,
 * access logs, Host/Origin checks in local mode, authentication, rate limit, body
 * limit), the routes, and one `onError` that maps every error to the JSON error
 * shape. `serve.ts` binds it to a socket; tests call `app.request()` in-process.
 */
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { HTTPException } from 'hono/http-exception'
import type { Clock } from '../core/clock.js'
import { KnowHubError, isKnowHubError, type ErrorCode } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { Authenticator } from './auth.js'
import { errorResponse } from './errors.js'
import { caller, type AppEnv } from './http.js'
import { handleMcpRequest } from '../mcp/http.js'
import type { McpServerOptions } from '../mcp/server.js'
import { servicesBackend } from '../app/backend.js'
import { createRateLimiter, redactingLogger } from './limits.js'
import { knowledgeRoutes } from './routes/knowledge.js'
import { metaRoutes } from './routes/meta.js'
import { resourceRoutes } from './routes/resources.js'
import type { ResourceApi, SlimApi } from './services.js'

export interface AppDeps {
  knowledge: KnowledgeService
  resources: ResourceApi
  slim: SlimApi
  /** Resolves the caller of a request (see `createAuthenticator`). */
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
   * client address: after `burst` failures, one more per `1 / perSecond` s; beyond that
   * the request is refused with `rate_limited` before any token lookup. Default 1/s,
   * burst 20; `perSecond: 0` turns it off.
   */
  authFailureLimit?: { perSecond: number; burst: number }
  /**
   * The adapter's view of a request: the client address (for the failed-authentication
   * limit) and the request target exactly as received, before URL parsing resolved `.`
   * and `..` segments (such targets are refused). `serve.ts` reads them from Node's request.
   */
  connection?: (env: unknown) => { address?: string | undefined; rawTarget?: string | undefined }
}

/**
 * True when the raw request target has a `.` or `..` path segment, plain or
 * percent-encoded. URL parsing would resolve them before routing (so
 * `/api/resource/code/%2e%2e/credentials/x` would become `credentials/x`); a proxy in
 * front may resolve them differently, so such paths are refused rather than guessed.
 * @example
 * hasDotSegment('/api/resource/code/%2e%2e/x') // true
 */
export function hasDotSegment(rawTarget: string): boolean {
  const path = rawTarget.split(/[?#]/, 1)[0] ?? ''
  return path.split('/').some((segment) => {
    const s = segment.replace(/%2e/gi, '.')
    return s === '.' || s === '..'
  })
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const PUBLIC_PATHS = new Set(['/healthz', '/api/openapi.json'])

function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
  429: 'rate_limited',
}

/** Hono's own exceptions (e.g. from a malformed request) as KnowHub errors. */
function fromHttpException(error: HTTPException): KnowHubError {
  const code = CODE_BY_STATUS[error.status]
  return code ? new KnowHubError(code, error.message || 'Bad request') : new KnowHubError('internal_error', 'HTTP error', {}, { cause: error })
}

/**
 * Builds the API.
 * @example
 * const authenticate = createAuthenticator({ tokens: hub.tokens, localPrincipal: hub.config.principal, localMode: true })
 * const app = createApp({ knowledge: hub.knowledge, resources: hub.resources, slim, authenticate })
 * const res = await app.request('/api/knowledge/search?q=selenium')
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const logger = redactingLogger(deps.logger ?? noopLogger)
  const limiter = createRateLimiter({
    perSecond: deps.rateLimit?.perSecond ?? 0,
    burst: deps.rateLimit?.burst ?? 1,
    ...(deps.clock ? { clock: deps.clock } : {}),
  })
  const failures = createRateLimiter({
    perSecond: deps.authFailureLimit?.perSecond ?? 1,
    burst: deps.authFailureLimit?.burst ?? 20,
    ...(deps.clock ? { clock: deps.clock } : {}),
  })
  const maxBody = deps.bodyLimit ?? 2 * 1_048_576
  const app = new Hono<AppEnv>()

  // Request id + access log: outermost, so it sees the final status of every request.
  app.use('*', async (c, next) => {
    const started = performance.now()
    const incoming = c.req.header('x-request-id')
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : newRequestId()
    c.set('requestId', requestId)
    await next()
    c.header('X-Request-Id', requestId)
    const caller = c.get('caller') as { key: string } | undefined
    logger.info('http.request', {
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      caller: caller?.key ?? null,
    })
  })

  // `.` and `..` segments in the raw target (resolved away by URL parsing): refused.
  app.use('*', async (c, next) => {
    const rawTarget = deps.connection?.(c.env).rawTarget
    if (rawTarget !== undefined && hasDotSegment(rawTarget)) {
      throw new KnowHubError('validation_error', 'Invalid request: the path has a . or .. segment', {
        issues: [{ path: '(path)', message: 'the path has a . or .. segment (plain or percent-encoded)' }],
      })
    }
    await next()
  })

  // DNS-rebinding and cross-site protection (local mode).
  app.use('*', async (c, next) => {
    const allowed = deps.allowedHosts?.()
    if (allowed) {
      const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase()
      if (!allowed.has(host))
        throw new KnowHubError('forbidden', `Host "${host}" is not allowed: this server answers only to ${[...allowed].join(', ')}`, { host })
      const origin = c.req.header('origin')
      if (origin !== undefined) {
        let originHost: string | undefined
        try {
          originHost = new URL(origin).host.toLowerCase()
        } catch {
          originHost = undefined
        }
        if (!originHost || !allowed.has(originHost)) throw new KnowHubError('forbidden', 'Cross-origin requests are refused in local mode', { origin })
      }
      if (c.req.header('sec-fetch-site') === 'cross-site') throw new KnowHubError('forbidden', 'Cross-site requests are refused in local mode')
    }
    await next()
  })

  // Authentication (failures limited per client address: a blocked address costs no token
  // lookup), then the per-caller rate limit, then the body limit (never buffer for strangers).
  app.use('*', async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next()
    const address = `ip:${deps.connection?.(c.env).address ?? 'unknown'}`
    failures.check(address, 'Too many failed authentications from this address')
    let caller: Awaited<ReturnType<Authenticator>>
    try {
      caller = await deps.authenticate(c.req.raw)
    } catch (error) {
      if (isKnowHubError(error, 'unauthenticated')) failures.consume(address)
      throw error
    }
    c.set('caller', caller)
    limiter.take(caller.key)
    await next()
  })
  app.use(
    '*',
    bodyLimit({
      maxSize: maxBody,
      onError: () => {
        throw new KnowHubError('too_large', `The request body is larger than ${maxBody} bytes`, { limit: maxBody })
      },
    }),
  )

  app.route('/', metaRoutes({ version: deps.version ?? '0.0.0' }))
  app.route('/api/knowledge', knowledgeRoutes({ knowledge: deps.knowledge, resources: deps.resources, slim: deps.slim }))
  app.route('/api/resource', resourceRoutes({ resources: deps.resources }))
  app.all('/mcp', (c) =>
    handleMcpRequest(c.req.raw, { version: deps.version ?? '0.0.0', logger, ...deps.mcp, backend: servicesBackend(deps, caller(c).principal) }),
  )

  app.notFound(
    (c) => errorResponse(new KnowHubError('not_found', `No route ${c.req.method} ${c.req.path}`, { method: c.req.method, path: c.req.path })).response,
  )

  app.onError((error, c) => {
    const requestId = c.get('requestId')
    const known = error instanceof HTTPException ? fromHttpException(error) : error
    const { mapped, response } = errorResponse(known, requestId)
    if (mapped.internal) {
      const e = error as { name?: string; code?: unknown; message?: string; stack?: string }
      logger.error('http.error', {
        request_id: requestId,
        method: c.req.method,
        path: c.req.path,
        error: { name: e.name, code: e.code ?? null, message: e.message, stack: e.stack },
      })
    }
    return response
  })

  return app
}
