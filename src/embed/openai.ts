/**
 * Embeddings from any OpenAI-compatible `/embeddings` endpoint: OpenAI, Ollama,
 * vLLM, Hugging Face TEI, LiteLLM and the like.
 *
 * `baseUrl` is the API root that the paths hang off, including the version
 * segment: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` (Ollama),
 * `http://127.0.0.1:8000/v1` (vLLM), `http://127.0.0.1:8080/v1` (TEI). The
 * embedder POSTs to `${baseUrl}/embeddings`; a trailing `/embeddings` given by
 * mistake is tolerated.
 */
import { z } from 'zod'
import type { EmbedderConfig } from '../core/config.js'
import { EmbedderConfig as EmbedderConfigSchema } from '../core/config.js'
import { isKnowHubError, KnowHubError } from '../core/errors.js'
import { noopLogger, type Logger } from '../core/logger.js'
import { toValidationIssues } from '../core/validate.js'
import type { Embedder } from './embedder.js'
import { l2normalize } from './vector.js'

/** The `openai` branch of {@link EmbedderConfig}, before defaults are applied. */
export type OpenAIEmbedderConfig = Extract<z.input<typeof EmbedderConfigSchema>, { provider: 'openai' }>

/** How failed requests are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  retries?: number
  /** First backoff delay; doubles on each retry, with jitter (default 500 ms). */
  baseDelayMs?: number
  /** Longest wait between attempts, also the cap on `Retry-After` (default 20 s). */
  maxDelayMs?: number
}

/** What {@link createOpenAIEmbedder} needs from its surroundings. */
export interface OpenAIEmbedderDeps {
  logger?: Logger
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch
  retry?: RetryPolicy
}

/** The part of an `/embeddings` response the embedder reads. */
const EmbeddingsResponse = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number()),
    }),
  ),
})
type EmbeddingsResponse = z.infer<typeof EmbeddingsResponse>

const OpenAIErrorBody = z.object({ error: z.object({ message: z.string() }).or(z.string()) })

const PROBE_TEXT = 'KnowHub embedding dimension probe'
const EXCERPT_CHARS = 300

/** The endpoint URL, without credentials, for messages and logs. */
function displayUrl(url: URL): string {
  const copy = new URL(url.href)
  copy.username = ''
  copy.password = ''
  return copy.href
}

function endpoint(baseUrl: string): URL {
  const root = baseUrl.replace(/\/+$/u, '').replace(/\/embeddings$/u, '')
  return new URL(`${root}/embeddings`)
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** A failed attempt: whether to try again, and what to say if not. */
interface AttemptFailure {
  retryable: boolean
  message: string
  status?: number
  retryAfter?: number
  cause?: unknown
}

/**
 * Creates an embedder backed by an OpenAI-compatible API. When `dimension` is
 * not configured, one probe request learns it, so the factory is async and
 * fails fast on an unreachable or misconfigured endpoint. When it is
 * configured, it is sent as `dimensions` (OpenAI text-embedding-3 and other
 * Matryoshka models) and every response is checked against it; no request is
 * made until the first `embed`.
 *
 * Texts are sent in batches of `batchSize`, one request at a time; requests that
 * time out, fail on the network or get 408/409/429/5xx are retried with
 * exponential backoff (honouring `Retry-After`). Blank texts get the zero vector
 * without being sent (most servers reject empty input).
 * @example
 * const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text' })
 * const [vector] = await embedder.embed(['hello'])
 */
export async function createOpenAIEmbedder(config: OpenAIEmbedderConfig, deps: OpenAIEmbedderDeps = {}): Promise<Embedder> {
  const parsed = EmbedderConfigSchema.safeParse(config)
  if (!parsed.success || parsed.data.provider !== 'openai') {
    const issues = parsed.success ? [{ path: 'provider', message: 'expected "openai"' }] : toValidationIssues(parsed.error)
    throw new KnowHubError('config_error', `Invalid OpenAI embedder config: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      issues,
    })
  }
  const settings: Extract<EmbedderConfig, { provider: 'openai' }> = parsed.data
  const url = endpoint(settings.baseUrl)
  const where = displayUrl(url)
  const logger = deps.logger ?? noopLogger
  const doFetch = deps.fetch ?? globalThis.fetch
  const retries = deps.retry?.retries ?? 3
  const baseDelayMs = deps.retry?.baseDelayMs ?? 500
  const maxDelayMs = deps.retry?.maxDelayMs ?? 20_000
  const apiKey = settings.apiKey
  let dimension = settings.dimension

  /** Never let the API key reach a message, even if a server echoes it. */
  const redact = (text: string): string => (apiKey ? text.replaceAll(apiKey, '[redacted]') : text)

  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`

  function fail(message: string, details: Record<string, unknown> = {}, cause?: unknown): KnowHubError {
    return new KnowHubError('embedder_failed', redact(message), { url: where, model: settings.model, ...details }, { cause })
  }

  /** Checks the response's shape, order and dimension; returns normalised vectors in input order. */
  function readVectors(json: unknown, count: number): Float32Array[] {
    const result = EmbeddingsResponse.safeParse(json)
    if (!result.success) {
      const issues = toValidationIssues(result.error).slice(0, 5)
      throw fail(`Unexpected response from ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues })
    }
    const data: EmbeddingsResponse['data'] = result.data.data
    if (data.length !== count) {
      throw fail(`${where} returned ${data.length} embeddings for ${count} inputs`, { expected: count, received: data.length })
    }
    const vectors = new Array<Float32Array | undefined>(count)
    let seen = dimension
    for (const item of data) {
      if (item.index >= count || vectors[item.index] !== undefined) {
        throw fail(`${where} returned a duplicate or out-of-range embedding index ${item.index}`, { index: item.index })
      }
      const length = item.embedding.length
      const expected = seen ?? length
      if (length !== expected || length === 0) {
        throw fail(
          `${where} returned an embedding of ${length} dimensions, expected ${expected}` +
            (settings.dimension === undefined ? '' : ' (the configured dimension; does the model support `dimensions`?)'),
          { expected, received: length },
        )
      }
      if (!item.embedding.every(Number.isFinite)) throw fail(`${where} returned an embedding with non-finite numbers`)
      seen = length
      vectors[item.index] = l2normalize(item.embedding)
    }
    return vectors as Float32Array[]
  }

  async function attempt(batch: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[] | AttemptFailure> {
    const body: Record<string, unknown> = { model: settings.model, input: batch, encoding_format: 'float' }
    if (settings.dimension !== undefined) body.dimensions = settings.dimension
    const timeout = AbortSignal.timeout(settings.timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let response: Response
    let text: string
    try {
      response = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: combined })
      text = await response.text()
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (timeout.aborted) return { retryable: true, message: `timed out after ${settings.timeoutMs} ms`, cause: error }
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
      const reason = cause instanceof Error ? cause.message : String(cause)
      return { retryable: true, message: `network error: ${reason}`, cause: error }
    }
    if (!response.ok) {
      let reason = text.slice(0, EXCERPT_CHARS)
      try {
        const parsedError = OpenAIErrorBody.safeParse(JSON.parse(text))
        if (parsedError.success) {
          const err = parsedError.data.error
          reason = (typeof err === 'string' ? err : err.message).slice(0, EXCERPT_CHARS)
        }
      } catch {
        // Not JSON: keep the text excerpt.
      }
      const hint = response.status === 404 ? ' (is the base URL the API root, e.g. http://host:port/v1?)' : ''
      return {
        retryable: isRetryableStatus(response.status),
        status: response.status,
        message: `HTTP ${response.status}${reason ? `: ${reason}` : ''}${hint}`,
        retryAfter: retryAfterMs(response.headers.get('retry-after')),
      }
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      throw fail(`${where} answered with something that is not JSON: ${text.slice(0, 100)}`, {}, error)
    }
    return readVectors(json, batch.length)
  }

  async function request(batch: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    for (let attemptNo = 1; ; attemptNo++) {
      logger.debug('embed.openai.request', { url: where, model: settings.model, texts: batch.length, attempt: attemptNo })
      const outcome = await attempt(batch, signal)
      if (Array.isArray(outcome)) return outcome
      if (!outcome.retryable || attemptNo > retries) {
        const tries = attemptNo === 1 ? '' : ` after ${attemptNo} attempts`
        throw fail(`Embedding request to ${where} failed${tries}: ${outcome.message}`, { status: outcome.status, attempts: attemptNo }, outcome.cause)
      }
      const backoff = baseDelayMs * 2 ** (attemptNo - 1) * (0.5 + Math.random() / 2)
      const delayMs = Math.round(Math.min(maxDelayMs, outcome.retryAfter ?? backoff))
      logger.warn('embed.openai.retry', {
        url: where,
        attempt: attemptNo,
        status: outcome.status,
        reason: redact(outcome.message),
        delayMs,
      })
      await sleep(delayMs, signal)
    }
  }

  async function embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]> {
    const signal = options?.signal
    signal?.throwIfAborted()
    const results = new Array<Float32Array | undefined>(texts.length)
    const pending: number[] = []
    texts.forEach((text, index) => {
      if (text.trim().length > 0) pending.push(index)
    })
    for (let start = 0; start < pending.length; start += settings.batchSize) {
      const indices = pending.slice(start, start + settings.batchSize)
      const vectors = await request(
        indices.map((index) => texts[index]!),
        signal,
      )
      dimension ??= vectors[0]?.length
      indices.forEach((index, i) => {
        results[index] = vectors[i]
      })
    }
    if (dimension === undefined) {
      // Only blank texts so far; learn the dimension first.
      dimension = (await request([PROBE_TEXT], signal))[0]!.length
    }
    const size = dimension
    // Array.from, not map: map skips the holes the blank texts left.
    return Array.from(results, (vector) => vector ?? new Float32Array(size))
  }

  if (dimension === undefined) {
    try {
      await embed([PROBE_TEXT])
    } catch (error) {
      if (isKnowHubError(error)) {
        throw new KnowHubError(
          error.code,
          `${error.message}. The embedder needed this request to learn the vector dimension; check KNOWHUB_EMBED_URL and KNOWHUB_EMBED_MODEL, or set KNOWHUB_EMBED_DIM if the model supports \`dimensions\``,
          error.details,
          { cause: error },
        )
      }
      throw error
    }
  }
  const learned = dimension
  if (learned === undefined) throw new KnowHubError('internal_error', 'The OpenAI embedder has no dimension after its probe')

  return {
    model: `openai:${settings.model}`,
    dimension: learned,
    embed,
  }
}
