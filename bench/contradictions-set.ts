/**
 * The contradiction set (bench/data/contradictions, issue 31): its schema, a loader that reports
 * every problem, the sessions a case is extracted in, and the scripted model that answers the
 * extraction requests as a correct model would, from the case file. The benchmark is
 * bench/contradictions.ts; the format is in bench/data/contradictions/README.md.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { KnowledgeType } from '../src/core/knowledge.js'
import { namedDates } from '../src/core/text/index.js'
import type { ChatRequest } from '../test/helpers/openai-stub.js'

export const CONTRADICTIONS_DIR = join(import.meta.dirname, 'data', 'contradictions')
export const CONTRADICTION_LANGS = ['en', 'zh'] as const
export const CONTRADICTION_DOMAINS = ['tools', 'preferences', 'plans', 'habits', 'constraints', 'people', 'places', 'numbers'] as const

const IsoDateTime = z.iso.datetime({ offset: true })

export const CaseMessage = z.strictObject({
  id: z.string().min(1).max(200),
  role: z.enum(['user', 'assistant']),
  content: z.string().min(1),
  date: IsoDateTime,
})

export const CaseFact = z.strictObject({
  id: z.string().min(1).max(40),
  types: z.array(KnowledgeType).min(1),
  task: z.string().min(1),
  content: z.string().min(1),
  tags: z.record(z.string(), z.string()).default({}),
  message_ids: z.array(z.string()).min(1),
  supersedes: z.string().optional(),
})
export type CaseFact = z.output<typeof CaseFact>

export const ContradictionCase = z.strictObject({
  id: z.string().regex(/^(en|zh)-[a-z]+-[a-z0-9-]+$/),
  lang: z.enum(CONTRADICTION_LANGS),
  domain: z.enum(CONTRADICTION_DOMAINS),
  messages: z.array(CaseMessage).min(2),
  facts: z.array(CaseFact).min(2),
  now: z.strictObject({ q: z.string().min(1), expect: z.string(), stale: z.string() }),
  before: z.strictObject({ q: z.string().min(1), as_of: z.iso.date(), expect: z.string() }),
})
export type ContradictionCase = z.output<typeof ContradictionCase>

/** The newest message time a fact rests on. */
export function factTime(c: ContradictionCase, fact: CaseFact): string {
  const dates = c.messages.filter((m) => fact.message_ids.includes(m.id)).map((m) => m.date)
  return dates.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a))
}

/** Problems of one case beyond its schema (references, order, dates); empty when it is sound. */
export function caseProblems(c: ContradictionCase): string[] {
  const problems: string[] = []
  const messages = new Set(c.messages.map((m) => m.id))
  const facts = new Map(c.facts.map((f) => [f.id, f]))
  if (messages.size !== c.messages.length) problems.push('duplicate message id')
  if (facts.size !== c.facts.length) problems.push('duplicate fact id')
  for (let i = 1; i < c.messages.length; i++) {
    if (Date.parse(c.messages[i]!.date) < Date.parse(c.messages[i - 1]!.date)) problems.push(`message ${c.messages[i]!.id} is older than the one before it`)
  }
  for (const f of c.facts) {
    for (const id of f.message_ids) if (!messages.has(id)) problems.push(`fact ${f.id} names unknown message ${id}`)
    if (f.supersedes !== undefined && !facts.has(f.supersedes)) problems.push(`fact ${f.id} supersedes unknown fact ${f.supersedes}`)
  }
  const expectNew = facts.get(c.now.expect)
  const stale = facts.get(c.now.stale)
  const expectOld = facts.get(c.before.expect)
  if (!expectNew || !stale || !expectOld) return [...problems, 'now/before name an unknown fact']
  if (expectNew.supersedes !== stale.id) problems.push(`now.expect ${expectNew.id} does not supersede now.stale ${stale.id}`)
  if (expectOld.id !== stale.id) problems.push('before.expect is not the replaced fact')
  if (problems.length > 0) return problems
  const oldDay = factTime(c, stale).slice(0, 10)
  const newTime = Date.parse(factTime(c, expectNew))
  const asOf = Date.parse(`${c.before.as_of}T00:00:00Z`)
  if (c.before.as_of < oldDay || asOf >= newTime) problems.push(`as_of ${c.before.as_of} is not between the old fact (${oldDay}) and the new one`)
  for (const q of [c.now.q, c.before.q]) if (namedDates(q).length > 0) problems.push(`question names a date: ${q}`)
  if (c.lang === 'zh' && !/[\u4e00-\u9fff]/u.test(c.now.q + c.before.q)) problems.push('a zh case asks in another language')
  return problems
}

/**
 * Reads `<lang>.jsonl` of the set; throws with every problem (line, case and what is wrong).
 * @example
 * const cases = loadContradictions('en')
 */
export function loadContradictions(lang: (typeof CONTRADICTION_LANGS)[number], dir = CONTRADICTIONS_DIR): ContradictionCase[] {
  const problems: string[] = []
  const cases: ContradictionCase[] = []
  readFileSync(join(dir, `${lang}.jsonl`), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.trim() === '') return
      const where = `${lang}.jsonl:${index + 1}`
      const parsed = ContradictionCase.safeParse(JSON.parse(line))
      if (!parsed.success) {
        problems.push(...parsed.error.issues.map((issue) => `${where}: ${issue.path.join('.')}: ${issue.message}`))
        return
      }
      if (parsed.data.lang !== lang) problems.push(`${where}: lang ${parsed.data.lang} in ${lang}.jsonl`)
      problems.push(...caseProblems(parsed.data).map((p) => `${where} (${parsed.data.id}): ${p}`))
      cases.push(parsed.data)
    })
  const ids = new Set<string>()
  for (const c of cases) {
    if (ids.has(c.id)) problems.push(`${lang}.jsonl: duplicate case id ${c.id}`)
    ids.add(c.id)
  }
  if (problems.length > 0) throw new Error(`bench/data/contradictions: ${problems.length} problem(s):\n${problems.join('\n')}`)
  return cases
}

/** The sessions a case is extracted in: its messages grouped by calendar day (UTC), oldest first. */
export function caseSessions(c: ContradictionCase): Array<ContradictionCase['messages']> {
  const byDay = new Map<string, ContradictionCase['messages']>()
  for (const m of c.messages) {
    const day = m.date.slice(0, 10)
    byDay.set(day, [...(byDay.get(day) ?? []), m])
  }
  return [...byDay.values()]
}

/** The facts a session states: those whose newest message is in it. */
export function sessionFacts(c: ContradictionCase, session: ContradictionCase['messages']): CaseFact[] {
  const ids = new Set(session.map((m) => m.id))
  return c.facts.filter((f) => {
    const newest = c.messages.filter((m) => f.message_ids.includes(m.id)).at(-1)
    return newest !== undefined && ids.has(newest.id)
  })
}

/** With supersession (a correct model's SUPERSEDE), or the baseline where every decision is ADD. */
export type ScriptMode = 'supersede' | 'add-only'

/** The JSON data block of a request's user message (src/knowledge/prompt-data.ts). */
function dataOf(request: ChatRequest): unknown {
  const text = String(request.messages[1]?.content ?? '')
  return JSON.parse(text.slice(text.indexOf('\n') + 1))
}

interface AskedCase {
  proposal: number
  content: string
  candidates: Array<{ id: string; content: string }>
}

/**
 * The scripted extraction model for one case: the proposal request gets the facts whose newest
 * message is in the conversation it was sent; the decision request gets `supersede` of the
 * candidate whose text is the replaced fact (mode `supersede`, when that candidate was shown),
 * else `add`. It answers exactly what a correct model would, so a benchmark over it measures
 * KnowHub, not a model.
 * @example
 * stub.setChat(scriptedModel(() => current, 'supersede'))
 */
export function scriptedModel(current: () => ContradictionCase, mode: ScriptMode): (request: ChatRequest) => string {
  return (request) => {
    const c = current()
    const system = String(request.messages[0]?.content)
    if (system.includes('You extract reusable knowledge')) {
      const shown = dataOf(request) as Array<{ id: string }>
      const session = c.messages.filter((m) => shown.some((s) => s.id === m.id))
      const entries = sessionFacts(c, session).map((f) => ({ types: f.types, task: f.task, content: f.content, tags: f.tags, message_ids: f.message_ids }))
      return JSON.stringify({ entries })
    }
    const asked = dataOf(request) as AskedCase[]
    const decisions = asked.map((a) => {
      const fact = c.facts.find((f) => f.content === a.content)
      const replaced = fact?.supersedes === undefined ? undefined : c.facts.find((f) => f.id === fact.supersedes)
      const target = replaced && a.candidates.find((candidate) => candidate.content === replaced.content)
      return mode === 'supersede' && target
        ? { proposal: a.proposal, action: 'supersede', existing_id: target.id }
        : { proposal: a.proposal, action: 'add', existing_id: null }
    })
    return JSON.stringify({ decisions })
  }
}
