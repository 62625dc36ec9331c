/**
 * Per-caller rate limit (a token bucket per token, or for the local principal), the
 * per-address limit of failed authentications, and the log-field redaction the server
 * applies to everything it logs.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import { createLru } from '../core/lru.js'
import type { LogFields, Logger } from '../core/logger.js'

export interface RateLimitOptions {
  /** Sustained requests per second per caller; 0 turns the limit off. */
  perSecond: number
  /** Bucket size: requests a caller may make at once. */
  burst: number
  clock?: Clock
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

/**
 * A token-bucket limiter. `take(key)` throws `rate_limited` (with `retry_after_s`)
 * when the caller's bucket is empty.
 * @example
 * const limiter = createRateLimiter({ perSecond: 50, burst: 200 })
 * limiter.take('token:tok_abc')
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const clock = options.clock ?? systemClock
  const maxKeys = options.maxKeys ?? 10_000
  const buckets = createLru<string, { tokens: number; at: number }>(maxKeys)

  /** The key's bucket, refilled up to now and marked most recently used. */
  function bucketOf(key: string): { tokens: number; at: number } {
    const now = clock.now().getTime()
    const bucket = buckets.get(key) ?? { tokens: options.burst, at: now }
    bucket.tokens = Math.min(options.burst, bucket.tokens + ((now - bucket.at) / 1000) * options.perSecond)
    bucket.at = now
    buckets.set(key, bucket)
    return bucket
  }

  function refuse(bucket: { tokens: number }, message = 'Too many requests'): never {
    const retry = (1 - bucket.tokens) / options.perSecond
    throw new KnowHubError(
      'rate_limited',
      `${message}: the limit is ${options.perSecond} per second (bursts of ${options.burst}); retry in ${Math.ceil(retry)} s`,
      {
        limit_per_s: options.perSecond,
        burst: options.burst,
        retry_after_s: Math.ceil(retry),
      },
    )
  }

  return {
    take(key) {
      if (options.perSecond <= 0) return
      const bucket = bucketOf(key)
      if (bucket.tokens < 1) refuse(bucket)
      bucket.tokens -= 1
    },
    check(key, message) {
      if (options.perSecond <= 0) return
      const bucket = bucketOf(key)
      if (bucket.tokens < 1) refuse(bucket, message)
    },
    consume(key) {
      if (options.perSecond <= 0) return
      const bucket = bucketOf(key)
      bucket.tokens = Math.max(0, bucket.tokens - 1)
    },
  }
}

const SECRET_KEY = /secure_body|secret|token|password|passwd|authorization|api_?key|cookie/i
const MAX_DEPTH = 6

function redact(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return '[truncated]'
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? '[redacted]' : redact(v, depth + 1)
  return out
}

/** Replaces the value of any field named like a secret (secure_body, token, password, …), at any depth. */
export function redactFields(fields: LogFields): LogFields {
  return redact(fields, 0) as LogFields
}

/**
 * A logger that redacts secret-named fields before passing them on. The server wraps
 * whatever logger it is given with this.
 */
export function redactingLogger(logger: Logger): Logger {
  return {
    debug: (message, fields) => logger.debug(message, fields && redactFields(fields)),
    info: (message, fields) => logger.info(message, fields && redactFields(fields)),
    warn: (message, fields) => logger.warn(message, fields && redactFields(fields)),
    error: (message, fields) => logger.error(message, fields && redactFields(fields)),
  }
}
