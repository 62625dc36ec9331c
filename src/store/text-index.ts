/**
 * An in-memory full-text index of knowledge entries: postings of every term with its
 * weighted frequency, and the fields search filters on (scopes, types, status, score,
 * counters). It answers BM25 exactly — every matching entry is scored — with the same
 * formula, statistics and tie order as the SQL path of `searchText`, in well under a
 * millisecond at 10k entries. Pure data structure, no I/O: `text-sync.ts` keeps it equal
 * to the table.
 */
import { createLru } from '../core/lru.js'
import { planTextQuery, type EntryFilter, type RankedId, type TextRanking } from './text-query.js'

/** What the index keeps of an entry (the columns `text-sync.ts` reads). */
export interface IndexedEntry {
  id: string
  scopes: readonly string[]
  types: readonly string[]
  status: string
  score: number
  helpful: number
  harmful: number
  /** Weighted term frequencies (the stored `search_tf`). */
  tf: Readonly<Record<string, number>>
  /** Length in terms (the stored `search_len`). */
  length: number
}

/** One term's postings: parallel arrays of slots and frequencies, `size` of them in use. */
interface Postings {
  slots: Int32Array
  tfs: Float32Array
  size: number
}

export interface TextIndex {
  /** Adds an entry, or replaces the entry with the same id. */
  upsert(entry: IndexedEntry): void
  /** Removes an entry; unknown ids are ignored. */
  remove(id: string): void
  /** Removes every entry. */
  clear(): void
  /** Number of entries. */
  readonly size: number
  /** BM25 over the entries that pass `filter`, best first (ties by id), at most `limit`. */
  search(terms: readonly string[], filter: EntryFilter, limit: number, ranking: TextRanking): RankedId[]
}

/** How many filters keep their per-entry verdicts between searches (until the index changes). */
const VERDICT_CACHE = 8

/**
 * Creates an empty index.
 * @example
 * const index = createTextIndex()
 * index.upsert({ id, scopes: ['user:u'], types: ['tool'], status: 'active', score: 3, helpful: 0, harmful: 0, tf: { selenium: 2 }, length: 1 })
 * index.search(['selenium'], { visible: ['user:u', 'public'] }, 10, DEFAULT_TEXT_RANKING)
 */
export function createTextIndex(): TextIndex {
  // Small integers for scope, type and status strings: filters compare numbers.
  const symbols = new Map<string, number>()
  const symbol = (name: string): number => {
    let n = symbols.get(name)
    if (n === undefined) symbols.set(name, (n = symbols.size))
    return n
  }
  // One slot per entry, in parallel arrays; freed slots are reused.
  let capacity = 1024
  const ids: Array<string | undefined> = []
  const terms: string[][] = []
  // Each entry's weighted term frequencies, in the order of its terms.
  const termFreqs: Float32Array[] = []
  const scopes: Int32Array[] = []
  const types: Int32Array[] = []
  let status = new Int32Array(capacity)
  let score = new Float64Array(capacity)
  let quality = new Float64Array(capacity)
  let lengths = new Float64Array(capacity)
  const free: number[] = []
  const slotOf = new Map<string, number>()
  const postings = new Map<string, Postings>()
  let totalLength = 0
  // Per-query scratch: scores, reset through the list of touched slots.
  let scores = new Float64Array(capacity)
  let touched = new Int32Array(capacity)
  // Per-filter verdicts (0 not checked yet, 1 passes, 2 fails), valid until the index changes.
  const verdictCache = createLru<string, Uint8Array>(VERDICT_CACHE)

  function grow(): void {
    const next = capacity * 2
    const growF = (a: Float64Array) => {
      const b = new Float64Array(next)
      b.set(a)
      return b
    }
    const statusGrown = new Int32Array(next)
    statusGrown.set(status)
    status = statusGrown
    score = growF(score)
    quality = growF(quality)
    lengths = growF(lengths)
    scores = new Float64Array(next)
    touched = new Int32Array(next)
    capacity = next
  }

  function addPosting(term: string, slot: number, tf: number): void {
    let list = postings.get(term)
    if (!list) postings.set(term, (list = { slots: new Int32Array(4), tfs: new Float32Array(4), size: 0 }))
    if (list.size === list.slots.length) {
      const slotsGrown = new Int32Array(list.size * 2)
      slotsGrown.set(list.slots)
      const tfsGrown = new Float32Array(list.size * 2)
      tfsGrown.set(list.tfs)
      list.slots = slotsGrown
      list.tfs = tfsGrown
    }
    list.slots[list.size] = slot
    list.tfs[list.size] = tf
    list.size++
  }

  function removePosting(term: string, slot: number): void {
    const list = postings.get(term)
    if (!list) return
    const at = list.slots.subarray(0, list.size).indexOf(slot)
    if (at < 0) return
    // Order within a postings list does not matter: move the last one into the hole.
    list.size--
    list.slots[at] = list.slots[list.size]!
    list.tfs[at] = list.tfs[list.size]!
    if (list.size === 0) postings.delete(term)
  }

  function removeSlot(slot: number): void {
    for (const term of terms[slot]!) removePosting(term, slot)
    totalLength -= lengths[slot]!
    slotOf.delete(ids[slot]!)
    ids[slot] = undefined
    terms[slot] = []
    termFreqs[slot] = new Float32Array(0)
    free.push(slot)
  }

  // Entries share few distinct scope and type lists: one array each.
  const lists = new Map<string, Int32Array>()
  function shared(names: readonly string[]): Int32Array {
    const key = names.join('\u0000')
    let list = lists.get(key)
    if (!list) lists.set(key, (list = Int32Array.from(names, symbol)))
    return list
  }

  /** True when `entry` has the terms and frequencies the slot has. */
  function sameText(slot: number, entry: IndexedEntry): boolean {
    const slotTerms = terms[slot]!
    const freqs = termFreqs[slot]!
    if (lengths[slot] !== entry.length || slotTerms.length !== Object.keys(entry.tf).length) return false
    for (let i = 0; i < slotTerms.length; i++) if (entry.tf[slotTerms[i]!] !== freqs[i]) return false
    return true
  }

  function setFields(slot: number, entry: IndexedEntry): void {
    ids[slot] = entry.id
    scopes[slot] = shared(entry.scopes)
    types[slot] = shared(entry.types)
    status[slot] = symbol(entry.status)
    score[slot] = Number(entry.score)
    quality[slot] = Number(entry.score) + Number(entry.helpful) - 2 * Number(entry.harmful)
  }

  const anyIn = (values: Int32Array, set: Set<number>): boolean => {
    for (let i = 0; i < values.length; i++) if (set.has(values[i]!)) return true
    return false
  }

  /** A filter compiled to symbol sets; unknown names match nothing. */
  function compile(filter: EntryFilter) {
    const set = (names: readonly string[] | undefined) => (names && names.length > 0 ? new Set(names.map((n) => symbols.get(n) ?? -1)) : undefined)
    return {
      visible: set(filter.visible) ?? new Set<number>(),
      types: set(filter.types),
      scopes: set(filter.scopes),
      statuses: set(filter.status ?? ['active'])!,
      minScore: filter.minScore,
      nonNegativeQuality: filter.nonNegativeQuality === true,
    }
  }

  function verdictsFor(filter: EntryFilter): Uint8Array {
    const key = JSON.stringify([
      [...filter.visible].sort(),
      [...(filter.types ?? [])].sort(),
      [...(filter.scopes ?? [])].sort(),
      [...(filter.status ?? ['active'])].sort(),
      filter.minScore ?? null,
      filter.nonNegativeQuality === true,
    ])
    let verdicts = verdictCache.get(key)
    if (!verdicts || verdicts.length !== capacity) {
      verdicts = new Uint8Array(capacity)
      verdictCache.set(key, verdicts)
    }
    return verdicts
  }

  return {
    get size() {
      return slotOf.size
    },

    upsert(entry) {
      verdictCache.clear()
      const existing = slotOf.get(entry.id)
      if (existing !== undefined && sameText(existing, entry)) {
        setFields(existing, entry)
        return
      }
      if (existing !== undefined) removeSlot(existing)
      const slot = free.pop() ?? ids.length
      if (slot === ids.length) {
        ids.push(undefined)
        terms.push([])
        termFreqs.push(new Float32Array(0))
        scopes.push(new Int32Array(0))
        types.push(new Int32Array(0))
        if (ids.length > capacity) grow()
      }
      setFields(slot, entry)
      const entryTerms = Object.keys(entry.tf)
      terms[slot] = entryTerms
      termFreqs[slot] = Float32Array.from(entryTerms, (term) => Number(entry.tf[term]))
      lengths[slot] = entry.length
      slotOf.set(entry.id, slot)
      totalLength += entry.length
      for (const term of entryTerms) addPosting(term, slot, Number(entry.tf[term]))
    },

    remove(id) {
      const slot = slotOf.get(id)
      if (slot === undefined) return
      verdictCache.clear()
      removeSlot(slot)
    },

    clear() {
      verdictCache.clear()
      ids.length = 0
      terms.length = 0
      termFreqs.length = 0
      scopes.length = 0
      types.length = 0
      free.length = 0
      slotOf.clear()
      postings.clear()
      lists.clear()
      totalLength = 0
    },

    search(queryTerms, filter, limit, ranking) {
      const docs = slotOf.size
      if (docs === 0 || limit <= 0) return []
      const stats = [...new Set(queryTerms)].flatMap((term) => {
        const list = postings.get(term)
        return list ? [{ term, df: list.size }] : []
      })
      if (stats.length === 0) return []
      // The same terms and idf as the SQL path (every term a candidate term: exact).
      const plan = planTextQuery(stats, docs, { ...ranking, candidates: Infinity })
      const { k1, b } = ranking
      const base = k1 * (1 - b)
      const perLength = (k1 * b) / Math.max(1, totalLength / docs)
      const f = compile(filter)
      const verdicts = verdictsFor(filter)
      let count = 0
      for (const { term, idf } of plan.terms) {
        const list = postings.get(term)!
        const weight = idf * (k1 + 1)
        for (let i = 0; i < list.size; i++) {
          const slot = list.slots[i]!
          let verdict = verdicts[slot]!
          if (verdict === 0) {
            const pass =
              f.statuses.has(status[slot]!) &&
              anyIn(scopes[slot]!, f.visible) &&
              (!f.types || anyIn(types[slot]!, f.types)) &&
              (!f.scopes || anyIn(scopes[slot]!, f.scopes)) &&
              (f.minScore === undefined || score[slot]! >= f.minScore) &&
              (!f.nonNegativeQuality || quality[slot]! >= 0)
            verdicts[slot] = verdict = pass ? 1 : 2
          }
          if (verdict !== 1) continue
          if (scores[slot] === 0) touched[count++] = slot
          const tf = list.tfs[i]!
          scores[slot]! += (weight * tf) / (tf + base + perLength * lengths[slot]!)
        }
      }
      // The best `limit` by score, then id: a small sorted list (limit is tens).
      const best: RankedId[] = []
      for (let i = 0; i < count; i++) {
        const slot = touched[i]!
        const value = scores[slot]!
        scores[slot] = 0
        const last = best[best.length - 1]
        if (best.length >= limit && value < last!.score) continue
        const id = ids[slot]!
        if (best.length >= limit && value === last!.score && id > last!.id) continue
        let at = best.length
        while (at > 0 && (best[at - 1]!.score < value || (best[at - 1]!.score === value && best[at - 1]!.id > id))) at--
        best.splice(at, 0, { id, score: value })
        if (best.length > limit) best.pop()
      }
      return best
    },
  }
}
