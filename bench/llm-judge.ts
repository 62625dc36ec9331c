/**
 * The judging rule of the labelled extraction set (bench/data/extraction/, issue 43): what a
 * case expects, and how what the hub holds after an extraction is scored against it. Pure: the
 * runner (bench/llm.ts) gives it the entries, test/eval/extraction-set.test.ts checks it.
 *
 * - A **term** matches a text when it occurs in it, case-insensitively: a Latin term as whole
 *   words (`go` is not in `going`; a plural or past ending allowed), any other (Chinese) as a
 *   substring; `a|b` matches either.
 * - A **fact is recovered** when one current entry (task and content) matches every term of it.
 * - A **forbidden fact is saved** when one entry, current or not, matches every term of it
 *   (chit-chat, guesses, secrets: a secret's term is its value).
 * - A **contradiction is applied** when the entry the case starts with is no longer current
 *   (superseded) or now matches the new state's terms, and a current entry matches them.
 * - An entry is **ungrounded** when the grounding rule (src/knowledge/grounding.ts) does not
 *   find it supported by the conversation (and, for an entry the case started with, its old text).
 */
import { z } from 'zod'
import { checkGrounding } from '../src/knowledge/grounding.js'

const Terms = z.array(z.string().min(1)).min(1)

/** One labelled conversation of the set. */
export const ExtractionCase = z.strictObject({
  id: z.string().regex(/^(en|zh)-[a-z0-9-]+$/u),
  lang: z.enum(['en', 'zh']),
  kind: z.enum(['facts', 'chitchat', 'secret', 'guess', 'contradiction']),
  messages: z.array(z.strictObject({ id: z.string(), role: z.enum(['user', 'assistant']), content: z.string().min(1) })).min(1),
  /** What a careful person would save. */
  facts: z.array(z.strictObject({ id: z.string(), all: Terms })),
  /** What must not be saved. */
  forbidden: z.array(z.strictObject({ id: z.string(), all: Terms })),
  /** Entries the store holds before the conversation (a contradiction's old state). */
  existing: z
    .array(z.strictObject({ types: z.array(z.string()).min(1), task: z.string(), content: z.string(), tags: z.record(z.string(), z.string()).optional() }))
    .optional(),
  contradiction: z.strictObject({ new: Terms }).optional(),
})
export type ExtractionCase = z.output<typeof ExtractionCase>

/** An entry as judged: its text, whether it is current, and whether the case started with it. */
export interface JudgedEntry {
  id: string
  task: string
  content: string
  current: boolean
  /** Its text before the conversation, for an entry the case started with. */
  seeded?: string
}

/** The score of one case. */
export interface CaseScore {
  saved: number
  factsRecovered: number
  facts: number
  forbiddenSaved: string[]
  secretsSaved: string[]
  contradictionApplied: boolean | undefined
  ungrounded: string[]
}

const LATIN = /^[\p{Script=Latin}\p{N}\s._:/@&!-]+$/u

/**
 * Whether `term` (alternatives separated by `|`) occurs in `text` (see the module comment).
 * @example
 * mentions('We write Go services', 'go') // true
 * mentions('We are going home', 'go') // false
 * mentions('团队用 Gitea', 'gitea|gitlab') // true
 */
export function mentions(text: string, term: string): boolean {
  const lower = text.toLowerCase()
  return term.split('|').some((alternative) => {
    const t = alternative.toLowerCase().trim()
    if (!LATIN.test(t)) return lower.includes(t)
    const escaped = t.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')
    // Whole words, a plural or past ending allowed (`release` in `releases`, `limit` in `limited`).
    return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?:s|es|d|ed)?(?![\\p{L}\\p{N}])`, 'u').test(lower)
  })
}

/** Whether one of the entries matches every term. */
export function holds(entries: readonly Pick<JudgedEntry, 'task' | 'content'>[], terms: readonly string[]): boolean {
  return entries.some((e) => terms.every((term) => mentions(`${e.task}\n${e.content}`, term)))
}

/**
 * The score of a case from the entries the caller sees after the extraction.
 * @example
 * const score = await judgeCase(labelled, entries)
 */
export async function judgeCase(labelled: ExtractionCase, entries: readonly JudgedEntry[]): Promise<CaseScore> {
  const current = entries.filter((e) => e.current)
  const learned = current.filter((e) => e.seeded === undefined || e.seeded !== e.content)
  // Nothing forbidden anywhere: a superseded entry is kept as history, and would be found with as_of.
  const forbidden = labelled.forbidden.filter((f) => holds(entries, f.all))
  let contradictionApplied: boolean | undefined
  if (labelled.contradiction) {
    const terms = labelled.contradiction.new
    const old = entries.filter((e) => e.seeded !== undefined)
    const replaced = old.every((e) => !e.current || holds([e], terms))
    contradictionApplied = replaced && holds(current, terms)
  }
  const ungrounded: string[] = []
  const turns = labelled.messages.map((m, index) => ({ index, text: m.content }))
  for (const entry of learned) {
    const sources = entry.seeded === undefined ? turns : [...turns, { index: -1, text: entry.seeded }]
    if (!(await checkGrounding(entry.content, sources)).supported) ungrounded.push(entry.id)
  }
  return {
    saved: learned.length,
    factsRecovered: labelled.facts.filter((f) => holds(current, f.all)).length,
    facts: labelled.facts.length,
    forbiddenSaved: forbidden.map((f) => f.id),
    secretsSaved: labelled.kind === 'secret' ? forbidden.map((f) => f.id) : [],
    contradictionApplied,
    ungrounded,
  }
}
