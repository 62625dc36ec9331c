/**
 * Issue 15.2: no single principal can bury or promote an entry for everyone else. Feedback
 * needs `write`; each case records its giver; a non-owner's score is one vote (the entry's
 * score is the owner's combined with the median of distinct voters, docs/feedback.md); one
 * principal's repeated harmful cases weigh less and less. Concurrent feedback loses nothing.
 * On every backend.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })
const carolReadOnly = Principal.parse({ user: 'carol', org: 'acme', permissions: ['read'] })
const carol = Principal.parse({ user: 'carol', org: 'acme', permissions: ['read', 'write'] })
const dave = Principal.parse({ user: 'dave', org: 'acme', permissions: ['read', 'write'] })
const erin = Principal.parse({ user: 'erin', org: 'acme', permissions: ['read', 'write'] })
const admin = Principal.parse({ user: 'root', permissions: ['admin'] })

describe.each(BACKENDS)('feedback abuse on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const found = async (id: string, principal: Principal) =>
    (await knowledge.search({ q: 'zephyr deploy rollback' }, principal)).results.some((r) => r.id === id)
  const save = (principal: Principal, scopes: string[], score?: number) =>
    knowledge.save({ task: 'Zephyr deploy rollback', content: 'roll back a zephyr deploy with the blue slot', types: ['strategy'], scopes, score }, principal)

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 128 }), searchCacheSize: 0 })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => truncateKnowledge(store))

  it('refuses feedback from a read-only token (single and batch), changing nothing', async () => {
    const entry = await save(alice, ['org:acme'])
    const refused = await knowledge.feedback(entry.id, { update_score: 1 }, carolReadOnly).catch((e: unknown) => e)
    expect(isKnowHubError(refused, 'forbidden')).toBe(true)
    const batch = await knowledge
      .batchFeedback({ feedback_list: [{ knowledge_id: entry.id, is_helpful: false, case: { task: 't' } }] }, carolReadOnly)
      .catch((e: unknown) => e)
    expect(isKnowHubError(batch, 'forbidden')).toBe(true)
    expect((await knowledge.get(entry.id, alice)).eval).toMatchObject({ score: 3, helpful: 0, harmful: 0 })
  })

  it("counts a non-owner's score as one vote: one voter neither buries nor promotes; a quorum of voters moves it halfway", async () => {
    const entry = await save(alice, ['org:acme'])
    expect((await knowledge.feedback(entry.id, { update_score: 1 }, carol)).eval.score).toBe(3)
    expect(await found(entry.id, alice)).toBe(true)
    expect(await found(entry.id, dave)).toBe(true)
    // Repeating the vote replaces it: still one voter.
    expect((await knowledge.feedback(entry.id, { update_score: 1 }, carol)).eval.score).toBe(3)
    expect((await knowledge.feedback(entry.id, { update_score: 1 }, dave)).eval.score).toBe(3)
    // Three distinct voters: (owner 3 + median 1) / 2 = 2, below the default min_score.
    expect((await knowledge.feedback(entry.id, { update_score: 1 }, erin)).eval.score).toBe(2)
    expect(await found(entry.id, alice)).toBe(false)
    // The owner's own score is no vote: it sets the owner's half.
    expect((await knowledge.feedback(entry.id, { update_score: 5 }, alice)).eval.score).toBe(3)
    // Promotion: one voter cannot lift a score-1 entry into default search.
    const low = await save(alice, ['org:acme'], 1)
    expect((await knowledge.feedback(low.id, { update_score: 5 }, carol)).eval.score).toBe(1)
    expect(await found(low.id, carol)).toBe(false)
    const votes = await store.db.query<{ voter: string; score: number }>(
      sql`SELECT voter, score FROM knowledge_score_vote WHERE knowledge_id = ${entry.id} ORDER BY voter`,
    )
    expect(votes.map((v) => [v.voter, Number(v.score)])).toEqual([
      ['user:carol', 1],
      ['user:dave', 1],
      ['user:erin', 1],
    ])
  })

  it("gives one principal's repeated harmful cases diminishing weight: a public entry stays visible; distinct principals still demote it", async () => {
    const entry = await save(admin, ['public'])
    for (let i = 0; i < 10; i++) await knowledge.feedback(entry.id, { add_harmful_case: { task: `spam ${i}` } }, carol)
    const after = await knowledge.get(entry.id, alice)
    expect(after.eval.harmful).toBe(10)
    expect(after.eval.harmful_history).toHaveLength(10)
    expect(await found(entry.id, alice)).toBe(true)
    const explained = await knowledge.search({ q: 'zephyr deploy rollback', explain: true }, alice)
    // 3 − 2 × (1 + 1/4 + … + 1/4⁹): seed 003's formula on the weighted harmful figure.
    expect(explained.results[0]?.quality_score).toBeCloseTo(3 - 2 * ((1 - 0.25 ** 10) / 0.75), 9)
    await knowledge.feedback(entry.id, { add_harmful_case: { task: 'broke' } }, dave)
    expect(await found(entry.id, alice)).toBe(false)
  })

  it('records who gave each case', async () => {
    const entry = await save(alice, ['org:acme'])
    await knowledge.feedback(entry.id, { add_helpful_case: { task: 'a' } }, dave)
    await knowledge.feedback(entry.id, { add_harmful_case: { task: 'b' } }, carol)
    await knowledge.batchFeedback({ feedback_list: [{ knowledge_id: entry.id, is_helpful: true, case: { task: 'c' } }] }, erin)
    const rows = await store.db.query<{ kind: string; giver: string }>(
      sql`SELECT kind, giver FROM knowledge_feedback WHERE knowledge_id = ${entry.id} ORDER BY seq`,
    )
    expect(rows.map((r) => [r.kind, r.giver])).toEqual([
      ['helpful', 'user:dave'],
      ['harmful', 'user:carol'],
      ['helpful', 'user:erin'],
    ])
  })

  it('loses no case, weight or vote under concurrency', async () => {
    const entry = await save(alice, ['org:acme'])
    const voters = Array.from({ length: 30 }, (_, i) => Principal.parse({ user: `voter${i}`, org: 'acme', permissions: ['read', 'write'] }))
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => knowledge.feedback(entry.id, { add_harmful_case: { task: `h${i}` } }, carol)),
      ...voters.map((v, i) => knowledge.feedback(entry.id, { update_score: i < 16 ? 5 : 4, add_helpful_case: { task: `v${i}` } }, v)),
    ])
    const after = await knowledge.get(entry.id, alice)
    expect(after.eval).toMatchObject({ harmful: 20, helpful: 30 })
    const [row] = await store.db.query<{ w: number; votes: number }>(
      sql`SELECT harmful_weight AS w, (SELECT count(*)::int FROM knowledge_score_vote WHERE knowledge_id = ${entry.id}) AS votes FROM knowledge WHERE id = ${entry.id}`,
    )
    expect(Number(row!.w)).toBeCloseTo((1 - 0.25 ** 20) / 0.75, 12)
    expect(Number(row!.votes)).toBe(30)
    // Median 5 (16 of 30 voted 5): (3 + 5) / 2 = 4.
    expect(after.eval.score).toBe(4)
  })
})
