/**
 * Picks the packs whose catalog entry (name, description, type) matches a
 * task, for callers that do not let the model choose from the catalog.
 */
import { documentTerms, queryTerms } from './lexical.js'
import type { LoadedPack } from './schema.js'

/**
 * Packs whose name, description or type share terms with the task, best
 * first (at most `max`, default 5). Returns none when nothing matches.
 * @example
 * const packs = selectPacks('What does the Team plan cost?', found.packs)
 */
export function selectPacks(task: string, packs: readonly LoadedPack[], options: { max?: number } = {}): LoadedPack[] {
  const terms = queryTerms(task)
  const scored: { pack: LoadedPack; score: number; at: number }[] = []
  packs.forEach((pack, at) => {
    const item = pack.item
    const have = new Set(documentTerms(`${item.name.replace(/-/gu, ' ')} ${item.description} ${item.type.replace(/[-:]/gu, ' ')}`))
    const score = terms.reduce((sum, t) => sum + (have.has(t.term) ? t.weight : 0), 0)
    if (score > 0) scored.push({ pack, score, at })
  })
  scored.sort((a, b) => b.score - a.score || a.at - b.at)
  return scored.slice(0, options.max ?? 5).map((s) => s.pack)
}
