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
