/**
 * Extraction and evolve over real HTTP: `POST /api/knowledge/extract` through the typed
 * client and the knowledge_extract tool on the client backend; LLM failures answer their
 * code with a fixed message (the endpoint's address stays in the log); no LLM is 501.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientBackend, createClient } from '../../src/client/index.js'
import { createToolkit } from '../../src/tools/index.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestHub, type TestHub } from './helpers.js'

const proposal = {
  types: ['tool'],
  task: 'Install pnpm in Docker',
  content: 'Run corepack enable before pnpm install.',
  tags: { domain: 'ci' },
  message_ids: ['a1'],
}

describe('extraction over HTTP', () => {
  let stub: OpenAIStub
  let t: TestHub
  let bare: TestHub
  let url: string
  let bareUrl: string

  beforeAll(async () => {
    stub = await startOpenAIStub({
      chat: (request) =>
        String(request.messages[0]?.content).includes('free of duplicates') ? JSON.stringify({ decisions: [] }) : JSON.stringify({ entries: [proposal] }),
    })
    t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 }, llm: { url: stub.url, model: 'm', retries: 0, timeoutMs: 30_000 } })
    bare = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
    url = (await t.start()).url
    bareUrl = (await bare.start()).url
  })
  afterAll(async () => {
    await t?.close()
    await bare?.close()
    await stub?.close()
  })

  it('proposes and saves through the client, and the knowledge_extract tool reports in words', async () => {
    const kh = createClient({ baseUrl: url, retry: false })
    const messages = [{ id: 'a1', role: 'user' as const, content: 'pnpm was missing; corepack enable fixed it' }]
    const proposed = await kh.knowledge.extract({ messages })
    expect(proposed).toMatchObject({ mode: 'propose', llm_calls: 1, items: [{ action: 'add', id: null, message_ids: ['a1'] }] })
    const saved = await kh.knowledge.extract({ messages, mode: 'save', context: { trace_id: 'tr-1' } })
    const id = saved.items[0]!.id!
    expect((await kh.knowledge.get(id)).source.trace_id).toBe('tr-1')

    const kit = createToolkit({ backend: clientBackend(kh) })
    const result = await kit.callTool('knowledge_extract', { messages: [{ role: 'user', content: 'corepack enable before pnpm install' }] })
    expect(result.text).toMatch(/^1 proposal from the conversation \(2 LLM calls\):\n- would add a new entry \[tool\] Install pnpm in Docker: new knowledge$/)
  })

  it('answers an LLM failure with its code and a fixed message, a routing fallback in a header, and 501 without an LLM', async () => {
    stub.failNext(1, 500, { body: { error: { message: 'upstream exploded' } } })
    const response = await fetch(`${url}/api/knowledge/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(response.status).toBe(502)
    const body = (await response.json()) as { error: { code: string; message: string; details: unknown } }
    expect(body.error).toEqual({ code: 'llm_failed', message: 'The LLM endpoint failed; nothing was changed, try again later', details: { task: 'extract' } })
    expect(JSON.stringify(body)).not.toContain(stub.url)

    // A routed search whose model answers something else keeps the hybrid order and says so in a header.
    const routed = await fetch(`${url}/api/knowledge/search?q=pnpm&routing=llm`)
    expect(routed.status).toBe(200)
    expect(routed.headers.get('x-knowhub-routing')).toBe('fallback; reason=llm_invalid_output')
    expect(((await routed.json()) as { routing: unknown }).routing).toEqual({ mode: 'llm', status: 'fallback', reason: 'llm_invalid_output' })

    const none = await fetch(`${bareUrl}/api/knowledge/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(none.status).toBe(501)
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('llm_not_configured')
  })
})
