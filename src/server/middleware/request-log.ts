/**
 * Request ids and the access log: the outermost middleware, so it sees the final status
 * of every request (errors included). A well-formed `X-Request-Id` from the client is
 * kept, anything else replaced by a new id; the id is echoed in the response.
 */
import { createMiddleware } from 'hono/factory'
import type { Logger } from '../../core/logger.js'
import type { AppEnv } from '../http.js'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
}

/**
 * Sets `requestId`, answers it as `X-Request-Id`, and logs `http.request` with method,
 * path, status, duration and caller (never headers or bodies).
 * @example
 * app.use('*', requestLog({ logger }))
 */
export function requestLog(options: { logger: Logger }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now()
    const incoming = c.req.header('x-request-id')
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : newRequestId()
    c.set('requestId', requestId)
    // Set before the handler, so a response it builds through the context (`c.json`) carries it
    // already. Setting a header on a finished response instead makes @hono/node-server turn its
    // light response into a Web Response with a body stream (a stream read and two writes a
    // request instead of one `end(body)`: ~4% of a never-seen search's CPU, issue 32). Responses
    // built without the context (the error handler's, MCP's) get it afterwards, as before.
    c.header('X-Request-Id', requestId)
    await next()
    if (c.res.headers.get('x-request-id') !== requestId) c.header('X-Request-Id', requestId)
    const caller = c.get('caller') as { key: string } | undefined
    options.logger.info('http.request', {
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      caller: caller?.key ?? null,
    })
  })
}
