/**
 * The embedded store's in-memory vector search (the exact cosine scan beside the BM25
 * index): the pure columns and filters, and its equality with an exact vector search in
 * SQL on a real PGlite database after every write path — save, edit, feedback, archive,
 * delete, import, merge, reindex, raw SQL and TRUNCATE — and that another tenant's entries
 * neither appear nor move a score.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { filterSql } from '../../src/store/knowledge/rows.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { createTextIndex, type IndexedEntry } from '../../src/store/text-index/text-index.js'
import { DEFAULT_TEXT_RANKING, type EntryFilter, type RankedId } from '../../src/store/text-index/query.js'
import { syncedTextIndex } from '../../src/store/text-index/sync.js'
import { vectorDialect } from '../../src/store/knowledge/vectors.js'
import { openTestStore } from '../helpers/stores.js'
import { driveWritePaths } from '../helpers/write-paths.js'

const entry = (id: string, embedding: number[] | null, more: Partial<IndexedEntry> = {}): IndexedEntry => ({
  id,
  scopes: ['user:u'],
  types: ['tool'],
  status: 'active',
  score: 3,
  helpful: 0,
  harmful: 0,
  tf: { word: 1 },
  length: 1,
  embedding,
  ...more,
})

describe('the in-memory index: vector search', () => {
  const visible: EntryFilter = { visible: ['user:u', 'public'] }
  const ids = (hits: RankedId[]) => hits.map((h) => h.id)
  const q = Float32Array.from([1, 0, 0])

  it('ranks by cosine similarity (ties by id), as pgvector computes it, and skips entries without a vector', () => {
    const index = createTextIndex()
    index.upsert(entry('far', [0, 1, 0]))
    index.upsert(entry('b', [2, 1, 0]))
    index.upsert(entry('a', [4, 2, 0]))
    index.upsert(entry('same', [3, 0, 0]))
    index.upsert(entry('none', null))
    index.upsert(entry('zero', [0, 0, 0]))
    index.upsert(entry('opposite', [-1, 0, 0]))
    const hits = index.searchVector(q, visible, 10)
    expect(ids(hits)).toEqual(['same', 'a', 'b', 'far', 'opposite'])
    expect(hits[0]!.score).toBe(1)
    expect(hits[1]!.score).toBeCloseTo(2 / Math.sqrt(5), 6)
    expect(hits[4]!.score).toBe(-1)
    expect(ids(index.searchVector(q, visible, 2))).toEqual(['same', 'a'])
    // Nothing is similar to the zero vector; a vector of another dimension finds nothing.
    expect(index.searchVector(Float32Array.from([0, 0, 0]), visible, 10)).toEqual([])
    expect(index.searchVector(Float32Array.from([1, 0]), visible, 10)).toEqual([])
  })

  it('applies the store filter: visibility, status, types, scopes, min score, negative quality', () => {
    const index = createTextIndex()
    index.upsert(entry('mine', [1, 0, 0]))
    index.upsert(entry('theirs', [1, 0, 0], { scopes: ['user:other'] }))
    index.upsert(entry('public', [1, 0, 0], { scopes: ['public'], types: ['strategy'] }))
    index.upsert(entry('archived', [1, 0, 0], { status: 'archived' }))
    index.upsert(entry('low', [1, 0, 0], { score: 1 }))
    index.upsert(entry('harmful', [1, 0, 0], { harmful: 2 }))
    index.upsert(entry('team', [1, 0, 0], { scopes: ['team:t', 'user:u'] }))
    const search = (filter: Partial<EntryFilter>) => ids(index.searchVector(q, { ...visible, ...filter }, 10)).sort()
    expect(search({})).toEqual(['harmful', 'low', 'mine', 'public', 'team'])
    expect(search({ status: ['archived'] })).toEqual(['archived'])
    expect(search({ types: ['strategy'] })).toEqual(['public'])
    expect(search({ scopes: ['team:t'] })).toEqual(['team'])
    expect(search({ minScore: 3 })).toEqual(['harmful', 'mine', 'public', 'team'])
    expect(search({ nonNegativeQuality: true })).toEqual(['low', 'mine', 'public', 'team'])
    expect(search({ visible: ['user:nobody'] })).toEqual([])
  })

  it('follows replaced and removed vectors, grows, reuses slots, and takes a new dimension', () => {
    const index = createTextIndex()
    for (let i = 0; i < 3000; i++) index.upsert(entry(`e${String(i).padStart(4, '0')}`, [1, 1 + (i % 7), 0]))
    for (let i = 0; i < 3000; i += 2) index.remove(`e${String(i).padStart(4, '0')}`)
    expect(index.searchVector(q, visible, 5000)).toHaveLength(1500)
    index.upsert(entry('e0001', [0, 0, 1]))
    expect(index.searchVector(q, visible, 5000).find((h) => h.id === 'e0001')!.score).toBe(0)
    // Same text, vector dropped: the entry leaves the vector list.
    index.upsert(entry('e0001', null))
    expect(index.searchVector(q, visible, 5000).some((h) => h.id === 'e0001')).toBe(false)
    index.upsert(entry('fresh', [1, 0, 0]))
    expect(index.searchVector(q, visible, 1)).toEqual([{ id: 'fresh', score: 1 }])
    index.upsert(entry('wide', [1, 0, 0, 0]))
    expect(index.searchVector(Float32Array.from([1, 0, 0, 0]), visible, 10)).toEqual([{ id: 'wide', score: 1 }])
    expect(index.searchVector(q, visible, 10)).toEqual([])
  })
})

describe('in-memory vector search equals exact vector search in SQL on PGlite, whatever path writes', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const embedder = createHashedEmbedder({ dimension: 64 })
  const alice = Principal.parse({ user: 'alice', project: 'p', org: 'acme', permissions: ['read', 'write'] })
  const bob = Principal.parse({ user: 'bob', project: 'q', org: 'other', permissions: ['read', 'write'] })
  const admin = Principal.parse({ user: 'root', project: 'p', org: 'acme', permissions: ['admin'] })
  const queries = ['selenium login captcha', 'proxy rotation', 'agent notes proxy', 'deploy docker pnpm', 'login']
  const filters: EntryFilter[] = [
    { visible: visibleScopes(alice) },
    { visible: visibleScopes(alice), types: ['tool'] },
    { visible: visibleScopes(alice), minScore: 3, nonNegativeQuality: true },
    { visible: visibleScopes(alice), scopes: ['project:p'] },
    { visible: visibleScopes(alice), status: ['active', 'merged', 'archived'] },
    { visible: visibleScopes(bob) },
  ]

  /** Exact cosine search in SQL (the HNSW index off), every match, best first, ties by id. */
  async function exactSql(vector: Float32Array, filter: EntryFilter): Promise<RankedId[]> {
    const info = store.vectorState()
    if (info?.status !== 'ready') throw new Error('no vectors')
    const dialect = vectorDialect(info.info.backend)
    const distance = dialect.distance(sql.raw('k.embedding'), dialect.param(vector))
    return store.db.transaction(async (tx) => {
      await tx.query(sql`SET LOCAL enable_indexscan = off`)
      const rows = await tx.query<{ id: string; distance: number }>(sql`SELECT k.id, ${distance} AS distance FROM knowledge k
        WHERE k.embedding IS NOT NULL AND ${filterSql(filter)} ORDER BY distance, k.id`)
      return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }))
    })
  }

  // pgvector sums in single precision, the scan in double: scores agree to about 1e-7.
  const normalise = (hits: RankedId[]) =>
    hits.map((h) => ({ id: h.id, score: Math.round(h.score * 1e5) / 1e5 })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
  async function expectSameAsSql(step: string): Promise<void> {
    for (const text of queries) {
      const [vector] = await embedder.embed([text], { kind: 'document' })
      for (const filter of filters) {
        const memory = await store.knowledge.searchVector(vector!, filter, 1000)
        const reference = await exactSql(vector!, filter)
        expect(normalise(memory), `${step}: "${text}" ${JSON.stringify(filter)}`).toEqual(normalise(reference))
        for (let i = 0; i < memory.length; i++)
          expect(Math.abs(memory[i]!.score - (reference.find((r) => r.id === memory[i]!.id)?.score ?? NaN))).toBeLessThan(1e-5)
      }
    }
  }

  beforeAll(async () => {
    const opened = await openTestStore('pglite')
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder })
  })
  afterAll(async () => cleanup())

  it('after saves, edits, feedback, archive, delete, import, merge, unmerge and reindex through the service', async () => {
    await driveWritePaths({ store, embedder, knowledge, author: alice, admin }, expectSameAsSql, { reindex: true })
  })

  it('after raw SQL writes that bypass the store, and after TRUNCATE', async () => {
    const [other] = await embedder.embed(['proxy rotation agent'], { kind: 'document' })
    const state = store.vectorState()
    const dialect = vectorDialect(state?.status === 'ready' ? state.info.backend : 'array')
    await store.db.query(sql`UPDATE knowledge SET embedding = ${dialect.param(other!)} WHERE id IN (SELECT id FROM knowledge ORDER BY id LIMIT 4)`)
    await store.db.query(sql`UPDATE knowledge SET embedding = NULL WHERE id IN (SELECT id FROM knowledge ORDER BY id DESC LIMIT 2)`)
    await store.db.query(sql`UPDATE knowledge SET scopes = ARRAY['user:bob'] WHERE id IN (SELECT id FROM knowledge ORDER BY id LIMIT 3 OFFSET 5)`)
    await store.db.query(sql`DELETE FROM knowledge WHERE id IN (SELECT id FROM knowledge ORDER BY id DESC LIMIT 2 OFFSET 4)`)
    await expectSameAsSql('raw updates and deletes')
    await store.db.query(sql`TRUNCATE knowledge CASCADE`)
    const [vector] = await embedder.embed(['selenium'], { kind: 'document' })
    expect(await store.knowledge.searchVector(vector!, filters[0]!, 20)).toEqual([])
    await knowledge.save({ task: 'selenium login', content: 'use a proxy rotation', types: ['tool'] }, alice)
    await expectSameAsSql('truncate, then a save')
  })

  it('runs no SQL to sync an unchanged table (the change log notifies), and sees the next write by any path', async () => {
    await knowledge.save({ task: 'selenium proxy login', content: 'notify the index', types: ['tool'] }, alice)
    let queries = 0
    const counted = { ...store.db, query: ((query) => (queries++, store.db.query(query))) as Store['db']['query'] }
    const synced = syncedTextIndex(counted)
    await synced.sync()
    const afterBuild = queries
    for (let i = 0; i < 5; i++) await synced.sync()
    await Promise.all([synced.sync(), synced.sync()])
    expect(queries).toBe(afterBuild)
    const [row] = await store.db.query<{ id: string }>(sql`SELECT id FROM knowledge WHERE task = 'selenium proxy login' ORDER BY id LIMIT 1`)
    await store.db.query(sql`UPDATE knowledge SET scopes = ARRAY['user:carol'] WHERE id = ${row!.id}`)
    await synced.sync()
    expect(queries).toBeGreaterThan(afterBuild)
    expect(synced.index.search(['selenium', 'proxy', 'login'], { visible: ['user:carol'] }, 10, DEFAULT_TEXT_RANKING).map((h) => h.id)).toEqual([row!.id])
    const settled = queries
    await synced.sync()
    expect(queries).toBe(settled)
  })

  it("never shows another tenant's entries, and they move no score", async () => {
    for (let i = 0; i < 5; i++) await knowledge.save({ task: `alice ${i} proxy`, content: `proxy rotation notes ${i}`, types: ['tool'] }, alice)
    const [vector] = await embedder.embed(['proxy rotation notes'], { kind: 'document' })
    const filter = { visible: visibleScopes(alice) }
    const before = await store.knowledge.searchVector(vector!, filter, 50)
    const serviceBefore = await knowledge.search({ q: 'proxy rotation notes', top_k: 10, explain: true }, alice)
    // Bob's entries are the closest matches there are: exactly the query's text.
    const bobs: string[] = []
    for (let i = 0; i < 20; i++) bobs.push((await knowledge.save({ task: 'proxy rotation notes', content: 'proxy rotation notes', types: ['tool'] }, bob)).id)
    expect((await store.knowledge.searchVector(vector!, { visible: visibleScopes(bob) }, 5)).map((h) => h.id).every((id) => bobs.includes(id))).toBe(true)
    expect(await store.knowledge.searchVector(vector!, filter, 50)).toEqual(before)
    const serviceAfter = await knowledge.search({ q: 'proxy rotation notes', top_k: 10, explain: true }, alice)
    expect(serviceAfter.results.map((r) => [r.id, r.explain?.vector_similarity])).toEqual(
      serviceBefore.results.map((r) => [r.id, r.explain?.vector_similarity]),
    )
    expect(serviceAfter.results.some((r) => bobs.includes(r.id))).toBe(false)
  })
})
