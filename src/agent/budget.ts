/**
 * The token budget of an assembly. Parts are offered in priority order; each takes what
 * is left: a text part whole, shortened at a token boundary, or cut; an entry part entry
 * by entry (an entry is never shortened). The rendered context is then counted exactly
 * (gpt-tokenizer, o200k_base, the counter of the pack resolver) and, while it is over the
 * budget, the lowest-priority optional part is cut; only the mandatory parts left, the
 * system prompt is shortened. The budget is never exceeded.
 */
import { wrapEntries, type EntryView } from '../core/wrap-entries.js'
import { PLAIN_TEXT, countTokens, tokenizer } from '../core/text/token-count.js'
import type { ContextPart } from '../core/agent.js'

export { countTokens }

/** Below this many tokens left, a text part is cut rather than shortened to a stub. */
const MIN_SHORTENED = 24

/**
 * `text` cut to at most `max` tokens at a token boundary, with `marker` appended when cut.
 * @example
 * truncateTokens('one two three four', 2) // 'one two'
 */
export function truncateTokens(text: string, max: number, marker = ''): string {
  if (max <= 0) return ''
  const { encode, decode } = tokenizer()
  const tokens = encode(text, PLAIN_TEXT)
  if (tokens.length <= max) return text
  const room = Math.max(0, max - countTokens(marker))
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  let kept = decode(tokens.slice(0, room)).replace(/\uFFFD+$/u, '')
  while (kept !== '' && countTokens(kept + marker) > max) kept = decode(encode(kept, PLAIN_TEXT).slice(0, -1)).replace(/\uFFFD+$/u, '')
  return kept === '' ? '' : kept + marker
}

/** A part of the context before the budget: text, or knowledge entries to wrap. */
export interface DraftPart {
  name: string
  role: 'system' | 'assistant'
  /** Mandatory parts are shortened, never cut. */
  mandatory: boolean
  path?: string
  text?: string
  entries?: readonly EntryView[]
  /** A line put before the wrapped entries. */
  caption?: string
  /** Why it is absent (no file, no entries). */
  absent?: string
}

/** A part after the budget: its final text and its line in the report. */
export interface FilledPart {
  draft: DraftPart
  text: string
  report: ContextPart
}

/** The text of an entry part holding `entries`. */
export function entriesText(caption: string | undefined, entries: readonly EntryView[]): string {
  if (entries.length === 0) return ''
  return caption ? `${caption}\n${wrapEntries(entries)}` : wrapEntries(entries)
}

function reportOf(draft: DraftPart, status: ContextPart['status'], text: string, original: number, extra: Partial<ContextPart> = {}): ContextPart {
  return {
    name: draft.name,
    role: draft.role,
    status,
    tokens: status === 'cut' || status === 'absent' ? 0 : countTokens(text),
    original_tokens: original,
    ...(draft.path !== undefined ? { path: draft.path } : {}),
    ...(draft.absent !== undefined && status === 'absent' ? { reason: draft.absent } : {}),
    ...extra,
  }
}

function fillText(draft: DraftPart, left: number, marker: string): FilledPart {
  const text = draft.text ?? ''
  const original = countTokens(text)
  if (original <= left) return { draft, text, report: reportOf(draft, 'included', text, original) }
  if (left >= MIN_SHORTENED || (draft.mandatory && left > 0)) {
    const short = truncateTokens(text, left, marker)
    if (short !== '') {
      return { draft, text: short, report: reportOf(draft, 'truncated', short, original, { reason: `budget: ${left} of ${original} tokens left` }) }
    }
  }
  return { draft, text: '', report: reportOf(draft, 'cut', '', original, { reason: `budget: ${left} tokens left, ${original} needed` }) }
}

function fillEntries(draft: DraftPart, left: number): FilledPart {
  const all = draft.entries ?? []
  const original = countTokens(entriesText(draft.caption, all))
  const empty = countTokens(wrapEntries([]))
  const overhead = countTokens(draft.caption ?? '') + empty + 4
  const chosen: EntryView[] = []
  let used = overhead
  for (const entry of all) {
    const cost = countTokens(wrapEntries([entry])) - empty + 1
    if (used + cost > left) continue
    chosen.push(entry)
    used += cost
  }
  const text = entriesText(draft.caption, chosen)
  const items = { items: all.length, included_items: chosen.length, ids: chosen.map((e) => e.id) }
  if (chosen.length === 0)
    return { draft, text: '', report: reportOf(draft, 'cut', '', original, { ...items, reason: `budget: ${left} tokens left, the first entry needs more` }) }
  const status = chosen.length === all.length ? 'included' : 'truncated'
  const reason = status === 'truncated' ? { reason: `budget: ${all.length - chosen.length} of ${all.length} entries left out` } : {}
  return { draft, text, report: reportOf(draft, status, text, original, { ...items, ...reason }) }
}

/**
 * Offers each part, in priority order, what the budget has left after `reserved` tokens.
 * @example
 * const filled = fillParts(drafts, 8000, countTokens(staticTemplate), '\n[… cut by the token budget]')
 */
export function fillParts(drafts: readonly DraftPart[], budget: number, reserved: number, marker: string): FilledPart[] {
  let left = Math.max(0, budget - reserved)
  return drafts.map((draft) => {
    if (draft.absent !== undefined) return { draft, text: '', report: reportOf(draft, 'absent', '', 0) }
    const filled = draft.entries ? fillEntries(draft, left) : fillText(draft, left, marker)
    left = Math.max(0, left - filled.report.tokens)
    return filled
  })
}

/**
 * Cuts the lowest-priority optional part still in: returns false when only mandatory parts are left.
 * @example
 * while (over() && cutLowest(filled)) render()
 */
export function cutLowest(filled: FilledPart[]): boolean {
  for (let i = filled.length - 1; i >= 0; i--) {
    const part = filled[i] as FilledPart
    if (part.draft.mandatory || part.text === '') continue
    part.text = ''
    part.report = { ...part.report, status: 'cut', tokens: 0, reason: 'budget: cut after the exact count of the whole context' }
    delete part.report.ids
    if (part.report.included_items !== undefined) part.report.included_items = 0
    return true
  }
  return false
}
