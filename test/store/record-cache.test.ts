/**
 * The embedded store's record cache (issue 18): a search's shortlist, `get` and `getMany` read
 * records from memory, and every write path — edit, feedback, confidence, archive, delete, raw
 * SQL, TRUNCATE — shows at once; nobody reads a record they may not see; a row fetched before a
 * change is never kept after the sync that saw it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { writeAccess } from '../../src/auth/policy.js'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { KnowledgeRecord } from '../../src/store/knowledge/knowledge.js'
import { RecordCache } from '../../src/store/knowledge/record-cache.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { openTestStore, truncateKnowledge } from '../helpers/stores.js'

const record = (id: string, content: string): KnowledgeRecord =>
  ({ id, content, scopes: ['user:u'], types: ['tool'], tags: {}, resource_ids: [], source: { urls: [] } }) as unknown as KnowledgeRecord

describe('RecordCache', () => {
  it('keeps rows fetched after a mark unless something was dropped since, and drops by id or all', () => {
    const cache = new RecordCache(2)
    let mark = cache.mark()
    cache.put(mark, [record('a', 'one')])
    expect(cache.get('a')?.content).toBe('one')
    // A row fetched before a change, put after the sync that dropped the change: not kept.
    mark = cache.mark()
    cache.drop(['a'])
    cache.put(mark, [record('a', 'stale')])
    expect(cache.get('a')).toBeUndefined()
    mark = cache.mark()
    cache.put(mark, [record('a', 'two'), record('b', 'x'), record('c', 'y')])
    // Bounded: the least recently used went first.
    expect([cache.get('a'), cache.get('b')?.content, cache.get('c')?.content]).toEqual([undefined, 'x', 'y'])
    cache.drop()
    expect(cache.size).toBe(0)
  })
})

describe('the embedded store reads records through the cache', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const alice = Principal.parse({ user: 'alice', org: 'acme' })
  const bob = Principal.parse({ user: 'bob' })

  beforeAll(async () => {
    const opened = await openTestStore('pglite')
    store = opened.store
    cleanup = opened.cleanup
    // No response cache: every search reads its shortlist's records.
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), searchCacheSize: 0 })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => truncateKnowledge(store))

  const search = async (principal = alice) => (await knowledge.search({ q: 'selenium login proxy', top_k: 5, min_score: 0 }, principal)).results

  it('shows edits, feedback counts, confidence, archive and delete at once', async () => {
    const a = await knowledge.save({ task: 'selenium login', content: 'use a proxy', types: ['tool'] }, alice)
    const b = await knowledge.save({ task: 'selenium login proxy', content: 'rotate the proxy', types: ['tool'] }, alice)
    expect((await search()).map((r) => r.id).sort()).toEqual([a.id, b.id].sort())
    // Now held in the cache: every change below must show in the next read.
    await knowledge.edit(a.id, { content: 'use a residential proxy' }, alice)
    expect((await search()).find((r) => r.id === a.id)?.content).toBe('use a residential proxy')
    expect((await store.knowledge.get(a.id, visibleScopes(alice)))?.content).toBe('use a residential proxy')
    await knowledge.feedback(b.id, { add_helpful_case: { task: 't', outcome: 'ok' } }, alice)
    await knowledge.feedback(b.id, { add_harmful_case: { task: 't', outcome: 'bad' } }, alice)
    const fed = (await search()).find((r) => r.id === b.id)!
    expect([fed.eval.helpful, fed.eval.harmful]).toEqual([1, 1])
    await knowledge.feedback(b.id, { update_score: 5 }, alice)
    expect((await search()).find((r) => r.id === b.id)?.eval.score).toBe(5)
    await store.knowledge.moveConfidence(b.id, writeAccess(alice), 1, 0.5, new Date())
    expect((await store.knowledge.getMany([b.id], visibleScopes(alice)))[0]?.confidence).toBeGreaterThan(0.5)
    await knowledge.archive(a.id, alice)
    expect((await search()).map((r) => r.id)).toEqual([b.id])
    expect((await store.knowledge.get(a.id, visibleScopes(alice)))?.status).toBe('archived')
    await knowledge.delete(b.id, alice)
    expect(await search()).toEqual([])
    expect(await store.knowledge.get(b.id, visibleScopes(alice))).toBeUndefined()
  })

  it('shows raw SQL writes and a TRUNCATE, and a changed scope hides the entry', async () => {
    const a = await knowledge.save({ task: 'selenium login', content: 'use a proxy', types: ['tool'] }, alice)
    expect((await search()).map((r) => r.content)).toEqual(['use a proxy'])
    await store.db.query(sql`UPDATE knowledge SET content = 'changed behind the store', helpful = 7 WHERE id = ${a.id}`)
    const [changed] = await search()
    expect([changed?.content, changed?.eval.helpful]).toEqual(['changed behind the store', 7])
    await store.db.query(sql`UPDATE knowledge SET scopes = ARRAY['user:bob'] WHERE id = ${a.id}`)
    expect(await search()).toEqual([])
    expect(await store.knowledge.get(a.id, visibleScopes(alice))).toBeUndefined()
    expect((await search(bob)).map((r) => r.id)).toEqual([a.id])
    await store.db.query(sql`TRUNCATE knowledge CASCADE`)
    expect(await search(bob)).toEqual([])
    expect(await store.knowledge.getMany([a.id], visibleScopes(bob))).toEqual([])
  })

  it('never returns a held record to a caller who may not see it, and hands out copies', async () => {
    const mine = await knowledge.save({ task: 'selenium login', content: 'alice only', types: ['tool'] }, alice)
    const shared = await knowledge.save({ task: 'selenium login proxy', content: 'for acme', types: ['tool'], scopes: ['org:acme'] }, alice)
    // Both held now, read by their owner.
    await store.knowledge.getMany([mine.id, shared.id], visibleScopes(alice))
    expect(await store.knowledge.get(mine.id, visibleScopes(bob))).toBeUndefined()
    expect(await store.knowledge.getMany([mine.id, shared.id], visibleScopes(bob))).toEqual([])
    expect(await search(bob)).toEqual([])
    expect((await store.knowledge.getMany([shared.id], ['org:acme'])).map((r) => r.id)).toEqual([shared.id])
    const first = (await store.knowledge.get(mine.id, visibleScopes(alice)))!
    first.content = 'mutated by a caller'
    first.scopes.push('public')
    const again = (await store.knowledge.get(mine.id, visibleScopes(alice)))!
    expect([again.content, again.scopes]).toEqual(['alice only', mine.scopes])
  })
})
