/**
 * Extraction's grounding (issue 43): each proposal is checked against the turns of the
 * conversation it could rest on (src/knowledge/grounding.ts), and the turns that support it are
 * the ones it records. A user profile rests on the user's own turns only (an assistant saying
 * "you might prefer Vim" is not the user's preference); other knowledge on any turn but the
 * system's. A proposal the turns do not support is dropped, with the reason and its content, so
 * that a person can save it by hand after review: nothing ungrounded is saved as `active`.
 */
import type { ExtractGrounding } from '../../core/extract.js'
import { checkGrounding, type Grounding, type GroundingOptions } from '../grounding.js'

export { ungroundedReason } from '../grounding.js'
import type { Proposal } from './prompt.js'

/** One turn as grounding sees it: its position, role and (secret-marked) text, and the id the caller gave it. */
export interface Turn {
  index: number
  role: string
  text: string
  callerId?: string
}

/**
 * The verdict on one proposal, over the turns it may rest on (the user's for a user profile).
 * @example
 * const g = await groundProposal(proposal, turns, {})
 * const again = await groundProposal(proposal, turns, {}, { index: -1, text: supersededEntry.content }) // an update or supersession
 */
export async function groundProposal(
  proposal: Proposal,
  turns: readonly Turn[],
  options: GroundingOptions,
  existing?: { index: number; text: string },
): Promise<Grounding> {
  const profile = proposal.types.includes('user_profile')
  const eligible = turns.filter((t) => (profile ? t.role === 'user' : t.role !== 'system'))
  return checkGrounding(proposal.content, [...eligible.map((t) => ({ index: t.index, text: t.text })), ...(existing ? [existing] : [])], options)
}

/**
 * What an item reports of its grounding.
 * @example
 * reportedGrounding(grounding) // { coverage: 1, other_language: false }
 */
export function reportedGrounding(grounding: Grounding): ExtractGrounding {
  return {
    coverage: grounding.coverage,
    ...(grounding.similarity !== undefined ? { similarity: grounding.similarity } : {}),
    other_language: grounding.otherLanguage,
  }
}
