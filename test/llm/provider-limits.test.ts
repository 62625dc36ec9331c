/**
 * The provider's limits and its reading of what real endpoints and small models do (issue 43),
 * scripted on the test's OpenAI-compatible server: the `max_tokens` cap, the structured-output
 * ladder (json_schema → json_object with the schema → JSON mode → the schema in the prompt) with
 * llama.cpp's own refusal (an HTTP 500 naming response_format), answers cut at the cap, JSON in
 * prose, one deadline per call, and every failure counted by its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { openKnowHub } from '../../src/app/open.js'
import { createOpenAIChat } from '../../src/llm/openai.js'
import { firstJsonValue, parseStructured, readJson } from '../../src/llm/structured.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { tempDataDir } from '../helpers/stores.js'

const Answer = z.object({ content: z.string().min(1) })
/** What llama_cpp.server 0.3.36 answers to `response_format: {type: 'json_schema'}`. */
const LLAMA_CPP_REFUSAL = {
  status: 500,
  body: {
    error: {
      message:
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
      type: 'internal_server_error',
    },
  },
}
const cut = (content: string) => ({
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'length' }],
  usage: { prompt_tokens: 10, completion_tokens: 64 },
})

describe('the provider against what real endpoints and small models do', () => {
  let stub: OpenAIStub
  beforeAll(async () => {
    stub = await startOpenAIStub()
  })
  afterAll(async () => {
    await stub.close()
  })
  const provider = (extra: Record<string, unknown> = {}) =>
    createOpenAIChat({ url: stub.url, model: 'small', timeoutMs: 2000, retries: 0, ...extra }, { retryBaseDelayMs: 1 })
  const since = (before: number) => stub.requests.slice(before).map((r) => r.body as ChatRequest)

  it('caps every answer with max_tokens (1024 by default, the config or the call may say less)', async () => {
    stub.setChat(() => '{"content":"ok"}')
    const before = stub.requests.length
    await provider().chat('compact', [{ role: 'user', content: 'x' }])
    await provider({ maxTokens: 300 }).json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })
    await provider({ maxTokens: 300 }).chat('compact', [{ role: 'user', content: 'x' }], { maxTokens: 40 })
    await provider({ maxTokens: 300 }).chat('compact', [{ role: 'user', content: 'x' }], { maxTokens: 4000 })
    expect(since(before).map((b) => b.max_tokens)).toEqual([1024, 300, 40, 300])
  })

  it("steps down to JSON mode with the schema when the endpoint refuses json_schema as llama.cpp's server does (a 500 naming response_format), and stays there", async () => {
    stub.setChat(() => '{"content":"ok"}')
    const llm = provider({ retries: 2 })
    const before = stub.requests.length
    stub.respondNext(LLAMA_CPP_REFUSAL)
    expect(await llm.json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })).toEqual({ content: 'ok' })
    await llm.json('extract', [{ role: 'user', content: 'y' }], Answer, { name: 'a' })
    const formats = since(before).map((b) => b.response_format as { type: string; schema?: { properties: object } })
    // The refusal is not retried as a server failure would be: the next request asks in the next form.
    expect(formats.slice(0, 3).map((f) => f.type)).toEqual(['json_schema', 'json_object', 'json_object'])
    expect(Object.keys(formats[1]!.schema!.properties)).toEqual(['content'])
    // A grammar is built from it: no bound a grammar cannot hold.
    const big = z.object({ content: z.string().max(20_000), ids: z.array(z.string().max(40)).max(500) })
    await llm.json('extract', [{ role: 'user', content: 'z' }], Answer, { name: 'a', ask: big })
    const sent = (since(before).at(-1)!.response_format as { schema: { properties: Record<string, Record<string, unknown>> } }).schema.properties
    expect(sent.content).toEqual({ type: 'string' })
    expect(sent.ids).toEqual({ type: 'array', items: { type: 'string', maxLength: 40 } })
    expect(llm.health()).toMatchObject({
      structured_output: { configured: 'json_schema', current: 'json_object_schema', refused: ['json_schema'] },
      failures: { format_refused: 1 },
    })
  })

  it('ends with the schema in the prompt, and no response_format, when the endpoint refuses every form', async () => {
    stub.setChat(() => '{"content":"ok"}')
    const llm = provider()
    const before = stub.requests.length
    stub.failNext(3, 400, { body: { error: { message: 'response_format is not supported' } } })
    const answer = await llm.json(
      'slim',
      [
        { role: 'system', content: 'Merge.' },
        { role: 'user', content: 'x' },
      ],
      Answer,
      { name: 'a' },
    )
    expect(answer).toEqual({ content: 'ok' })
    const last = since(before).at(-1)!
    expect(last.response_format).toBeUndefined()
    expect(String(last.messages[0]!.content)).toMatch(/^Merge\.\nAnswer with only one JSON object that matches this JSON schema.*"content"/su)
    expect(llm.health().structured_output).toEqual({
      configured: 'json_schema',
      current: 'text',
      refused: ['json_schema', 'json_object_schema', 'json_object'],
    })
  })

  it('does not take a server failure for a refusal: a 500 that does not name the format keeps the form', async () => {
    const llm = provider()
    stub.failNext(1, 500, { body: { error: { message: 'CUDA out of memory' } } })
    const error = await rejection(llm.json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a' }))
    expect(error.code).toBe('llm_failed')
    expect(llm.health()).toMatchObject({ structured_output: { current: 'json_schema', refused: [] }, failures: { http_500: 1 } })
  })

  it('answers llm_invalid_output (reason truncated) for an answer cut at max_tokens, without a repair request that would be cut too', async () => {
    stub.setChat(() => cut('{"content": "the user prefers pnpm and then kept talking about'))
    const llm = provider()
    const before = stub.requests.length
    const error = await rejection(llm.json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a' }))
    expect(error.code).toBe('llm_invalid_output')
    expect(error.details).toMatchObject({ task: 'extract', reason: 'truncated' })
    expect(stub.requests.length - before).toBe(1)
    expect(llm.health()).toMatchObject({ failures: { truncated: 1 }, truncated_answers: 1 })
    expect(llm.usage()[0]).toMatchObject({ calls: 1, failures: 1 })
  })

  it('keeps a cut answer that is still whole JSON, and a text answer cut at the cap', async () => {
    stub.setChat(() => cut('{"content": "short enough"}'))
    const llm = provider()
    expect(await llm.json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })).toEqual({ content: 'short enough' })
    expect(await llm.chat('compact', [{ role: 'user', content: 'x' }])).toBe('{"content": "short enough"}')
    expect(llm.health()).toMatchObject({ failures: {}, truncated_answers: 2 })
  })

  it('reads JSON wrapped in prose or with a trailing comma without asking again, and counts what it cannot read', async () => {
    const answers = ['Sure! Here is the JSON you asked for:\n{"content": "use corepack",}\nHope this helps.', 'no JSON here', 'still none']
    stub.setChat(() => answers.shift()!)
    const llm = provider()
    const before = stub.requests.length
    expect(await llm.json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })).toEqual({ content: 'use corepack' })
    expect(stub.requests.length - before).toBe(1)
    const error = await rejection(llm.json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'a' }))
    expect(error.details).toMatchObject({ reason: 'not_json' })
    expect(llm.health().failures).toEqual({ not_json: 2 })
  })

  it('asks with the tight schema and validates with the lenient one', async () => {
    stub.setChat(() => `{"content":"${'x'.repeat(50)}"}`)
    const before = stub.requests.length
    const ask = z.object({ content: z.string().max(20) })
    expect((await provider().json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a', ask })).content).toHaveLength(50)
    const format = since(before)[0]!.response_format as { json_schema: { schema: { properties: { content: { maxLength: number } } } } }
    expect(format.json_schema.schema.properties.content.maxLength).toBe(20)
  })

  it('ends a call at its deadline, retries included: llm_timeout, counted', async () => {
    const llm = provider({ timeoutMs: 5000, retries: 3, callTimeoutMs: 300 })
    stub.hangNext(1)
    const started = performance.now()
    const error = await rejection(llm.chat('evolve', [{ role: 'user', content: 'x' }]))
    expect(performance.now() - started).toBeLessThan(2000)
    expect(error.code).toBe('llm_timeout')
    expect(error.details).toMatchObject({ task: 'evolve', reason: 'timeout' })
    expect(llm.health().failures).toEqual({ timeout: 1 })
  })

  it('shows the form in use and the failures in the hub status', async () => {
    await using local = await startOpenAIStub({ chat: () => '{"content":"ok"}' })
    const hub = await openKnowHub({
      dataDir: tempDataDir('llm-health'),
      embedder: { provider: 'hashed', dimension: 64 },
      llm: { url: local.url, model: 'stub-chat', retries: 0 },
    })
    try {
      local.respondNext(LLAMA_CPP_REFUSAL)
      await hub.llm!.json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })
      expect((await hub.status()).llm?.health).toEqual({
        structured_output: { configured: 'json_schema', current: 'json_object_schema', refused: ['json_schema'] },
        failures: { format_refused: 1 },
        truncated_answers: 0,
      })
    } finally {
      await hub.close()
    }
  })
})

describe('reading a structured answer', () => {
  it('finds the first balanced JSON value, strings and escapes respected', () => {
    expect(firstJsonValue('a {"b": "}{", "c": [1, {"d": "\\"}"}]} tail {"e": 1}')).toBe('{"b": "}{", "c": [1, {"d": "\\"}"}]}')
    expect(firstJsonValue('{"open": [1, 2')).toBeUndefined()
    expect(firstJsonValue('no json')).toBeUndefined()
  })

  it('reads fences, prose and trailing commas, and names the reason when it cannot', () => {
    expect(readJson('```json\n{"a": [1, 2,],}\n```')).toEqual({ value: { a: [1, 2] } })
    expect(parseStructured('{"content": ""}', Answer)).toMatchObject({ ok: false, reason: 'schema' })
    expect(parseStructured('I think the answer is yes', Answer)).toMatchObject({ ok: false, reason: 'not_json' })
  })
})
