/** requestLog: request ids (kept when well-formed, else new) and one access-log line per request. */
import { describe, expect, it } from 'vitest'
import { requestLog } from '../../../src/server/middleware/request-log.js'
import { recordingLogger } from '../helpers.js'
import { KnowHubError } from '../../../src/core/errors.js'
import { appWith, call, httpCall, serveApp } from './helpers.js'

describe('requestLog middleware', () => {
  it('answers a new request id, or the client’s when well-formed', async () => {
    const app = appWith(requestLog({ logger: recordingLogger() }))
    const fresh = await call(app, '/echo')
    expect(fresh.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{20}$/)
    expect((await call(app, '/echo', { headers: { 'x-request-id': 'trace-42:a.b' } })).headers.get('x-request-id')).toBe('trace-42:a.b')
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      expect((await call(app, '/echo', { headers: { 'x-request-id': bad } })).headers.get('x-request-id')).toMatch(/^req_/)
    }
  })

  it('logs method, path, final status (errors included), duration and caller; never headers', async () => {
    const logger = recordingLogger()
    const app = appWith(requestLog({ logger }))
    await call(app, '/echo?x=1', { headers: { authorization: 'Bearer kh_secret', 'x-request-id': 'r1' } })
    const missing = await call(app, '/nowhere', { headers: { 'x-request-id': 'r2' } })
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-request-id')).toBe('r2')
    const lines = logger.lines.map((line) => JSON.parse(line))
    expect(lines).toMatchObject([
      { level: 'info', message: 'http.request', request_id: 'r1', method: 'GET', path: '/echo', status: 200, caller: null },
      { level: 'info', message: 'http.request', request_id: 'r2', method: 'GET', path: '/nowhere', status: 404, caller: null },
    ])
    expect(typeof lines[0].duration_ms).toBe('number')
    expect(logger.lines.join('\n')).not.toContain('kh_secret')
  })

  it('over real HTTP: the id on a JSON answer (sent whole, with its length), on a 404 and on an error', async () => {
    const logger = recordingLogger()
    const app = appWith(requestLog({ logger }))
    app.get('/fails', () => {
      throw new KnowHubError('forbidden', 'No')
    })
    const served = await serveApp(app)
    try {
      const ok = await httpCall(served.port, '/echo', { headers: { 'x-request-id': 'r1' } })
      expect(ok).toMatchObject({ status: 200, body: { bytes: 0 } })
      expect(ok.headers['x-request-id']).toBe('r1')
      expect(ok.headers['content-type']).toMatch(/^application\/json/)
      expect(ok.headers['content-length']).toBe(String(JSON.stringify(ok.body).length))
      expect(ok.headers['transfer-encoding']).toBeUndefined()
      const fresh = await httpCall(served.port, '/echo')
      expect(fresh.headers['x-request-id']).toMatch(/^req_[0-9a-f]{20}$/)
      const missing = await httpCall(served.port, '/nowhere', { headers: { 'x-request-id': 'r2' } })
      expect(missing.status).toBe(404)
      expect(missing.headers['x-request-id']).toBe('r2')
      const failed = await httpCall(served.port, '/fails', { headers: { 'x-request-id': 'r3' } })
      expect(failed).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } })
      expect(failed.headers['x-request-id']).toBe('r3')
      // Each header once.
      expect(Object.keys(ok.headers).filter((name) => name === 'x-request-id')).toHaveLength(1)
      expect(logger.lines.map((line) => JSON.parse(line))).toMatchObject([
        { request_id: 'r1', status: 200 },
        { status: 200 },
        { request_id: 'r2', status: 404 },
        { request_id: 'r3', status: 403 },
      ])
    } finally {
      await served.close()
    }
  })
})
