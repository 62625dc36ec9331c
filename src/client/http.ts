/**
 * The client's transport: one HTTP call with a per-attempt timeout, a request id,
 * the bearer token, JSON in and out, response validation, error mapping, and
 * retries with backoff where they are safe. Web APIs only (fetch, AbortSignal,
 * URL), so it runs in Node 20+, Deno, Bun, workers and browsers.
 */
import type { z } from 'zod'
import { CODE_BY_STATUS } from '../core/errors.js'
import { KnowHubClientError, isServerErrorCode } from './errors.js'

/** What the client needs of `fetch` (the global one, undici's, or a test's). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

/** The parts of a response the transport reads; a fetch `Response` is one. */
export interface HttpResponse {
  readonly ok: boolean
  readonly status: number
  readonly statusText: string
  readonly headers: { get(name: string): string | null }
  text(): Promise<string>
  arrayBuffer(): Promise<ArrayBuffer>
}

/** One HTTP request as the transport sends it. */
export interface HttpRequest {
  method: string
  headers: Record<string, string>
  body: string | null
  signal: AbortSignal
}

/**
 * Sends one HTTP request: `fetch` (see {@link fetchRequester}) or another transport (the CLI's
 * `node:http` one). A failure to get a response rejects; the transport maps it.
 */
export type Requester = (url: string, request: HttpRequest) => Promise<HttpResponse>

/**
 * A requester over a `fetch`. A request without a body follows redirects as fetch does (across
 * origins without the token: fetch drops `Authorization` there); a request with a body follows
 * none (a `network_error`: "redirect mode is set to error"), since fetch would send the body, a
 * resource's `secure_body` say, to whatever origin a 307 names (issue 39). A KnowHub server
 * answers its API without redirects.
 * @example
 * const request = fetchRequester((url, init) => globalThis.fetch(url, init))
 */
export function fetchRequester(fetchImpl: FetchLike): Requester {
  return (url, request) => fetchImpl(url, { ...request, redirect: request.body === null ? 'follow' : 'error' })
}

/** When and how often a call is retried. */
export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retries off). */
  retries?: number
  /** First backoff delay in ms (default 250); doubles per retry, with full jitter. */
  baseDelayMs?: number
  /** Longest backoff delay in ms (default 4000). */
  maxDelayMs?: number
  /** Longest `Retry-After` the client waits for, in ms (default 30000); longer ones fail at once. */
  maxRetryAfterMs?: number
}

/** Options of one call; they override the client's. */
export interface CallOptions {
  /** Aborts the call (code `aborted`); also stops a backoff wait. */
  signal?: AbortSignal
  /** Timeout of each attempt in ms (code `timeout`). */
  timeoutMs?: number
  /** Retries of this call (see {@link RetryOptions.retries}). */
  retries?: number
  /** Extra headers. */
  headers?: Record<string, string>
  /** The request id sent as `X-Request-Id` (default: a new one per call, kept across its retries). */
  requestId?: string
}

export interface TransportOptions {
  baseUrl: string
  token?: string | undefined
  request: Requester
  timeoutMs: number
  retry: Required<RetryOptions>
  headers: Record<string, string>
  /** Validate response bodies against their schemas (default true). */
  validateResponses: boolean
}

export type QueryValue = string | number | boolean | readonly string[] | undefined

/**
 * How safe a call is to repeat:
 * - `idempotent`: repeated on network errors, timeouts, 429, 502, 503 and 504;
 * - `unsafe`: repeated only on 429 (the server refuses a rate-limited request before
 *   doing anything), never after a network error or a timeout, when it may have run.
 */
export type Retryability = 'idempotent' | 'unsafe'

export interface RequestSpec<T> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Already encoded path, starting with `/`. */
  path: string
  query?: Record<string, QueryValue>
  body?: unknown
  retry: Retryability
  schema: z.ZodType<T>
  /** Send `body` (a string) as it is, with this content type, instead of as JSON. */
  contentType?: string
  /** The response body is text of this type (JSONL), returned as it is instead of parsed as JSON. */
  responseText?: string
  /** The response body is bytes of this type (a backup file), returned as a `Uint8Array`. */
  responseBytes?: string
}

const TRANSIENT_STATUS = new Set([429, 502, 503, 504])
/** Server codes that a retry cannot fix even when their status looks transient. */
const PERMANENT_CODES = new Set<string>(['embedder_mismatch', 'llm_not_configured', 'secrets_read_only'])

function newRequestId(): string {
  return `req_${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
}

function buildUrl(baseUrl: string, path: string, query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue
    if (Array.isArray(value)) {
      if (value.length > 0) params.set(key, value.join(','))
    } else {
      params.set(key, String(value))
    }
  }
  const search = params.toString()
  return `${baseUrl}${path}${search ? `?${search}` : ''}`
}

/**
 * `Retry-After` as milliseconds: delta-seconds or an HTTP date.
 * @example
 * parseRetryAfter('2') // 2000
 * parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT') // ms until then (0 when past)
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** The caller's signal and the attempt's timeout, combined. */
function combine(signals: AbortSignal[]): AbortSignal {
  if (signals.length === 1) return signals[0]!
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals)
  const controller = new AbortController()
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason)
      break
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
  }
  return controller.signal
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

interface ErrorContext {
  method: string
  path: string
  requestId: string
  attempts: number
}

/** A non-2xx response as a client error: the server's code and details when it sent its error body. */
function responseError(response: HttpResponse, text: string, context: ErrorContext): KnowHubClientError {
  const requestId = response.headers.get('x-request-id') ?? context.requestId
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
  const parsed = parseJson(text)
  const error = parsed.ok ? (parsed.value as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error : undefined
  const base = { status: response.status, requestId, method: context.method, path: context.path, retryAfterMs, attempts: context.attempts }
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    const details =
      typeof error.details === 'object' && error.details !== null && !Array.isArray(error.details) ? (error.details as Record<string, unknown>) : {}
    if (isServerErrorCode(error.code)) return new KnowHubClientError(error.code, error.message, { ...base, details })
    return new KnowHubClientError('http_error', error.message, { ...base, details, serverCode: error.code })
  }
  const code = CODE_BY_STATUS[response.status] ?? 'http_error'
  return new KnowHubClientError(
    code,
    `${context.method} ${context.path} failed with HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
    base,
  )
}

function backoff(retry: Required<RetryOptions>, attempt: number): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1))
  return Math.round(Math.random() * cap)
}

/**
 * Sends one API call (with its retries) and returns the validated response body.
 * Throws {@link KnowHubClientError} for every failure.
 */
export async function send<T>(transport: TransportOptions, spec: RequestSpec<T>, options: CallOptions = {}): Promise<T> {
  const url = buildUrl(transport.baseUrl, spec.path, spec.query)
  const requestId = options.requestId ?? newRequestId()
  const retries = Math.max(0, options.retries ?? transport.retry.retries)
  const timeoutMs = options.timeoutMs ?? transport.timeoutMs
  const headers: Record<string, string> = {
    accept: spec.responseBytes ?? spec.responseText ?? 'application/json',
    ...transport.headers,
    ...options.headers,
    'x-request-id': requestId,
  }
  if (transport.token) headers.authorization = `Bearer ${transport.token}`
  let body: string | undefined
  if (spec.body !== undefined) {
    body = spec.contentType && typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body)
    headers['content-type'] = spec.contentType ?? 'application/json'
  }

  for (let attempt = 1; ; attempt++) {
    const context: ErrorContext = { method: spec.method, path: spec.path, requestId, attempts: attempt }
    const canRetry = attempt <= retries
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = combine(options.signal ? [options.signal, timeout] : [timeout])
    let response: HttpResponse
    let text: string
    let bytes: Uint8Array | undefined
    try {
      response = await transport.request(url, { method: spec.method, headers, body: body ?? null, signal })
      if (spec.responseBytes && response.ok) {
        bytes = new Uint8Array(await response.arrayBuffer())
        text = ''
      } else text = await response.text()
    } catch (cause) {
      if (options.signal?.aborted) {
        throw new KnowHubClientError('aborted', `${spec.method} ${spec.path} was aborted`, { ...context, cause })
      }
      const timedOut = timeout.aborted
      const failure = timedOut
        ? new KnowHubClientError('timeout', `${spec.method} ${spec.path} timed out after ${timeoutMs} ms`, {
            ...context,
            details: { timeout_ms: timeoutMs },
            cause,
          })
        : new KnowHubClientError('network_error', `${spec.method} ${spec.path} failed: ${networkReason(cause)}`, { ...context, cause })
      if (spec.retry === 'idempotent' && canRetry) {
        await wait(backoff(transport.retry, attempt), options.signal, context)
        continue
      }
      throw failure
    }

    if (response.ok) return bytes ? spec.schema.parse(bytes) : decode(transport, spec, response, text, context)

    const error = responseError(response, text, context)
    const transient = TRANSIENT_STATUS.has(response.status) && !PERMANENT_CODES.has(error.serverCode ?? error.code)
    const retryable = transient && canRetry && (spec.retry === 'idempotent' || response.status === 429)
    if (!retryable) throw error
    let delay = backoff(transport.retry, attempt)
    if (error.retryAfterMs !== undefined) {
      if (error.retryAfterMs > transport.retry.maxRetryAfterMs) throw error
      delay = error.retryAfterMs
    }
    await wait(delay, options.signal, context)
  }
}

async function wait(ms: number, signal: AbortSignal | undefined, context: ErrorContext): Promise<void> {
  try {
    await sleep(ms, signal)
  } catch (cause) {
    throw new KnowHubClientError('aborted', `${context.method} ${context.path} was aborted`, { ...context, cause })
  }
}

/** The reason of a failed request: fetch wraps the socket's error (`fetch failed`, cause ECONNREFUSED); node:http throws it as it is. */
function networkReason(cause: unknown): string {
  const error = cause as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null
  const inner = error?.cause
  if (inner && typeof inner.code === 'string') return inner.code
  if (inner && typeof inner.message === 'string') return inner.message
  if (typeof error?.code === 'string') return error.code
  return typeof error?.message === 'string' ? error.message : 'unknown error'
}

function decode<T>(transport: TransportOptions, spec: RequestSpec<T>, response: HttpResponse, text: string, context: ErrorContext): T {
  const requestId = response.headers.get('x-request-id') ?? context.requestId
  if (spec.responseText) return spec.schema.parse(text)
  const parsed = parseJson(text)
  const base = { status: response.status, requestId, method: context.method, path: context.path, attempts: context.attempts }
  if (!parsed.ok) throw new KnowHubClientError('invalid_response', `${context.method} ${context.path}: the response is not JSON`, base)
  if (!transport.validateResponses) return parsed.value as T
  const result = spec.schema.safeParse(parsed.value)
  if (result.success) return result.data
  const issues = result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.') || '(root)', message: issue.message }))
  throw new KnowHubClientError(
    'invalid_response',
    `${context.method} ${context.path}: the response does not match the API schema (${issues.length} issue${issues.length === 1 ? '' : 's'})`,
    {
      ...base,
      details: { issues: issues.slice(0, 20) },
    },
  )
}
