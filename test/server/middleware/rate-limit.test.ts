/** createRateLimiter (token buckets per key) and the per-caller rateLimit middleware. */
import { createMiddleware } from 'hono/factory'
import { describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../../src/core/errors.js'
import type { AppEnv } from '../../../src/server/http.js'
import { createRateLimiter, rateLimit } from '../../../src/server/middleware/rate-limit.js'
import { appWith, call } from './helpers.js'

function fakeClock(start = Date.parse('2026-03-06T12:00:00Z')) {
  let now = start
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) }
}

function codeOf(run: () => void): { code: string; details: Record<string, unknown> } | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    if (!isKnowHubError(error)) throw error
    return { code: error.code, details: error.details ?? {} }
  }
}

describe('createRateLimiter', () => {
  it('gives each key `burst` at once, then `perSecond`, and says when to retry', () => {
    const clock = fakeClock()
    const limiter = createRateLimiter({ perSecond: 1, burst: 2, clock })
    limiter.take('a')
    limiter.take('a')
    expect(codeOf(() => limiter.take('a'))).toEqual({ code: 'rate_limited', details: { limit_per_s: 1, burst: 2, retry_after_s: 1 } })
    limiter.take('b') // another key has its own bucket
    clock.advance(1000)
    limiter.take('a')
    expect(codeOf(() => limiter.take('a'))?.code).toBe('rate_limited')
  })

  it('check refuses an empty bucket without taking; consume never throws', () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 2, clock: fakeClock() })
    limiter.check('ip:x')
    limiter.consume('ip:x')
    limiter.consume('ip:x')
    limiter.consume('ip:x') // already empty: stays empty, no throw
    const refused = codeOf(() => limiter.check('ip:x', 'Too many failed authentications'))
    expect(refused?.code).toBe('rate_limited')
  })

  it('is off with perSecond 0', () => {
    const limiter = createRateLimiter({ perSecond: 0, burst: 1, clock: fakeClock() })
    for (let i = 0; i < 100; i++) limiter.take('a')
  })

  it('keeps at most maxKeys buckets, dropping the least recently used', () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 1, clock: fakeClock(), maxKeys: 2 })
    limiter.take('a')
    limiter.take('b')
    limiter.take('c') // drops a's empty bucket
    limiter.take('a') // a full bucket again
    expect(codeOf(() => limiter.take('c'))?.code).toBe('rate_limited')
  })
})

describe('rateLimit middleware', () => {
  it('limits each caller by its key and answers 429 with Retry-After; requests without a caller pass', async () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 1, clock: fakeClock() })
    const as = createMiddleware<AppEnv>(async (c, next) => {
      const key = c.req.header('x-caller')
      if (key) c.set('caller', { key, principal: { permissions: ['read'] } })
      await next()
    })
    const app = appWith([as, rateLimit({ limiter })])
    expect((await call(app, '/echo', { headers: { 'x-caller': 'token:tok_a' } })).body).toEqual({ caller: 'token:tok_a', bytes: 0 })
    const limited = await call(app, '/echo', { headers: { 'x-caller': 'token:tok_a' } })
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe('rate_limited')
    expect(limited.headers.get('retry-after')).toBe('1')
    expect((await call(app, '/echo', { headers: { 'x-caller': 'token:tok_b' } })).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await call(app, '/public')).status).toBe(200)
  })
})
