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

/** The app served on a loopback port by @hono/node-server, as `serve.ts` binds it (real HTTP). */
export async function serveApp(app: Hono<AppEnv>): Promise<{ port: number; close(): Promise<void> }> {
  const { serve } = await import('@hono/node-server')
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  const port = (server.address() as { port: number }).port
  return { port, close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))) }
}

/** One request over HTTP/1.1 with node:http (a declared length, or `chunked` for a body sent in chunks), the raw answer. */
export async function httpCall(
  port: number,
  path: string,
  options: { method?: string; chunks?: string[]; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Json }> {
  const { request } = await import('node:http')
  const chunks = options.chunks ?? []
  const length = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: {
          ...options.headers,
          ...(options.chunked ? { 'transfer-encoding': 'chunked' } : chunks.length > 0 ? { 'content-length': String(length) } : {}),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (part: string) => (text += part))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }))
      },
    )
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}
