/**
 * `GET /metrics`: the Prometheus exposition (src/app/metrics.ts). Hub-wide figures, so only for
 * the hub operator (the `metrics` row of src/auth/policy.ts), or for the local principal on a
 * loopback connection (local mode, or the CLI's local key): any other token answers 403
 * `forbidden` — an org admin too, its reach ends at its org — and no token in token mode 401.
 */
import { Hono } from 'hono'
import type { HubMetrics } from '../../app/metrics.js'
import { authorize } from '../../auth/policy.js'
import { caller, type AppEnv, type Connection } from '../http.js'

/** True for 127.0.0.0/8 and ::1, also IPv4-mapped. */
function loopbackPeer(address: string | undefined): boolean {
  if (!address) return false
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain)
}

/** The metrics route, mounted at the root. `connection` tells the peer's address (absent: in-process requests, never loopback). */
export function metricsRoutes(options: { metrics: Pick<HubMetrics, 'scrape'>; connection?: Connection | undefined }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/metrics', async (c) => {
    const { principal, key } = caller(c)
    if (!(key === 'local' && loopbackPeer(options.connection?.(c.env).address))) authorize(principal, 'metrics')
    const { contentType, body } = await options.metrics.scrape()
    return c.body(body, 200, { 'content-type': contentType, 'cache-control': 'no-store' })
  })
  return app
}
