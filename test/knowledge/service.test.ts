/**
 * The knowledge service contract, run against BOTH backends: embedded PGlite
 * (pgvector + HNSW) and a real PostgreSQL server (no pgvector here: the exact
 * real[] fallback).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { isKnowHubError, type ErrorCode } from '../../src/core/errors.js'
import { GENERATED_KNOWLEDGE_ID } from '../../src/core/ids.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { DEFAULT_RELEVANCE_GATE } from '../../src/knowledge/search/relevance.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { sql } from '../../src/store/sql.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'
import { exportedEntry } from '../helpers/entries.js'

const alice = Principal.parse({ user: 'alice', agent: 'research', project: 'p1', team: 't1', org: 'acme' })
const bob = Principal.parse({ user: 'bob', project: 'p2', org: 'other' })
const carol = Principal.parse({ user: 'carol', project: 'p1', org: 'acme' })
const admin = Principal.parse({ user: 'root', org: 'acme', permissions: ['admin'] })

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  try {
    await promise
  } catch (error) {
    if (!isKnowHubError(error, code)) throw new Error(`expected ${code}, got ${String((error as { code?: string }).code)}: ${(error as Error).message}`)
    return
  }
  throw new Error(`expected ${code}, but it succeeded`)
}

describe.each(BACKENDS)('knowledge service on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 256 }) })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => truncateKnowledge(store))

  it('uses pgvector (vector + HNSW on a server; no HNSW index embedded) where the extension is usable and the exact real[] fallback where it is not', async () => {
    // The postgres backend's database may not create the extension (test/helpers/backends.ts).
    expect(store.pgvector).toBe(backend !== 'postgres')
    expect(store.vectorState()).toMatchObject({ status: 'ready', info: { backend: backend === 'postgres' ? 'array' : 'pgvector' } })
    const columns = await store.db.query<{ type: string }>(
      sql`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'knowledge'::regclass AND attname = 'embedding'`,
    )
    expect(columns.map((c) => c.type)).toEqual([backend === 'postgres' ? 'real[]' : 'vector(256)'])
    // The embedded database keeps no HNSW index: its server searches in memory, one-shot commands scan exactly.
    const indexes = await store.db.query(sql`SELECT 1 FROM pg_indexes WHERE indexname = 'knowledge_embedding_hnsw'`)
    expect(indexes.length).toBe(backend === 'pgvector' ? 1 : 0)
  })

  it('saves an entry with generated id, defaults and source, and reads it back', async () => {
    const saved = await knowledge.save(
      {
        task: 'Log in to site A',
        content: 'Use the test account; sessions last 2 hours.',
        types: ['tool', 'usecase', 'tool'],
        tags: { domain: 'crawling' },
        source: { agent_id: 'research', urls: ['https://example.com'] },
      },
      alice,
    )
    expect(saved.id).toMatch(GENERATED_KNOWLEDGE_ID)
    expect(saved.types).toEqual(['tool', 'usecase'])
    expect(saved.scopes).toEqual(['user:alice'])
    expect(saved.owner).toBe('agent:research')
    expect(saved.eval).toMatchObject({ score: 3, helpful: 0, harmful: 0, confidence: 0.5, helpful_history: [], harmful_history: [] })
    expect(saved.source).toMatchObject({ category: 'exp', agent_id: 'research', urls: ['https://example.com'] })
    expect(saved.status).toBe('active')
    expect(await knowledge.get(saved.id, alice)).toEqual(saved)
  })

  it('rejects bad input with typed errors', async () => {
    const ok = { task: 't', content: 'c', types: ['tool'] }
    await expectCode(knowledge.save({ ...ok, types: ['magic'] }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, types: [] }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, scopes: ['org acme'] }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, score: 6 }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, score: 0 }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, surprise: 1 }, alice), 'validation_error')
    await expectCode(knowledge.save({ ...ok, content: 'x'.repeat(1_048_577) }, alice), 'too_large')
    await expectCode(knowledge.get('knowledge-20990101000000-zzzz', alice), 'not_found')
    await expectCode(knowledge.get('../../etc/passwd', alice), 'validation_error')
    try {
      await knowledge.save({ ...ok, score: 9, types: ['magic'] }, alice)
    } catch (error) {
      const issues = (error as { details: { issues: Array<{ path: string }> } }).details.issues
      expect(issues.map((i) => i.path).sort()).toEqual(['score', 'types.0'])
    }
  })

  it('lets a principal write only scopes it belongs to', async () => {
    await expectCode(knowledge.save({ task: 't', content: 'c', types: ['tool'], scopes: ['org:other'] }, alice), 'forbidden')
    await expectCode(knowledge.save({ task: 't', content: 'c', types: ['tool'], scopes: ['public'] }, alice), 'forbidden')
    await expectCode(knowledge.save({ task: 't', content: 'c', types: ['tool'], owner: 'user:bob' }, alice), 'forbidden')
    const shared = await knowledge.save({ task: 't', content: 'c', types: ['tool'], scopes: ['org:acme', 'project:p1'] }, alice)
    expect(shared.scopes).toEqual(['org:acme', 'project:p1'])
  })

  it('hides entries from principals outside their scopes on every read path', async () => {
    const secret = await knowledge.save(
      { task: 'alice private deploy trick', content: 'kubectl rollout restart', types: ['strategy'], scopes: ['user:alice'] },
      alice,
    )
    const team = await knowledge.save(
      { task: 'project p1 deploy trick', content: 'kubectl rollout restart', types: ['strategy'], scopes: ['project:p1'] },
      alice,
    )
    await expectCode(knowledge.get(secret.id, bob), 'not_found')
    await expectCode(knowledge.feedback(secret.id, { add_helpful_case: { task: 'x' } }, bob), 'not_found')
    await expectCode(knowledge.versions(secret.id, bob), 'not_found')
    expect((await knowledge.list({}, bob)).items).toEqual([])
    expect((await knowledge.search({ q: 'deploy trick kubectl', min_score: 0 }, bob)).results).toEqual([])
    const exported: string[] = []
    for await (const line of knowledge.exportJsonl(bob)) exported.push(line)
    expect(exported).toEqual([])
    // carol shares project p1 but not user:alice
    expect((await knowledge.search({ q: 'deploy trick kubectl' }, carol)).results.map((r) => r.id)).toEqual([team.id])
    expect((await knowledge.list({}, carol)).items.map((e) => e.id)).toEqual([team.id])
    expect((await knowledge.get(team.id, carol)).id).toBe(team.id)
  })

  it('lists newest first with type and scope filters and cursor pagination', async () => {
    const ids: string[] = []
    for (let i = 0; i < 7; i++) {
      const entry = await knowledge.save(
        { task: `task ${i}`, content: `content ${i}`, types: [i % 2 === 0 ? 'tool' : 'plan'], scopes: [i < 4 ? 'user:alice' : 'org:acme'] },
        alice,
      )
      ids.push(entry.id)
    }
    const seen: string[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await knowledge.list({ limit: 3, cursor }, alice)
      seen.push(...page.items.map((e) => e.id))
      if (!page.next_cursor) break
      cursor = page.next_cursor
    }
    expect(new Set(seen).size).toBe(7)
    expect([...seen].sort()).toEqual([...ids].sort())
    expect((await knowledge.list({ types: ['plan'], limit: 100 }, alice)).items).toHaveLength(3)
    expect((await knowledge.list({ scopes: ['org:acme'], limit: 100 }, alice)).items).toHaveLength(3)
    await expectCode(knowledge.list({ cursor: 'not-a-cursor' }, alice), 'validation_error')
  })

  it('lets only the owner or an admin edit, and keeps every previous version', async () => {
    const entry = await knowledge.save({ task: 'Parse dates', content: 'Use date-fns parse', types: ['tool'], scopes: ['org:acme'] }, alice)
    await expectCode(knowledge.edit(entry.id, { content: 'hijacked' }, carol), 'forbidden')
    const v2 = await knowledge.edit(entry.id, { content: 'Use Temporal.PlainDate.from', reason: 'newer API' }, alice)
    expect(v2.version).toBe(2)
    const v3 = await knowledge.edit(entry.id, { tags: { lang: 'ts' }, scopes: ['org:acme', 'user:root'] }, admin)
    expect(v3).toMatchObject({ version: 3, tags: { lang: 'ts' }, content: 'Use Temporal.PlainDate.from' })
    const versions = await knowledge.versions(entry.id, alice)
    expect(versions.map((v) => [v.version, v.content, v.reason])).toEqual([
      [1, 'Use date-fns parse', 'newer API'],
      [2, 'Use Temporal.PlainDate.from', 'edit'],
    ])
    await expectCode(knowledge.edit(entry.id, {}, alice), 'validation_error')
    expect((await knowledge.search({ q: 'Temporal PlainDate' }, alice)).results[0]?.id).toBe(entry.id)
  })

  it('adds feedback atomically: 100 concurrent helpful cases add exactly 100', async () => {
    const entry = await knowledge.save({ task: 'Retry flaky HTTP', content: 'exponential backoff', types: ['strategy'], scopes: ['org:acme'] }, alice)
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => knowledge.feedback(entry.id, { add_helpful_case: { task: `run ${i}`, outcome: 'ok' } }, i % 2 ? carol : alice)),
    )
    const after = await knowledge.get(entry.id, alice)
    expect(after.eval.helpful).toBe(100)
    expect(after.eval.helpful_history).toHaveLength(100)
    expect(new Set(after.eval.helpful_history.map((c) => c.task)).size).toBe(100)
    // Issue 15.2: carol's score is one vote (no quorum yet); the owner's score sets it.
    const voted = await knowledge.feedback(entry.id, { add_harmful_case: { task: 'x', outcome: 'failed', reason: 'timeout' }, update_score: 5 }, carol)
    expect(voted.eval).toMatchObject({ harmful: 1, score: 3 })
    const harmed = await knowledge.feedback(entry.id, { update_score: 5 }, alice)
    expect(harmed.eval).toMatchObject({ harmful: 1, score: 5 })
    expect(harmed.eval.harmful_history[0]).toMatchObject({ reason: 'timeout' })
    expect(typeof harmed.eval.harmful_history[0]?.timestamp).toBe('string')
    await expectCode(knowledge.feedback(entry.id, { evolve_feedback: 'make it shorter' }, alice), 'llm_not_configured')
    await expectCode(knowledge.feedback(entry.id, {}, alice), 'validation_error')
  })

  it('applies batch feedback item by item and reports failures', async () => {
    const a = await knowledge.save({ task: 'a', content: 'a', types: ['tool'] }, alice)
    const hidden = await knowledge.save({ task: 'b', content: 'b', types: ['tool'] }, bob)
    const result = await knowledge.batchFeedback(
      {
        feedback_list: [
          { knowledge_id: a.id, is_helpful: true, case: { task: 't' } },
          { knowledge_id: a.id, is_helpful: false },
          { knowledge_id: hidden.id, is_helpful: true },
        ],
      },
      alice,
    )
    expect(result.updated).toBe(2)
    expect(result.results[2]).toMatchObject({ ok: false, error: { code: 'not_found' } })
    expect((await knowledge.get(a.id, alice)).eval).toMatchObject({ helpful: 1, harmful: 1 })
    expect((await knowledge.get(hidden.id, bob)).eval.helpful).toBe(0)
  })

  it('archives (hidden from search and list, kept), restores and deletes', async () => {
    const entry = await knowledge.save({ task: 'Archive me', content: 'old trick for grep', types: ['tool'] }, alice)
    await expectCode(knowledge.archive(entry.id, bob), 'not_found')
    await knowledge.archive(entry.id, alice)
    expect((await knowledge.search({ q: 'old trick grep' }, alice)).count).toBe(0)
    expect((await knowledge.list({}, alice)).items).toHaveLength(0)
    expect((await knowledge.list({ status: ['archived'] }, alice)).items).toHaveLength(1)
    expect((await knowledge.get(entry.id, alice)).status).toBe('archived')
    await knowledge.restore(entry.id, alice)
    expect((await knowledge.search({ q: 'old trick grep' }, alice)).count).toBe(1)
    await knowledge.delete(entry.id, alice)
    await expectCode(knowledge.get(entry.id, alice), 'not_found')
  })

  describe('search', () => {
    it('finds English entries by meaning-bearing words and respects top_k', async () => {
      await knowledge.save(
        {
          task: 'Bypass bot detection when logging in with Selenium',
          content: 'undetected_chromedriver avoids most checks; randomise delays.',
          types: ['tool', 'strategy'],
        },
        alice,
      )
      await knowledge.save({ task: 'Format TypeScript code', content: 'Run prettier with the project config.', types: ['tool'] }, alice)
      await knowledge.save({ task: 'Summarise a PDF report', content: 'Extract text with pdftotext, then chunk by heading.', types: ['plan'] }, alice)
      const response = await knowledge.search({ q: 'selenium login detected as a bot', top_k: 2 }, alice)
      expect(response.count).toBe(response.results.length)
      expect(response.results.length).toBeLessThanOrEqual(2)
      expect(response.results[0]?.task).toMatch(/Selenium/)
      expect(Object.keys(response.results[0]!).sort()).toEqual(['content', 'eval', 'id', 'quality_score', 'resource_ids', 'scopes', 'tags', 'task', 'types'])
    })

    it('prefers the entries dated on a day or month the query names, and for a "when" question the entry that says when', async () => {
      const july = await knowledge.save(
        {
          task: 'Melanie painted a sunset',
          content: 'Melanie: I painted a sunset painting, my favourite painting to paint',
          source: { timestamp: '2023-07-10T12:00:00Z' },
          types: ['usecase'],
        },
        alice,
      )
      const october = await knowledge.save(
        {
          task: 'Melanie painted a lake',
          content: 'Melanie: I finished a new painting of a lake',
          source: { timestamp: '2023-10-13T18:00:00Z' },
          types: ['usecase'],
        },
        alice,
      )
      expect((await knowledge.search({ q: 'What did Melanie paint?' }, alice)).results[0]?.id).toBe(july.id)
      for (const q of ['What did Melanie paint in October 2023?', 'What did Melanie paint on October 13, 2023?', 'What did Melanie paint in October?']) {
        // top_k 10 asks for recall: the July painting shares only two words of four and would not be kept on its own.
        const response = await knowledge.search({ q, explain: true, top_k: 10 }, alice)
        expect(
          response.results.map((r) => r.id),
          q,
        ).toEqual([october.id, july.id])
        expect(response.results[0]?.explain?.time_boost, q).toBeGreaterThan(0)
        expect(response.results[1]?.explain?.time_boost, q).toBe(0)
      }
      // A year alone prefers nothing; no date at all: no figure.
      expect((await knowledge.search({ q: 'What did Melanie paint in 2023?', explain: true }, alice)).results[0]?.explain).not.toHaveProperty('time_boost')
      expect((await knowledge.search({ q: 'What did Melanie paint?', explain: true }, alice)).results[0]?.explain).not.toHaveProperty('time_boost')

      await truncateKnowledge(store)
      const group = await knowledge.save(
        { task: 'Caroline support group', content: 'Caroline: the support group was powerful, the support group stories moved me', types: ['usecase'] },
        alice,
      )
      const went = await knowledge.save(
        { task: 'Caroline went to a support group', content: 'Caroline: I went to a support group yesterday', types: ['usecase'] },
        alice,
      )
      expect((await knowledge.search({ q: 'Caroline support group' }, alice)).results.map((r) => r.id)).toEqual([group.id, went.id])
      expect((await knowledge.search({ q: 'When did Caroline go to the support group?' }, alice)).results.map((r) => r.id)).toEqual([went.id, group.id])
    })

    it('answers no Chinese question whose only shared terms with the entries are single characters or function words', async () => {
      const target = await knowledge.save(
        { task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] },
        alice,
      )
      await knowledge.save({ task: '调试接口的顺序', content: '调用接口前才看日志是什么原因都找不到的:先看日志,再调参数', types: ['strategy'] }, alice)
      await knowledge.save({ task: '红色告警回调', content: '告警回调失败时最多重试三回', types: ['tool'] }, alice)
      for (const q of ['饺子馅怎么调才多汁', '红楼梦一共多少回', '辛亥革命的导火索是什么']) {
        expect((await knowledge.search({ q, min_score: 0 }, alice)).results, q).toEqual([])
      }
      // A paraphrase that shares a real word still finds its entry.
      expect((await knowledge.search({ q: '这个用户写代码时喜欢什么样的类型风格' }, alice)).results[0]?.id).toBe(target.id)
    })

    it('asks more full-text strength of a Chinese answer that shares one content term with the question than of one that shares several', async () => {
      const embedder = createHashedEmbedder({ dimension: 256 })
      const room = await knowledge.save({ task: '北京机房迁移记录', content: '北京机房的服务器迁移到上海,迁移窗口定在周末夜里', types: ['usecase'] }, alice)
      await knowledge.save({ task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] }, alice)
      await knowledge.save({ task: '部署服务到生产环境', content: '先在预发环境验证,再灰度发布', types: ['plan'] }, alice)
      const absent = '明天北京会下雪吗' // shares 北京 only
      const present = '机房什么时候迁移到上海' // shares 机房, 迁移, 上海
      const strengthOf = async (q: string) => {
        const off = await createKnowledgeService({ store, embedder, searchCacheSize: 0, gate: false })
        const hit = (await off.search({ q, explain: true }, alice)).results.find((r) => r.id === room.id)
        return hit?.explain?.fulltext_strength ?? 0
      }
      const [weak, strong] = [await strengthOf(absent), await strengthOf(present)]
      expect(weak).toBeGreaterThan(0)
      expect(strong).toBeGreaterThan(0)
      // Thresholds around the two strengths: both clear the several-terms one, neither the one-term one.
      const gate = {
        ...DEFAULT_RELEVANCE_GATE,
        minTextStrengthCjk: Math.min(weak, strong) * 0.9,
        minTextStrengthCjkOneTerm: Math.max(weak, strong) * 1.1,
        fallbackSimilarity: 2,
      }
      const gated = await createKnowledgeService({ store, embedder, searchCacheSize: 0, gate })
      expect((await gated.search({ q: absent }, alice)).results).toEqual([])
      expect((await gated.search({ q: present }, alice)).results[0]?.id).toBe(room.id)
      // Without the one-term rule (both thresholds equal), the absent topic is answered.
      const equal = await createKnowledgeService({ store, embedder, searchCacheSize: 0, gate: { ...gate, minTextStrengthCjkOneTerm: gate.minTextStrengthCjk } })
      expect((await equal.search({ q: absent }, alice)).results[0]?.id).toBe(room.id)
    })

    it('finds a Chinese entry from a Chinese query that shares words but no whole phrase', async () => {
      const target = await knowledge.save(
        { task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] },
        alice,
      )
      await knowledge.save({ task: '部署服务到生产环境', content: '先在预发环境验证,再灰度发布', types: ['plan'] }, alice)
      await knowledge.save({ task: '爬虫登录某网站', content: '使用测试账号登录,每天限额 100 次', types: ['tool'] }, alice)
      const response = await knowledge.search({ q: '这个用户写代码时喜欢什么样的类型风格' }, alice)
      expect(response.results[0]?.id).toBe(target.id)
      const fulltextOnly = await knowledge.search({ q: '类型安全的编码偏好', mode: 'fulltext' }, alice)
      expect(fulltextOnly.results[0]?.id).toBe(target.id)
    })

    it('filters by types and min_score and drops negative quality', async () => {
      const low = await knowledge.save({ task: 'cache invalidation tip', content: 'version your cache keys', types: ['strategy'], score: 2 }, alice)
      const tool = await knowledge.save({ task: 'cache invalidation tool', content: 'redis keyspace notifications', types: ['tool'], score: 4 }, alice)
      expect((await knowledge.search({ q: 'cache invalidation' }, alice)).results.map((r) => r.id)).toEqual([tool.id])
      expect((await knowledge.search({ q: 'cache invalidation', min_score: 1 }, alice)).results.map((r) => r.id).sort()).toEqual([low.id, tool.id].sort())
      expect((await knowledge.search({ q: 'cache invalidation', min_score: 1, types: 'strategy' }, alice)).results.map((r) => r.id)).toEqual([low.id])
      await expectCode(knowledge.search({ q: 'cache', types: 'strategy,bogus' }, alice), 'validation_error')
      for (let i = 0; i < 3; i++) await knowledge.feedback(tool.id, { add_harmful_case: { reason: 'stale' } }, alice)
      expect((await knowledge.search({ q: 'cache invalidation', min_score: 1 }, alice)).results.map((r) => r.id)).toEqual([low.id])
    })

    it('reranks by quality score: harmful feedback demotes, helpful promotes', async () => {
      const a = await knowledge.save({ task: 'speed up npm install', content: 'use npm ci with a warm cache', types: ['strategy'] }, alice)
      const b = await knowledge.save({ task: 'speed up npm install in CI', content: 'cache the npm folder between CI runs', types: ['strategy'] }, alice)
      await knowledge.feedback(a.id, { add_helpful_case: { task: 'ci' } }, alice)
      let ids = (await knowledge.search({ q: 'speed up npm install' }, alice)).results.map((r) => r.id)
      expect(ids).toEqual([a.id, b.id])
      await knowledge.feedback(a.id, { add_harmful_case: { task: 'ci' } }, alice)
      const response = await knowledge.search({ q: 'speed up npm install', explain: true }, alice)
      ids = response.results.map((r) => r.id)
      expect(ids).toEqual([b.id, a.id])
      expect(response.results[1]?.quality_score).toBe(3 + 1 - 2)
      expect(response.results[0]?.explain).toMatchObject({ scope_priority: 0 })
      expect(response.results[0]?.explain?.fused).toBeGreaterThan(0)
    })

    it('breaks quality ties by scope priority: user before project before org', async () => {
      const org = await knowledge.save({ task: 'release checklist', content: 'tag, build, publish', types: ['plan'], scopes: ['org:acme'] }, alice)
      const user = await knowledge.save({ task: 'release checklist', content: 'tag, build, publish', types: ['plan'], scopes: ['user:alice'] }, alice)
      const project = await knowledge.save({ task: 'release checklist', content: 'tag, build, publish', types: ['plan'], scopes: ['project:p1'] }, alice)
      const ids = (await knowledge.search({ q: 'release checklist' }, alice)).results.map((r) => r.id)
      expect(ids).toEqual([user.id, project.id, org.id])
    })

    it('answers from an entry that shares no word with the query only at the embedder’s anchor floor', async () => {
      const base = createHashedEmbedder({ dimension: 256 })
      const e = await knowledge.save({ task: 'rotate API keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'] }, alice)
      const misspelt = 'rotaate vaullt kees' // no shared search term: only the vectors find it
      const off = await createKnowledgeService({ store, embedder: base, searchCacheSize: 0, gate: false, minSimilarity: -1 })
      const hit = (await off.search({ q: misspelt, explain: true }, alice)).results.find((r) => r.id === e.id)
      expect(hit?.explain?.fulltext_rank).toBeNull()
      const similarity = hit?.explain?.vector_similarity ?? 0
      expect(similarity).toBeGreaterThan(0)
      const withFloors = (anchor: number | undefined) =>
        createKnowledgeService({
          store,
          embedder: {
            model: base.model,
            dimension: base.dimension,
            embed: (t: readonly string[]) => base.embed(t, { kind: 'document' }),
            similarityFloor: () => similarity * 0.9,
            anchorFloor: () => anchor,
          },
          searchCacheSize: 0,
        })
      const strict = await withFloors(similarity * 1.1)
      expect((await strict.search({ q: misspelt }, alice)).results).toEqual([])
      // Vector-only mode has no full-text list to corroborate with: the similarity floor applies.
      expect((await strict.search({ q: misspelt, mode: 'vector' }, alice)).results[0]?.id).toBe(e.id)
      expect((await (await withFloors(similarity * 0.95)).search({ q: misspelt }, alice)).results[0]?.id).toBe(e.id)
      expect((await (await withFloors(undefined)).search({ q: misspelt }, alice)).results[0]?.id).toBe(e.id)
    })

    it('runs full-text only and vector only', async () => {
      const e = await knowledge.save({ task: 'rotate API keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'] }, alice)
      expect((await knowledge.search({ q: 'rotate vault keys', mode: 'fulltext' }, alice)).results[0]?.id).toBe(e.id)
      expect((await knowledge.search({ q: 'rotate vault keys', mode: 'vector' }, alice)).results[0]?.id).toBe(e.id)
      expect((await knowledge.search({ q: 'zzzz qqqq', mode: 'fulltext' }, alice)).count).toBe(0)
    })

    it('embeds a repeated query once (query vector cache), and not at all in full-text mode', async () => {
      const base = createHashedEmbedder({ dimension: 256 })
      const embedded: string[] = []
      const counting = {
        model: base.model,
        dimension: base.dimension,
        embed: (texts: string[]) => (embedded.push(...texts), base.embed(texts, { kind: 'document' })),
      }
      const cached = await createKnowledgeService({ store, embedder: counting, queryCacheSize: 2, searchCacheSize: 0 })
      const e = await cached.save({ task: 'rotate API keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'] }, alice)
      embedded.length = 0
      for (let i = 0; i < 3; i++) expect((await cached.search({ q: 'rotate vault keys' }, alice)).results[0]?.id).toBe(e.id)
      await Promise.all([cached.search({ q: 'vault' }, alice), cached.search({ q: 'vault' }, alice)])
      await cached.search({ q: 'keys', mode: 'fulltext' }, alice)
      expect(embedded).toEqual(['rotate vault keys', 'vault'])
      // least recently used first out: two more queries push out "rotate vault keys"
      await cached.search({ q: 'api' }, alice)
      await cached.search({ q: 'rotate vault keys' }, alice)
      expect(embedded).toEqual(['rotate vault keys', 'vault', 'api', 'rotate vault keys'])
    })

    it('reuses a search response while the table is unchanged (embedded store), per visible scopes, least recently used out', async () => {
      let searched = 0
      const counted: Store = { ...store, knowledge: { ...store.knowledge, getMany: (ids, visible) => (searched++, store.knowledge.getMany(ids, visible)) } }
      const svc = await createKnowledgeService({ store: counted, embedder: createHashedEmbedder({ dimension: 256 }), searchCacheSize: 2 })
      const e = await svc.save(
        { task: 'rotate API keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'], scopes: ['org:acme'] },
        alice,
      )
      // On a server (no generation) every search runs; on the embedded store a repeat is a hit.
      const runs = (n: number) => (backend === 'pglite' ? n : searched)
      const first = await svc.search({ q: 'rotate vault keys' }, alice)
      first.results[0]!.task = 'changed by the caller'
      first.results[0]!.eval.score = 0
      const hit = await svc.search({ q: 'rotate vault keys' }, alice)
      expect(hit.results[0]).toMatchObject({ task: 'rotate API keys', eval: { score: 3 } })
      // Nor does a change to a cached answer (nested fields included) reach the next one.
      hit.results[0]!.eval.score = 1
      hit.results[0]!.types.push('tool')
      expect((await svc.search({ q: 'rotate vault keys' }, alice)).results[0]).toMatchObject({ task: 'rotate API keys', eval: { score: 3 }, types: ['plan'] })
      expect(searched).toBe(runs(1))
      await svc.search({ q: 'rotate vault keys' }, carol)
      await svc.search({ q: 'rotate vault keys' }, carol)
      expect(searched).toBe(runs(2))
      // Any write, by any path, ends the cached responses.
      await store.db.query(sql`UPDATE knowledge SET score = 4 WHERE id = ${e.id}`)
      expect((await svc.search({ q: 'rotate vault keys' }, alice)).results[0]?.eval.score).toBe(4)
      expect(searched).toBe(runs(3))
      // Bound 2: alice's and carol's responses are kept, a third query pushes out the least recently used (carol's).
      await svc.search({ q: 'rotate vault keys' }, carol)
      await svc.search({ q: 'rotate vault keys' }, alice)
      await svc.search({ q: 'vault' }, alice)
      await svc.search({ q: 'rotate vault keys' }, alice)
      expect(searched).toBe(runs(5))
      await svc.search({ q: 'rotate vault keys' }, carol)
      expect(searched).toBe(runs(6))
    })

    it('finds nothing for a query about nothing stored, yet keeps close matches the vectors alone find', async () => {
      const svc = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 256 }) })
      const login = await svc.save(
        { task: 'Log in to site A with Selenium', content: 'undetected_chromedriver avoids bot checks; add random delays', types: ['tool'] },
        alice,
      )
      await svc.save({ task: 'Deploy with pnpm in Docker', content: 'run corepack enable before pnpm install', types: ['tool'] }, alice)
      await svc.save({ task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] }, alice)
      for (const mode of ['hybrid', 'vector'] as const) {
        for (const q of ['banana smoothie recipe with oat milk', 'quantum chromodynamics lattice gauge', 'best tyre pressure for a road bike']) {
          expect((await svc.search({ q, mode, min_score: 0 }, alice)).results, `${mode}: ${q}`).toEqual([])
        }
      }
      // Misspelt words share no search term with the entry, only character n-grams.
      const typo = await svc.search({ q: 'seleniumm chromedrivr', min_score: 0, explain: true }, alice)
      expect(typo.results[0]?.id).toBe(login.id)
      expect(typo.results[0]?.explain?.fulltext_rank).toBeNull()
    })

    it('keeps relevance before quality: a helpful vote does not lift an unrelated entry, and Chinese or mixed queries about nothing stored return nothing', async () => {
      const svc = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 256 }), searchCacheSize: 0 })
      const selenium = await svc.save(
        { task: 'Log in to site A with Selenium', content: 'undetected_chromedriver avoids bot checks; add random delays', types: ['tool'] },
        alice,
      )
      const pnpm = await svc.save(
        { task: 'Deploy with pnpm in Docker', content: 'run corepack enable before pnpm install in the Dockerfile', types: ['tool'] },
        alice,
      )
      const types = await svc.save(
        { task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] },
        alice,
      )
      const deploy = await svc.save(
        { task: '部署服务到生产环境', content: '先在预发环境验证,再灰度发布;怎么部署:打 v* 标签触发流水线', types: ['plan'] },
        alice,
      )
      await svc.save({ task: 'Summarise a PDF report', content: 'Extract text with pdftotext, then chunk by heading.', types: ['plan'] }, alice)
      await svc.feedback(selenium.id, { add_helpful_case: { task: 'login worked' } }, alice)
      for (const [q, id] of [
        ['pnpm docker', pnpm.id],
        ['类型安全', types.id],
        ['怎么部署', deploy.id],
      ] as const) {
        const response = await svc.search({ q, explain: true }, alice)
        expect(response.results[0]?.id, q).toBe(id)
        expect(
          response.results.map((r) => r.id),
          q,
        ).not.toContain(selenium.id)
        expect(response.results[0]?.explain?.relevance).toBe(1)
        expect(response.results[0]?.explain?.fulltext_strength).toBeGreaterThan(0)
      }
      for (const q of ['今天巴黎的天气怎么样', '明天北京会下雪吗', '怎么做正宗的四川回锅肉', 'iPhone 怎么截长图', 'What is the melting point of tungsten?']) {
        expect((await svc.search({ q, min_score: 0 }, alice)).results, q).toEqual([])
      }
    })

    it('reuses a response only while the table is unchanged, per caller; never on a PostgreSQL server', async () => {
      const base = createHashedEmbedder({ dimension: 256 })
      let embeds = 0
      const counting = {
        model: base.model,
        dimension: base.dimension,
        embed: (texts: string[]) => ((embeds += texts.length), base.embed(texts, { kind: 'document' })),
      }
      const cached = await createKnowledgeService({ store, embedder: counting, queryCacheSize: 0 })
      const mine = await cached.save({ task: 'rotate vault keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'] }, alice)
      const other = await cached.save({ task: 'vault keys rotation', content: 'the vault CLI rotates keys on a schedule', types: ['plan'] }, alice)
      const q = { q: 'rotate vault keys', top_k: 5 }
      embeds = 0
      const first = await cached.search(q, alice)
      expect(first.results.map((r) => r.id)).toEqual([mine.id, other.id])
      first.results.pop() // a caller changing its copy changes nothing for the next caller
      const again = await cached.search(q, alice)
      expect(again.results.map((r) => r.id)).toEqual([mine.id, other.id])
      const cachedHere = backend === 'pglite'
      expect(embeds).toBe(cachedHere ? 1 : 2)
      // Another caller never gets this caller's response.
      expect((await cached.search(q, Principal.parse({ user: 'stranger', permissions: ['read'] }))).results).toEqual([])
      // Any write ends the cached response: feedback through the service…
      embeds = 0
      await cached.feedback(mine.id, { add_harmful_case: { task: 't', outcome: 'failed' } }, alice)
      await cached.feedback(mine.id, { add_harmful_case: { task: 't', outcome: 'failed' } }, alice)
      expect((await cached.search(q, alice)).results.map((r) => r.id)).toEqual([other.id])
      expect(embeds).toBe(1)
      // …and a raw statement that bypasses the store.
      await store.db.query(sql`UPDATE knowledge SET harmful = 0, harmful_weight = 0 WHERE id = ${mine.id}`)
      expect((await cached.search(q, alice)).results.map((r) => r.id)).toEqual([mine.id, other.id])
      expect(embeds).toBe(2)
    })
  })

  it('exports and imports JSONL losslessly', async () => {
    const a = await knowledge.save(
      {
        task: '导出测试',
        content: 'content with "quotes" and\nnewlines',
        types: ['definition'],
        tags: { n: 1, ok: true, list: ['x'] },
        resource_ids: ['code/a/b'],
      },
      alice,
    )
    await knowledge.feedback(a.id, { add_helpful_case: { task: 'used', extra: { nested: [1, 2] } } }, alice)
    await knowledge.edit(a.id, { content: 'second version' }, alice)
    const b = await knowledge.save({ task: 'archived one', content: 'x', types: ['plan'], scopes: ['org:acme'] }, alice)
    await knowledge.archive(b.id, alice)
    const lines: string[] = []
    for await (const line of knowledge.exportJsonl(alice)) lines.push(line)
    expect(lines).toHaveLength(2)
    const before = await knowledge.get(a.id, alice)
    await truncateKnowledge(store)
    const report = await knowledge.importJsonl(lines, alice)
    expect(report).toEqual({ imported: 2, skipped: 0, errors: [] })
    const again: string[] = []
    for await (const line of knowledge.exportJsonl(alice)) again.push(line)
    expect(again).toEqual(lines)
    expect(await knowledge.get(a.id, alice)).toEqual(before)
    expect((await knowledge.search({ q: 'second version' }, alice)).results[0]?.id).toBe(a.id)
    // importing again conflicts unless told to skip or replace
    expect((await knowledge.importJsonl(lines, alice)).errors.map((e) => e.code)).toEqual(['conflict', 'conflict'])
    expect(await knowledge.importJsonl(lines, alice, { on_conflict: 'skip' })).toEqual({ imported: 0, skipped: 2, errors: [] })
    expect((await knowledge.importJsonl(lines, alice, { on_conflict: 'replace' })).imported).toBe(2)
  })

  it('reports bad import lines by number: atomic imports nothing, partial imports the rest', async () => {
    const good = (id: string) =>
      exportedEntry({
        id,
        task: 't',
        content: 'c',
        scopes: ['user:alice'],
        owner: 'user:alice',
        created_at: '2026-03-05T12:00:00.000Z',
        updated_at: '2026-03-05T12:00:00.000Z',
      })
    const lines = [
      good('knowledge-20260305120000-aaaa'),
      '{not json',
      '',
      good('knowledge-20260305120000-bbbb').replace('"tool"', '"magic"'),
      good('knowledge-20260305120000-cccc').replace('user:alice"]', 'org:other"]'),
      good('knowledge-20260305120000-dddd'),
    ]
    const atomic = await knowledge.importJsonl(lines, alice)
    expect(atomic.imported).toBe(0)
    expect(atomic.errors.map((e) => [e.line, e.code])).toEqual([
      [2, 'invalid_import'],
      [4, 'invalid_import'],
      [5, 'forbidden'],
    ])
    expect(atomic.errors[1]?.message).toMatch(/types\.0/)
    expect((await knowledge.list({}, alice)).items).toHaveLength(0)
    const partial = await knowledge.importJsonl(lines, alice, { mode: 'partial' })
    expect(partial.imported).toBe(2)
    expect((await knowledge.list({}, alice)).items.map((e) => e.id).sort()).toEqual(['knowledge-20260305120000-aaaa', 'knowledge-20260305120000-dddd'])
  })

  it('bulk-imports 600 entries with the vector index rebuilt once, and finds them', async () => {
    const at = '2026-03-05T12:00:00.000Z'
    const lines = Array.from({ length: 600 }, (_, i) =>
      exportedEntry({
        id: `knowledge-20260305120000-b${String(i).padStart(3, '0')}`,
        task: `bulk task ${i} topic${i % 50}`,
        scopes: ['user:alice'],
        owner: 'user:alice',
        content: `entry number ${i} about subject${i % 37}`,
        created_at: at,
        updated_at: at,
      }),
    )
    expect((await knowledge.importJsonl(lines, alice)).imported).toBe(600)
    const indexes = await store.db.query<{ indexname: string }>(sql`SELECT indexname FROM pg_indexes WHERE tablename = 'knowledge'`)
    expect(indexes.some((i) => i.indexname === 'knowledge_embedding_hnsw')).toBe(store.pgvector && store.db.kind === 'postgres')
    // top_k above 5 asks for recall: the entries that share part of the query follow the best one.
    const hits = await knowledge.search({ q: 'bulk task topic7 subject7', mode: 'vector', top_k: 6, min_score: 0 }, alice)
    expect(hits.count).toBe(6)
    expect(hits.results[0]?.id).toBe('knowledge-20260305120000-b007')
    expect((await knowledge.list({ limit: 1000 }, alice)).items).toHaveLength(600)
  })

  it('detects a changed embedder and reindexes', async () => {
    const entry = await knowledge.save({ task: 'vector reindex check', content: 'embedding dimensions', types: ['definition'] }, alice)
    const other = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 128 }) })
    expect(other.vectorState().status).toBe('mismatch')
    await expectCode(other.search({ q: 'reindex' }, alice), 'embedder_mismatch')
    await expectCode(other.save({ task: 't', content: 'c', types: ['tool'] }, alice), 'embedder_mismatch')
    expect((await other.get(entry.id, alice)).id).toBe(entry.id)
    const progress: number[] = []
    expect(await other.reindex({ onProgress: (done) => progress.push(done) })).toBe(1)
    expect(progress).toEqual([0, 1])
    expect(other.vectorState().status).toBe('ready')
    expect((await other.search({ q: 'vector reindex', mode: 'vector' }, alice)).results[0]?.id).toBe(entry.id)
    // and back, so the other tests keep their embedder
    await knowledge.reindex()
  })
})
