/**
 * The client's one error class. A failed call throws a `KnowHubClientError` whose
 * `code` is the server's error code (`not_found`, `validation_error`, …) or one of
 * the client's own codes for failures that never got a KnowHub answer
 * (`network_error`, `timeout`, `aborted`, `invalid_response`, `http_error`).
 * Check errors by `code`, not by `instanceof`.
 */
import { ErrorCode, type ErrorDetails } from '../core/errors.js'

/**
 * Codes of failures the server did not describe itself.
 * @example
 * if (isKnowHubClientError(error, ClientErrorCode.TIMEOUT)) retryLater()
 */
export const ClientErrorCode = {
  /** The request never got an HTTP response: connection refused or reset, DNS failure, … */
  NETWORK: 'network_error',
  /** No response within the per-attempt timeout (`timeoutMs`). */
  TIMEOUT: 'timeout',
  /** The caller's `signal` aborted the call. */
  ABORTED: 'aborted',
  /** A response that is not what the API promises: malformed JSON, or a body failing its schema. */
  INVALID_RESPONSE: 'invalid_response',
  /** A non-2xx response without a KnowHub error body (e.g. from a proxy), or with an error code this client does not know. */
  HTTP: 'http_error',
} as const

/** Every code a client error can carry: the server's codes and the client's own. */
export type ClientErrorCode = ErrorCode | (typeof ClientErrorCode)[keyof typeof ClientErrorCode]

const SERVER_CODES = new Set<string>(Object.values(ErrorCode))

/**
 * True when `code` is one of the server's {@link ErrorCode}s.
 * @example
 * isServerErrorCode('not_found') // true
 * isServerErrorCode('timeout') // false: the client's own
 */
export function isServerErrorCode(code: string): code is ErrorCode {
  return SERVER_CODES.has(code)
}

export interface KnowHubClientErrorInit {
  /** HTTP status of the response; undefined when there was none (network, timeout, abort). */
  status?: number | undefined
  details?: ErrorDetails | undefined
  /** The request id (the server's `X-Request-Id`, or the one the client sent). */
  requestId?: string | undefined
  method?: string | undefined
  /** The path called, e.g. `/api/knowledge/search` (no query string: it may hold private text). */
  path?: string | undefined
  /** The server's code when it is not one this client knows (then `code` is `http_error`). */
  serverCode?: string | undefined
  /** How long the server asked to wait (429 Retry-After), in milliseconds. */
  retryAfterMs?: number | undefined
  /** How many attempts were made (more than 1 after retries). */
  attempts?: number | undefined
  cause?: unknown
}

/**
 * A failed client call.
 * @example
 * try {
 *   await client.knowledge.get('knowledge-x')
 * } catch (error) {
 *   if (isKnowHubClientError(error, 'not_found')) console.log('gone', error.requestId)
 *   else throw error
 * }
 */
export class KnowHubClientError extends Error {
  override readonly name = 'KnowHubClientError'
  readonly code: ClientErrorCode
  readonly status: number | undefined
  readonly details: ErrorDetails
  readonly requestId: string | undefined
  readonly method: string | undefined
  readonly path: string | undefined
  readonly serverCode: string | undefined
  readonly retryAfterMs: number | undefined
  readonly attempts: number

  constructor(code: ClientErrorCode, message: string, init: KnowHubClientErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = code
    this.status = init.status
    this.details = init.details ?? {}
    this.requestId = init.requestId
    this.method = init.method
    this.path = init.path
    this.serverCode = init.serverCode
    this.retryAfterMs = init.retryAfterMs
    this.attempts = init.attempts ?? 1
  }

  /** The validation issues of a `validation_error` (`details.issues`), or an empty list. */
  get issues(): Array<{ path: string; message: string }> {
    const issues = this.details.issues
    if (!Array.isArray(issues)) return []
    return issues.flatMap((issue: unknown) => {
      const i = issue as { path?: unknown; message?: unknown } | null
      return i && typeof i.message === 'string' ? [{ path: typeof i.path === 'string' ? i.path : '', message: i.message }] : []
    })
  }

  toJSON(): { code: ClientErrorCode; message: string; status?: number; details: ErrorDetails; request_id?: string } {
    return {
      code: this.code,
      message: this.message,
      ...(this.status === undefined ? {} : { status: this.status }),
      details: this.details,
      ...(this.requestId === undefined ? {} : { request_id: this.requestId }),
    }
  }
}

/**
 * True when `value` is a client error (optionally with the given code). Checks the
 * shape, not the prototype, so it works across copies of the package.
 * @example
 * if (isKnowHubClientError(error, 'timeout')) retryLater()
 */
export function isKnowHubClientError(value: unknown, code?: ClientErrorCode): value is KnowHubClientError {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as { name?: unknown; code?: unknown }
  if (candidate.name !== 'KnowHubClientError' || typeof candidate.code !== 'string') return false
  return code === undefined || candidate.code === code
}
