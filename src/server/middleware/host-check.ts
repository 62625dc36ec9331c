/**
 * DNS-rebinding and cross-site protection (local mode): only the allowed `Host` values
 * are served; a browser's cross-origin (`Origin`) or cross-site (`Sec-Fetch-Site`)
 * request is refused with `forbidden`.
 */
import { createMiddleware } from 'hono/factory'
import { KnowHubError } from '../../core/errors.js'
import type { AppEnv } from '../http.js'

export interface HostCheckOptions {
  /**
   * Host header values (`host:port`, lower case) accepted; undefined: no check (token
   * mode). A function, because the port is known only once the server is bound.
   */
  allowedHosts?: (() => ReadonlySet<string> | undefined) | undefined
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * @example
 * app.use('*', hostCheck({ allowedHosts: () => new Set(['127.0.0.1:8420', 'localhost:8420']) }))
 */
export function hostCheck(options: HostCheckOptions) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const allowed = options.allowedHosts?.()
    if (allowed) {
      const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase()
      if (!allowed.has(host))
        throw new KnowHubError('forbidden', `Host "${host}" is not allowed: this server answers only to ${[...allowed].join(', ')}`, { host })
      const origin = c.req.header('origin')
      if (origin !== undefined) {
        const from = originHost(origin)
        if (!from || !allowed.has(from)) throw new KnowHubError('forbidden', 'Cross-origin requests are refused in local mode', { origin })
      }
      if (c.req.header('sec-fetch-site') === 'cross-site') throw new KnowHubError('forbidden', 'Cross-site requests are refused in local mode')
    }
    await next()
  })
}
