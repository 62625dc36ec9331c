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
import { conventionSuffix, resolveConvention, type EmbedConvention, type EmbedKind } from '../core/embed-convention.js'
import { isKnowHubError, KnowHubError } from '../core/errors.js'
import { noopLogger, type Logger } from '../core/logger.js'
import { toValidationIssues } from '../core/validate.js'
import type { Embedder, EmbedOptions } from './embedder.js'
import { createOpenAIHttp, type OpenAIHttp, type RetryPolicy } from '../core/openai-http.js'
import { l2normalize } from './vector.js'

export type { RetryPolicy } from '../core/openai-http.js'

/** The `openai` branch of {@link EmbedderConfig}, before defaults are applied. */
export type OpenAIEmbedderConfig = Extract<z.input<typeof EmbedderConfigSchema>, { provider: 'openai' }>

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

const PROBE_TEXT = 'KnowHub embedding dimension probe'

function endpoint(baseUrl: string): URL {
  const root = baseUrl.replace(/\/+$/u, '').replace(/\/embeddings$/u, '')
  return new URL(`${root}/embeddings`)
}

/**
 * Creates an embedder backed by an OpenAI-compatible API. When `dimension` is
 * not configured, one probe request learns it, so the factory is async and
 * fails fast on an unreachable or misconfigured endpoint. When it is
 * configured, it is sent as `dimensions` (OpenAI text-embedding-3 and other
 * Matryoshka models) and every response is checked against it; no request is
 * made until the first `embed`.
 *
 * Queries and documents follow the model's convention (`convention`: the table of known models by
 * default, src/core/embed-convention.ts): a prefix before each text, or `input_type` in the request.
 * Texts are sent in batches of `batchSize`, up to `concurrency` requests at a time; requests that
 * time out, fail on the network or get 408/409/429/5xx are retried with
 * exponential backoff (honouring `Retry-After`). Blank texts get the zero vector
 * without being sent (most servers reject empty input).
 * @example
 * const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text' })
 * const [vector] = await embedder.embed(['hello'], { kind: 'query' }) // sent as "search_query: hello"
 */
export async function createOpenAIEmbedder(config: OpenAIEmbedderConfig, deps: OpenAIEmbedderDeps = {}): Promise<Embedder> {
  const settings = openAISettings(config)
  const http = createOpenAIHttp({
    url: endpoint(settings.baseUrl),
    apiKey: settings.apiKey,
    timeoutMs: settings.timeoutMs,
    fetch: deps.fetch ?? globalThis.fetch,
    logger: deps.logger ?? noopLogger,
    retry: deps.retry,
    errorCode: 'embedder_failed',
    logPrefix: 'embed.openai',
    label: 'Embedding request',
    details: { model: settings.model },
  })
  const state = { dimension: settings.dimension }
  const { convention, source } = resolveConvention(settings.model, settings.convention)
  const embed = (texts: readonly string[], options: EmbedOptions) => embedTexts({ http, settings, convention, state }, texts, options)
  if (state.dimension === undefined) await probeDimension(embed)
  const learned = state.dimension
  if (learned === undefined) throw new KnowHubError('internal_error', 'The OpenAI embedder has no dimension after its probe')
  return { model: `openai:${settings.model}${conventionSuffix(convention)}`, dimension: learned, convention: { applied: convention, source }, embed }
}

/** What every request of one embedder shares. */
interface Requester {
  http: OpenAIHttp
  settings: OpenAISettings
  convention: EmbedConvention
  state: { dimension: number | undefined }
}

type OpenAISettings = Extract<EmbedderConfig, { provider: 'openai' }>

/** The validated `openai` config, or `config_error` naming every problem. */
function openAISettings(config: OpenAIEmbedderConfig): OpenAISettings {
  const parsed = EmbedderConfigSchema.safeParse(config)
  if (!parsed.success || parsed.data.provider !== 'openai') {
    const issues = parsed.success ? [{ path: 'provider', message: 'expected "openai"' }] : toValidationIssues(parsed.error)
    throw new KnowHubError('config_error', `Invalid OpenAI embedder config: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      issues,
    })
  }
  return parsed.data
}

/** Checks a response's shape, order and dimension; returns normalised vectors in input order. */
function readVectors(http: OpenAIHttp, settings: OpenAISettings, dimension: number | undefined, json: unknown, count: number): Float32Array[] {
  const where = http.where
  const result = EmbeddingsResponse.safeParse(json)
  if (!result.success) {
    const issues = toValidationIssues(result.error).slice(0, 5)
    throw http.fail(`Unexpected response from ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues })
  }
  const data: EmbeddingsResponse['data'] = result.data.data
  if (data.length !== count) {
    throw http.fail(`${where} returned ${data.length} embeddings for ${count} inputs`, { expected: count, received: data.length })
  }
  const vectors = new Array<Float32Array | undefined>(count)
  let seen = dimension
  for (const item of data) {
    if (item.index >= count || vectors[item.index] !== undefined) {
      throw http.fail(`${where} returned a duplicate or out-of-range embedding index ${item.index}`, { index: item.index })
    }
    const length = item.embedding.length
    const expected = seen ?? length
    if (length !== expected || length === 0) {
      throw http.fail(
        `${where} returned an embedding of ${length} dimensions, expected ${expected}` +
          (settings.dimension === undefined ? '' : ' (the configured dimension; does the model support `dimensions`?)'),
        { expected, received: length },
      )
    }
    if (!item.embedding.every(Number.isFinite)) throw http.fail(`${where} returned an embedding with non-finite numbers`)
    seen = length
    vectors[item.index] = l2normalize(item.embedding)
  }
  return vectors as Float32Array[]
}

/** One batch's vectors: the convention's prefix before each text, or its `input_type` in the request. */
async function request(r: Requester, dimension: number | undefined, batch: readonly string[], kind: EmbedKind, signal: AbortSignal | undefined) {
  const side = r.convention[kind]
  const input = side.prefix === '' ? batch : batch.map((text) => side.prefix + text)
  const body: Record<string, unknown> = { model: r.settings.model, input, encoding_format: 'float' }
  if (side.inputType !== undefined) body.input_type = side.inputType
  if (r.settings.dimension !== undefined) body.dimensions = r.settings.dimension
  return readVectors(r.http, r.settings, dimension, await r.http.post(body, signal), batch.length)
}

/**
 * Vectors of `texts` in batches, up to `concurrency` requests in flight (the first alone while the
 * dimension is unknown); blank texts get the zero vector without being sent.
 */
async function embedTexts(r: Requester, texts: readonly string[], options: EmbedOptions): Promise<Float32Array[]> {
  const { kind, signal } = options
  signal?.throwIfAborted()
  const results = new Array<Float32Array | undefined>(texts.length)
  const pending: number[] = []
  texts.forEach((text, index) => {
    if (text.trim().length > 0) pending.push(index)
  })
  const batches: number[][] = []
  for (let start = 0; start < pending.length; start += r.settings.batchSize) batches.push(pending.slice(start, start + r.settings.batchSize))
  const run = async (indices: number[]) => {
    const vectors = await request(
      r,
      r.state.dimension,
      indices.map((index) => texts[index]!),
      kind,
      signal,
    )
    r.state.dimension ??= vectors[0]?.length
    indices.forEach((index, i) => {
      results[index] = vectors[i]
    })
  }
  let next = 0
  if (r.state.dimension === undefined && batches.length > 0) await run(batches[next++]!)
  // A failed batch stops the other workers taking more (its error is the one thrown).
  let failed = false
  const worker = async () => {
    while (!failed && next < batches.length) await run(batches[next++]!).catch((error: unknown) => ((failed = true), Promise.reject(error)))
  }
  await Promise.all(Array.from({ length: Math.min(r.settings.concurrency, batches.length - next) }, worker))
  // Only blank texts so far: learn the dimension first.
  r.state.dimension ??= (await request(r, undefined, [PROBE_TEXT], kind, signal))[0]!.length
  const size = r.state.dimension
  // Array.from, not map: map skips the holes the blank texts left.
  return Array.from(results, (vector) => vector ?? new Float32Array(size))
}

/** The first request, made only to learn the vector dimension; a failure says what to check. */
async function probeDimension(embed: (texts: readonly string[], options: EmbedOptions) => Promise<Float32Array[]>): Promise<void> {
  try {
    await embed([PROBE_TEXT], { kind: 'document' })
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
