/**
 * Request counts and durations for `GET /metrics`, labelled by the route PATTERN that answered
 * (`/api/knowledge/:id`), never the raw path: the number of series stays bounded whatever
 * clients send. A request no route answered (a 404, or one refused by a middleware before
 * any route) is labelled with the pattern of the middleware that answered it (`*`).
 */
import { createMiddleware } from 'hono/factory'
import { matchedRoutes } from 'hono/route'
import type { HttpObserver } from '../../app/metrics.js'
import type { AppEnv } from '../http.js'

/**
 * @example
 * app.use('*', httpMetrics({ observer: metrics.http }))
 */
export function httpMetrics(options: { observer: HttpObserver }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      const route = matchedRoutes(c)[c.req.routeIndex]?.path ?? '*'
      options.observer.request(c.req.method, route, c.res.status, (performance.now() - started) / 1000)
    }
  })
}
