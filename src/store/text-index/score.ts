/**
 * BM25 scoring of the in-memory full-text index, with MaxScore pruning (Turtle & Flood, 1995):
 * the same top k as scoring every posting, without reading the postings that cannot reach it.
 *
 * The terms are scored one list at a time, rarest first (the query plan's order, which is also
 * the order every entry's score is summed in, so that a score is the same float whichever way it
 * was found). Each term's most a posting can add (its bound) comes from the list's highest
 * frequency and shortest entry. Before a long list, when the k-th best partial score θ of the
 * entries scored so far exceeds the sum R of the remaining terms' bounds, no entry that is not
 * yet a candidate can reach the top k (it scores at most R < θ ≤ the final k-th score), so the
 * remaining lists stop making candidates: they only complete the scores of the candidates whose
 * partial score plus R can still reach θ, either by reading the list (marked candidates only,
 * no filter check) or, when few candidates are left, by looking the term up in each candidate's
 * own terms. After each term θ rises and R falls, and more candidates drop out.
 *
 * Ties: hits are ordered by score, then id (`offerHit`); a candidate is dropped only when its
 * best possible score is strictly below θ, so no entry that could tie the k-th score is lost and
 * the tie order is that of the exhaustive scan. Bounds carry a relative slack of 1e-9 against
 * float rounding.
 */
import type { Bm25 } from '../../core/text/index.js'
import type { RankedId, WeightedTerm } from './query.js'
import type { EntryTable } from './entries.js'
import { FAILS, PASSES, UNCHECKED } from './filter.js'
import type { PostingLists } from './postings.js'
import { offerHit } from './top-k.js'

/** Per-index scratch of a search, `capacity` long: scores by slot, the touched slots, marks. */
export interface ScoreScratch {
  scores: Float64Array
  touched: Int32Array
  /** 1 for a candidate still in the running (the pruned phase). */
  live: Uint8Array
  /** Values for the k-th-largest selection. */
  select: Float64Array
}

/** Scratch arrays for an index of `capacity` slots. */
export function scoreScratch(capacity: number): ScoreScratch {
  return { scores: new Float64Array(capacity), touched: new Int32Array(capacity), live: new Uint8Array(capacity), select: new Float64Array(capacity) }
}

/** What a search read: postings scanned, and term look-ups in a candidate's own terms. */
export interface ScoreWork {
  postings: number
  lookups: number
}

/** Float slack on bounds: a candidate is dropped only when its bound × (1 + SLACK) is below θ. */
const SLACK = 1e-9
/** A look-up in an entry's own terms costs about this many posting reads (an `indexOf` over its terms). */
const LOOKUP_COST = 16

/**
 * The `k`-th largest of `values[0..n)` (1 ≤ k ≤ n), reordering them (Hoare's selection).
 * @example
 * kthLargest(Float64Array.of(3, 1, 2), 3, 2) // 2
 */
export function kthLargest(values: Float64Array, n: number, k: number): number {
  let lo = 0
  let hi = n - 1
  const target = k - 1
  while (lo < hi) {
    // The median of three as the pivot; descending order.
    const mid = (lo + hi) >>> 1
    const a = values[lo]!
    const b = values[mid]!
    const c = values[hi]!
    const pivot = a > b ? (b > c ? b : a > c ? c : a) : a > c ? a : b > c ? c : b
    let i = lo
    let j = hi
    while (i <= j) {
      while (values[i]! > pivot) i++
      while (values[j]! < pivot) j--
      if (i <= j) {
        const t = values[i]!
        values[i] = values[j]!
        values[j] = t
        i++
        j--
      }
    }
    if (target <= j) hi = j
    else if (target >= i) lo = i
    else return values[target]!
  }
  return values[target]!
}

/** What {@link scoreTerms} scores: the plan's terms, the filter's verdicts and test, the scorer. */
export interface ScoreQuery {
  /** Every scored term, rarest first (the order scores are summed in). */
  terms: readonly WeightedTerm[]
  limit: number
  scorer: Bm25
  verdicts: Uint8Array
  passes: (slot: number) => boolean
  /**
   * Entries that expire at or before this time (milliseconds) fail too: the filter's `now`
   * (issue 31), checked beside the cached verdicts because it moves with the clock. Default −Infinity.
   */
  expiredUpTo?: number
  /** False: score every posting (the exhaustive scan, kept as the reference the tests compare with). */
  prune: boolean
}

/**
 * The best `limit` entries by BM25 (ties by id) among those that pass the filter: see the
 * module comment. Adds what it read to `work`.
 */
export function scoreTerms(table: EntryTable, postings: PostingLists, scratch: ScoreScratch, query: ScoreQuery, work: ScoreWork): RankedId[] {
  const { terms, limit, scorer, verdicts, passes } = query
  const { scores, touched } = scratch
  const { lengths, expires } = table
  const expiredUpTo = query.expiredUpTo ?? -Infinity
  const lists = terms.map(({ term }) => postings.get(term)!)
  // rest[i]: the most the terms from i on can add to an entry's score.
  const rest = new Float64Array(terms.length + 1)
  for (let i = terms.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + scorer.score(terms[i]!.idf, lists[i]!.maxTf, lists[i]!.minLength)
  const postingsFrom = new Float64Array(terms.length + 1)
  for (let i = terms.length - 1; i >= 0; i--) postingsFrom[i] = postingsFrom[i + 1]! + lists[i]!.size
  // Imported bindings read once: under a CommonJS transform each read is a getter call.
  const [unchecked, pass, fail] = [UNCHECKED, PASSES, FAILS]
  let count = 0
  let i = 0
  for (; i < terms.length; i++) {
    // Worth a selection (about `count` steps) only when it may save more reading than that.
    if (query.prune && i > 0 && count >= limit && postingsFrom[i]! > 2 * count) {
      const theta = kthLargestScore(scratch, count, limit)
      if (theta > rest[i]! * (1 + SLACK)) break
    }
    const idf = terms[i]!.idf
    const { slots, tfs, size } = lists[i]!
    work.postings += size
    for (let p = 0; p < size; p++) {
      const slot = slots[p]!
      let verdict = verdicts[slot]!
      if (verdict === unchecked) verdicts[slot] = verdict = passes(slot) ? pass : fail
      if (verdict !== pass || expires[slot]! <= expiredUpTo) continue
      if (scores[slot] === 0) touched[count++] = slot
      scores[slot]! += scorer.score(idf, tfs[p]!, lengths[slot]!)
    }
  }
  if (i < terms.length) count = completeCandidates(table, lists, scratch, query, rest, i, count, work)
  const best: RankedId[] = []
  for (let c = 0; c < count; c++) {
    const slot = touched[c]!
    const value = scores[slot]!
    scores[slot] = 0
    if (best.length < limit || value >= best[best.length - 1]!.score) offerHit(best, table.ids[slot]!, value, limit)
  }
  return best
}

/** The `limit`-th best score of the first `count` touched slots. */
function kthLargestScore(scratch: ScoreScratch, count: number, limit: number): number {
  const { scores, touched, select } = scratch
  for (let c = 0; c < count; c++) select[c] = scores[touched[c]!]!
  return kthLargest(select, count, limit)
}

/**
 * Keeps the touched slots whose score plus `bound` can still reach the `limit`-th best score
 * (resetting the others' scores); returns how many are kept, at the front of `touched`.
 */
function keepReachable(scratch: ScoreScratch, count: number, limit: number, bound: number): number {
  const { scores, touched, live } = scratch
  const theta = kthLargestScore(scratch, count, limit)
  let kept = 0
  for (let c = 0; c < count; c++) {
    const slot = touched[c]!
    if ((scores[slot]! + bound) * (1 + SLACK) < theta) {
      scores[slot] = 0
      live[slot] = 0
    } else touched[kept++] = slot
  }
  return kept
}

/**
 * The pruned phase: terms `from` on only complete the candidates' scores, in term order,
 * dropping candidates that can no longer reach the top `limit`. Returns the candidates left.
 */
function completeCandidates(
  table: EntryTable,
  lists: ReadonlyArray<{ slots: Int32Array; tfs: Float32Array; size: number }>,
  scratch: ScoreScratch,
  query: ScoreQuery,
  rest: Float64Array,
  from: number,
  touchedCount: number,
  work: ScoreWork,
): number {
  const { scores, touched, live } = scratch
  const { terms, limit, scorer } = query
  const lengths = table.lengths
  let count = keepReachable(scratch, touchedCount, limit, rest[from]!)
  for (let c = 0; c < count; c++) live[touched[c]!] = 1
  for (let i = from; i < terms.length; i++) {
    const { term, idf } = terms[i]!
    const list = lists[i]!
    if (count * LOOKUP_COST < list.size) {
      work.lookups += count
      for (let c = 0; c < count; c++) {
        const slot = touched[c]!
        const tf = table.frequency(slot, term)
        if (tf !== 0) scores[slot]! += scorer.score(idf, tf, lengths[slot]!)
      }
    } else {
      const { slots, tfs, size } = list
      work.postings += size
      for (let p = 0; p < size; p++) {
        const slot = slots[p]!
        if (live[slot] === 1) scores[slot]! += scorer.score(idf, tfs[p]!, lengths[slot]!)
      }
    }
    if (i + 1 < terms.length && count > limit) count = keepReachable(scratch, count, limit, rest[i + 1]!)
  }
  for (let c = 0; c < count; c++) live[touched[c]!] = 0
  return count
}
