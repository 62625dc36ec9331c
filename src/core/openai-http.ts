/**
 * One JSON POST to an OpenAI-compatible endpoint with timeouts and retries: requests that
 * time out, fail on the network or get 408/409/429/5xx are retried with exponential
 * backoff and jitter, honouring `Retry-After`. The API key never reaches a message.
 * Used by the OpenAI-compatible embedder; an LLM provider speaks the same protocol.
 */
import { z } from 'zod'
import { KnowHubError, type ErrorCode } from './errors.js'
import type { Logger } from './logger.js'

/** How failed requests are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  retries?: number
  /** First backoff delay; doubles on each retry, with jitter (default 500 ms). */
  baseDelayMs?: number
  /** Longest wait between attempts, also the cap on `Retry-After` (default 20 s). */
  maxDelayMs?: number
}

export interface OpenAIHttpOptions {
  url: URL
  apiKey?: string | undefined
  timeoutMs: number
  fetch: typeof globalThis.fetch
  logger: Logger
  retry?: RetryPolicy | undefined
  /** The code of the errors thrown (e.g. `embedder_failed`). */
  errorCode: ErrorCode
  /** The code thrown when the last attempt timed out (default `errorCode`). */
  timeoutCode?: ErrorCode
  /** Prefix of the log messages (e.g. `embed.openai`). */
  logPrefix: string
  /** What a request is, in messages (e.g. `Embedding request`). */
  label: string
  /** Details added to every error (e.g. the model). */
  details?: Record<string, unknown>
  /**
   * A failed answer not to retry even though its status is retryable: the LLM provider's
   * refused response format (llama.cpp's server answers 500 to a form it does not know).
   */
  final?: (status: number, reason: string) => boolean
}

/** A POST-JSON-with-retries client of one endpoint. */
export interface OpenAIHttp {
  /** The endpoint without credentials, for messages. */
  readonly where: string
  /** The parsed JSON answer of a successful request; `overrides` change the timeout and retries of this request only. */
  post(body: Record<string, unknown>, signal?: AbortSignal, overrides?: { timeoutMs?: number; retries?: number }): Promise<unknown>
  /** An error of the configured code, the API key redacted from its message. */
  fail(message: string, details?: Record<string, unknown>, cause?: unknown): KnowHubError
}

const OpenAIErrorBody = z.object({ error: z.object({ message: z.string() }).or(z.string()) })
const EXCERPT_CHARS = 300

/**
 * The endpoint URL, without credentials, for messages and logs.
 * @example
 * displayUrl(new URL('http://u:p@host/v1/embeddings')) // 'http://host/v1/embeddings'
 */
export function displayUrl(url: URL): string {
  const copy = new URL(url.href)
  copy.username = ''
  copy.password = ''
  return copy.href
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error)
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason as Error)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** A failed attempt: whether to try again, and what to say if not. */
interface AttemptFailure {
  retryable: boolean
  message: string
  status?: number
  retryAfter?: number
  cause?: unknown
  timedOut?: boolean
}

/** The error text of a failed response: the OpenAI error message when there is one, else an excerpt. */
function errorReason(text: string): string {
  try {
    const parsed = OpenAIErrorBody.safeParse(JSON.parse(text))
    if (parsed.success) {
      const err = parsed.data.error
      return (typeof err === 'string' ? err : err.message).slice(0, EXCERPT_CHARS)
    }
  } catch {
    // Not JSON: keep the text excerpt.
  }
  return text.slice(0, EXCERPT_CHARS)
}

/**
 * A client of one OpenAI-compatible endpoint.
 * @example
 * const http = createOpenAIHttp({ url, timeoutMs: 30_000, fetch, logger, errorCode: 'embedder_failed', logPrefix: 'embed.openai', label: 'Embedding request' })
 * const json = await http.post({ model: 'nomic-embed-text', input: ['hello'] })
 */
export function createOpenAIHttp(options: OpenAIHttpOptions): OpenAIHttp {
  const where = displayUrl(options.url)
  const { apiKey } = options
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  /** Never let the API key reach a message, even if a server echoes it. */
  const redact = (text: string): string => (apiKey ? text.replaceAll(apiKey, '[redacted]') : text)
  const fail = (message: string, details: Record<string, unknown> = {}, cause?: unknown): KnowHubError =>
    new KnowHubError(options.errorCode, redact(message), { url: where, ...options.details, ...details }, { cause })

  async function attempt(body: Record<string, unknown>, signal: AbortSignal | undefined, timeoutMs: number): Promise<{ json: unknown } | AttemptFailure> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let response: Response
    let text: string
    try {
      response = await options.fetch(options.url, { method: 'POST', headers, body: JSON.stringify(body), signal: combined })
      text = await response.text()
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (timeout.aborted) return { retryable: true, message: `timed out after ${timeoutMs} ms`, cause: error, timedOut: true }
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
      const reason = cause instanceof Error ? cause.message : String(cause)
      return { retryable: true, message: `network error: ${reason}`, cause: error }
    }
    if (!response.ok) {
      const reason = errorReason(text)
      const hint = response.status === 404 ? ' (is the base URL the API root, e.g. http://host:port/v1?)' : ''
      return {
        retryable: isRetryableStatus(response.status) && !options.final?.(response.status, reason),
        status: response.status,
        message: `HTTP ${response.status}${reason ? `: ${reason}` : ''}${hint}`,
        retryAfter: retryAfterMs(response.headers.get('retry-after')),
      }
    }
    try {
      return { json: JSON.parse(text) }
    } catch (error) {
      throw fail(`${where} answered with something that is not JSON: ${text.slice(0, 100)}`, {}, error)
    }
  }

  const defaultRetries = options.retry?.retries ?? 3
  const baseDelayMs = options.retry?.baseDelayMs ?? 500
  const maxDelayMs = options.retry?.maxDelayMs ?? 20_000
  return {
    where,
    fail,
    async post(body, signal, overrides = {}) {
      const retries = overrides.retries ?? defaultRetries
      const timeoutMs = overrides.timeoutMs ?? options.timeoutMs
      for (let attemptNo = 1; ; attemptNo++) {
        options.logger.debug(`${options.logPrefix}.request`, { url: where, attempt: attemptNo, ...options.details })
        const outcome = await attempt(body, signal, timeoutMs)
        if ('json' in outcome) return outcome.json
        if (!outcome.retryable || attemptNo > retries) {
          const tries = attemptNo === 1 ? '' : ` after ${attemptNo} attempts`
          const error = fail(`${options.label} to ${where} failed${tries}: ${outcome.message}`, { status: outcome.status, attempts: attemptNo }, outcome.cause)
          if (outcome.timedOut && options.timeoutCode) throw new KnowHubError(options.timeoutCode, error.message, error.details, { cause: outcome.cause })
          throw error
        }
        const backoff = baseDelayMs * 2 ** (attemptNo - 1) * (0.5 + Math.random() / 2)
        const delayMs = Math.round(Math.min(maxDelayMs, outcome.retryAfter ?? backoff))
        options.logger.warn(`${options.logPrefix}.retry`, { url: where, attempt: attemptNo, status: outcome.status, reason: redact(outcome.message), delayMs })
        await sleep(delayMs, signal)
      }
    },
  }
}
