/**
 * Ranking of search candidates: fusion of the full-text and vector lists (by
 * normalised score, or by reciprocal rank), then the quality rerank of seed 003.
 */
import { qualityScore } from '../../core/knowledge.js'
import { scopePriority } from '../../core/principal.js'

export interface RankedList {
  ids: readonly { id: string; score: number }[]
  weight: number
  /**
   * For score fusion: the score an entry absent from the list would have at most. Give 0
   * for a full-text list that holds every match (no match scores 0); by default the
   * list's lowest score (a list cut at a depth).
   */
  floor?: number
}

export interface Fused {
  id: string
  fused: number
  /** 1-based position and raw score in each input list (null when absent). */
  positions: Array<{ rank: number; score: number } | null>
}

/**
 * Reciprocal-rank fusion: `Σ weight / (k + rank)`. Ties keep first-list order.
 * @example
 * fuse([{ ids: ft, weight: 1 }, { ids: vec, weight: 1 }], 60)
 */
export function fuse(lists: readonly RankedList[], k = 60): Fused[] {
  const byId = new Map<string, Fused>()
  lists.forEach((list, listIndex) => {
    list.ids.forEach((hit, index) => {
      let entry = byId.get(hit.id)
      if (!entry) {
        entry = { id: hit.id, fused: 0, positions: lists.map(() => null) }
        byId.set(hit.id, entry)
      }
      entry.fused += list.weight / (k + index + 1)
      entry.positions[listIndex] = { rank: index + 1, score: hit.score }
    })
  })
  return [...byId.values()].sort((a, b) => b.fused - a.fused || a.id.localeCompare(b.id))
}

/**
 * Score fusion: each list's scores are min-max normalised (best 1, the list's `floor`
 * or else its lowest score 0; a list whose scores are all equal gives 1), weighted, and summed.
 * Unlike rank fusion it keeps how far apart the scores are, so one list's clear
 * winner is not levelled with the other's weak first hit. Ties keep first-list order.
 * @example
 * fuseScores([{ ids: bm25, weight: 1 }, { ids: cosine, weight: 0.5 }])
 */
export function fuseScores(lists: readonly RankedList[]): Fused[] {
  const byId = new Map<string, Fused>()
  const fused: Fused[] = []
  for (let listIndex = 0; listIndex < lists.length; listIndex++) {
    const list = lists[listIndex]!
    const hits = list.ids
    if (hits.length === 0) continue
    let max = -Infinity
    let min = Infinity
    for (const hit of hits) {
      if (hit.score > max) max = hit.score
      if (hit.score < min) min = hit.score
    }
    if (list.floor !== undefined) min = Math.min(min, list.floor)
    const span = max - min
    for (let index = 0; index < hits.length; index++) {
      const hit = hits[index]!
      let entry = byId.get(hit.id)
      if (!entry) {
        entry = { id: hit.id, fused: 0, positions: new Array<Fused['positions'][number]>(lists.length).fill(null) }
        byId.set(hit.id, entry)
        fused.push(entry)
      }
      entry.fused += list.weight * (span > 0 ? (hit.score - min) / span : 1)
      entry.positions[listIndex] = { rank: index + 1, score: hit.score }
    }
  }
  // First seen first, as the map's values were (the sort is stable).
  return fused.sort((a, b) => b.fused - a.fused || a.id.localeCompare(b.id))
}

export interface RerankItem {
  id: string
  fused: number
  score: number
  helpful: number
  harmful: number
  scopes: readonly string[]
}

/**
 * Seed 003's second stage: order candidates by `quality_score = score + helpful - 2 × harmful`,
 * ties by scope priority (user > project > agent > team > org > public), then relevance.
 * Entries with `score < minScore` or a negative quality score are dropped.
 */
export function qualityRerank<T extends RerankItem>(
  items: readonly T[],
  visible: readonly string[],
  minScore: number,
): Array<T & { quality_score: number; scope_priority: number }> {
  return items
    .map((item) => ({ ...item, quality_score: qualityScore(item), scope_priority: scopePriority(item.scopes, visible) }))
    .filter((item) => item.score >= minScore && item.quality_score >= 0)
    .sort((a, b) => b.quality_score - a.quality_score || a.scope_priority - b.scope_priority || b.fused - a.fused)
}
