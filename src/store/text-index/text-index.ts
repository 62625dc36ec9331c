/**
 * An in-memory index of knowledge entries: postings of every term with its weighted
 * frequency, each entry's embedding, and the fields search filters on (scopes, types,
 * status, score, counters). It answers BM25 exactly — the hits and scores of scoring every
 * matching entry, with MaxScore pruning skipping the postings that cannot reach the top k — with
 * core's one scorer and the same statistics and tie order as the SQL path of `searchText`, in well
 * under a millisecond at 10k entries, and vector search by an exact cosine scan over the
 * entries that pass the same filter (`text-index/vectors.ts`). Pure data structure, no I/O: `text-sync.ts` keeps
 * it equal to the table. Its parts: the entry columns (`text-index/entries.ts`), the
 * postings (`postings.ts`), filters and their cached verdicts (`filter.ts`), the scoring with
 * its pruning (`score.ts`) and the best-hits list (`top-k.ts`).
 */
import { bm25 } from '../../core/text/index.js'
import { EntryTable, type IndexedEntry } from './entries.js'
import { compileFilter, expiryBound, FAILS, PASSES, UNCHECKED, VerdictCache } from './filter.js'
import { PostingLists, visibleFrequency } from './postings.js'
import { scoreScratch, scoreTerms, type ScoreScratch, type ScoreWork } from './score.js'
import { offerHit } from './top-k.js'
import { cosineOf, VectorColumns } from './vectors.js'
import {
  currentOnly,
  planTextQuery,
  textQueryBound,
  type EntryFilter,
  type RankedId,
  type TextHits,
  type TextRanking,
  type TraceNeighbours,
  type ValidityFilter,
} from './query.js'

export type { IndexedEntry }

export interface TextIndex {
  /** Adds an entry, or replaces the entry with the same id. */
  upsert(entry: IndexedEntry): void
  /** Removes an entry; unknown ids are ignored. */
  remove(id: string): void
  /** Removes every entry. */
  clear(): void
  /** Gives back the room grown arrays keep for more entries (after a full build). */
  compact(): void
  /** Number of entries. */
  readonly size: number
  /** BM25 over the entries that pass `filter`, best first (ties by id: the id's code units ascending), at most `limit`. */
  search(terms: readonly string[], filter: EntryFilter, limit: number, ranking: TextRanking): RankedId[]
  /** {@link TextIndex.search} with the query's best possible score over the visible entries. */
  searchWithBound(terms: readonly string[], filter: EntryFilter, limit: number, ranking: TextRanking, boundTerms?: readonly string[]): TextHits
  /**
   * The entries that pass `filter` and have an embedding, by cosine similarity to `vector`
   * (best first, ties by id), at most `limit`: an exact scan, as the SQL path without an
   * HNSW index answers. A zero vector, or one of another dimension than the stored ones,
   * finds nothing; entries with a zero vector are never found.
   */
  searchVector(vector: Float32Array, filter: EntryFilter, limit: number): RankedId[]
  /**
   * For each active entry of `ids` in a trace that one of `visible` may see: the visible active
   * entries of its trace at the previous and the next creation time (each list by id), as
   * `knowledge/search/neighbours.ts` answers in SQL.
   */
  traceNeighbours(ids: readonly string[], visible: readonly string[], validity?: ValidityFilter): TraceNeighbours[]
  /** What the full-text searches have read so far: postings scanned, and terms looked up in a candidate's own terms. */
  readonly work: Readonly<ScoreWork>
  /**
   * How many entries have expired by `now` (milliseconds; `expires_at` at or before it): with the
   * change-log position, a key of what a search at `now` can see (issue 31).
   */
  expiredBy(now: number): number
}

/** Options of {@link createTextIndex}. */
export interface TextIndexOptions {
  /**
   * MaxScore pruning of full-text searches (default true): the same hits without reading the
   * postings that cannot reach the top k. False scores every matching posting (the reference).
   */
  prune?: boolean
}

/** How many filters keep their per-entry verdicts between searches (until the index changes). */
const VERDICT_CACHE = 8

/**
 * BM25 of `terms` over the entries of `table` that pass `filter`, best first, at most
 * `limit`: exactly the entries and scores of scoring every matching posting (the plan's terms
 * are all candidate terms), with MaxScore pruning unless `prune` is false (`text-index/score.ts`).
 */
function searchIndex(
  table: EntryTable,
  postings: PostingLists,
  verdicts: Uint8Array,
  scratch: ScoreScratch,
  query: { terms: readonly string[]; boundTerms?: readonly string[] | undefined; filter: EntryFilter; limit: number; ranking: TextRanking; prune: boolean },
  work: ScoreWork,
): TextHits {
  // BM25's statistics over the visible scopes only (issue 15.1): a term's document
  // frequency counts each posting once per visible scope of its entry, as the collection
  // size does (EntryTable.visibleStats) and as the SQL path sums migration 0009's tables.
  // A search of current entries (the default) counts current entries only (issue 31).
  const visible = new Set(query.filter.visible.flatMap((name) => table.symbolOf(name) ?? []))
  const current = currentOnly(query.filter.validity)
  const stats = [...new Set(query.terms)].flatMap((term) => {
    const list = postings.get(term)
    const df = list ? visibleFrequency(list, visible, current) : 0
    return df > 0 ? [{ term, df }] : []
  })
  const collection = table.visibleStats(visible, current)
  const bound = textQueryBound(query.terms, stats, collection.docs, query.ranking, query.boundTerms)
  if (stats.length === 0) return { hits: [], bound }
  // The same terms and idf as the SQL path (every term a candidate term: exact).
  const plan = planTextQuery(stats, collection.docs, { ...query.ranking, candidates: Infinity })
  const scorer = bm25(query.ranking, collection.docs, collection.totalLength)
  const passes = compileFilter(query.filter, table)
  const hits = scoreTerms(
    table,
    postings,
    scratch,
    { terms: plan.terms, limit: query.limit, scorer, verdicts, passes, expiredUpTo: expiryBound(query.filter), prune: query.prune },
    work,
  )
  return { hits, bound }
}

/** The neighbours of each visible active entry of `ids` in its trace (see {@link TextIndex.traceNeighbours}). */
function traceNeighbours(table: EntryTable, ids: readonly string[], visibleNames: readonly string[], validity: ValidityFilter = {}): TraceNeighbours[] {
  const active = table.symbolOf('active')
  if (active === undefined) return []
  const visible = new Set(visibleNames.flatMap((name) => table.symbolOf(name) ?? []))
  // The validity part of a filter (issue 31): only entries valid as the search asks count.
  const valid = compileFilter({ visible: visibleNames, status: ['active'], validity }, table)
  const expiredUpTo = expiryBound({ visible: visibleNames, validity })
  const sees = (slot: number) => {
    if (table.status[slot] !== active || !valid(slot) || table.expires[slot]! <= expiredUpTo) return false
    const scopes = table.scopes[slot]!
    for (let i = 0; i < scopes.length; i++) if (visible.has(scopes[i]!)) return true
    return false
  }
  const out: TraceNeighbours[] = []
  for (const id of new Set(ids)) {
    const slot = table.slot(id)
    if (slot === undefined || table.trace[slot] === '' || !sees(slot)) continue
    const at = table.created[slot]!
    let before = -Infinity
    let after = Infinity
    let previous: string[] = []
    let next: string[] = []
    for (const other of table.traceSlots.get(table.trace[slot]!)!) {
      const when = table.created[other]!
      if (when === at || when < before || when > after || !sees(other)) continue
      const otherId = table.ids[other]!
      if (when < at) {
        if (when > before) [before, previous] = [when, []]
        previous.push(otherId)
      } else {
        if (when < after) [after, next] = [when, []]
        next.push(otherId)
      }
    }
    const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
    out.push({ id, previous: previous.sort(byId), next: next.sort(byId) })
  }
  return out
}

/**
 * Creates an empty index.
 * @example
 * const index = createTextIndex()
 * index.upsert({ id, scopes: ['user:u'], types: ['tool'], status: 'active', score: 3, helpful: 0, harmful: 0, tf: { selenium: 2 }, length: 1 })
 * index.search(['selenium'], { visible: ['user:u', 'public'] }, 10, DEFAULT_TEXT_RANKING)
 */
export function createTextIndex(options: TextIndexOptions = {}): TextIndex {
  const prune = options.prune ?? true
  const table = new EntryTable()
  const postings = new PostingLists()
  // The sorted expiry times of the entries that have one, rebuilt after a change when asked for.
  let expiries: Float64Array | undefined
  const verdictCache = new VerdictCache(VERDICT_CACHE)
  let scratch = scoreScratch(table.capacity)
  const work: ScoreWork = { postings: 0, lookups: 0 }
  const vectors = new VectorColumns()

  const removeSlot = (slot: number) => {
    vectors.remove(slot)
    const scopes = table.scopes[slot]!
    const superseded = table.superseded(slot)
    for (const term of table.release(slot)) postings.remove(term, slot, scopes, superseded)
  }

  return {
    get size() {
      return table.size
    },

    upsert(entry) {
      verdictCache.clear()
      expiries = undefined
      const existing = table.slot(entry.id)
      if (existing !== undefined && table.sameText(existing, entry)) {
        const was = { scopes: table.scopes[existing]!, superseded: table.superseded(existing) }
        table.updateFields(existing, entry)
        // Shared lists: the same scopes are the same array.
        const now = { scopes: table.scopes[existing]!, superseded: table.superseded(existing) }
        if (now.scopes !== was.scopes || now.superseded !== was.superseded) for (const term of table.terms[existing]!) postings.rescope(term, was, now)
        vectors.set(existing, entry.embedding ?? undefined, table.capacity)
        return
      }
      if (existing !== undefined) removeSlot(existing)
      const slot = table.place(entry)
      vectors.set(slot, entry.embedding ?? undefined, table.capacity)
      const superseded = table.superseded(slot)
      for (const term of table.terms[slot]!) postings.add(term, slot, Number(entry.tf[term]), table.scopes[slot]!, entry.length, superseded)
    },

    remove(id) {
      const slot = table.slot(id)
      if (slot === undefined) return
      verdictCache.clear()
      expiries = undefined
      removeSlot(slot)
    },

    compact() {
      table.compact()
      postings.compact()
    },

    clear() {
      verdictCache.clear()
      expiries = undefined
      table.clear()
      postings.clear()
      vectors.clear()
    },

    search(terms, filter, limit, ranking) {
      return this.searchWithBound(terms, filter, limit, ranking).hits
    },

    searchWithBound(terms, filter, limit, ranking, boundTerms) {
      if (table.size === 0 || limit <= 0) return { hits: [], bound: textQueryBound(terms, [], 0, ranking, boundTerms) }
      if (scratch.scores.length !== table.capacity) scratch = scoreScratch(table.capacity)
      const verdicts = verdictCache.for(filter, table.capacity)
      return searchIndex(table, postings, verdicts, scratch, { terms, boundTerms, filter, limit, ranking, prune }, work)
    },

    searchVector(vector, filter, limit) {
      if (table.size === 0 || limit <= 0) return []
      const { ids } = table
      const products = vectors.products(vector, ids.length)
      if (!products) return []
      const { dots, norms, queryNorm, n } = products
      const verdicts = verdictCache.for(filter, table.capacity)
      const passes = compileFilter(filter, table)
      const expiredUpTo = expiryBound(filter)
      const { expires } = table
      const [unchecked, pass] = [UNCHECKED, PASSES]
      const best: RankedId[] = []
      // Slots from `n` on hold no vector. One pass: the similarity only of a slot with a vector that passes the filter.
      for (let slot = 0; slot < n; slot++) {
        // No vector (or a zero one); a free slot has none.
        if (norms[slot] === 0) continue
        let verdict = verdicts[slot]!
        if (verdict === unchecked) verdicts[slot] = verdict = passes(slot) ? pass : FAILS
        if (verdict !== pass || expires[slot]! <= expiredUpTo) continue
        const similarity = cosineOf(dots[slot]!, norms[slot]!, queryNorm)
        if (!(similarity >= -1)) continue
        if (best.length < limit || similarity >= best[best.length - 1]!.score) offerHit(best, ids[slot]!, similarity, limit)
      }
      return best
    },

    traceNeighbours(ids, visible, validity) {
      return traceNeighbours(table, ids, visible, validity)
    },

    expiredBy(now) {
      if (!expiries) {
        const found: number[] = []
        const { expires, ids } = table
        for (let slot = 0; slot < ids.length; slot++) if (ids[slot] !== undefined && expires[slot]! !== Infinity) found.push(expires[slot]!)
        expiries = Float64Array.from(found).sort()
      }
      // The number of expiry times at or before `now` (binary search).
      let lo = 0
      let hi = expiries.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (expiries[mid]! <= now) lo = mid + 1
        else hi = mid
      }
      return lo
    },

    get work() {
      return { ...work }
    },
  }
}
