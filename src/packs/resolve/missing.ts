/**
 * Facts the task needs that no selected text supports (seed 001 "missing
 * facts"), decided on the task's concepts (terms.ts), never on its request
 * or question words: runs of adjacent concepts in task order that no
 * selected piece supports, plus each pack's missing claims and chapters.
 */
import { queryTerms } from '../pack-index/lexical.js'
import { renderPiece } from './budget.js'
import { isTaskWord, joinSurfaces, taskConcepts, termSet, type TaskConcept } from './terms.js'
import type { Chosen, PackPlan, PackResolution } from './types.js'

/**
 * How {@link missingFacts} decides, as reported in the result.
 * @example
 * result.missing_basis === MISSING_BASIS // true
 */
export const MISSING_BASIS =
  'Task concepts (content words; request verbs, question words and meta words such as cite, compare, 介绍, 多少钱 are not facts) ' +
  'that no selected piece supports, synonyms counted (cost ~ price); a run of adjacent concepts is reported whole when none of it, or the attribute it asks for (price, warranty…), is supported; ' +
  'an unsupported word beside a supported one only when it is a name (capitalised) no pack has; plus the packs\u2019 missing claims and chapters ' +
  'from their source maps and compile runs.'

/**
 * Runs of adjacent concepts in task order: the task read word by word (Latin
 * words, CJK runs by their dictionary words); a stop word, task word or
 * punctuation between two concepts breaks the run.
 */
function conceptRuns(task: string): TaskConcept[][] {
  const runs: TaskConcept[][] = []
  let run: TaskConcept[] = []
  const flush = (): void => {
    if (run.length > 0) runs.push(run)
    run = []
  }
  for (const token of task.match(/[\p{L}\p{N}'’-]+|[^\p{L}\p{N}\s]/gu) ?? []) {
    const words = queryTerms(token).filter((t) => t.weight >= 1)
    if (words.length === 0) flush()
    for (const word of words) {
      const [concept] = taskConcepts([word]).filter((c) => c.minor !== true)
      if (!concept) flush()
      else if (isTaskWord(word)) {
        flush()
        runs.push([concept])
      } else run.push(concept)
    }
  }
  flush()
  return runs
}

/**
 * The missing facts of a resolution, without repeats.
 * @example
 * missingFacts(task, plans, fill.chosen, resolutions) // ['quantum flux capacitor']
 */
export function missingFacts(
  task: string,
  plans: readonly PackPlan[],
  chosen: readonly (readonly Chosen[])[],
  resolutions: readonly PackResolution[],
): string[] {
  const selected = new Set<string>()
  for (const list of chosen) for (const { candidate } of list) for (const term of termSet(renderPiece(candidate.section))) selected.add(term)
  const supported = (c: TaskConcept): boolean => c.terms.some((t) => selected.has(t))
  const inNoPack = (c: TaskConcept): boolean => plans.every((p) => c.terms.every((t) => p.index.documentFrequency(t) === 0))
  const isName = (c: TaskConcept): boolean => /^\p{Lu}/u.test(nameIn(task, c.surface)) && !task.trimStart().toLowerCase().startsWith(c.surface.toLowerCase())
  const phrases: string[] = []
  for (const run of conceptRuns(task)) {
    if (run.every((c) => !supported(c))) phrases.push(joinSurfaces(run.map((c) => c.surface)))
    // The attribute the task asks for (price, warranty…) unsupported: the run is what is missing ("Team plan cost").
    else if (run.some((c) => !supported(c) && c.weight > 1)) phrases.push(joinSurfaces(run.map((c) => c.surface)))
    else for (const c of run) if (!supported(c) && inNoPack(c) && isName(c)) phrases.push(c.surface)
  }
  return [...new Set([...phrases, ...resolutions.flatMap((r) => r.missing)])]
}

/** The task's own spelling of a word (for the capital-letter check). */
function nameIn(task: string, surface: string): string {
  const at = task.toLowerCase().indexOf(surface.toLowerCase())
  return at < 0 ? surface : task.slice(at, at + surface.length)
}
