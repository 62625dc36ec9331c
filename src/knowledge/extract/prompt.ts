/**
 * The two requests of an extraction: (1) propose entries from the conversation, (2) decide,
 * for the proposals that have similar existing entries, whether each adds, updates,
 * supersedes or repeats one. Both pass their material as JSON data; both answers are
 * validated schemas.
 */
import { z } from 'zod'
import { hasCjk } from '../../core/text/index.js'
import { KnowledgeType } from '../../core/knowledge.js'
import type { ChatMessage } from '../../llm/types.js'
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../prompt-data.js'

/** Characters of one message the model sees (the rest is cut). */
const MESSAGE_CHARS = 4000
/** Characters of the whole conversation the model sees: the newest messages are kept. */
const CONVERSATION_CHARS = 60_000
/** Characters of an existing entry's content the decision request shows. */
const CANDIDATE_CHARS = 1500

/** One proposal as the model answers it. */
export const Proposal = z.object({
  // Small models repeat a type (["user_profile", "user_profile"]): once is enough.
  types: z
    .array(KnowledgeType)
    .min(1)
    .max(6)
    .transform((types) => [...new Set(types)]),
  task: z.string().trim().min(1).max(2000),
  content: z.string().trim().min(1).max(20_000),
  tags: z.record(z.string().min(1).max(64), z.union([z.string().max(200), z.number(), z.boolean()])).default({}),
  message_ids: z.array(z.string().max(200)).max(100).default([]),
})
export type Proposal = z.output<typeof Proposal>

/** The answer of the proposal request, as validated: each entry is read on its own (see {@link readProposals}). */
export const Proposals = z
  .object({ entries: z.array(z.unknown()).max(30) })
  .refine((answer) => answer.entries.length === 0 || answer.entries.some((e) => Proposal.safeParse(e).success), {
    message: 'no entry matches the schema (each needs "types" from the list, a non-empty "task" and "content")',
    path: ['entries'],
  })

/**
 * The schema the proposal request asks with: tight lengths and counts, so that a small model
 * held to the schema by its server (llama.cpp turns it into a grammar) cannot ramble past them.
 */
export const ProposalsAsk = z.object({
  entries: z
    .array(
      z.object({
        types: z.array(KnowledgeType).min(1).max(2),
        task: z.string().min(1).max(100),
        content: z.string().min(1).max(300),
        tags: z.object({ category: z.enum(['preference', 'background', 'habit', 'constraint']).optional(), domain: z.string().max(30).optional() }),
        message_ids: z.array(z.string().max(20)).max(3),
      }),
    )
    .max(3),
})

/** `max_tokens` of the proposal request: three entries of the {@link ProposalsAsk} lengths fit in it. */
export const PROPOSE_MAX_TOKENS = 600
/** `max_tokens` of the decision request. */
export const DECIDE_MAX_TOKENS = 500

/**
 * The valid proposals of an answer, and a reason for each entry that is not one (it is dropped,
 * the others kept: one odd entry does not sink the answer).
 * @example
 * readProposals({ entries: [{ types: ['tool'], task: 't', content: 'c' }, { task: '' }] }) // { proposals: [1 entry], invalid: ['entry 1: …'] }
 */
export function readProposals(answer: { entries: unknown[] }): { proposals: Proposal[]; invalid: Array<{ task: string; reason: string }> } {
  const proposals: Proposal[] = []
  const invalid: Array<{ task: string; reason: string }> = []
  const seen = new Set<string>()
  answer.entries.forEach((entry, i) => {
    const parsed = Proposal.safeParse(entry)
    if (parsed.success) {
      // Small models repeat one entry until the list is full: the same content is kept once.
      const key = parsed.data.content.toLowerCase().replace(/\s+/gu, ' ')
      if (seen.has(key)) invalid.push({ task: parsed.data.task, reason: 'duplicate: the same content as another proposal' })
      else proposals.push(parsed.data)
      seen.add(key)
    } else {
      const task = typeof (entry as { task?: unknown } | null)?.task === 'string' ? String((entry as { task: string }).task).slice(0, 200) : `entry ${i}`
      const issue = parsed.error.issues[0]
      invalid.push({ task, reason: `invalid: ${issue ? `${issue.path.join('.') || '(entry)'}: ${issue.message}` : 'not an entry'}` })
    }
  })
  return { proposals, invalid }
}

/** One decision as the model answers it. A `supersede` must name the entry it replaces. */
export const Decision = z
  .object({
    proposal: z.number().int().min(0),
    action: z.enum(['add', 'update', 'supersede', 'noop']),
    existing_id: z.string().max(200).nullable().default(null),
    /** For `update`: the full new content of the existing entry (both texts merged). */
    content: z.string().max(20_000).nullable().default(null),
    /** For `update`: the proposal contradicts the existing entry (a user profile loses confidence). */
    contradicts: z.boolean().default(false),
  })
  .refine((d) => d.action !== 'supersede' || (d.existing_id ?? '').trim() !== '', {
    message: 'a "supersede" decision names the entry it replaces in "existing_id"',
    path: ['existing_id'],
  })
export type Decision = z.output<typeof Decision>

/**
 * The answer of the decision request, as validated: each decision is read on its own (an invalid
 * one leaves its proposal an `add`, see {@link readDecisions}); an answer of invalid decisions only
 * is invalid (the provider asks for a repair, then `llm_invalid_output`: nothing is written).
 */
export const Decisions = z
  .object({ decisions: z.array(z.unknown()).max(100) })
  .refine((answer) => answer.decisions.length === 0 || answer.decisions.some((d) => Decision.safeParse(d).success), {
    message:
      'no decision matches the schema (each needs "proposal", an "action" of add, update, supersede or noop, and for a supersede the "existing_id" it replaces)',
    path: ['decisions'],
  })

/**
 * The schema the decision request asks with, for `count` proposals (see {@link ProposalsAsk}).
 * @example
 * const ask = decisionsAsk(2) // at most two decisions, contents of at most 600 characters
 */
export function decisionsAsk(count: number) {
  return z.object({
    decisions: z
      .array(
        z.object({
          proposal: z.number().int().min(0),
          action: z.enum(['add', 'update', 'supersede', 'noop']),
          existing_id: z.string().max(64).nullable(),
          content: z.string().max(600).nullable(),
          contradicts: z.boolean(),
        }),
      )
      .max(Math.max(1, count)),
  })
}

/**
 * The valid decisions of an answer, and what was wrong with the others.
 * @example
 * readDecisions({ decisions: [{ proposal: 0, action: 'noop', existing_id: 'k-1' }, { action: 'merge' }] }) // { decisions: [1], invalid: ['…'] }
 */
export function readDecisions(answer: { decisions: unknown[] }): { decisions: Decision[]; invalid: string[] } {
  const decisions: Decision[] = []
  const invalid: string[] = []
  for (const raw of answer.decisions) {
    const parsed = Decision.safeParse(raw)
    if (parsed.success) decisions.push(parsed.data)
    else invalid.push(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(decision)'}: ${issue.message}`).join('; '))
  }
  return { decisions, invalid }
}

/**
 * A message as the model sees it: an id (the caller's, or `m<index>`), the role, the (redacted,
 * cut) text and, when the caller gave it, when it was sent (ISO 8601).
 */
export interface PromptMessage {
  id: string
  role: string
  content: string
  time?: string
}

/**
 * The conversation within the character budget: each message cut to 4,000 characters, the
 * oldest left out beyond 60,000 in all.
 * @example
 * const { kept, omitted } = fitConversation(messages)
 */
export function fitConversation(messages: PromptMessage[]): { kept: PromptMessage[]; omitted: number } {
  const cut = messages.map((m) => (m.content.length > MESSAGE_CHARS ? { ...m, content: `${m.content.slice(0, MESSAGE_CHARS)} …[cut]` } : m))
  let total = 0
  let start = cut.length
  while (start > 0 && total + cut[start - 1]!.content.length <= CONVERSATION_CHARS) total += cut[--start]!.content.length
  return { kept: cut.slice(start), omitted: start }
}

/**
 * The language to write entries in: Chinese when the conversation's user turns hold CJK text.
 * @example
 * conversationLanguage([{ id: 'm0', role: 'user', content: '我喜欢 TypeScript' }]) // 'Chinese'
 */
export function conversationLanguage(messages: readonly PromptMessage[]): string {
  const userText = messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n')
  return hasCjk(userText || messages.map((m) => m.content).join('\n')) ? 'Chinese' : 'the language of the conversation'
}

const PROPOSE_SYSTEM = (language: string): string =>
  [
    'You extract reusable knowledge from a conversation between a user and an AI agent, for a knowledge base that agents search before they work.',
    "Propose only knowledge worth keeping for future tasks. Types: user_profile (the user's preferences, background, habits, constraints; tags.category is one of preference, background, habit, constraint), strategy (experience from doing the task), tool (a tool: what it does, how to use it, pros and cons), usecase (background, approach, steps, problems, result), definition (a concept and how it works), plan (steps, decision points, a method).",
    'Each entry: "types", "task" (the scenario: in what situation, to achieve what), "content" (the knowledge itself, complete on its own), "tags" ({"category": …, "domain": …}), "message_ids" (ids of the messages it rests on).',
    `Write task and content in ${language}; keep names, code and commands as they are.`,
    'Secrets were replaced by markers like [SECRET_1]: keep a marker where the secret is needed, never guess or invent a value.',
    'When the conversation says that something changed (a tool replaced, a preference or habit changed, a plan dropped or moved, a person or place changed, a number revised), propose the new state as its own entry, written as it stands now and on the same task as the old one; do not merge the old and the new state into one entry. Messages may carry a "time": the time they were sent.',
    'Write only what the conversation states, in its own terms: never add a name, number or detail it does not give. Leave out small talk (greetings, thanks, the weather), guesses (what someone thinks, maybe, is not sure of) and secrets. Nothing worth keeping: {"entries": []}.',
    DATA_NOT_INSTRUCTIONS,
    'Answer with one JSON object: {"entries": [...]}.',
  ].join('\n')

/**
 * The messages of the proposal request.
 * @example
 * const messages = proposeMessages([{ id: 'm0', role: 'user', content: 'I prefer pnpm' }])
 */
export function proposeMessages(conversation: readonly PromptMessage[], language: string): ChatMessage[] {
  return [
    { role: 'system', content: PROPOSE_SYSTEM(language) },
    { role: 'user', content: dataBlock('The conversation', conversation) },
  ]
}

/** A proposal with the existing entries it may duplicate or replace. */
export interface DecisionCase {
  proposal: number
  types: string[]
  task: string
  content: string
  /** When the statement was made (the newest message it rests on), when known. */
  stated_at?: string
  /** Current entries (none superseded) the caller can see; `valid_from`: since when each holds. */
  candidates: Array<{ id: string; types: string[]; task: string; content: string; valid_from?: string }>
}

const DECIDE_SYSTEM = [
  'You keep a knowledge base free of duplicates and of outdated facts. For each proposed entry you see similar existing entries (candidates), each one current: true as far as the base knows. Decide:',
  '- "add": the proposal is new knowledge, or different from every candidate;',
  '- "update": a candidate is about the same fact and the proposal refines, extends or corrects it (adds detail, fixes a mistake: what the candidate said was never quite right). Give in "content" the full new text of that candidate: keep everything of it that still holds, add the new knowledge; set "contradicts" to true when the proposal says the candidate was wrong;',
  '- "supersede": a candidate was true until now, and the proposal says it changed: the user or the team switched, moved, replaced, dropped, rescheduled or revised it ("we moved from Jenkins to GitHub Actions", "用户现在改用 Python 了", "the limit is 500 now"). The candidate is closed as of the proposal\'s time and kept as history; the proposal is added as the current fact. "content" stays null;',
  '- "noop": a candidate says the same already.',
  'For update, supersede and noop, "existing_id" is that candidate\'s id. Keep the language of the entries.',
  DATA_NOT_INSTRUCTIONS,
  'Answer with one JSON object: {"decisions": [{"proposal": number, "action": "add" | "update" | "supersede" | "noop", "existing_id": string or null, "content": string or null, "contradicts": boolean}]}, one decision per proposal.',
].join('\n')

/**
 * The messages of the decision request.
 * @example
 * const messages = decideMessages(cases)
 */
export function decideMessages(cases: readonly DecisionCase[]): ChatMessage[] {
  const shown = cases.map((c) => ({ ...c, candidates: c.candidates.map((e) => ({ ...e, content: e.content.slice(0, CANDIDATE_CHARS) })) }))
  return [
    { role: 'system', content: DECIDE_SYSTEM },
    { role: 'user', content: dataBlock('Proposals and their candidates', shown) },
  ]
}
