/**
 * The one mapping from errors to HTTP responses. Every failure answers
 * `{ "error": { "code", "message", "details" } }`; the status comes from the code.
 * Errors that are not ours, and our internal/database/config errors, answer 500
 * with a generic message: nothing internal (stack, SQL, paths) leaks.
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ErrorBody } from '../core/api.js'
import { CODE_BY_STATUS, ErrorCode, KnowHubError, STATUS_BY_CODE, isKnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { AppEnv } from './http.js'

/** Codes whose message and details are shown to the caller. The others are replaced by a generic 500. */
const EXPOSED = new Set<string>(
  Object.entries(STATUS_BY_CODE)
    .filter(([, status]) => status < 500 || status === 501 || status === 503)
    .map(([code]) => code),
)

/** LLM failures: shown by code with a fixed message (the endpoint's address and answer stay in the log). */
const LLM_FAILURES = new Map<string, string>([
  [ErrorCode.LLM_FAILED, 'The LLM endpoint failed'],
  [ErrorCode.LLM_TIMEOUT, 'The LLM endpoint did not answer in time'],
  [ErrorCode.LLM_INVALID_OUTPUT, 'The LLM answered something unusable'],
])

export interface MappedError {
  status: number
  body: ErrorBody
  /** True when the error is a bug or an outage worth an error log line. */
  internal: boolean
}

/**
 * Maps any thrown value to a status and an error body.
 * @example
 * const { status, body } = toHttpError(new KnowHubError('not_found', 'No knowledge entry x'))
 * // status 404, body { error: { code: 'not_found', message: 'No knowledge entry x', details: {} } }
 */
export function toHttpError(error: unknown, requestId?: string): MappedError {
  if (isKnowHubError(error) && EXPOSED.has(error.code)) {
    return {
      status: STATUS_BY_CODE[error.code] ?? 500,
      body: { error: { code: error.code, message: error.message, details: error.details ?? {} } },
      internal: false,
    }
  }
  if (isKnowHubError(error, 'embedder_failed')) {
    return { status: 502, body: { error: { code: error.code, message: 'The embedding provider failed; try again later', details: {} } }, internal: true }
  }
  if (isKnowHubError(error) && LLM_FAILURES.has(error.code)) {
    // The endpoint's address stays in the log; the caller learns which step failed and that nothing changed.
    const message = `${LLM_FAILURES.get(error.code)}; nothing was changed, try again later`
    const task = (error.details as { task?: unknown } | undefined)?.task
    return {
      status: STATUS_BY_CODE[error.code],
      body: { error: { code: error.code, message, details: typeof task === 'string' ? { task } : {} } },
      internal: true,
    }
  }
  const ref = requestId ? ` (request id ${requestId})` : ''
  return { status: 500, body: { error: { code: ErrorCode.INTERNAL, message: `Internal server error${ref}`, details: {} } }, internal: true }
}

/** A JSON error response. */
export function errorResponse(error: unknown, requestId?: string): { mapped: MappedError; response: Response } {
  const mapped = toHttpError(error, requestId)
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8' }
  if (mapped.status === 401) headers['www-authenticate'] = 'Bearer realm="knowhub"'
  const retry = (error as { details?: { retry_after_s?: unknown } } | undefined)?.details?.retry_after_s
  if (mapped.status === 429 && typeof retry === 'number') headers['retry-after'] = String(Math.max(1, Math.ceil(retry)))
  return { mapped, response: new Response(JSON.stringify(mapped.body), { status: mapped.status, headers }) }
}

/** Hono's own exceptions (e.g. from a malformed request) as KnowHub errors. */
function fromHttpException(error: HTTPException): KnowHubError {
  const code = CODE_BY_STATUS[error.status]
  return code ? new KnowHubError(code, error.message || 'Bad request') : new KnowHubError('internal_error', 'HTTP error', {}, { cause: error })
}

/** The status logged for a request its client abandoned (nginx's "client closed request"); nobody reads the answer. */
export const CLIENT_CLOSED_REQUEST = 499

/** Whether reading the request failed because the client went away (an upload cut off, a closed connection). */
function clientAborted(error: Error, request: Request): boolean {
  if (request.signal.aborted) return true
  const e = error as { name?: string; code?: unknown; message?: string }
  return e.name === 'AbortError' || (e.code === 'ECONNRESET' && e.message === 'aborted')
}

/**
 * The app's `onError`: every error as the JSON error body; bugs and outages logged as
 * `http.error` with the request id (the caller sees only the id). A request its client
 * abandoned is no bug: it is logged as `http.client_aborted` (info) with status 499.
 * @example
 * app.onError(errorHandler(logger))
 */
export function errorHandler(logger: Logger) {
  return (error: Error, c: Context<AppEnv>): Response => {
    const requestId = c.get('requestId')
    if (clientAborted(error, c.req.raw)) {
      logger.info('http.client_aborted', { request_id: requestId, method: c.req.method, path: c.req.path })
      return new Response(null, { status: CLIENT_CLOSED_REQUEST })
    }
    const known = error instanceof HTTPException ? fromHttpException(error) : error
    const { mapped, response } = errorResponse(known, requestId)
    if (mapped.internal) {
      const e = error as { name?: string; code?: unknown; message?: string; stack?: string }
      logger.error('http.error', {
        request_id: requestId,
        method: c.req.method,
        path: c.req.path,
        error: { name: e.name, code: e.code ?? null, message: e.message, stack: e.stack },
      })
    }
    return response
  }
}

/**
 * The app's `notFound`: `not_found` naming the method and path.
 * @example
 * app.notFound(notFoundHandler)
 */
export function notFoundHandler(c: Context<AppEnv>): Response {
  return errorResponse(new KnowHubError('not_found', `No route ${c.req.method} ${c.req.path}`, { method: c.req.method, path: c.req.path })).response
}
