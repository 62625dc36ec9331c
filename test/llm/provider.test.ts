import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { openKnowHub } from '../../src/app/open.js'
import { loadConfig } from '../../src/cli/config.js'
import { createOpenAIChat } from '../../src/llm/openai.js'
import { stripFences } from '../../src/llm/structured.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { tempDataDir } from '../helpers/stores.js'

const Answer = z.object({ content: z.string().min(1), tags: z.array(z.string()).max(3) })

describe('the OpenAI-compatible LLM provider against a real HTTP server', () => {
  let stub: OpenAIStub
  beforeAll(async () => {
    stub = await startOpenAIStub({ apiKey: 'sk-test-secret-1234567890' })
  })
  afterAll(async () => {
    await stub.close()
  })

  const provider = (extra: Record<string, unknown> = {}) =>
    createOpenAIChat(
      { url: stub.url, model: 'default-model', apiKey: 'sk-test-secret-1234567890', models: { routing: 'small-model' }, timeoutMs: 10_000, ...extra },
      { retryBaseDelayMs: 1 },
    )

  it('sends the task model, the key and the messages, and counts tokens per task', async () => {
    stub.setChat(() => 'hello there')
    const llm = provider()
    const before = stub.requests.length
    expect(await llm.chat('routing', [{ role: 'user', content: 'hi' }])).toBe('hello there')
    expect(await llm.chat('evolve', [{ role: 'user', content: 'hi again' }])).toBe('hello there')
    const [routing, evolve] = stub.requests.slice(before)
    expect(routing!.headers.authorization).toBe('Bearer sk-test-secret-1234567890')
    expect((routing!.body as ChatRequest).model).toBe('small-model')
    expect((evolve!.body as ChatRequest).model).toBe('default-model')
    expect((routing!.body as ChatRequest).messages).toEqual([{ role: 'user', content: 'hi' }])
    const usage = llm.usage()
    expect(usage.map((u) => [u.task, u.model, u.calls, u.failures])).toEqual([
      ['routing', 'small-model', 1, 0],
      ['evolve', 'default-model', 1, 0],
    ])
    expect(usage[0]!.prompt_tokens).toBeGreaterThan(0)
    expect(usage[0]!.completion_tokens).toBe('hello there'.length)
  })

  it('asks for the JSON schema response format and validates the answer', async () => {
    stub.setChat(() => '```json\n{"content":"use corepack","tags":["pnpm"]}\n```')
    const llm = provider()
    const before = stub.requests.length
    expect(await llm.json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'evolved' })).toEqual({ content: 'use corepack', tags: ['pnpm'] })
    const body = stub.requests[before]!.body as ChatRequest
    const format = body.response_format as { type: string; json_schema: { name: string; schema: { properties: object } } }
    expect(format.type).toBe('json_schema')
    expect(format.json_schema.name).toBe('evolved')
    expect(Object.keys(format.json_schema.schema.properties)).toEqual(['content', 'tags'])
  })

  it('sends one repair request for an answer that breaks the schema, then accepts the repaired one', async () => {
    const answers = ['{"content":"","tags":["a","b","c","d"]}', '{"content":"fixed","tags":[]}']
    stub.setChat(() => answers.shift()!)
    const llm = provider()
    const before = stub.requests.length
    expect(await llm.json('extract', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })).toEqual({ content: 'fixed', tags: [] })
    const sent = stub.requests.slice(before)
    expect(sent).toHaveLength(2)
    const repair = (sent[1]!.body as ChatRequest).messages
    expect(repair.at(-2)).toEqual({ role: 'assistant', content: '{"content":"","tags":["a","b","c","d"]}' })
    expect(String(repair.at(-1)!.content)).toMatch(/content: .*\n- tags: /s)
    // The first answer broke the schema: one of the two calls failed.
    expect(llm.usage()[0]).toMatchObject({ task: 'extract', calls: 2, failures: 1 })
  })

  it('fails with llm_invalid_output after garbage twice (two requests, no more)', async () => {
    stub.setChat(() => 'Sure! Here is what I think: the entry is fine.')
    const llm = provider()
    const before = stub.requests.length
    const error = await rejection(llm.json('evolve', [{ role: 'user', content: 'x' }], Answer, { name: 'a' }))
    expect(error.code).toBe('llm_invalid_output')
    expect(error.details).toMatchObject({ task: 'evolve' })
    expect(stub.requests.length - before).toBe(2)
    // Both answers were unusable: two failed calls (`knowhub status` said "2 calls (0 failed)" before).
    expect(llm.usage()[0]).toMatchObject({ calls: 2, failures: 2 })
  })

  it('falls back to JSON mode when the endpoint refuses json_schema, and stays there', async () => {
    stub.setChat(() => '{"content":"ok","tags":[]}')
    const llm = provider()
    const before = stub.requests.length
    stub.respondNext({ status: 400, body: { error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported" } } })
    expect(await llm.json('slim', [{ role: 'user', content: 'x' }], Answer, { name: 'a' })).toEqual({ content: 'ok', tags: [] })
    await llm.json('slim', [{ role: 'user', content: 'y' }], Answer, { name: 'a' })
    const formats = stub.requests.slice(before).map((r) => ((r.body as ChatRequest).response_format as { type: string }).type)
    expect(formats).toEqual(['json_schema', 'json_object', 'json_object'])
  })

  it('retries 500 and 429 with backoff, then answers', async () => {
    stub.setChat(() => 'fine')
    const llm = provider({ retries: 2 })
    const before = stub.requests.length
    stub.failNext(1, 500)
    stub.failNext(1, 429, { retryAfter: '0' })
    expect(await llm.chat('extract', [{ role: 'user', content: 'x' }])).toBe('fine')
    expect(stub.requests.length - before).toBe(3)
  })

  it('fails with llm_failed after its retries on 500, the API key nowhere in the error', async () => {
    const llm = provider({ retries: 1 })
    const before = stub.requests.length
    stub.failNext(2, 500, { body: { error: { message: 'upstream broke for key sk-test-secret-1234567890' } } })
    const error = await rejection(llm.chat('evolve', [{ role: 'user', content: 'x' }]))
    expect(error.code).toBe('llm_failed')
    expect(stub.requests.length - before).toBe(2)
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('sk-test-secret')
    expect(llm.usage()).toEqual([expect.objectContaining({ task: 'evolve', calls: 1, failures: 1 })])
  })

  it('fails with llm_timeout when the endpoint does not answer in time', async () => {
    const llm = provider({ retries: 0 })
    stub.hangNext(1)
    const error = await rejection(llm.chat('routing', [{ role: 'user', content: 'x' }], { timeoutMs: 100 }))
    expect(error.code).toBe('llm_timeout')
  })

  it('fails with llm_invalid_output when the body is not a chat completion', async () => {
    const llm = provider()
    stub.respondNext({ status: 200, body: { hello: 'world' } })
    expect((await rejection(llm.chat('routing', [{ role: 'user', content: 'x' }]))).code).toBe('llm_invalid_output')
  })

  it('keeps at most `concurrency` requests in flight', async () => {
    let inFlight = 0
    let most = 0
    stub.setChat(async () => {
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise((resolve) => setTimeout(resolve, 30))
      inFlight--
      return 'ok'
    })
    const llm = provider({ concurrency: 2 })
    await Promise.all(Array.from({ length: 6 }, () => llm.chat('extract', [{ role: 'user', content: 'x' }])))
    expect(most).toBe(2)
  })

  it('strips code fences around JSON', () => {
    expect(stripFences('```\n[1]\n```')).toBe('[1]')
    expect(stripFences('  {"a":1} ')).toBe('{"a":1}')
  })
})

describe('the LLM in the configuration and the hub', () => {
  it('reads KNOWHUB_LLM_URL, KNOWHUB_LLM_MODEL and KNOWHUB_LLM_API_KEY over the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-llm-config-'))
    try {
      const file = join(dir, 'knowhub.config.json')
      writeFileSync(file, JSON.stringify({ llm: { url: 'http://file/v1', model: 'file-model', models: { routing: 'r' }, concurrency: 2 } }))
      const config = loadConfig({ KNOWHUB_LLM_URL: 'http://127.0.0.1:9/v1', KNOWHUB_LLM_MODEL: 'm', KNOWHUB_LLM_API_KEY: 'k' }, { configFile: file })
      expect(config.llm).toMatchObject({ url: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'k', concurrency: 2, retries: 2, models: { routing: 'r' } })
      expect(loadConfig({}, { configFile: file }).llm).toMatchObject({ url: 'http://file/v1', model: 'file-model' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses an LLM URL without a model with a config error naming the field', async () => {
    const error = await rejection(openKnowHub({ dataDir: 'memory://', embedder: { provider: 'hashed', dimension: 64 }, llm: { url: 'http://127.0.0.1:9/v1' } }))
    expect(error.code).toBe('validation_error')
    expect(JSON.stringify(error.details)).toContain('llm.model')
  })

  it('builds the provider once and keeps token usage per task in the store for `knowhub status`', async () => {
    await using stub = await startOpenAIStub({ chat: () => 'ok' })
    const hub = await openKnowHub({
      dataDir: tempDataDir('llm-usage'),
      embedder: { provider: 'hashed', dimension: 64 },
      llm: { url: stub.url, model: 'stub-chat', models: { extract: 'x-model' } },
    })
    try {
      expect(hub.llm?.modelFor('extract')).toBe('x-model')
      await hub.llm!.chat('extract', [{ role: 'user', content: 'a' }])
      await hub.llm!.chat('extract', [{ role: 'user', content: 'b' }])
      await expect
        .poll(async () => (await hub.status()).llm?.usage)
        .toEqual([expect.objectContaining({ task: 'extract', model: 'x-model', calls: 2, failures: 0, completion_tokens: 4 })])
    } finally {
      await hub.close()
    }
  })

  it('has no provider and reports none without an llm config', async () => {
    const hub = await openKnowHub({ dataDir: tempDataDir('llm-none'), embedder: { provider: 'hashed', dimension: 64 } })
    try {
      expect(hub.llm).toBeUndefined()
      expect((await hub.status()).llm).toBeNull()
    } finally {
      await hub.close()
    }
  })
})
