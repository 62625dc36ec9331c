/**
 * Token buckets: {@link createRateLimiter} (one bucket per key, kept in an LRU) and the
 * per-caller request limit {@link rateLimit}, which runs after authentication and takes
 * one request from the caller's bucket (`rate_limited` with `retry_after_s` when empty).
 * The auth middleware uses a second limiter for failed authentications per address.
 */
import { createMiddleware } from 'hono/factory'
import type { Clock } from '../../core/clock.js'
import { systemClock } from '../../core/clock.js'
import { KnowHubError } from '../../core/errors.js'
import { createLru } from '../../core/lru.js'
import type { AppEnv } from '../http.js'

export interface RateLimitOptions {
  /** Sustained requests per second per caller; 0 turns the limit off. */
  perSecond: number
  /** Bucket size: requests a caller may make at once. */
  burst: number
  clock?: Clock | undefined
  /** Buckets kept at most (idle ones are dropped first). Default 10000. */
  maxKeys?: number
}

/** A token-bucket limiter: one bucket per key. */
export interface RateLimiter {
  /** Takes one request from the key's bucket; throws `rate_limited` (with `retry_after_s`) when it is empty. */
  take(key: string): void
  /** Throws `rate_limited` when the key's bucket is empty now, without taking anything. */
  check(key: string, message?: string): void
  /** Takes one from the key's bucket (down to empty), never throwing: for counting failures. */
  consume(key: string): void
}

interface Bucket {
  tokens: number
  at: number
}

function refusal(options: RateLimitOptions, bucket: Bucket, message = 'Too many requests'): KnowHubError {
  const retry = Math.ceil((1 - bucket.tokens) / options.perSecond)
  return new KnowHubError('rate_limited', `${message}: the limit is ${options.perSecond} per second (bursts of ${options.burst}); retry in ${retry} s`, {
    limit_per_s: options.perSecond,
    burst: options.burst,
    retry_after_s: retry,
  })
}

/**
 * A token-bucket limiter. `take(key)` throws `rate_limited` (with `retry_after_s`)
 * when the caller's bucket is empty.
 * @example
 * const limiter = createRateLimiter({ perSecond: 50, burst: 200 })
 * limiter.take('token:tok_abc')
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const clock = options.clock ?? systemClock
  const buckets = createLru<string, Bucket>(options.maxKeys ?? 10_000)
  const off = options.perSecond <= 0

  /** The key's bucket, refilled up to now and marked most recently used. */
  function bucketOf(key: string): Bucket {
    const now = clock.now().getTime()
    const bucket = buckets.get(key) ?? { tokens: options.burst, at: now }
    bucket.tokens = Math.min(options.burst, bucket.tokens + ((now - bucket.at) / 1000) * options.perSecond)
    bucket.at = now
    buckets.set(key, bucket)
    return bucket
  }

  return {
    take(key) {
      if (off) return
      const bucket = bucketOf(key)
      if (bucket.tokens < 1) throw refusal(options, bucket)
      bucket.tokens -= 1
    },
    check(key, message) {
      if (off) return
      const bucket = bucketOf(key)
      if (bucket.tokens < 1) throw refusal(options, bucket, message)
    },
    consume(key) {
      if (off) return
      const bucket = bucketOf(key)
      bucket.tokens = Math.max(0, bucket.tokens - 1)
    },
  }
}

/**
 * Takes one request from the caller's bucket (the caller set by the auth middleware;
 * public paths, which have none, are not limited).
 * @example
 * app.use('*', rateLimit({ limiter: createRateLimiter({ perSecond: 50, burst: 200 }) }))
 */
export function rateLimit(options: { limiter: RateLimiter }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const caller = c.get('caller') as { key: string } | undefined
    if (caller) options.limiter.take(caller.key)
    await next()
  })
}
