/**
 * MaxScore pruning of the in-memory full-text index (`text-index/score.ts`) against the
 * exhaustive scan: on random corpora (fixed seeds) with Zipf-distributed words, scope
 * filters, deletions, replacements and exact ties, every query must return the same hits with
 * the same scores in the same order (ties by id) as scoring every posting, while reading fewer
 * postings.
 */
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../src/core/random.js'
import { createTextIndex, type IndexedEntry, type TextIndex } from '../../src/store/text-index/text-index.js'
import { kthLargest } from '../../src/store/text-index/score.js'
import { DEFAULT_TEXT_RANKING, type EntryFilter } from '../../src/store/text-index/query.js'

const SCOPES = ['user:u', 'user:v', 'project:p', 'team:t', 'org:o', 'public']
const TYPES = ['tool', 'strategy', 'plan', 'usecase']

/** A random world: a vocabulary, and entries whose words follow Zipf's law (a few very common ones). */
function world(seed: number, vocabularySize: number) {
  const random = seededRandom(seed)
  const words = Array.from({ length: vocabularySize }, (_, i) => `w${i}`)
  const cumulative: number[] = []
  let total = 0
  for (let i = 0; i < words.length; i++) cumulative.push((total += 1 / (i + 1)))
  const word = () => {
    const r = random() * total
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < r) lo = mid + 1
      else hi = mid
    }
    return words[lo]!
  }
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!
  const texts: Array<Record<string, number>> = []
  const entry = (id: string): IndexedEntry => {
    // One entry in eight repeats an earlier text: equal scores, ordered by id.
    let tf: Record<string, number>
    if (texts.length > 0 && random() < 0.125) tf = pick(texts)
    else {
      tf = {}
      for (let n = 3 + Math.floor(random() * 25); n > 0; n--) {
        const w = word()
        // Weighted frequencies, as the task and tags weigh more than the content.
        tf[w] = (tf[w] ?? 0) + (random() < 0.2 ? 2.5 : 1)
      }
      texts.push(tf)
    }
    const scopes = random() < 0.2 ? [pick(SCOPES), pick(SCOPES)] : [pick(SCOPES)]
    return {
      id,
      scopes,
      types: random() < 0.1 ? [pick(TYPES), pick(TYPES)] : [pick(TYPES)],
      status: random() < 0.9 ? 'active' : 'archived',
      score: 1 + Math.floor(random() * 5),
      helpful: Math.floor(random() * 3),
      harmful: random() < 0.1 ? 3 : 0,
      tf,
      length: Object.values(tf).reduce((a, b) => a + b, 0),
    }
  }
  const query = (): string[] => {
    const n = 1 + Math.floor(random() * 6)
    const terms = Array.from({ length: n }, () => (random() < 0.3 ? pick(words) : word()))
    if (random() < 0.1) terms.push('absent-term')
    return terms
  }
  const filter = (): EntryFilter => {
    const visible = SCOPES.filter(() => random() < 0.6)
    return {
      visible: visible.length > 0 ? visible : ['public'],
      ...(random() < 0.2 ? { types: [pick(TYPES)] } : {}),
      ...(random() < 0.15 ? { scopes: [pick(SCOPES)] } : {}),
      ...(random() < 0.1 ? { status: ['archived' as const] } : {}),
      ...(random() < 0.2 ? { minScore: 1 + Math.floor(random() * 4) } : {}),
      ...(random() < 0.2 ? { nonNegativeQuality: true } : {}),
    }
  }
  return { random, entry, query, filter, pick }
}

/** Applies the same change to every index. */
const both = (indexes: TextIndex[], change: (index: TextIndex) => void) => indexes.forEach(change)

describe('MaxScore pruning of the in-memory full-text index', () => {
  it('returns the exhaustive scan’s hits, scores and tie order on random corpora, and reads less', () => {
    let queries = 0
    let tiedAtTheCut = 0
    let pruned = 0
    let exhaustive = 0
    for (const seed of [1, 2, 3]) {
      const w = world(seed, 400 * seed)
      const fast = createTextIndex()
      const slow = createTextIndex({ prune: false })
      const indexes = [fast, slow]
      const size = 1500 * seed
      for (let i = 0; i < size; i++) {
        const e = w.entry(`e${String(i).padStart(5, '0')}`)
        both(indexes, (index) => index.upsert(e))
      }
      for (let round = 0; round < 4; round++) {
        // Deletions, replacements with new text, and the same text under other scopes or fields.
        for (let n = 0; n < size / 10; n++) {
          const id = `e${String(Math.floor(w.random() * size)).padStart(5, '0')}`
          const r = w.random()
          if (r < 0.4) both(indexes, (index) => index.remove(id))
          else if (r < 0.7) {
            const e = w.entry(id)
            both(indexes, (index) => index.upsert(e))
          } else {
            const e = w.entry(id)
            both(indexes, (index) => index.upsert(e))
            const moved = { ...e, scopes: [w.pick(SCOPES)], score: 1 + Math.floor(w.random() * 5) }
            both(indexes, (index) => index.upsert(moved))
          }
        }
        for (let q = 0; q < 150; q++) {
          const terms = w.query()
          const filter = w.filter()
          const limit = w.pick([1, 2, 3, 5, 10, 20, 50])
          const beforeFast = fast.work.postings + fast.work.lookups
          const beforeSlow = slow.work.postings
          const got = fast.searchWithBound(terms, filter, limit, DEFAULT_TEXT_RANKING)
          const want = slow.searchWithBound(terms, filter, limit, DEFAULT_TEXT_RANKING)
          pruned += fast.work.postings + fast.work.lookups - beforeFast
          exhaustive += slow.work.postings - beforeSlow
          expect(got, `seed ${seed}, round ${round}, query ${q}: ${terms.join(' ')} ${JSON.stringify(filter)} top ${limit}`).toEqual(want)
          queries++
          // Is the last hit tied with an entry the limit left out? (The tie order is tested then.)
          const more = slow.search(terms, filter, limit + 1, DEFAULT_TEXT_RANKING)
          if (more.length > limit && more[limit]!.score === more[limit - 1]!.score) tiedAtTheCut++
        }
      }
    }
    expect(queries).toBe(1800)
    // The corpora have exact ties at the cut, so the tie order is compared, not assumed.
    expect(tiedAtTheCut).toBeGreaterThan(20)
    // Pruning read less than half what the exhaustive scan read.
    expect(pruned).toBeLessThan(exhaustive * 0.5)
  })

  it('skips a common term’s whole list once the rare terms decide the top k', () => {
    const fast = createTextIndex()
    const slow = createTextIndex({ prune: false })
    for (let i = 0; i < 5000; i++) {
      const tf: Record<string, number> = { common: 1 + (i % 3) }
      if (i % 500 === 0) tf.rare = 1
      if (i % 100 === 0) tf.medium = 1
      const e: IndexedEntry = { id: `e${i}`, scopes: ['user:u'], types: ['tool'], status: 'active', score: 3, helpful: 0, harmful: 0, tf, length: 10 }
      fast.upsert(e)
      slow.upsert(e)
    }
    const filter = { visible: ['user:u'] }
    const got = fast.searchWithBound(['common', 'rare', 'medium'], filter, 5, DEFAULT_TEXT_RANKING)
    expect(got).toEqual(slow.searchWithBound(['common', 'rare', 'medium'], filter, 5, DEFAULT_TEXT_RANKING))
    expect(got.hits.map((h) => h.id)).toEqual(['e2000', 'e3500', 'e500', 'e1000', 'e2500'])
    // rare (10) + medium (50) postings, and the common term looked up in the few candidates left.
    expect(fast.work.postings).toBe(60)
    expect(fast.work.lookups).toBeLessThanOrEqual(60)
    expect(slow.work.postings).toBe(5060)
  })

  it('keeps the tie order (by id) when the cut falls inside a run of equal scores', () => {
    const index = createTextIndex()
    const e = (i: number, tf: Record<string, number>): IndexedEntry => ({
      id: `t${String(i).padStart(4, '0')}`,
      scopes: ['user:u'],
      types: ['tool'],
      status: 'active',
      score: 3,
      helpful: 0,
      harmful: 0,
      tf,
      length: 8,
    })
    for (let i = 0; i < 3000; i++) index.upsert(e(i, i % 30 === 0 ? { rare: 1, common: 1 } : { common: 1 }))
    // Replacing entries reorders the postings (a removal moves the last posting into the hole).
    for (let i = 0; i < 3000; i += 7) index.upsert(e(i, i % 30 === 0 ? { rare: 1, common: 1, other: 1 } : { common: 1, other: 1 }))
    index.upsert(e(0, { rare: 1, common: 1 }))
    const hits = index.search(['rare', 'common'], { visible: ['user:u'] }, 4, DEFAULT_TEXT_RANKING)
    // 100 entries score alike: the four smallest ids.
    expect(hits.map((h) => h.id)).toEqual(['t0000', 't0030', 't0060', 't0090'])
    expect(new Set(hits.map((h) => h.score)).size).toBe(1)
    expect(index.work.lookups).toBeGreaterThan(0)
  })

  it('selects the k-th largest value', () => {
    const random = seededRandom(9)
    for (let n = 1; n < 60; n++) {
      const values = Array.from({ length: n }, () => Math.floor(random() * 8))
      const sorted = [...values].sort((a, b) => b - a)
      for (let k = 1; k <= n; k++) expect(kthLargest(Float64Array.from(values), n, k)).toBe(sorted[k - 1])
    }
  })
})
