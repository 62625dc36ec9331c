/**
 * Retrieval metrics over one ranked list of document ids and the judged
 * relevant documents of its query (graded relevance; 0 or absent = not relevant).
 * Every function returns a number in [0, 1]; the mean over queries is the score.
 */

/** Judged documents of one query: document id → relevance grade (> 0 = relevant). */
export type Judgements = ReadonlyMap<string, number>

function relevantCount(judged: Judgements): number {
  let n = 0
  for (const grade of judged.values()) if (grade > 0) n++
  return n
}

/**
 * Share of the relevant documents found in the first `k` results.
 * A query with no relevant document scores 0 (callers leave such queries out).
 * @example
 * recallAtK(['a', 'x', 'b'], new Map([['a', 1], ['b', 1], ['c', 1]]), 2) // 1/3
 */
export function recallAtK(ranked: readonly string[], judged: Judgements, k: number): number {
  const total = relevantCount(judged)
  if (total === 0) return 0
  let found = 0
  for (const id of new Set(ranked.slice(0, k))) if ((judged.get(id) ?? 0) > 0) found++
  return found / total
}

/**
 * Normalised discounted cumulative gain at `k`, with gain `2^rel - 1` and
 * discount `log2(rank + 1)`; the ideal ordering of the judged documents is 1.
 * @example
 * ndcgAtK(['x', 'a'], new Map([['a', 1]]), 10) // 1 / log2(3) ≈ 0.631
 */
export function ndcgAtK(ranked: readonly string[], judged: Judgements, k: number): number {
  const gain = (grade: number) => (grade > 0 ? 2 ** grade - 1 : 0)
  let dcg = 0
  const seen = new Set<string>()
  ranked.slice(0, k).forEach((id, index) => {
    if (seen.has(id)) return
    seen.add(id)
    dcg += gain(judged.get(id) ?? 0) / Math.log2(index + 2)
  })
  const ideal = [...judged.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
  let idcg = 0
  ideal.forEach((grade, index) => {
    idcg += gain(grade) / Math.log2(index + 2)
  })
  return idcg === 0 ? 0 : dcg / idcg
}

/**
 * Reciprocal rank of the first relevant result within the first `k` (0 if none).
 * @example
 * mrrAtK(['x', 'y', 'a'], new Map([['a', 1]]), 10) // 1/3
 */
export function mrrAtK(ranked: readonly string[], judged: Judgements, k: number): number {
  const index = ranked.slice(0, k).findIndex((id) => (judged.get(id) ?? 0) > 0)
  return index < 0 ? 0 : 1 / (index + 1)
}

/**
 * The `p`-th percentile (nearest rank) of ascending-sorted numbers; NaN when empty.
 * @example
 * percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]!
}

/** Arithmetic mean; 0 for an empty list. */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length
}

/**
 * Precision at `k`: the share of the first `k` places that hold a relevant document. A list
 * shorter than `k` (a search that returned fewer) still divides by `k`, so returning less is
 * never rewarded by itself; a query whose relevant documents number `R < k` cannot score above
 * `R / k` (see {@link precisionCeiling}).
 * @example
 * precisionAtK(['a', 'x', 'b'], new Map([['a', 1], ['b', 1]]), 5) // 2/5
 */
export function precisionAtK(ranked: readonly string[], judged: Judgements, k: number): number {
  if (k <= 0) return 0
  let found = 0
  for (const id of new Set(ranked.slice(0, k))) if ((judged.get(id) ?? 0) > 0) found++
  return found / k
}

/**
 * The best precision@k any ranking can reach for a query: `min(k, R) / k` with `R` its relevant
 * documents — the ceiling against which {@link precisionAtK} is read on small stores.
 * @example
 * precisionCeiling(new Map([['a', 1]]), 3) // 1/3
 */
export function precisionCeiling(judged: Judgements, k: number): number {
  return k <= 0 ? 0 : Math.min(k, relevantCount(judged)) / k
}

/**
 * 1 when at least one relevant document is among the first `k` results, else 0 (the
 * "answerable hit rate" is its mean over the queries that have a relevant document).
 * @example
 * hitAtK(['x', 'a'], new Map([['a', 1]]), 1) // 0
 */
export function hitAtK(ranked: readonly string[], judged: Judgements, k: number): number {
  return ranked.slice(0, k).some((id) => (judged.get(id) ?? 0) > 0) ? 1 : 0
}

/** What a set of result lists holds, counted over all of them together. */
export interface ReturnedCounts {
  /** Results returned (each list's first `k`, a document once per list). */
  returned: number
  /** Of those, relevant to their query. */
  related: number
  /** Of those, not relevant to their query (never judged relevant). */
  unrelated: number
  /** `unrelated / returned`; 0 when nothing was returned (nothing unrelated was shown). */
  unrelatedShare: number
  /** Lists that came back empty. */
  empty: number
}

/**
 * Counts, over many queries' result lists together (a pooled, not a per-query mean), how many
 * results were returned and how many of them are unrelated to their query. Every document not
 * judged relevant counts as unrelated, so this needs completely judged queries (a query about
 * nothing stored has no relevant document: all it returns is unrelated).
 * @example
 * returnedCounts([{ ranked: ['a', 'x'], judged: new Map([['a', 1]]) }, { ranked: [], judged: new Map() }], 5)
 * // { returned: 2, related: 1, unrelated: 1, unrelatedShare: 0.5, empty: 1 }
 */
export function returnedCounts(lists: ReadonlyArray<{ ranked: readonly string[]; judged: Judgements }>, k: number): ReturnedCounts {
  let returned = 0
  let related = 0
  let empty = 0
  for (const { ranked, judged } of lists) {
    const top = new Set(ranked.slice(0, k))
    if (top.size === 0) empty++
    returned += top.size
    for (const id of top) if ((judged.get(id) ?? 0) > 0) related++
  }
  return { returned, related, unrelated: returned - related, unrelatedShare: returned === 0 ? 0 : (returned - related) / returned, empty }
}
