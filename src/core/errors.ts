/**
 * The one error class of KnowHub. Check errors by `code`, never by `instanceof`
 * across package boundaries: codes are stable and part of the public API.
 */
export const ErrorCode = {
  /** Input failed schema validation; `details.issues` lists every problem with its path. */
  VALIDATION: 'validation_error',
  /** The caller is not authenticated. */
  UNAUTHENTICATED: 'unauthenticated',
  /** The caller is authenticated but may not do this. */
  FORBIDDEN: 'forbidden',
  /** No such entity, or the caller may not see it (the two are indistinguishable on purpose). */
  NOT_FOUND: 'not_found',
  /** The entity exists already, or a concurrent change won. */
  CONFLICT: 'conflict',
  /** A body, file or field is larger than allowed. */
  TOO_LARGE: 'too_large',
  /** The action needs explicit confirmation first (e.g. using a disputed knowledge pack). */
  CONFIRMATION_REQUIRED: 'confirmation_required',
  /** Too many requests. */
  RATE_LIMITED: 'rate_limited',
  /** A scope string is not `kind:id` or `public`. */
  INVALID_SCOPE: 'invalid_scope',
  /** A line of an import file is not a valid entry. */
  INVALID_IMPORT: 'invalid_import',
  /** The stored embedding model/dimension differs from the configured embedder. */
  EMBEDDER_MISMATCH: 'embedder_mismatch',
  /** The embedding provider failed or returned something unusable. */
  EMBEDDER_FAILED: 'embedder_failed',
  /** A feature needs an LLM and none is configured. */
  LLM_NOT_CONFIGURED: 'llm_not_configured',
  /** The LLM endpoint failed (HTTP error, network error) after its retries; nothing was changed. */
  LLM_FAILED: 'llm_failed',
  /** The LLM endpoint did not answer in time; nothing was changed. */
  LLM_TIMEOUT: 'llm_timeout',
  /** The LLM answered something unusable (not JSON, or JSON that breaks the schema) even after one repair; nothing was changed. */
  LLM_INVALID_OUTPUT: 'llm_invalid_output',
  /** Configuration is invalid. */
  CONFIG: 'config_error',
  /**
   * The server runs with secrets read-only (started with a key that does not match the stored
   * secrets, `KNOWHUB_SECRETS_READ_ONLY=1`): no secret can be written until it restarts with the right key.
   */
  SECRETS_READ_ONLY: 'secrets_read_only',
  /** The database failed. */
  DATABASE: 'database_error',
  /** The database cannot be reached (connection lost, server restarting or shutting down): try again; nothing was changed. */
  DATABASE_UNAVAILABLE: 'database_unavailable',
  /** A bug: something that should not happen did. */
  INTERNAL: 'internal_error',
} as const

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/** The HTTP status of each error code (the server answers it; the client reads it back). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  [ErrorCode.VALIDATION]: 400,
  [ErrorCode.INVALID_SCOPE]: 400,
  [ErrorCode.INVALID_IMPORT]: 400,
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.CONFIRMATION_REQUIRED]: 409,
  [ErrorCode.TOO_LARGE]: 413,
  [ErrorCode.RATE_LIMITED]: 429,
  // The server cannot do this as configured (no LLM): not a transient outage, so 501 rather than 503.
  [ErrorCode.LLM_NOT_CONFIGURED]: 501,
  [ErrorCode.EMBEDDER_FAILED]: 502,
  [ErrorCode.LLM_FAILED]: 502,
  [ErrorCode.LLM_INVALID_OUTPUT]: 502,
  [ErrorCode.LLM_TIMEOUT]: 504,
  // The index needs `knowhub reindex` before searches and saves work again.
  [ErrorCode.EMBEDDER_MISMATCH]: 503,
  // A transient outage: the pool reconnects once the database is back.
  [ErrorCode.DATABASE_UNAVAILABLE]: 503,
  // Until a restart with the right key: permanent for a client (src/client/http.ts does not retry it).
  [ErrorCode.SECRETS_READ_ONLY]: 503,
  [ErrorCode.CONFIG]: 500,
  [ErrorCode.DATABASE]: 500,
  [ErrorCode.INTERNAL]: 500,
}

/**
 * The error code a plain HTTP status stands for, for responses that carry no KnowHub error body
 * (a proxy's 429, a framework's 413).
 */
export const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.VALIDATION,
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.TOO_LARGE,
  429: ErrorCode.RATE_LIMITED,
}

/** Anything JSON-serialisable that helps a caller fix the problem. Never secrets. */
export type ErrorDetails = Record<string, unknown>

/**
 * @example
 * throw new KnowHubError('not_found', `No knowledge entry ${id}`, { id })
 */
export class KnowHubError extends Error {
  override readonly name = 'KnowHubError'
  readonly code: ErrorCode
  readonly details: ErrorDetails | undefined

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.details = details
  }

  toJSON(): { code: ErrorCode; message: string; details?: ErrorDetails } {
    return this.details === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, details: this.details }
  }
}

/**
 * True when `value` is a KnowHub error (optionally with the given code).
 * Works across module copies because it checks the shape, not the prototype.
 * @example
 * if (isKnowHubError(err, 'not_found')) return 404
 */
export function isKnowHubError(value: unknown, code?: ErrorCode): value is KnowHubError {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as { name?: unknown; code?: unknown }
  if (candidate.name !== 'KnowHubError' || typeof candidate.code !== 'string') return false
  return code === undefined || candidate.code === code
}
