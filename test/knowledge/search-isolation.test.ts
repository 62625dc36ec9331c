/**
 * Issue 15.1: nothing a caller sees — scores in `explain` included — depends on entries it
 * cannot see. BM25's statistics are summed over the caller's visible scopes, so another
 * tenant's private writes (and deletes) leave every figure of bob's searches unchanged, on
 * every backend and on both full-text paths (the embedded in-memory index and SQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, type Backend } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })
const bob = Principal.parse({ user: 'bob', org: 'beta', permissions: ['read', 'write'] })

const paths: Array<[Backend, 'memory' | 'sql']> = BACKENDS.flatMap((backend): Array<[Backend, 'memory' | 'sql']> =>
  backend === 'pglite'
    ? [
        [backend, 'memory'],
        [backend, 'sql'],
      ]
    : [[backend, 'sql']],
)

describe.each(paths)('search scores on %s (full-text in %s) ignore what the caller cannot see', (backend, fulltext) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const queries = ['zephyrine crawler quota', 'rotate proxies for the crawler', 'zephyrine']
  const snapshot = async (principal: Principal) => Promise.all(queries.map((q) => knowledge.search({ q, top_k: 10, explain: true, min_score: 1 }, principal)))

  beforeAll(async () => {
    const opened = await openTestStore(backend, { fulltext })
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 128 }), searchCacheSize: 0 })
    const own = [
      ['Crawler quota', 'The zephyrine crawler stops at a daily quota of 500 pages'],
      ['Proxy rotation', 'Rotate proxies for the crawler every 50 requests'],
      ['Deploy notes', 'Deploy the crawler with docker compose on the staging host'],
    ]
    for (const [task, content] of own) await knowledge.save({ task, content, types: ['tool'], scopes: ['user:bob'] }, bob)
    await knowledge.save({ task: 'Team crawler', content: 'The beta crawler shares one zephyrine proxy pool', types: ['tool'], scopes: ['org:beta'] }, bob)
  })
  afterAll(async () => cleanup())

  it('gives bob the same results and explain figures before and after alice writes and deletes private entries', async () => {
    const before = await snapshot(bob)
    expect(before[0]!.results.length).toBeGreaterThan(0)
    expect(before[0]!.results[0]!.explain?.fulltext_score).toBeGreaterThan(0)
    const saved: string[] = []
    for (let i = 0; i < 15; i++) {
      const entry = await knowledge.save(
        {
          task: `Zephyrine note ${i}`,
          content: `zephyrine crawler quota proxies ${'padding '.repeat(i)}`,
          types: ['tool'],
          scopes: [i % 2 ? 'user:alice' : 'org:acme'],
        },
        alice,
      )
      saved.push(entry.id)
    }
    // Alice's own searches do see her writes: the statistics are hers plus public.
    const hers = await knowledge.search({ q: 'zephyrine', top_k: 20, explain: true, min_score: 1 }, alice)
    expect(hers.results).toHaveLength(15)
    expect(await snapshot(bob)).toEqual(before)
    for (const id of saved.slice(0, 7)) await knowledge.delete(id, alice)
    await knowledge.edit(saved[8]!, { content: 'zephyrine zephyrine zephyrine' }, alice)
    expect(await snapshot(bob)).toEqual(before)
  })

  it("does move bob's scores when an entry he can see changes (the statistics are live)", async () => {
    const before = await snapshot(bob)
    const extra = await knowledge.save({ task: 'Zephyrine again', content: 'zephyrine zephyrine proxy', types: ['tool'], scopes: ['user:bob'] }, bob)
    const after = await snapshot(bob)
    expect(after[2]!.results.map((r) => r.id)).toContain(extra.id)
    const score = (r: typeof before, id: string) => r[2]!.results.find((x) => x.id === id)?.explain?.fulltext_score
    const shared = before[2]!.results[0]!.id
    expect(score(after, shared)).not.toBe(score(before, shared))
  })
})
