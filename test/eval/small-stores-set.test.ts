/**
 * KnowHub's precision set (bench/data/small-stores): well-formed, large enough, both languages,
 * every judgement names a query and an entry of the same store, and the no-answer queries (judged
 * completely, with no related entry) are there.
 */
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { convOf, loadRetrievalSet } from '../../src/eval/dataset.js'

const SMALL_STORES = resolve(import.meta.dirname, '..', '..', 'bench', 'data', 'small-stores')

describe('the small-stores retrieval set', async () => {
  const set = await loadRetrievalSet(SMALL_STORES)
  const docs = new Map(set.docs.map((d) => [d.id, d]))
  const meta = (q: (typeof set.queries)[number]) => q.meta as { lang?: string; kind?: string; judged?: string }

  it('loads without a warning', () => {
    expect(set.warnings).toEqual([])
  })

  it('has at least 30 stores of 8 to 40 entries, each with queries', () => {
    const sizes = new Map<string, number>()
    for (const d of set.docs) sizes.set(convOf(d), (sizes.get(convOf(d)) ?? 0) + 1)
    expect(sizes.size).toBeGreaterThanOrEqual(30)
    for (const [store, size] of sizes) {
      expect(size, store).toBeGreaterThanOrEqual(8)
      expect(size, store).toBeLessThanOrEqual(40)
      expect(set.queries.filter((q) => convOf(q) === store).length, store).toBeGreaterThanOrEqual(8)
    }
    for (const q of set.queries) expect(sizes.has(convOf(q)), q.id).toBe(true)
  })

  it('has at least 300 queries, all judged completely, in English and Chinese', () => {
    expect(set.queries.length).toBeGreaterThanOrEqual(300)
    const byLang = { en: 0, zh: 0 } as Record<string, number>
    for (const q of set.queries) {
      expect(meta(q).judged, q.id).toBe('complete')
      expect(['en', 'zh'], q.id).toContain(meta(q).lang)
      byLang[meta(q).lang!]!++
      if (meta(q).lang === 'zh') expect(/[\u4e00-\u9fff]/u.test(q.text), q.id).toBe(true)
    }
    // roughly half each
    expect(byLang.en).toBeGreaterThanOrEqual(set.queries.length * 0.4)
    expect(byLang.zh).toBeGreaterThanOrEqual(set.queries.length * 0.4)
  })

  it('judges only entries that exist in the query’s own store', () => {
    let judgements = 0
    for (const [queryId, judged] of set.qrels) {
      const query = set.queries.find((q) => q.id === queryId)!
      for (const [docId, grade] of judged) {
        const doc = docs.get(docId)
        expect(doc, `${queryId} → ${docId}`).toBeDefined()
        expect(convOf(doc!), `${queryId} → ${docId}`).toBe(convOf(query))
        expect(grade).toBeGreaterThan(0)
        judgements++
      }
    }
    expect(judgements).toBeGreaterThanOrEqual(set.queries.length - 60)
  })

  it('has no-answer queries in both languages, and every other query has a related entry', () => {
    const kinds = new Map<string, number>()
    for (const q of set.queries) {
      const kind = meta(q).kind!
      kinds.set(`${meta(q).lang}:${kind}`, (kinds.get(`${meta(q).lang}:${kind}`) ?? 0) + 1)
      expect(['direct', 'para', 'none', 'task'], q.id).toContain(kind)
      expect(set.qrels.has(q.id), q.id).toBe(kind !== 'none')
    }
    for (const lang of ['en', 'zh'])
      for (const kind of ['direct', 'para', 'none', 'task']) expect(kinds.get(`${lang}:${kind}`) ?? 0, `${lang}:${kind}`).toBeGreaterThanOrEqual(25)
  })

  it('holds the 10-entry store of issue #26 with its 13 queries, 10 of them answerable', () => {
    const store = 'mix-newuser'
    expect(set.docs.filter((d) => convOf(d) === store)).toHaveLength(10)
    const queries = set.queries.filter((q) => convOf(q) === store && meta(q).kind !== 'task')
    expect(queries).toHaveLength(13)
    expect(queries.filter((q) => set.qrels.has(q.id))).toHaveLength(10)
    const postgres = queries.find((q) => q.text === 'postgres import is slow')!
    expect([...set.qrels.get(postgres.id)!.keys()].map((id) => docs.get(id)!.meta.task)).toEqual(['Speed up PostgreSQL bulk loads'])
  })

  it('gives every entry a task, types and tags, and no two entries the same task within a store', () => {
    const seen = new Set<string>()
    for (const d of set.docs) {
      expect(d.meta.task, d.id).toBeTruthy()
      expect(d.meta.types?.length, d.id).toBeGreaterThan(0)
      expect(Object.keys(d.meta.tags ?? {}).length, d.id).toBeGreaterThan(0)
      const key = `${convOf(d)}:${d.meta.task}`
      expect(seen.has(key), key).toBe(false)
      seen.add(key)
    }
  })
})
