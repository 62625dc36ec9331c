/**
 * Refuses a request target with a `.` or `..` path segment (plain or percent-encoded).
 * URL parsing resolves them before routing (so `/api/resource/code/%2e%2e/credentials/x`
 * would become `credentials/x`); a proxy in front may resolve them differently, so such
 * paths are refused rather than guessed.
 */
import { createMiddleware } from 'hono/factory'
import { KnowHubError } from '../../core/errors.js'
import type { AppEnv, Connection } from '../http.js'

/**
 * True when the raw request target has a `.` or `..` path segment, plain or percent-encoded.
 * @example
 * hasDotSegment('/api/resource/code/%2e%2e/x') // true
 */
export function hasDotSegment(rawTarget: string): boolean {
  const path = rawTarget.split(/[?#]/, 1)[0] ?? ''
  return path.split('/').some((segment) => {
    const s = segment.replace(/%2e/gi, '.')
    return s === '.' || s === '..'
  })
}

/**
 * `validation_error` at path `(path)` for a raw target with a dot segment. Without a
 * `connection` (in-process requests) there is no raw target and nothing to check.
 * @example
 * app.use('*', dotSegments({ connection: nodeConnection }))
 */
export function dotSegments(options: { connection?: Connection | undefined }) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const rawTarget = options.connection?.(c.env).rawTarget
    if (rawTarget !== undefined && hasDotSegment(rawTarget)) {
      throw new KnowHubError('validation_error', 'Invalid request: the path has a . or .. segment', {
        issues: [{ path: '(path)', message: 'the path has a . or .. segment (plain or percent-encoded)' }],
      })
    }
    await next()
  })
}
