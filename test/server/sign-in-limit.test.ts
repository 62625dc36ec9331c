/**
 * Issue 27: the dashboard's sign-in (`POST /session`) goes through the same failed-authentication
 * limiter as the API — per client address, default burst 20 then 1/s. Before, 50 rapid bad
 * tokens all got 401 from the sign-in while the API answered 429. A valid token is still never
 * refused by the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDashboardHub, type DashboardHub } from '../dashboard/helpers.js'
import { client } from './helpers.js'

let t: DashboardHub
let good: string

beforeAll(async () => {
  t = await openDashboardHub()
  good = (await t.hub.tokens.create({ user: 'ann', org: 'acme', permissions: ['read'] })).token
}, 120_000)
afterAll(async () => t?.close())

describe('sign-in limit', () => {
  it('answers 429 to rapid bad sign-ins past the burst, shares the budget with the API, and still lets a good token in', async () => {
    const anonymous = client(t.server.url)
    // 30 at once: the burst of 20 answers 401 (one or two more as the bucket refills), the rest 429.
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => anonymous.post('/session', { token: `kh_${String(i).padStart(43, 'x')}` }).then((r) => r.status)),
    )
    const unauthorised = statuses.filter((s) => s === 401).length
    expect(unauthorised).toBeGreaterThanOrEqual(20)
    expect(unauthorised).toBeLessThanOrEqual(23)
    expect(statuses.filter((s) => s === 429).length).toBe(30 - unauthorised)
    const limited = await anonymous.post('/session', { token: 'kh_' + 'y'.repeat(43) })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('failed authentications') })
    expect(limited.headers.get('set-cookie')).toBeNull()
    // The same limiter as the API's: this address is limited there too.
    expect((await client(t.server.url, 'kh_' + 'z'.repeat(43)).get('/api/knowledge')).status).toBe(429)
    // A valid token is checked first and never refused.
    const signed = await anonymous.post('/session', { token: good })
    expect(signed.status).toBe(200)
    expect(signed.headers.get('set-cookie')).toMatch(/^kh_session=khs_/)
  })
})
