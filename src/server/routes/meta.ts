/** `GET /healthz` and `GET /api/openapi.json`: no authentication needed. */
import { Hono } from 'hono'
import type { AppEnv } from '../http.js'
import { openApiDocument } from '../openapi.js'

/** The meta routes, mounted at the root. `embedderReady`: whether the embedder's model has loaded (absent: not reported). */
export function metaRoutes(options: { version: string; embedderReady?: (() => boolean) | undefined }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  let document: string | undefined
  const { embedderReady } = options
  app.get('/healthz', (c) => c.json({ status: 'ok', version: options.version, ...(embedderReady ? { embedder: embedderReady() ? 'ready' : 'loading' } : {}) }))
  app.get('/api/openapi.json', (c) => {
    document ??= JSON.stringify(openApiDocument(options.version))
    return c.body(document, 200, { 'content-type': 'application/json; charset=UTF-8' })
  })
  return app
}
