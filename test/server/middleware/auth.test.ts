/**
 * authenticate: the caller from the realm's authenticator; failed authentications limited
 * per address (the forwarded client behind a trusted proxy) and per token prefix, never
 * refusing a valid credential.
 */
import { describe, expect, it } from 'vitest'
import type { Authenticator } from '../../../src/auth/authenticate.js'
import { KnowHubError } from '../../../src/core/errors.js'
import { authenticate } from '../../../src/server/middleware/auth.js'
import { clientAddress, trustedProxies } from '../../../src/server/middleware/client-address.js'
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

  it('limits failures per client address: past the burst a failure answers 429, while a valid key still passes', async () => {
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
    const blocked = await call(app, '/echo')
    expect(blocked.status).toBe(429)
    expect(blocked.body.error.message).toContain('failed authentications')
    // The attacker's failures do not lock out a good key from the same address: it is checked first.
    expect((await call(app, '/echo', { headers: { 'x-key': 'good' } })).status).toBe(200)
    expect(authenticator.calls).toBe(4)
    address = '198.51.100.7'
    expect((await call(app, '/echo')).status).toBe(401)
  })

  it('limits failures per presented token prefix, across addresses', async () => {
    const authenticator = countingAuthenticator()
    let n = 0
    const app = appWith(
      authenticate({
        authenticatorFor: () => authenticator,
        failures: createRateLimiter({ perSecond: 1, burst: 2, clock: { now: () => new Date('2026-03-06T12:00:00Z') } }),
        connection: () => ({ address: `198.51.100.${++n}` }),
      }),
    )
    const guess = (suffix: string) => call(app, '/echo', { headers: { authorization: `Bearer kh_AAAAAAAA${suffix}` } })
    expect((await guess('1')).status).toBe(401)
    expect((await guess('2')).status).toBe(401)
    expect((await guess('3')).status).toBe(429)
    expect((await call(app, '/echo', { headers: { authorization: 'Bearer kh_BBBBBBBB1' } })).status).toBe(401)
  })

  it('takes the client from X-Forwarded-For only when the peer is a trusted proxy', async () => {
    const authenticator = countingAuthenticator()
    let peer = '10.0.0.2'
    const app = appWith(
      authenticate({
        authenticatorFor: () => authenticator,
        failures: createRateLimiter({ perSecond: 1, burst: 1, clock: { now: () => new Date('2026-03-06T12:00:00Z') } }),
        connection: () => ({ address: peer }),
        trustedProxies: trustedProxies(['10.0.0.0/8']),
      }),
    )
    const from = (client: string) => call(app, '/echo', { headers: { 'x-forwarded-for': `${client}, 10.0.0.9` } })
    // Behind the proxy, two clients are limited apart.
    expect((await from('203.0.113.1')).status).toBe(401)
    expect((await from('203.0.113.1')).status).toBe(429)
    expect((await from('203.0.113.2')).status).toBe(401)
    // An untrusted peer cannot choose its address with the header.
    peer = '192.0.2.50'
    expect((await from('203.0.113.3')).status).toBe(401)
    expect((await from('203.0.113.4')).status).toBe(429)
  })

  it('counts only unauthenticated failures: another error passes through uncounted', async () => {
    const failing: Authenticator = async () => {
      throw new KnowHubError('database_error', 'down')
    }
    const app = appWith(authenticate({ authenticatorFor: () => failing, failures: createRateLimiter({ perSecond: 1, burst: 1 }) }))
    for (let i = 0; i < 3; i++) expect((await call(app, '/echo')).status).toBe(500)
  })
})

describe('clientAddress', () => {
  const trusted = trustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8'])

  it('is the peer unless the peer is trusted, else the right-most untrusted forwarded address', () => {
    expect(clientAddress('192.0.2.1', '203.0.113.9', trusted)).toBe('192.0.2.1')
    expect(clientAddress('127.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9')
    expect(clientAddress('::ffff:127.0.0.1', 'spoofed, 203.0.113.9, 10.1.1.1', trusted)).toBe('203.0.113.9')
    expect(clientAddress('fd00::1', '10.0.0.1, 10.0.0.2', trusted)).toBe('10.0.0.1')
    expect(clientAddress('127.0.0.1', undefined, trusted)).toBe('127.0.0.1')
    expect(clientAddress('127.0.0.1', '203.0.113.9', undefined)).toBe('127.0.0.1')
  })

  it('refuses a malformed trusted entry with a config_error naming it', () => {
    expect(() => trustedProxies(['10.0.0.0/33'])).toThrow(/10\.0\.0\.0\/33/)
    expect(() => trustedProxies(['proxy.local'])).toThrow(expect.objectContaining({ code: 'config_error' }))
  })
})
