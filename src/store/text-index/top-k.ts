/**
 * Keeps the best hits of a search: by score, ties by id, at most `limit`.
 */
import type { RankedId } from './query.js'

/**
 * Adds a hit to `best` (sorted best first, at most `limit` long) if it belongs there. A
 * small sorted list: limits are tens.
 * @example
 * const best: RankedId[] = []
 * offerHit(best, 'a', 1.5, 10)
 */
export function offerHit(best: RankedId[], id: string, score: number, limit: number): void {
  const last = best[best.length - 1]
  if (best.length >= limit && (score < last!.score || (score === last!.score && id > last!.id))) return
  let at = best.length
  while (at > 0 && (best[at - 1]!.score < score || (best[at - 1]!.score === score && best[at - 1]!.id > id))) at--
  best.splice(at, 0, { id, score })
  if (best.length > limit) best.pop()
}
