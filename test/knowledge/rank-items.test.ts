/**
 * The search's shortlisted items have one hidden class whatever the record and candidate hold
 * (issue 32, docs/performance.md "One hidden class a shortlisted item"): on Node 20 a spread
 * followed by new properties (`{ ...record, fused }`) gave every item a class of its own, and
 * the rerank and the results then read them megamorphically (turns-dev: +0.1-0.2 ms CPU a
 * search). Checked with V8's own test hook on real records read back from the store.
 */
import { setFlagsFromString } from 'node:v8'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { qualityScore } from '../../src/core/knowledge.js'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { qualityBoost, relevanceRerank } from '../../src/knowledge/search/relevance.js'
import { rankItem } from '../../src/knowledge/search/search.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { KnowledgeRecord } from '../../src/store/knowledge/rows.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'

setFlagsFromString('--allow-natives-syntax')
const sameClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

const alice = Principal.parse({ user: 'alice', project: 'p1', org: 'acme' })

describe('the hidden-class check itself', () => {
  it('tells one class from another', () => {
    expect(sameClass({ a: 1, b: 'x' }, { a: 2, b: 'y' })).toBe(true)
    expect(sameClass({ a: 1 }, { b: 1 })).toBe(false)
  })
})

describe.each(BACKENDS)('shortlisted items on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let records: KnowledgeRecord[]

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
    // Records that differ in every way a record can: whole and fractional figures, dates set or
    // null, tags, resources, feedback, a project scope.
    const saved = [
      await knowledge.save({ task: 'Log in to site A', content: 'Use the test account.', types: ['tool'] }, alice),
      await knowledge.save(
        {
          task: 'Rotate the API key',
          content: 'Every 90 days.',
          types: ['strategy', 'plan'],
          tags: { domain: 'security', level: 2, urgent: true, list: ['a', 'b'] },
          score: 5,
          confidence: 0.85,
          scopes: ['project:p1'],
          resource_ids: ['vault-key'],
          expires_at: '2099-01-01T00:00:00Z',
          valid_from: '2024-03-01T00:00:00Z',
        },
        alice,
      ),
      await knowledge.save({ task: 'Bust a CDN cache', content: 'Purge by tag.', types: ['usecase'], score: 1, confidence: 1 }, alice),
    ]
    await knowledge.feedback(saved[0]!.id, { add_helpful_case: { task: 'login', outcome: 'ok' } }, alice)
    await knowledge.feedback(saved[2]!.id, { add_harmful_case: { task: 'cdn', outcome: 'failed', reason: 'stale' } }, alice)
    records = await store.knowledge.getMany(
      saved.map((e) => e.id),
      visibleScopes(alice),
    )
    expect(records).toHaveLength(3)
  }, 120_000)
  afterAll(async () => cleanup())

  it('gives every item one hidden class, before and after the rerank, whatever figures its candidate has', () => {
    const [a, b, c] = records as [KnowledgeRecord, KnowledgeRecord, KnowledgeRecord]
    // A field that held a whole number and then a fraction, or null, generalises the class once (V8
    // moves the older objects over lazily), and V8's first copies of a spread take a slower path of their own:
    // a few rounds settle both, the next is checked.
    const build = () => [
      rankItem(a, { id: a.id, fused: 1, positions: [{ rank: 1, score: 3.5 }, null], strength: 0.8, evidence: 'words' }),
      rankItem(b, {
        id: b.id,
        fused: 0.5,
        positions: [null, { rank: 2, score: 0.61 }],
        strength: null,
        evidence: 'follows',
        background: 0.12,
        relevance_probability: 0.7,
        answer_probability: 0.4,
        time_boost: 0.05,
      }),
      rankItem(c, { id: c.id, fused: 0.25, positions: [null, null], strength: null, neighbour_of: a.id, neighbour_lift: 0.1 }),
    ]
    for (let round = 0; round < 10; round++) relevanceRerank(build(), visibleScopes(alice), 0)
    const items = build()
    for (const item of items) expect(sameClass(item, items[0]!)).toBe(true)
    const reranked = relevanceRerank(items, visibleScopes(alice), 0)
    // In place: the same objects, with the rerank's figures; the harmful entry's negative quality drops it.
    expect(reranked.map((r) => r.id)).toEqual([a.id, b.id])
    expect(reranked[0]).toBe(items[0])
    expect(reranked[0]).toMatchObject({ quality_score: qualityScore(a), relevance: 1, quality_boost: qualityBoost(qualityScore(a)) })
    expect(reranked[1]).toMatchObject({ quality_score: qualityScore(b), relevance: 0.5 })
    for (const item of reranked) expect(Number.isInteger(item.scope_priority)).toBe(true)
    for (const item of reranked) expect(sameClass(item, items[0]!)).toBe(true)
    // Every figure of the record and the candidate is kept.
    expect(items[1]).toMatchObject({ ...b, fused: 0.5, strength: null, evidence: 'follows', background: 0.12, time_boost: 0.05 })
  })
})
