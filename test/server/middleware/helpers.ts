/**
 * A bare Hono app for one middleware at a time: the server's own error handler (so
 * failures answer the one JSON error shape) and a route that reports what it saw.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { noopLogger, type Logger } from '../../../src/core/logger.js'
import { errorHandler, notFoundHandler } from '../../../src/server/errors.js'
import type { AppEnv } from '../../../src/server/http.js'

/** An app with `middleware` in front of `GET|POST /echo`, which answers the caller key and body size. */
export function appWith(middleware: MiddlewareHandler<AppEnv> | Array<MiddlewareHandler<AppEnv>>, logger: Logger = noopLogger): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  for (const m of Array.isArray(middleware) ? middleware : [middleware]) app.use('*', m)
  const echo = async (c: Context<AppEnv>) => {
    const caller = c.get('caller') as { key: string } | undefined
    const body = c.req.method === 'POST' ? await c.req.text() : ''
    return c.json({ caller: caller?.key ?? null, bytes: body.length })
  }
  app.get('/echo', echo)
  app.post('/echo', echo)
  app.get('/public', (c) => c.json({ ok: true }))
  app.notFound(notFoundHandler)
  app.onError(errorHandler(logger))
  return app
}

// Response bodies are checked field by field in the tests.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/** Status and parsed JSON body of an in-process request. */
export async function call(app: Hono<AppEnv>, path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: Json }> {
  const response = await app.request(path, init)
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}
