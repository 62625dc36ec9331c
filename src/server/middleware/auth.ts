/**
 * Authentication: sets the request's `caller` through the authenticator of its realm
 * (the API's bearer tokens, or the dashboard's own). A presented credential is always
 * checked first, so a valid token is never refused for what others did. Failures are
 * limited twice — per client address (behind trusted proxies, the forwarded client) and
 * per presented token prefix — and past either limit a failed attempt answers 429
 * `rate_limited` (with `retry_after_s`) instead of 401, slowing guessers down without
 * locking anyone out.
 */
import { createMiddleware } from 'hono/factory'
import { isKnowHubError } from '../../core/errors.js'
import type { Authenticator, Caller } from '../../auth/authenticate.js'
import type { AppEnv, Connection } from '../http.js'
import { clientAddress, type TrustedProxies } from './client-address.js'
import type { RateLimiter } from './rate-limit.js'

export interface AuthOptions {
  /** The authenticator guarding a path; undefined: the path is public (no caller is set). */
  authenticatorFor: (path: string) => Authenticator | undefined
  /** Failed authentications per client address (`ip:<address>`) and per token prefix (`prefix:<first 11 characters>`). */
  failures: RateLimiter
  /** Where the client address comes from (`ip:unknown` without one). */
  connection?: Connection | undefined
  /** Proxies whose `X-Forwarded-For` names the client; none by default (the header is ignored). */
  trustedProxies?: TrustedProxies | undefined
  /** Public requests whose handler checks a credential (a sign-in): limited and counted like a failed authentication here. */
  signIn?: ((method: string, path: string) => boolean) | undefined
}

/** The first 11 characters of a presented bearer token (`kh_` and 8 more), or undefined without one. */
function presentedPrefix(request: Request): string | undefined {
  const header = request.headers.get('authorization') ?? ''
  const match = /^bearer\s+(\S{1,11})/i.exec(header)
  return match ? match[1] : undefined
}

/**
 * @example
 * app.use('*', authenticate({ authenticatorFor: (path) => (path === '/healthz' ? undefined : bearer), failures }))
 */
export function authenticate(options: AuthOptions) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const authenticator = options.authenticatorFor(c.req.path)
    const addressKey = () => `ip:${clientAddress(options.connection?.(c.env).address, c.req.header('x-forwarded-for'), options.trustedProxies) ?? 'unknown'}`
    if (!authenticator) {
      if (!options.signIn?.(c.req.method, c.req.path)) return next()
      // A sign-in: its credential is checked first (a valid one always passes), then a failure is
      // limited and counted as the API's are — past the limit it answers 429 instead of 401.
      await next()
      if (isKnowHubError(c.error, 'unauthenticated')) {
        const key = addressKey()
        options.failures.check(key, 'Too many failed authentications')
        options.failures.consume(key)
      }
      return
    }
    let caller: Caller
    try {
      caller = await authenticator(c.req.raw)
    } catch (error) {
      if (isKnowHubError(error, 'unauthenticated')) {
        const address = addressKey()
        const prefix = presentedPrefix(c.req.raw)
        const keys = prefix ? [address, `prefix:${prefix}`] : [address]
        for (const key of keys) options.failures.check(key, 'Too many failed authentications')
        for (const key of keys) options.failures.consume(key)
      }
      throw error
    }
    c.set('caller', caller)
    await next()
  })
}
