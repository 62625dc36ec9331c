import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogFields, Logger } from '../../src/core/logger.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createOpenAIEmbedder, type OpenAIEmbedderConfig } from '../../src/embed/openai.js'
import { cosine } from '../../src/embed/vector.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { rejection } from '../helpers/errors.js'

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5 }

function config(stub: OpenAIStub, extra: Partial<OpenAIEmbedderConfig> = {}): OpenAIEmbedderConfig {
  return { provider: 'openai', baseUrl: stub.url, model: 'stub-embed', timeoutMs: 10_000, ...extra }
}

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
}

describe('OpenAI-compatible embedder against a real HTTP server', () => {
  let stub: OpenAIStub
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 16 })
  })
  afterAll(async () => {
    await stub.close()
  })

  it('learns the dimension from one probe request and returns normalised vectors in input order', async () => {
    const before = stub.requests.length
    const embedder = await createOpenAIEmbedder(config(stub), { retry: fastRetry })
    expect(stub.requests.length - before).toBe(1)
    expect(embedder.dimension).toBe(16)
    expect(embedder.model).toBe('openai:stub-embed')

    const texts = ['running in the park', 'quarterly tax report', 'runs in parks']
    const vectors = await embedder.embed(texts, { kind: 'document' })
    const expected = await createHashedEmbedder({ dimension: 16 }).embed(texts, { kind: 'document' })
    vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array)
      expect(vector).toHaveLength(16)
      expect(norm(vector)).toBeCloseTo(1, 5)
      expect(cosine(vector, expected[i]!)).toBeCloseTo(1, 5)
    })
    const request = stub.requests.at(-1)!
    expect(request.path).toBe('/v1/embeddings')
    expect(request.body).toEqual({ model: 'stub-embed', input: texts, encoding_format: 'float' })
    expect(request.headers.authorization).toBeUndefined()
  })

  it('sends batches of batchSize and keeps the order', async () => {
    const embedder = await createOpenAIEmbedder(config(stub, { batchSize: 64 }), { retry: fastRetry })
    const before = stub.requests.length
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i} about topic ${i % 7}`)
    const vectors = await embedder.embed(texts, { kind: 'document' })
    const batches = stub.requests.slice(before).map((request) => (request.body as { input: string[] }).input)
    expect(batches.map((batch) => batch.length)).toEqual([64, 64, 22])
    expect(batches.flat()).toEqual(texts)
    const expected = await createHashedEmbedder({ dimension: 16 }).embed(texts, { kind: 'document' })
    expect(vectors.map((vector, i) => cosine(vector, expected[i]!)).every((c) => c > 0.99999)).toBe(true)
    expect(await embedder.embed([], { kind: 'document' })).toEqual([])
  })

  it('gives blank texts the zero vector without sending them', async () => {
    const embedder = await createOpenAIEmbedder(config(stub), { retry: fastRetry })
    const before = stub.requests.length
    const [blank, text, empty] = await embedder.embed(['  ', 'hello world', ''], { kind: 'document' })
    expect(Array.from(blank!).every((v) => v === 0)).toBe(true)
    expect(Array.from(empty!).every((v) => v === 0)).toBe(true)
    expect(norm(text!)).toBeCloseTo(1, 5)
    expect(stub.requests.slice(before).map((r) => (r.body as { input: string[] }).input)).toEqual([['hello world']])
  })

  it('with a configured dimension, sends `dimensions` and makes no request until embed', async () => {
    const before = stub.requests.length
    const embedder = await createOpenAIEmbedder(config(stub, { dimension: 32 }), { retry: fastRetry })
    expect(stub.requests.length).toBe(before)
    expect(embedder.dimension).toBe(32)
    const [vector] = await embedder.embed(['sized'], { kind: 'document' })
    expect(vector).toHaveLength(32)
    expect((stub.requests.at(-1)!.body as { dimensions?: number }).dimensions).toBe(32)
  })

  it('accepts a base URL with a trailing slash or a trailing /embeddings', async () => {
    for (const baseUrl of [`${stub.url}/`, `${stub.url}/embeddings`]) {
      const embedder = await createOpenAIEmbedder(config(stub, { baseUrl }), { retry: fastRetry })
      expect(embedder.dimension).toBe(16)
      expect(stub.requests.at(-1)!.path).toBe('/v1/embeddings')
    }
  })

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    const warnings: LogFields[] = []
    const logger: Logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message, fields) => void (message === 'embed.openai.retry' && warnings.push(fields ?? {})),
    }
    const retrying = await createOpenAIEmbedder(config(stub), { retry: fastRetry, logger })
    stub.failNext(1, 429, { retryAfter: '0' })
    stub.failNext(1, 500)
    stub.failNext(1, 503)
    const before = stub.requests.length
    const [vector] = await retrying.embed(['eventually'], { kind: 'document' })
    expect(stub.requests.length - before).toBe(4)
    expect(norm(vector!)).toBeCloseTo(1, 5)
    expect(warnings.map((w) => w.status)).toEqual([429, 500, 503])
  })

  it('gives up after the bounded number of retries with an embedder_failed naming URL and status', async () => {
    const embedder = await createOpenAIEmbedder(config(stub), { retry: { ...fastRetry, retries: 2 } })
    stub.failNext(3, 502)
    const before = stub.requests.length
    const error = await rejection(embedder.embed(['never'], { kind: 'document' }))
    expect(stub.requests.length - before).toBe(3)
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toContain(`${stub.url}/embeddings`)
    expect(error.message).toContain('HTTP 502')
    expect(error.details).toMatchObject({ status: 502, attempts: 3, url: `${stub.url}/embeddings` })
  })

  it('does not retry other 4xx errors and reports the server message', async () => {
    const embedder = await createOpenAIEmbedder(config(stub), { retry: fastRetry })
    stub.respondNext({ status: 400, body: { error: { message: 'input is too long' } } })
    const before = stub.requests.length
    const error = await rejection(embedder.embed(['too long'], { kind: 'document' }))
    expect(stub.requests.length - before).toBe(1)
    expect(error.message).toMatch(/HTTP 400: input is too long/)
  })

  it('times out a hanging request, retries it, and fails cleanly when it keeps hanging', async () => {
    // The retry after the hang must be answered within the same timeout: 1 s, not 150 ms, on a loaded machine.
    const embedder = await createOpenAIEmbedder(config(stub, { timeoutMs: 1_000 }), { retry: { ...fastRetry, retries: 1 } })
    stub.hangNext(1)
    const [vector] = await embedder.embed(['after one hang'], { kind: 'document' })
    expect(vector).toHaveLength(16)

    stub.hangNext(2)
    const started = Date.now()
    const error = await rejection(embedder.embed(['always hangs'], { kind: 'document' }))
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toMatch(/timed out after 1000 ms/)
    // Two timed-out attempts and a short backoff: bounded, never a hang.
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('stops at once when the caller aborts, with the abort reason', async () => {
    const embedder = await createOpenAIEmbedder(config(stub), { retry: fastRetry })
    stub.hangNext(1)
    const controller = new AbortController()
    const pending = embedder.embed(['aborted'], { kind: 'document', signal: controller.signal })
    setTimeout(() => controller.abort(new Error('caller gave up')), 30)
    await expect(pending).rejects.toThrow('caller gave up')
    await expect(embedder.embed(['x'], { kind: 'document', signal: AbortSignal.abort() })).rejects.toThrow()
  })

  it('rejects malformed responses: bad shape, wrong count, duplicate index, wrong dimension, not JSON', async () => {
    const embedder = await createOpenAIEmbedder(config(stub), { retry: fastRetry })
    const cases: Array<[unknown, RegExp]> = [
      [{ data: [{ index: 0 }] }, /Unexpected response.*embedding/],
      [{ data: [] }, /returned 0 embeddings for 1 inputs/],
      [
        {
          data: [
            { index: 0, embedding: Array(16).fill(1) },
            { index: 0, embedding: Array(16).fill(1) },
          ],
        },
        /returned 2 embeddings/,
      ],
      [{ data: [{ index: 3, embedding: Array(16).fill(1) }] }, /out-of-range embedding index 3/],
      [{ data: [{ index: 0, embedding: Array(8).fill(1) }] }, /8 dimensions, expected 16/],
      ['<html>oops</html>', /not JSON/],
    ]
    for (const [body, pattern] of cases) {
      stub.respondNext({ status: 200, body })
      const error = await rejection(embedder.embed(['one'], { kind: 'document' }))
      expect(error.code).toBe('embedder_failed')
      expect(error.message).toMatch(pattern)
    }
    stub.respondNext({
      status: 200,
      body: {
        data: [
          { index: 1, embedding: Array(16).fill(1) },
          { index: 1, embedding: Array(16).fill(1) },
        ],
      },
    })
    expect((await rejection(embedder.embed(['a', 'b'], { kind: 'document' }))).message).toMatch(/duplicate/)
  })

  it('orders the vectors by `index`, not by position in the response', async () => {
    await using reversed = await startOpenAIStub({ dimension: 16, reverseOrder: true })
    const embedder = await createOpenAIEmbedder(config(reversed), { retry: fastRetry })
    const texts = ['alpha beta', 'gamma delta', 'epsilon zeta']
    const vectors = await embedder.embed(texts, { kind: 'document' })
    const expected = await createHashedEmbedder({ dimension: 16 }).embed(texts, { kind: 'document' })
    vectors.forEach((vector, i) => expect(cosine(vector, expected[i]!)).toBeCloseTo(1, 5))
  })
})

describe('OpenAI-compatible embedder: auth and configuration', () => {
  it('sends the API key as a Bearer token and never puts it in errors', async () => {
    await using stub = await startOpenAIStub({ dimension: 8, apiKey: 'sk-right' })
    const embedder = await createOpenAIEmbedder(config(stub, { apiKey: 'sk-right' }), { retry: fastRetry })
    expect(embedder.dimension).toBe(8)
    expect(stub.requests.at(-1)!.headers.authorization).toBe('Bearer sk-right')

    const error = await rejection(createOpenAIEmbedder(config(stub, { apiKey: 'sk-wrong-secret' }), { retry: fastRetry }))
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toMatch(/HTTP 401/)
    expect(error.message).toMatch(/KNOWHUB_EMBED_URL/)
    expect(JSON.stringify(error.toJSON())).not.toContain('sk-wrong-secret')

    stub.respondNext({ status: 400, body: { error: { message: 'key sk-right is not allowed for this model' } } })
    const echoed = await rejection(embedder.embed(['x'], { kind: 'document' }))
    expect(echoed.message).not.toContain('sk-right')
    expect(echoed.message).toContain('[redacted]')
  })

  it('hints at the API root when the endpoint is not found', async () => {
    await using stub = await startOpenAIStub({ dimension: 8 })
    const error = await rejection(createOpenAIEmbedder(config(stub, { baseUrl: stub.url.replace(/\/v1$/u, '') }), { retry: fastRetry }))
    expect(error.message).toMatch(/HTTP 404/)
    expect(error.message).toMatch(/API root/)
  })

  it('fails on an unreachable server after retrying network errors', async () => {
    const stub = await startOpenAIStub()
    const url = stub.url
    await stub.close()
    const error = await rejection(createOpenAIEmbedder({ provider: 'openai', baseUrl: url, model: 'm' }, { retry: { ...fastRetry, retries: 1 } }))
    expect(error.code).toBe('embedder_failed')
    expect(error.message).toMatch(/after 2 attempts: network error/)
  })

  it('rejects an invalid config with config_error listing the fields', async () => {
    const error = await rejection(createOpenAIEmbedder({ provider: 'openai', baseUrl: 'not a url', model: '' }))
    expect(error.code).toBe('config_error')
    expect(error.message).toMatch(/baseUrl/)
    expect(error.message).toMatch(/model/)
  })
})
