/** bodyLimit: bodies past the limit answer 413 too_large, with the limit in details. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_BODY_LIMIT, bodyLimit } from '../../../src/server/middleware/body-limit.js'
import { appWith, call, httpCall, serveApp } from './helpers.js'

describe('bodyLimit middleware', () => {
  it('passes a body up to the limit and refuses one byte more, declared or streamed', async () => {
    const app = appWith(bodyLimit({ maxBytes: 10 }))
    expect(await call(app, '/echo', { method: 'POST', body: 'x'.repeat(10) })).toMatchObject({ status: 200, body: { bytes: 10 } })
    const declared = await call(app, '/echo', { method: 'POST', body: 'x'.repeat(11) })
    expect(declared.status).toBe(413)
    expect(declared.body.error).toMatchObject({ code: 'too_large', details: { limit: 10 } })
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('x'.repeat(8)))
        controller.enqueue(new TextEncoder().encode('x'.repeat(8)))
        controller.close()
      },
    })
    const streamed = await call(app, '/echo', { method: 'POST', body: stream, duplex: 'half' } as RequestInit)
    expect(streamed.status).toBe(413)
  })

  it('defaults to 2 MiB', async () => {
    const app = appWith(bodyLimit())
    expect((await call(app, '/echo', { method: 'POST', body: 'x'.repeat(2 * 1_048_576) })).status).toBe(200)
    const refused = await call(app, '/echo', { method: 'POST', body: 'x'.repeat(2 * 1_048_576 + 1) })
    expect(refused.body.error).toMatchObject({ code: 'too_large', details: { limit: DEFAULT_BODY_LIMIT } })
  })

  it('over real HTTP: a declared length past the limit is refused before the body is read, a chunked one as it streams; GET has none', async () => {
    const served = await serveApp(appWith(bodyLimit({ maxBytes: 10 })))
    try {
      expect(await httpCall(served.port, '/echo', { method: 'POST', chunks: ['x'.repeat(10)] })).toMatchObject({ status: 200, body: { bytes: 10 } })
      const declared = await httpCall(served.port, '/echo', { method: 'POST', chunks: ['x'.repeat(11)] })
      expect(declared).toMatchObject({ status: 413, body: { error: { code: 'too_large', details: { limit: 10 } } } })
      expect(await httpCall(served.port, '/echo', { method: 'POST', chunks: ['x'.repeat(6), 'x'.repeat(4)], chunked: true })).toMatchObject({
        status: 200,
        body: { bytes: 10 },
      })
      const chunked = await httpCall(served.port, '/echo', { method: 'POST', chunks: ['x'.repeat(8), 'x'.repeat(8)], chunked: true })
      expect(chunked).toMatchObject({ status: 413, body: { error: { code: 'too_large' } } })
      // An empty POST (length 0) and a GET pass.
      expect(await httpCall(served.port, '/echo', { method: 'POST', headers: { 'content-length': '0' } })).toMatchObject({ status: 200, body: { bytes: 0 } })
      expect(await httpCall(served.port, '/echo')).toMatchObject({ status: 200, body: { bytes: 0 } })
    } finally {
      await served.close()
    }
  })
})
