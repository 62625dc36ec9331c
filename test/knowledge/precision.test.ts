/**
 * Precision where agents live (issue 26), on every backend: the store of 10 entries on
 * different topics, searched at the top_k agents use (5). Every result must be related to the
 * query (judged by hand below), aliases find entries that share no word with the query, a
 * question about nothing stored gets nothing, and `mode: recall` (or a top_k above 5) still
 * returns the candidates that follow a strong first result. What is injected into an agent's
 * context unasked (the assembled context, goal focus) is held to the stricter injection bar.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createAgentService } from '../../src/agent/service.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { loadRetrievalSet } from '../../src/eval/dataset.js'
import { loadIntoKnowledge } from '../../src/eval/harness.js'
import { injectionModelFor, LEARNED_RELEVANCE, relevanceModelFor, type LearnedRelevance } from '../../src/knowledge/search/gate-weights.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1' })

const ENTRIES = {
  selenium: [
    'Log in to site A with Selenium',
    'Site A blocks plain chromedriver as a bot (navigator.webdriver is true). Use undetected-chromedriver, a real user-agent and random 1-3 s delays between steps.',
  ],
  pnpm: [
    'Deploy with pnpm in Docker',
    'Build the image in two stages: copy pnpm-lock.yaml first and run pnpm fetch, then pnpm install --offline so the dependency layer is cached.',
  ],
  postgres: [
    'Speed up PostgreSQL bulk loads',
    'Use COPY instead of INSERT for large imports, drop indexes and recreate them afterwards, raise maintenance_work_mem.',
  ],
  cdn: [
    'Bust a CDN cache after a deploy',
    'Static assets get a content hash in their file name; for HTML, send a purge request to the CDN API for the changed paths.',
  ],
  pdf: [
    'Summarise long PDF reports',
    'Extract the text page by page with pdftotext, split into sections by headings, summarise each section, then summarise the summaries.',
  ],
  keys: [
    'Rotate API keys without downtime',
    'Create the new key, deploy it alongside the old one, switch clients over, watch the logs for the old key, then revoke it after a week.',
  ],
  typescript: ['用户编码风格偏好', '这个用户写前端代码时偏好 TypeScript 严格模式,不喜欢 any,函数要有明确的返回类型。'],
  deployPlan: ['新版本部署计划', '每周四晚上发布:先在预发环境验证,再灰度 10% 流量,观察错误率半小时,没有问题再全量发布;回滚脚本提前准备好。'],
  rateLimit: ['接口限流策略', '对外接口按用户做令牌桶限流,每秒 20 个请求;超过时返回 HTTP 429 并带上 Retry-After 头,客户端指数退避重试。'],
  releaseNotes: ['Write release notes', 'For each release list new features, fixes and breaking changes, link the pull requests, and note upgrade steps.'],
} as const
type Name = keyof typeof ENTRIES

/** Each query and the one entry related to it (hand-judged); absent topics relate to none. */
const QUERIES: Array<[string, Name | undefined]> = [
  ['selenium login blocked as a bot', 'selenium'],
  ['pnpm docker build', 'pnpm'],
  ['postgres import is slow', 'postgres'],
  ['what goes into a changelog', 'releaseNotes'],
  ['怎么上线新版本', 'deployPlan'],
  ['how do I summarise a 200 page pdf', 'pdf'],
  ['用户喜欢什么样的 TypeScript 写法', 'typescript'],
  ['接口被刷了怎么办,429', 'rateLimit'],
  ['how to bake sourdough bread', undefined],
  ['明天北京会下雪吗', undefined],
]

describe.each(BACKENDS)('precision on a small store on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const ids = new Map<Name, string>()

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 512 }), searchCacheSize: 0 })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    await truncateKnowledge(store)
    ids.clear()
    for (const [name, [task, content]] of Object.entries(ENTRIES) as Array<[Name, readonly [string, string]]>) {
      ids.set(name, (await knowledge.save({ task, content, types: ['strategy'], scopes: ['project:p1'] }, alice)).id)
    }
  })

  it('returns only related entries at top_k 5, finds aliases, and nothing for absent topics', async () => {
    for (const [q, related] of QUERIES) {
      const { results } = await knowledge.search({ q, top_k: 5, explain: true }, alice)
      expect(
        results.map((r) => r.id),
        q,
      ).toEqual(related ? [ids.get(related)] : [])
      for (const r of results) expect(['words', 'agreement', 'meaning', 'anchor'], q).toContain(r.explain?.evidence)
    }
  })

  it('names the evidence that kept each result', async () => {
    const { results } = await knowledge.search({ q: 'pnpm docker build', explain: true }, alice)
    expect(results[0]?.explain).toMatchObject({ evidence: 'words' })
    expect(results[0]?.explain?.fulltext_strength).toBeGreaterThanOrEqual(0.2)
    expect(typeof results[0]?.explain?.background_similarity).toBe('number')
    // the learned relevance check of the hashed embedder (gate-weights.ts) accepted it
    expect(results[0]?.explain?.relevance_probability).toBeGreaterThanOrEqual(relevanceModelFor('hashed-ngram-v2-512', false)!.threshold)
  })

  it('lets a caller ask for recall: mode recall or a top_k above 5 also returns the candidates that follow', async () => {
    const q = 'deploy the new key and watch the old one'
    const precise = await knowledge.search({ q, explain: true }, alice)
    const recall = await knowledge.search({ q, mode: 'recall', explain: true }, alice)
    const wide = await knowledge.search({ q, top_k: 10 }, alice)
    expect(precise.results[0]?.id).toBe(ids.get('keys'))
    expect(recall.count).toBeGreaterThan(precise.count)
    expect(recall.results.some((r) => r.explain?.evidence === 'follows')).toBe(true)
    expect(wide.results.map((r) => r.id)).toEqual(expect.arrayContaining(recall.results.map((r) => r.id)))
  })

  it('asks the answer check of the first result when the vector list holds the whole store, and returns nothing under its threshold', async () => {
    // An answer check for the hashed embedder (the shipped table has one for USE lite only) that
    // accepts a first result with a full-text strength of 0.3 or more: p = 1 / (1 + e^−40·(strength − 0.3)).
    const hashed = LEARNED_RELEVANCE.find((entry) => entry.model.test('hashed-ngram-v2-512'))!
    const answer = { bias: -12, strength: 40, relativeStrength: 0, z: 0, rank: 0, lead: 0, threshold: 0.5 }
    const table: LearnedRelevance[] = [{ ...hashed, answer: { latin: answer } }]
    const embedder = createHashedEmbedder({ dimension: 512 })
    const checked = await createKnowledgeService({ store, embedder, searchCacheSize: 0, relevance: table })
    // "what goes into a changelog" finds the release notes by alias at a strength of about 0.26; "pnpm docker build" its entry at about 0.66.
    const weak = 'what goes into a changelog'
    const before = await knowledge.search({ q: weak, explain: true }, alice)
    expect(before.results.map((r) => r.id)).toEqual([ids.get('releaseNotes')])
    expect(before.results[0]?.explain?.fulltext_strength).toBeLessThan(0.3)
    expect((await checked.search({ q: weak }, alice)).results).toEqual([])
    const strong = await checked.search({ q: 'pnpm docker build', explain: true }, alice)
    expect(strong.results.map((r) => r.id)).toEqual([ids.get('pnpm')])
    // explain names the answer check's probability on the result the answer rests on
    expect(strong.results[0]?.explain?.answer_probability).toBeGreaterThanOrEqual(answer.threshold)
    expect(before.results[0]?.explain?.answer_probability).toBeUndefined()
    // A recall search does not ask it.
    expect((await checked.search({ q: weak, mode: 'recall' }, alice)).results.map((r) => r.id)).toContain(ids.get('releaseNotes'))
    // Nor a search whose vector list is cut at its depth (8 of the 10 entries): the figures would not be the store's.
    const deep = await createKnowledgeService({ store, embedder, searchCacheSize: 0, relevance: table, searchDepth: { fulltext: 50, vector: 8 } })
    expect((await deep.search({ q: weak, top_k: 1 }, alice)).results.map((r) => r.id)).toEqual([ids.get('releaseNotes')])
  })

  it('injects into the agent context and goal focus only what clears the injection bar; search, a top_k above 5 and mode recall still carry it', async () => {
    // An injection bar for the hashed embedder that carries a result with a full-text strength of 0.3 or more
    // (p = 1 / (1 + e^−40·(strength − 0.3))); the shipped one is learned (gate-weights.ts), this one is known.
    const hashed = LEARNED_RELEVANCE.find((entry) => entry.model.test('hashed-ngram-v2-512'))!
    const bar = { bias: -12, strength: 40, relativeStrength: 0, z: 0, rank: 0, lead: 0, threshold: 0.5 }
    const table: LearnedRelevance[] = [{ ...hashed, injection: { latin: bar } }]
    // With the response cache on: a search's cached answer is not an injection's.
    const checked = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 512 }), relevance: table })
    const home = await mkdtemp(join(tmpdir(), 'knowhub-injection-'))
    try {
      const agent = createAgentService({ store, knowledge: checked, config: { home } })
      const injected = async (task: string, trace: string, topK?: number) => {
        const { report } = await agent.assembleContext({ agent: 'eval', home, task, principal: alice })
        await agent.goal({ action: 'create', trace_id: trace, description: task }, alice)
        const tree = await agent.goal({ action: 'focus', trace_id: trace, goal_id: '1', ...(topK ? { top_k: topK } : {}) }, alice)
        return { context: report.parts.find((p) => p.name === 'related_knowledge')?.ids ?? [], focus: tree.knowledge.map((k) => k.id) }
      }
      // "what goes into a changelog": search returns the release notes (alias, strength about 0.26), under the bar.
      const weak = 'what goes into a changelog'
      const searched = await checked.search({ q: weak, explain: true }, alice)
      expect(searched.results.map((r) => r.id)).toEqual([ids.get('releaseNotes')])
      expect(searched.results[0]?.explain?.fulltext_strength).toBeLessThan(0.3)
      expect((await checked.search({ q: weak }, alice, { injection: true })).results).toEqual([])
      expect(await injected(weak, 'inject-weak')).toEqual({ context: [], focus: [] })
      // Asked for explicitly: goal focus with a top_k above 5, or an injection in mode recall, carries it.
      expect((await injected(weak, 'inject-wide', 6)).focus).toContain(ids.get('releaseNotes'))
      expect((await checked.search({ q: weak, mode: 'recall' }, alice, { injection: true })).results.map((r) => r.id)).toContain(ids.get('releaseNotes'))
      // …and so does an agent configured to take more related entries than a precision search gives (relatedLimit above 5).
      const wide = createAgentService({ store, knowledge: checked, config: { home, relatedLimit: 6 } })
      const { report } = await wide.assembleContext({ agent: 'eval', home, task: weak, principal: alice })
      expect(report.parts.find((p) => p.name === 'related_knowledge')?.ids).toContain(ids.get('releaseNotes'))
      // A result with strong evidence (strength about 0.66) is injected as before.
      expect(await injected('pnpm docker build', 'inject-strong')).toEqual({ context: [ids.get('pnpm')], focus: [ids.get('pnpm')] })
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })

  it('leaves out of an injection, with the shipped bar, an unrelated entry search returns (small-stores, en-mobile-release)', async () => {
    const set = await loadRetrievalSet(resolve(import.meta.dirname, '..', '..', 'bench', 'data', 'small-stores'))
    const task = set.queries.find((q) => q.id === 'en-mobile-release-q11')!
    await truncateKnowledge(store)
    const loaded = await loadIntoKnowledge(knowledge, set, { searched: [task] })
    const docs = async (use?: { injection: boolean }) =>
      (await knowledge.search({ q: task.text, top_k: 5 }, loaded.principalOf(task), use)).results.map((r) => loaded.docOf.get(r.id))
    // "Ship version 4.2 to both stores this Thursday": search returns the release train (related) and
    // "Respond to one-star reviews" (unrelated, judged so in qrels.jsonl); the injection carries the first only.
    expect(await docs()).toEqual(['en-mobile-release-e02', 'en-mobile-release-e09'])
    expect(await docs({ injection: true })).toEqual(['en-mobile-release-e02'])
  })

  it("keeps every right answer of the issue's store in an injection with the shipped bar", async () => {
    expect(injectionModelFor('hashed-ngram-v2-512', false)).toBeDefined()
    for (const [q, related] of QUERIES) {
      if (!related) continue
      const { results } = await knowledge.search({ q, top_k: 5 }, alice, { injection: true })
      expect(
        results.map((r) => r.id),
        q,
      ).toEqual([ids.get(related)])
    }
  })
})
