/**
 * What a task needs from the packs: detected from its text (English and
 * Chinese cue words) unless the caller says.
 */
import { z } from 'zod'
import { RESOLVE_INTENTS } from '../vocabulary.js'

/**
 * What the task needs from the packs. `cite`, `verify`, `ingest` and `dispute` unlock `sources/`.
 * @example
 * await resolveContext({ task, packs, intent: ResolveIntent.parse('cite') })
 */
export const ResolveIntent = z.enum(RESOLVE_INTENTS)
export type ResolveIntent = z.infer<typeof ResolveIntent>

const EVIDENCE_INTENT =
  /\b(?:cite|citations?|sources?|verify|verification|fact[- ]?check|evidence|provenance|ingest|import|dispute[ds]?|contradict\w*)\b|引用|出处|来源|核验|核实|验证|证据|导入|争议|矛盾/iu
const DETAIL_INTENT =
  /\b(?:compare|comparison|versus|vs\.?|relationship|relate[ds]?|between|why|detail(?:s|ed)?|in[- ]depth|history|timeline|across|multi[- ]?hop|explain)\b|比较|对比|关系|为什么|详细|深入|历史|之间|来龙去脉/iu

/**
 * Detects the task intent from its text.
 * @example
 * detectIntent('Cite the source for the Q1 revenue claim') // 'cite'
 */
export function detectIntent(task: string): ResolveIntent {
  const evidence = EVIDENCE_INTENT.exec(task)
  if (evidence) {
    const word = evidence[0].toLowerCase()
    if (/verif|fact|核|验证/u.test(word)) return 'verify'
    if (/ingest|import|导入/u.test(word)) return 'ingest'
    if (/disput|contradict|争议|矛盾/u.test(word)) return 'dispute'
    return 'cite'
  }
  return DETAIL_INTENT.test(task) ? 'detail' : 'answer'
}

/** True for the intents that unlock `sources/` (evidence). */
export function isEvidenceIntent(intent: ResolveIntent): boolean {
  return intent === 'cite' || intent === 'verify' || intent === 'ingest' || intent === 'dispute'
}
