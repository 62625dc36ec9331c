/** authenticate: the caller from the realm's authenticator; failed authentications limited per address. */
import { describe, expect, it } from 'vitest'
import type { Authenticator } from '../../../src/auth/authenticate.js'
import { KnowHubError } from '../../../src/core/errors.js'
import { authenticate } from '../../../src/server/middleware/auth.js'
import { createRateLimiter } from '../../../src/server/middleware/rate-limit.js'
import { appWith, call } from './helpers.js'

/** Accepts `x-key: good` only, and counts its calls. */
function countingAuthenticator(): Authenticator & { calls: number } {
  const authenticator = Object.assign(
    async (request: Request) => {
      authenticator.calls++
      if (request.headers.get('x-key') !== 'good') throw new KnowHubError('unauthenticated', 'bad key')
      return { key: 'test:good', principal: { user: 'u', permissions: ['read' as const] } }
    },
    { calls: 0 },
  )
  return authenticator
}

describe('authenticate middleware', () => {
  it('sets the caller from the authenticator; public paths get none and cost no call', async () => {
    const authenticator = countingAuthenticator()
    const app = appWith(
      authenticate({ authenticatorFor: (path) => (path === '/public' ? undefined : authenticator), failures: createRateLimiter({ perSecond: 0, burst: 1 }) }),
    )
    expect((await call(app, '/echo', { headers: { 'x-key': 'good' } })).body).toEqual({ caller: 'test:good', bytes: 0 })
    const refused = await call(app, '/echo')
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="knowhub"')
    expect(refused.body.error.code).toBe('unauthenticated')
    expect(authenticator.calls).toBe(2)
    expect((await call(app, '/public')).status).toBe(200)
    expect(authenticator.calls).toBe(2)
  })

  it('limits failures per client address: past the burst, 429 before the authenticator runs', async () => {
    const authenticator = countingAuthenticator()
    let address = '203.0.113.5'
    const app = appWith(
      authenticate({
        authenticatorFor: () => authenticator,
        failures: createRateLimiter({ perSecond: 1, burst: 2, clock: { now: () => new Date('2026-03-06T12:00:00Z') } }),
        connection: () => ({ address }),
      }),
    )
    expect((await call(app, '/echo')).status).toBe(401)
    expect((await call(app, '/echo')).status).toBe(401)
    const blocked = await call(app, '/echo', { headers: { 'x-key': 'good' } })
    expect(blocked.status).toBe(429)
    expect(blocked.body.error.message).toContain('failed authentications')
    expect(authenticator.calls).toBe(2)
    address = '198.51.100.7'
    expect((await call(app, '/echo', { headers: { 'x-key': 'good' } })).status).toBe(200)
  })

  it('counts only unauthenticated failures: another error passes through uncounted', async () => {
    const failing: Authenticator = async () => {
      throw new KnowHubError('database_error', 'down')
    }
    const app = appWith(authenticate({ authenticatorFor: () => failing, failures: createRateLimiter({ perSecond: 1, burst: 1 }) }))
    for (let i = 0; i < 3; i++) expect((await call(app, '/echo')).status).toBe(500)
  })
})
