/**
 * Authentication: sets the request's `caller` through the authenticator of its realm
 * (the API's bearer tokens, or the dashboard's own). Failed authentications are limited
 * per client address: a blocked address is refused before any token lookup.
 */
import { createMiddleware } from 'hono/factory'
import { isKnowHubError } from '../../core/errors.js'
import type { Authenticator, Caller } from '../../auth/authenticate.js'
import type { AppEnv, Connection } from '../http.js'
import type { RateLimiter } from './rate-limit.js'

export interface AuthOptions {
  /** The authenticator guarding a path; undefined: the path is public (no caller is set). */
  authenticatorFor: (path: string) => Authenticator | undefined
  /** Failed authentications per client address (`ip:<address>`), see {@link RateLimiter.check}. */
  failures: RateLimiter
  /** Where the client address comes from (`ip:unknown` without one). */
  connection?: Connection | undefined
}

/**
 * @example
 * app.use('*', authenticate({ authenticatorFor: (path) => (path === '/healthz' ? undefined : bearer), failures }))
 */
export function authenticate(options: AuthOptions) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const authenticator = options.authenticatorFor(c.req.path)
    if (!authenticator) return next()
    const address = `ip:${options.connection?.(c.env).address ?? 'unknown'}`
    options.failures.check(address, 'Too many failed authentications from this address')
    let caller: Caller
    try {
      caller = await authenticator(c.req.raw)
    } catch (error) {
      if (isKnowHubError(error, 'unauthenticated')) options.failures.consume(address)
      throw error
    }
    c.set('caller', caller)
    await next()
  })
}
