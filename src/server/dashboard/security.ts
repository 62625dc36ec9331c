/**
 * Browser hardening of every dashboard response: a Content-Security-Policy that allows
 * scripts and styles from this origin only (no inline script, no eval, no plugins, no
 * framing), `nosniff`, no referrer; and, for writes, the same-origin checks (`Origin`
 * and `Sec-Fetch-Site`) plus the session's CSRF token.
 */
import { createMiddleware } from 'hono/factory'
import { KnowHubError } from '../../core/errors.js'
import type { AppEnv } from '../http.js'
import type { CsrfTokens } from './session.js'

/** The dashboard's policy: nothing inline, nothing from another origin. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * The API reference's policy: Swagger UI sets element styles from script (allowed by
 * `'unsafe-inline'` for styles only; scripts stay `'self'`).
 */
export const DOCS_CSP = DASHBOARD_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")

/**
 * Sets the security headers on every dashboard response (`DOCS_CSP` under /docs).
 * @example
 * routes.use('*', securityHeaders())
 */
export function securityHeaders() {
  return createMiddleware<AppEnv>(async (c, next) => {
    await next()
    const docs = c.req.path === '/docs' || c.req.path.startsWith('/docs/')
    c.res.headers.set('content-security-policy', docs ? DOCS_CSP : DASHBOARD_CSP)
    c.res.headers.set('x-content-type-options', 'nosniff')
    c.res.headers.set('referrer-policy', 'no-referrer')
    c.res.headers.set('x-frame-options', 'DENY')
    c.res.headers.set('cross-origin-opener-policy', 'same-origin')
  })
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Throws `forbidden` for a request that a browser marks as coming from another site or origin. */
export function assertSameOrigin(request: Request): void {
  const site = request.headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin' && site !== 'none') throw new KnowHubError('forbidden', 'Cross-site dashboard requests are refused')
  const origin = request.headers.get('origin')
  if (origin === null) return
  const host = request.headers.get('host') ?? new URL(request.url).host
  let from: string | undefined
  try {
    from = new URL(origin).host
  } catch {
    from = undefined
  }
  if (from?.toLowerCase() !== host.toLowerCase()) throw new KnowHubError('forbidden', 'Cross-origin dashboard requests are refused')
}

/**
 * Writes (any method but GET/HEAD/OPTIONS) must come from this origin and carry the
 * session's CSRF token.
 * @example
 * routes.use('/ui/*', csrfProtection(csrf))
 */
export function csrfProtection(csrf: CsrfTokens) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!SAFE_METHODS.has(c.req.method)) {
      assertSameOrigin(c.req.raw)
      csrf.check(c.req.raw)
    }
    await next()
  })
}
