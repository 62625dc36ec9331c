/**
 * Semantic routing (seed 003, stage 1) against a real OpenAI-compatible HTTP server: the
 * model sees id, types and the first 100 characters of task of the hybrid shortlist; its
 * pick (invented ids ignored) goes to the quality rerank; timeouts, errors and unusable
 * answers keep the hybrid order and say so; decisions are cached while the table is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { createOpenAIChat } from '../../src/llm/openai.js'
import type { Store } from '../../src/store/store.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestStore } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme' })
const LONG_TASK = `Deploy the pnpm monorepo to the staging cluster with docker compose and wait for health checks ${'x'.repeat(200)}`

describe('semantic routing', () => {
  let stub: OpenAIStub
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let routedByDefault: KnowledgeService
  const ids: string[] = []

  beforeAll(async () => {
    stub = await startOpenAIStub()
    const opened = await openTestStore('pglite')
    store = opened.store
    cleanup = opened.cleanup
    const embedder = createHashedEmbedder({ dimension: 128 })
    const llm = createOpenAIChat({ url: stub.url, model: 'router', retries: 0 })
    const routing = { mode: 'off' as const, shortlist: 50, timeoutMs: 3000, cacheSize: 100 }
    knowledge = await createKnowledgeService({ store, embedder, llm, routing })
    routedByDefault = await createKnowledgeService({ store, embedder, llm, routing: { ...routing, mode: 'llm' }, searchCacheSize: 0 })
    for (const task of [LONG_TASK, 'Deploy with pnpm in Docker', 'Cache the pnpm store in Docker builds', 'Bake sourdough bread']) {
      ids.push((await knowledge.save({ task, content: `${task}: notes about pnpm and docker deploys`, types: ['strategy'], scopes: ['org:acme'] }, alice)).id)
    }
  })
  afterAll(async () => {
    await cleanup()
    await stub.close()
  })

  const routingRequests = () => stub.requests.filter((r) => String((r.body as ChatRequest).messages?.[0]?.content).includes('You route a search'))

  it('sends the seed input only, keeps the ids it knows, and reranks the pick', async () => {
    stub.setChat(() => JSON.stringify({ ids: [ids[2], 'knowledge-invented-1', ids[1]] }))
    const before = routingRequests().length
    const response = await knowledge.search({ q: 'pnpm docker deploy', top_k: 3, routing: 'llm' }, alice)
    expect(response.routing).toEqual({ mode: 'llm', status: 'used' })
    expect(response.results.map((r) => r.id).sort()).toEqual([ids[1], ids[2]].sort())
    const sent = routingRequests().slice(before)
    expect(sent).toHaveLength(1)
    const body = sent[0]!.body as ChatRequest
    expect(body.model).toBe('router')
    const user = String(body.messages[1]!.content)
    const candidates = JSON.parse(user.slice(user.indexOf('[', user.indexOf('The candidates')))) as Array<Record<string, unknown>>
    expect(candidates.every((c) => Object.keys(c).join() === 'id,types,task')).toBe(true)
    expect(candidates.find((c) => c.id === ids[0])!.task).toBe(LONG_TASK.slice(0, 100))
    expect(user).toContain('"pnpm docker deploy"')
  })

  it('caches the decision while the table is unchanged, and asks again after a write', async () => {
    // The entry about caching the pnpm store: the one candidate the precision gate keeps for this query.
    stub.setChat(() => JSON.stringify({ ids: [ids[2]] }))
    const before = routingRequests().length
    const first = await routedByDefault.search({ q: 'docker pnpm cache', top_k: 2 }, alice)
    const second = await routedByDefault.search({ q: 'docker pnpm cache', top_k: 2 }, alice)
    expect(second.results).toEqual(first.results)
    expect(routingRequests().length - before).toBe(1)
    await knowledge.feedback(ids[3]!, { add_helpful_case: { task: 't' } }, alice)
    await routedByDefault.search({ q: 'docker pnpm cache', top_k: 2 }, alice)
    expect(routingRequests().length - before).toBe(2)
    const off = await routedByDefault.search({ q: 'docker pnpm cache', top_k: 2, routing: 'off' }, alice)
    expect(off.routing).toBeUndefined()
    expect(routingRequests().length - before).toBe(2)
  })

  it('judges relevance: returns only the entries the model picked, fewer than top_k or none, never filled up', async () => {
    // mode recall: the model sees every candidate that follows the best one, and still only its pick comes back.
    const q = 'deploy docker with pnpm'
    const hybrid = await knowledge.search({ q, top_k: 3, mode: 'recall' }, alice)
    expect(hybrid.count).toBe(3)
    stub.setChat(() => JSON.stringify({ ids: [ids[1]] }))
    const one = await knowledge.search({ q, top_k: 3, mode: 'recall', routing: 'llm' }, alice)
    expect(one.routing).toEqual({ mode: 'llm', status: 'used' })
    expect(one.results.map((r) => r.id)).toEqual([ids[1]])
    stub.setChat(() => JSON.stringify({ ids: [] }))
    const none = await knowledge.search({ q: `${q} docker`, top_k: 3, mode: 'recall', routing: 'llm' }, alice)
    expect(none.routing).toEqual({ mode: 'llm', status: 'used' })
    expect(none.results).toEqual([])
    const system = String((routingRequests().at(-1)!.body as ChatRequest).messages[0]!.content)
    expect(system).toContain('none when none is')
  })

  it.each([
    ['a timeout', () => stub.hangNext(1), 'llm_timeout'],
    // Each answer comes within the 3 s timeout (sized for a loaded machine), but the invalid one and its repair together do not.
    ['a slow invalid answer and its repair', () => stub.setChat(() => new Promise((done) => setTimeout(() => done('no idea'), 2000))), 'llm_timeout'],
    ['HTTP 500', () => stub.failNext(1, 500), 'llm_failed'],
    ['garbage', () => stub.setChat(() => 'the best ones are the first two'), 'llm_invalid_output'],
    ['only invented ids', () => stub.setChat(() => JSON.stringify({ ids: ['knowledge-nope'] })), 'no_known_ids'],
  ])('keeps the hybrid order on %s and says so', async (_name, arrange, reason) => {
    const q = `pnpm docker ${reason}`
    const hybrid = await knowledge.search({ q, top_k: 3, explain: true }, alice)
    arrange()
    const response = await knowledge.search({ q, top_k: 3, routing: 'llm', explain: true }, alice)
    expect(response.routing).toEqual({ mode: 'llm', status: 'fallback', reason })
    expect(response.results).toEqual(hybrid.results)
  })
})
