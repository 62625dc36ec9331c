/**
 * Facts the task needs that no pack has: task terms no pack covers, grouped
 * into phrases in task order, plus each pack's missing claims and chapters.
 */
import type { WeightedTerm } from '../lexical.js'
import type { PackPlan, PackResolution } from './types.js'

// Words that describe the task rather than a fact to look up; never reported as missing.
const TASK_WORDS = new Set(
  (
    'write draft reply respond answer explain summar summaris summariz describ list creat make compos help ask question tell say ' +
    'customer user email messag post text short long brief quick new plea thank need want know look find check give provid'
  ).split(' '),
)
const CJK = /[\u3400-\u9fff]/u

/** Groups uncovered task terms into phrases in task order ("enterprise price"), dropping task words. */
function phrases(terms: readonly WeightedTerm[], uncovered: ReadonlySet<string>): string[] {
  const out: string[] = []
  let current: string[] = []
  const flush = (): void => {
    if (current.length > 0) out.push(current.join(CJK.test(current[0] ?? '') ? '' : ' '))
    current = []
  }
  for (const term of terms) {
    const isUncovered = uncovered.has(term.term) && term.weight >= 1 && !TASK_WORDS.has(term.term) && !/^\d+$/u.test(term.term)
    if (isUncovered && (term.surface.length >= 3 || CJK.test(term.surface))) current.push(term.surface)
    else flush()
  }
  flush()
  return out
}

/**
 * The missing facts of a resolution, without repeats: phrases of the task no
 * pack covers, then every pack's missing claims.
 * @example
 * missingFacts(queryTerms('enterprise price'), plans, resolutions) // ['enterprise price']
 */
export function missingFacts(terms: readonly WeightedTerm[], plans: readonly PackPlan[], resolutions: readonly PackResolution[]): string[] {
  const uncoveredEverywhere =
    plans.length === 0 ? new Set<string>() : new Set([...(plans[0]?.uncovered ?? [])].filter((t) => plans.every((p) => p.uncovered.has(t))))
  return [...new Set([...phrases(terms, uncoveredEverywhere), ...new Set(resolutions.flatMap((r) => r.missing))])]
}
