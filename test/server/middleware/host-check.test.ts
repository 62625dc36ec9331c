/** hostCheck: DNS-rebinding and cross-site protection of local mode. */
import { describe, expect, it } from 'vitest'
import { hostCheck } from '../../../src/server/middleware/host-check.js'
import { appWith, call } from './helpers.js'

const allowed = new Set(['127.0.0.1:8420', 'localhost:8420'])

describe('hostCheck middleware', () => {
  const app = appWith(hostCheck({ allowedHosts: () => allowed }))

  it('serves the allowed hosts, same-origin browsers included', async () => {
    expect((await call(app, 'http://127.0.0.1:8420/echo')).status).toBe(200)
    expect((await call(app, 'http://x/echo', { headers: { host: 'LOCALHOST:8420' } })).status).toBe(200)
    expect((await call(app, 'http://127.0.0.1:8420/echo', { headers: { origin: 'http://localhost:8420', 'sec-fetch-site': 'same-origin' } })).status).toBe(200)
  })

  it('refuses another Host, a foreign or malformed Origin, and cross-site fetches with forbidden', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['http://evil.example:8420/echo', {}],
      ['http://127.0.0.1:8420/echo', { origin: 'http://evil.example' }],
      ['http://127.0.0.1:8420/echo', { origin: 'not a url' }],
      ['http://127.0.0.1:8420/echo', { 'sec-fetch-site': 'cross-site' }],
    ]
    for (const [url, headers] of cases) {
      const refused = await call(app, url, { headers })
      expect(refused.status, JSON.stringify(headers)).toBe(403)
      expect(refused.body.error.code).toBe('forbidden')
    }
  })

  it('checks nothing without allowed hosts (token mode)', async () => {
    expect((await call(appWith(hostCheck({})), 'http://evil.example/echo', { headers: { origin: 'http://other' } })).status).toBe(200)
    expect((await call(appWith(hostCheck({ allowedHosts: () => undefined })), 'http://evil.example/echo')).status).toBe(200)
  })
})
