/**
 * Supersession and validity in time through the knowledge service (issue 31), on every backend:
 * supersede by id and with a new entry (one transaction), its refusals (self, chains, cycles,
 * archived, another owner, another org), search current by default, `as_of`, `include`,
 * `explain`, expiry (search, list, the response cache), the "outdated" suggestion, and the agent
 * context and goal focus, which see current entries only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { isKnowHubError, type ErrorCode } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { gatherKnowledge, type AgentSettings } from '../../src/agent/context.js'
import { runGoal, type GoalDeps } from '../../src/agent/goals.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { goalStore } from '../../src/store/agent/goals.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1', org: 'acme' })
const carol = Principal.parse({ user: 'carol', project: 'p1', org: 'acme' })
const admin = Principal.parse({ user: 'root', project: 'p1', org: 'acme', permissions: ['admin'] })
const bob = Principal.parse({ user: 'bob', org: 'other', permissions: ['admin'] })

async function expectCode(promise: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<void> {
  try {
    await promise
  } catch (error) {
    if (!isKnowHubError(error, code)) throw new Error(`expected ${code}, got ${String((error as { code?: string }).code)}: ${(error as Error).message}`)
    if (message) expect((error as Error).message).toMatch(message)
    return
  }
  throw new Error(`expected ${code}, but it succeeded`)
}

describe.each(BACKENDS)('supersession on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let now: Date
  const clock = { now: () => now }

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 256 }), clock })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    now = new Date('2026-03-01T00:00:00Z')
    await truncateKnowledge(store)
  })

  const shared = ['project:p1']
  const save = (task: string, content: string, more: Record<string, unknown> = {}, who = alice) =>
    knowledge.save({ task, content, types: ['tool'], scopes: shared, ...more }, who)
  const ids = async (query: Record<string, unknown>, who = alice) => (await knowledge.search({ top_k: 5, ...query }, who)).results.map((r) => r.id)

  it('supersedes by id: search finds the current entry only; as_of, include=superseded and explain tell the history', async () => {
    const jenkins = await save('CI pipeline tool', 'The team runs its CI pipeline on Jenkins', { valid_from: '2025-01-01' })
    now = new Date('2026-03-10T00:00:00Z')
    const actions = await save('CI pipeline tool', 'The team runs its CI pipeline on GitHub Actions', { valid_from: '2026-03-05' })
    expect((await ids({ q: 'CI pipeline tool' })).sort()).toEqual([jenkins.id, actions.id].sort())

    const { superseded, current } = await knowledge.supersede(jenkins.id, { by: actions.id }, alice)
    // Closed when the new one started (later than the old one's start).
    expect(superseded).toMatchObject({
      id: jenkins.id,
      valid_to: '2026-03-05T00:00:00.000Z',
      superseded_by: actions.id,
      valid_from: '2025-01-01T00:00:00.000Z',
    })
    expect(current).toMatchObject({ id: actions.id, supersedes: jenkins.id, valid_to: null })

    const now_ = await knowledge.search({ q: 'CI pipeline tool' }, alice)
    expect(now_.results.map((r) => r.id)).toEqual([actions.id])
    // Seed 003's shape, nothing more, for a current result.
    expect(Object.keys(now_.results[0]!).sort()).toEqual(['content', 'eval', 'id', 'quality_score', 'resource_ids', 'scopes', 'tags', 'task', 'types'])

    expect(await ids({ q: 'CI pipeline tool', as_of: '2026-03-01' })).toEqual([jenkins.id])
    expect(await ids({ q: 'CI pipeline tool', as_of: '2026-03-05T00:00:00Z' })).toEqual([actions.id])
    expect(await ids({ q: 'CI pipeline tool', as_of: '2024-12-31' })).toEqual([])

    const history = await knowledge.search({ q: 'CI pipeline tool', include: 'superseded', explain: true }, alice)
    const old = history.results.find((r) => r.id === jenkins.id)!
    const fresh = history.results.find((r) => r.id === actions.id)!
    expect(old).toMatchObject({ superseded: true, valid_to: '2026-03-05T00:00:00.000Z', superseded_by: actions.id, task: 'CI pipeline tool' })
    expect(old.explain).toMatchObject({ valid_from: '2025-01-01T00:00:00.000Z', valid_to: '2026-03-05T00:00:00.000Z', superseded_by: actions.id })
    expect(fresh.superseded).toBeUndefined()
    expect(fresh.explain).toMatchObject({ valid_from: '2026-03-05T00:00:00.000Z', supersedes: jenkins.id })
    expect(fresh.explain?.superseded_by).toBeUndefined()
    // The old entry stays readable by id, and the list shows it only when asked.
    expect((await knowledge.get(jenkins.id, alice)).superseded_by).toBe(actions.id)
    expect((await knowledge.list({ limit: 10 }, alice)).items.map((e) => e.id)).toEqual([actions.id])
    expect((await knowledge.list({ limit: 10, include: 'superseded' }, alice)).items.map((e) => e.id).sort()).toEqual([jenkins.id, actions.id].sort())
  })

  it('supersedes with a new entry saved in the same transaction, and saves nothing when the supersession is refused', async () => {
    const python = await save('preferred language', '用户偏好使用 Java 编写脚本', { types: ['user_profile'], source: { timestamp: '2026-02-01T00:00:00Z' } })
    const { superseded, current } = await knowledge.supersede(
      python.id,
      {
        by: {
          task: 'preferred language',
          content: '用户现在改用 Python 了',
          types: ['user_profile'],
          scopes: shared,
          source: { timestamp: '2026-02-20T08:00:00Z' },
        },
      },
      alice,
    )
    expect(current).toMatchObject({ supersedes: python.id, valid_from: '2026-02-20T08:00:00.000Z', owner: 'user:alice', content: '用户现在改用 Python 了' })
    expect(superseded).toMatchObject({ superseded_by: current.id, valid_to: '2026-02-20T08:00:00.000Z' })
    // Words of both facts: only the current one comes back. (Not the old fact's 编写 脚本: the only
    // current entry lacks them, and BM25's statistics count current entries only, migration 0052.)
    expect(await ids({ q: '用户 改用 Python Java' })).toEqual([current.id])
    const before = await knowledge.count()
    await expectCode(
      knowledge.supersede(python.id, { by: { task: 'x', content: 'y', types: ['tool'], scopes: shared } }, alice),
      'conflict',
      /already superseded by/,
    )
    expect(await knowledge.count()).toBe(before)
  })

  it('refuses self, chains, cycles, a second supersession by one entry, archived entries, bad input and a bad valid_to, with clear errors', async () => {
    const a = await save('deploy target', 'deploys go to heroku')
    const b = await save('deploy target', 'deploys go to fly.io')
    const c = await save('deploy target', 'deploys go to kubernetes')
    await expectCode(knowledge.supersede(a.id, { by: a.id }, alice), 'validation_error', /cannot supersede itself/)
    await expectCode(knowledge.supersede(a.id, {}, alice), 'validation_error', /by/)
    await expectCode(knowledge.supersede(a.id, { by: b.id, valid_to: 'soon' }, alice), 'validation_error', /ISO 8601/)
    await expectCode(knowledge.supersede(a.id, { by: b.id, valid_to: '2020-01-01' }, alice), 'validation_error', /after the old entry's valid_from/)
    now = new Date('2026-03-02T00:00:00Z')
    await knowledge.supersede(a.id, { by: b.id }, alice)
    await expectCode(knowledge.supersede(a.id, { by: c.id }, alice), 'conflict', new RegExp(`already superseded by ${b.id}`))
    await expectCode(knowledge.supersede(b.id, { by: a.id }, alice), 'conflict', /a cycle/)
    await expectCode(knowledge.supersede(c.id, { by: b.id }, alice), 'conflict', new RegExp(`already supersedes ${a.id}`))
    // The chain goes on from its current end.
    now = new Date('2026-03-03T00:00:00Z')
    const chain = await knowledge.supersede(b.id, { by: c.id, valid_to: '2026-03-02T12:00:00' }, alice)
    expect(chain.superseded).toMatchObject({ valid_to: '2026-03-02T12:00:00.000Z', superseded_by: c.id, supersedes: a.id })
    expect(await ids({ q: 'deploy target', include: 'superseded', top_k: 10 })).toHaveLength(3)
    const d = await save('deploy target', 'deploys go to bare metal')
    await knowledge.archive(d.id, alice)
    await expectCode(knowledge.supersede(c.id, { by: d.id }, alice), 'conflict', /archived/)
    await expectCode(knowledge.supersede(d.id, { by: c.id }, alice), 'conflict', /archived/)
  })

  it('lets only who may edit both entries supersede; another org answers like an unknown id', async () => {
    const mine = await save('office wifi', 'the wifi password rotates monthly')
    const carols = await save('office wifi', 'the wifi password rotates weekly', {}, carol)
    const bobs = await knowledge.save({ task: 'office wifi', content: 'the wifi is open', types: ['tool'] }, bob)
    // Carol sees Alice's entry (same project) but may not edit it; nor may Alice link Carol's.
    await expectCode(knowledge.supersede(mine.id, { by: carols.id }, carol), 'forbidden', /owner/)
    await expectCode(knowledge.supersede(mine.id, { by: carols.id }, alice), 'forbidden', /owner/)
    // Another org: like an id that does not exist, either way round.
    await expectCode(knowledge.supersede(bobs.id, { by: mine.id }, alice), 'not_found')
    await expectCode(knowledge.supersede(mine.id, { by: bobs.id }, alice), 'not_found')
    await expectCode(knowledge.supersede(mine.id, { by: bobs.id }, bob), 'not_found')
    await expectCode(knowledge.supersede('knowledge-20990101000000-none', { by: mine.id }, alice), 'not_found')
    // A reader may not write at all.
    await expectCode(
      knowledge.supersede(mine.id, { by: carols.id }, Principal.parse({ user: 'alice', project: 'p1', org: 'acme', permissions: ['read'] })),
      'forbidden',
    )
    // The org's admin may.
    const done = await knowledge.supersede(mine.id, { by: carols.id }, admin)
    expect(done.superseded.superseded_by).toBe(carols.id)
    expect((await knowledge.get(bobs.id, bob)).supersedes).toBeNull()
  })

  it('supersedes through PUT feedback (supersede_with), and a harmful case with reason "outdated" offers it', async () => {
    const old = await save('api base url', 'the api lives at api.example.com/v1')
    const other = await save('api base url', 'the api lives at api.example.com/v2')
    const offered = await knowledge.feedback(old.id, { add_harmful_case: { task: 'call the api', outcome: '404', reason: 'outdated' } }, carol)
    expect(offered.suggest).toMatchObject({ action: 'supersede', reason: 'outdated', allowed: false })
    expect(offered.suggest?.how).toContain(`PUT /api/knowledge/${old.id}`)
    expect(offered.suggest?.how).toContain('supersede_with')
    expect((await knowledge.feedback(old.id, { add_harmful_case: { reason: 'Outdated: v1 is gone' } }, alice)).suggest?.allowed).toBe(true)
    expect((await knowledge.feedback(old.id, { add_harmful_case: { reason: 'wrong port' } }, alice)).suggest).toBeUndefined()
    expect((await knowledge.feedback(old.id, { add_helpful_case: { reason: 'outdated' } }, alice)).suggest).toBeUndefined()
    await expectCode(knowledge.feedback(old.id, { supersede_with: other.id, update_score: 2 }, alice), 'validation_error', /goes alone/)
    await expectCode(knowledge.feedback(old.id, { valid_to: '2026-01-01' }, alice), 'validation_error', /valid_to goes with supersede_with/)
    const answer = await knowledge.feedback(old.id, { supersede_with: other.id }, alice)
    expect(answer).toMatchObject({ id: old.id, superseded_by: other.id, current: { id: other.id, supersedes: old.id } })
    // Already superseded: no more offers.
    expect((await knowledge.feedback(old.id, { add_harmful_case: { reason: 'outdated' } }, alice)).suggest).toBeUndefined()
  })

  it('drops an entry from search and list once expired (the response cache included), and include=expired marks it', async () => {
    const cookie = await save('site a session cookie', 'log in to site a with the session cookie', { expires_at: '2026-03-02T00:00:00Z' })
    expect(await ids({ q: 'site a session cookie' })).toEqual([cookie.id])
    now = new Date('2026-03-02T00:00:00Z')
    expect(await ids({ q: 'site a session cookie' })).toEqual([])
    expect((await knowledge.list({ limit: 10 }, alice)).items).toEqual([])
    const marked = await knowledge.search({ q: 'site a session cookie', include: ['expired'] }, alice)
    expect(marked.results[0]).toMatchObject({ id: cookie.id, expired: true, expires_at: '2026-03-02T00:00:00.000Z' })
    expect(await ids({ q: 'site a session cookie', as_of: '2026-03-01T12:00:00Z' })).toEqual([cookie.id])
    await expectCode(knowledge.search({ q: 'x', include: 'everything' }, alice), 'validation_error', /unknown include "everything"/)
    await expectCode(knowledge.search({ q: 'x', as_of: 'last week' }, alice), 'validation_error', /as_of/)
  })

  it('gives the agent context and goal focus current entries only', async () => {
    const settings: AgentSettings = { language: 'en', budget: 8000, maxFileBytes: 100_000, profileLimit: 5, relatedLimit: 5 }
    const deps = { store, knowledge, settings, clock }
    const tabs = await save('indentation style', 'the user indents with tabs', {
      types: ['user_profile'],
      tags: { category: 'preference' },
      scopes: ['user:alice'],
    })
    const spaces = await save('indentation style', 'the user indents with two spaces', {
      types: ['user_profile'],
      tags: { category: 'preference' },
      scopes: ['user:alice'],
    })
    const expiring = await save('indentation note', 'the user indents temporarily with four spaces', {
      types: ['user_profile'],
      scopes: ['user:alice'],
      expires_at: '2026-03-05T00:00:00Z',
    })
    const goals: GoalDeps = { goals: goalStore(store.db), knowledge, clock, language: 'en' }
    await store.db.query(sql`DELETE FROM goals`)
    await runGoal(goals, { action: 'create', trace_id: `t-${backend}`, description: 'indentation style of the user' }, alice)
    const focusedBefore = await runGoal(goals, { action: 'focus', trace_id: `t-${backend}`, goal_id: '1' }, alice)
    expect(focusedBefore.knowledge.map((k) => k.id)).toContain(tabs.id)

    await knowledge.supersede(tabs.id, { by: spaces.id }, alice)
    now = new Date('2026-03-06T00:00:00Z')
    const gathered = await gatherKnowledge(deps, alice, 'indentation style', 'en')
    expect(gathered.profile.map((e) => e.id)).toEqual([spaces.id])
    expect(gathered.related.map((e) => e.id)).not.toContain(tabs.id)
    expect(gathered.related.map((e) => e.id)).not.toContain(expiring.id)
    // What was attached before is shown only while current; a new focus finds the current entry.
    const shown = await runGoal(goals, { action: 'show', trace_id: `t-${backend}` }, alice)
    expect(shown.knowledge.map((k) => k.id)).not.toContain(tabs.id)
    const focused = await runGoal(goals, { action: 'focus', trace_id: `t-${backend}`, goal_id: '1' }, alice)
    expect(focused.knowledge.map((k) => k.id)).toEqual([spaces.id])
  })
})
