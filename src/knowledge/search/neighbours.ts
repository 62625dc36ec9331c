/**
 * Dialogue neighbours (docs/retrieval-log.md, "Dialogue neighbours"): in a conversation the answer
 * to a question is often the entry right after the best match (the other speaker's reply), or
 * right before it. After the relevance gate, each of the best `depth` candidates lifts the
 * next entry of its trace by `next` × its fused score and the previous one by `previous` ×,
 * adding the neighbour as a candidate when the lists missed it. Only gated candidates lift, so
 * a query about nothing stored still returns nothing. Entries without a trace are untouched.
 */
import type { TraceNeighbours } from '../../store/knowledge/knowledge.js'
import type { Fused } from './rank.js'

/** How far a candidate lifts its neighbours in its trace. */
export interface NeighbourLift {
  /** How many of the best candidates lift their neighbours. */
  depth: number
  /** Share of a candidate's fused score the next entry of its trace gains. */
  next: number
  /** Share of a candidate's fused score the previous entry of its trace gains. */
  previous: number
}

/** Chosen on LoCoMo turns-dev, checked on facts-dev (docs/retrieval-log.md, "Dialogue neighbours"). */
export const DEFAULT_NEIGHBOUR_LIFT: NeighbourLift = { depth: 10, next: 0.5, previous: 0.2 }

/** A candidate as the lift sees it: fused scores, and what lifted it when something did. */
export type Lifted<T> = T & { neighbour_of?: string; neighbour_lift?: number }

/**
 * The candidates with their neighbours lifted (and added, as `make(id)`), sorted by fused
 * score, best first (the input order when nothing was lifted). `neighbour_of` names the candidate that lifted an entry most,
 * `neighbour_lift` the total it added.
 * @example
 * liftNeighbours(fused, await store.knowledge.traceNeighbours(top, visible), DEFAULT_NEIGHBOUR_LIFT, (id) => ({ id, fused: 0, positions: [null, null], strength: null }))
 */
export function liftNeighbours<T extends Fused>(
  candidates: readonly T[],
  neighbours: readonly TraceNeighbours[],
  lift: NeighbourLift,
  make: (id: string) => T,
): Array<Lifted<T>> {
  const out = new Map<string, Lifted<T>>(candidates.map((c) => [c.id, { ...c }]))
  const around = new Map(neighbours.map((n) => [n.id, n]))
  const best = new Map<string, number>()
  for (const c of topByFused(candidates, lift.depth)) {
    const n = around.get(c.id)
    if (!n) continue
    for (const [id, share] of [...n.next.map((id) => [id, lift.next] as const), ...n.previous.map((id) => [id, lift.previous] as const)]) {
      if (share <= 0) continue
      const gain = share * c.fused
      const cur: Lifted<T> = out.get(id) ?? make(id)
      const total = (cur.neighbour_lift ?? 0) + gain
      const from = gain > (best.get(id) ?? -Infinity) ? c.id : cur.neighbour_of
      if (gain > (best.get(id) ?? -Infinity)) best.set(id, gain)
      out.set(id, { ...cur, fused: cur.fused + gain, neighbour_lift: total, ...(from !== undefined ? { neighbour_of: from } : {}) })
    }
  }
  if (best.size === 0) return candidates.slice()
  // Stable: entries of equal fused score keep the order they came in.
  return [...out.values()].sort((a, b) => b.fused - a.fused)
}

/** The best `depth` candidates by fused score. */
export function topByFused<T extends Fused>(candidates: readonly T[], depth: number): T[] {
  return candidates
    .slice()
    .sort((a, b) => b.fused - a.fused || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, depth)
}
