/**
 * Knowledge extraction from a conversation (seed 002; `POST /api/knowledge/extract`): the LLM
 * proposes entries (one request for a conversation of up to 50 turns and beyond: the whole
 * conversation is batched into it), each proposal is checked against the current entries the
 * caller can see (hybrid search) and a second request decides ADD, UPDATE, SUPERSEDE or NOOP
 * for those with similar entries. At most two requests per extraction; both happen before
 * anything is written, so a failing model changes nothing. A decision naming an entry that was
 * not among the similar ones (unknown, not visible) or one the caller may not edit is refused
 * and reported (`refused`); the proposal is then added, so nothing is lost.
 *
 * Scopes and owner come from the execution context (extract-context.ts); secrets never
 * reach the model (extract-secrets.ts); writes are in extract-apply.ts.
 */
import { systemClock } from '../../core/clock.js'
import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import { ExtractInput, type ExtractMessage, type ExtractResult } from '../../core/extract.js'
import { noopLogger } from '../../core/logger.js'
import { requirePermission, type Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import { applyPlan, type ExtractionDeps, type PlannedItem } from './apply.js'

export type { ExtractionDeps } from './apply.js'
import { executionContext, placement, type ExecutionContext } from './execution-context.js'
import type { LlmProvider } from '../../llm/index.js'
import type { Logger } from '../../core/logger.js'
import { checkGrounding, type Grounding, type GroundingOptions } from '../grounding.js'
import { groundProposal, reportedGrounding, ungroundedReason, type Turn } from './ground.js'
import {
  DECIDE_MAX_TOKENS,
  Decisions,
  PROPOSE_MAX_TOKENS,
  Proposals,
  ProposalsAsk,
  conversationLanguage,
  decideMessages,
  decisionsAsk,
  fitConversation,
  proposeMessages,
  readDecisions,
  readProposals,
  type Decision,
  type DecisionCase,
  type PromptMessage,
  type Proposal,
} from './prompt.js'
import { markersIn, secretScanner, settleSecrets, type FoundSecret } from './secrets.js'

/** Similar existing entries shown for each proposal. */
const CANDIDATES = 3
/** Times the proposal request is asked again with half the messages after an answer cut at max_tokens. */
const SHRINKS = 2

/** Extraction as a service: built once by the composition root. */
export interface ExtractionService {
  /**
   * Proposes (or saves) knowledge from a conversation, as `principal` within `context`.
   * @example
   * await hub.extraction.extract({ messages: [{ role: 'user', content: 'I prefer pnpm' }], mode: 'save' }, principal)
   */
  extract(raw: unknown, principal: Principal): Promise<ExtractResult>
}

/**
 * The extraction service over its dependencies.
 * @example
 * const extraction = createExtractionService({ knowledge, resources, store, llm })
 * const { items } = await extraction.extract({ messages, context: { trace_id: 'trace-1' } }, principal)
 */
export function createExtractionService(deps: ExtractionDeps): ExtractionService {
  return { extract: (raw, principal) => extractKnowledge(deps, raw, principal) }
}

/** The text of a message: a string, or the text parts of a multi-part content. */
function messageText(message: ExtractMessage): string {
  const { content } = message
  if (typeof content === 'string') return content
  if (!content) return ''
  return content.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('\n')
}

/** The conversation as the model sees it (secrets replaced by markers), which ids the caller gave, and when each message was sent. */
interface PreparedConversation {
  prompt: PromptMessage[]
  callerIds: Map<string, number>
  secrets: FoundSecret[]
  /** Prompt id (the caller's or `m<index>`) → when the message was sent, for the messages that say. */
  times: Map<string, string>
  /** The turns grounding reads (the text the model saw), by position in the caller's messages. */
  turns: Turn[]
  /** Position in the caller's messages → prompt id. */
  promptIds: Map<number, string>
}

async function prepareConversation(messages: ExtractMessage[]): Promise<PreparedConversation> {
  const scanner = secretScanner()
  const callerIds = new Map<string, number>()
  const times = new Map<string, string>()
  const prompt: PromptMessage[] = []
  const indexes: number[] = []
  for (const [index, message] of messages.entries()) {
    const text = messageText(message).trim()
    if (text === '') continue
    if (message.id) callerIds.set(message.id, index)
    const id = message.id ?? `m${index}`
    const time = typeof message.timestamp === 'string' ? message.timestamp : undefined
    if (time !== undefined) times.set(id, time)
    prompt.push({ id, role: message.role, content: await scanner.redact(text, index), ...(time !== undefined ? { time } : {}) })
    indexes.push(index)
  }
  // A value found in a later message may stand unlabelled in an earlier one.
  for (const message of prompt) message.content = scanner.known(message.content)
  const turns = prompt.map((m, i) => ({ index: indexes[i]!, role: m.role, text: m.content, ...(callerIds.has(m.id) ? { callerId: m.id } : {}) }))
  const promptIds = new Map(prompt.map((m, i) => [indexes[i]!, m.id]))
  return { prompt, callerIds, secrets: scanner.found, times, turns, promptIds }
}

/**
 * Proposes or saves knowledge from a conversation.
 * @example
 * const result = await extractKnowledge(deps, { messages, mode: 'propose' }, principal)
 */
export async function extractKnowledge(deps: ExtractionDeps, raw: unknown, principal: Principal): Promise<ExtractResult> {
  requirePermission(principal, 'read')
  const input = parseWith(ExtractInput, raw, 'extraction')
  if (input.mode === 'save') requirePermission(principal, 'write')
  const context = executionContext(principal, input.context)
  const { llm } = deps
  if (!llm) {
    throw new KnowHubError(
      'llm_not_configured',
      'Extraction needs an LLM, and this KnowHub has none configured (set llm.url and llm.model, or KNOWHUB_LLM_URL and KNOWHUB_LLM_MODEL)',
    )
  }
  const logger = deps.logger ?? noopLogger
  const conversation = await prepareConversation(input.messages)
  const result: ExtractResult = {
    mode: input.mode,
    items: [],
    secrets_found: conversation.secrets.length,
    resources_created: [],
    llm_calls: 0,
    dropped: [],
    refused: [],
    problems: [],
  }
  if (conversation.prompt.length === 0) return result
  const { kept, omitted } = fitConversation(conversation.prompt)
  if (omitted > 0) logger.warn('knowledge.extract.cut', { omitted_messages: omitted })
  const { proposals, shown } = await propose(llm, kept, result, logger)
  const grounding = deps.grounding ?? {}
  // Proposals rest on the turns the model was shown (after a cut, not the older ones).
  const shownIds = new Set(shown.map((m) => m.id))
  const turns = conversation.turns.filter((t) => shownIds.has(conversation.promptIds.get(t.index)!))
  let planned = await planItems(proposals, context, { ...conversation, turns }, result, grounding)
  const cases = await findCandidates(deps, planned, principal)
  if (cases.length > 0) {
    const decided = await decide(llm, planned, cases, result)
    if (decided) await groundUpdates(decided, conversation, grounding, result)
    planned = decided ?? planned.filter((_item, index) => !cases.some((c) => c.proposal === index))
  }
  planned = await settleUnsupported(planned, { ...conversation, turns }, grounding, result)
  await applyPlan(deps, planned, { principal, context, mode: input.mode, secrets: conversation.secrets, now: (deps.clock ?? systemClock).now() }, result)
  logger.info('knowledge.extract.done', {
    mode: input.mode,
    messages: conversation.prompt.length,
    items: result.items.length,
    llm_calls: result.llm_calls,
    secrets: result.secrets_found,
    refused: result.refused.length,
    dropped: result.dropped.length,
    problems: result.problems.length,
  })
  return result
}

/**
 * An answer the model got wrong even after the repair request (not JSON, against the schema, cut
 * at the token cap): reported in `result.problems` with its reason, nothing of it kept (true).
 * Anything else (the endpoint failing or too slow: `llm_failed`, `llm_timeout`) is the caller's
 * error to see (false).
 */
function unusable(error: unknown, stage: 'propose' | 'decide', result: ExtractResult): boolean {
  if (!isKnowHubError(error, 'llm_invalid_output')) return false
  const reason = typeof error.details?.reason === 'string' ? error.details.reason : 'invalid'
  const what = stage === 'propose' ? 'nothing was proposed' : 'the proposals that needed a decision were dropped'
  result.problems.push({ stage, reason, detail: `the model's answer could not be used (${reason}): ${what}` })
  return true
}

/**
 * The decision request for the proposals with similar entries, its decisions applied; undefined
 * when the answer was unusable (see {@link unusable}).
 */
async function decide(llm: LlmProvider, planned: PlannedItem[], cases: DecisionCase[], result: ExtractResult): Promise<PlannedItem[] | undefined> {
  result.llm_calls++
  let answer: ReturnType<typeof readDecisions>
  try {
    answer = readDecisions(
      await llm.json('extract', decideMessages(cases), Decisions, {
        name: 'knowledge_decisions',
        ask: decisionsAsk(cases.length),
        maxTokens: DECIDE_MAX_TOKENS,
      }),
    )
  } catch (error) {
    if (!unusable(error, 'decide', result)) throw error
    for (const c of cases) result.dropped.push({ task: c.task, reason: 'undecided: the model could not say whether it is new or repeats a similar entry' })
    return undefined
  }
  for (const detail of answer.invalid)
    result.problems.push({ stage: 'decide', reason: 'invalid', detail: `a decision was left out (its proposal is added): ${detail}` })
  applyDecisions(planned, cases, answer.decisions, result)
  return planned
}

/**
 * The proposal request; an answer cut at max_tokens asks again with the newest half of the
 * messages (at most {@link SHRINKS} times), each time reported in `result.problems`. Entries that
 * break the schema are dropped with their reason; the others kept.
 */
async function propose(
  llm: LlmProvider,
  kept: PromptMessage[],
  result: ExtractResult,
  logger: Logger,
): Promise<{ proposals: Proposal[]; shown: PromptMessage[] }> {
  let messages = kept
  for (let shrinks = 0; ; shrinks++) {
    result.llm_calls++
    try {
      const answer = await llm.json('extract', proposeMessages(messages, conversationLanguage(messages)), Proposals, {
        name: 'knowledge_proposals',
        ask: ProposalsAsk,
        maxTokens: PROPOSE_MAX_TOKENS,
      })
      const { proposals, invalid } = readProposals(answer)
      result.dropped.push(...invalid)
      return { proposals, shown: messages }
    } catch (error) {
      const truncated = isKnowHubError(error, 'llm_invalid_output') && error.details?.reason === 'truncated'
      if (!truncated || messages.length <= 1 || shrinks >= SHRINKS) {
        if (!unusable(error, 'propose', result)) throw error
        return { proposals: [], shown: messages }
      }
      const fewer = messages.slice(Math.ceil(messages.length / 2))
      logger.warn('knowledge.extract.truncated', { messages: messages.length, retry_with: fewer.length })
      result.problems.push({
        stage: 'propose',
        reason: 'truncated',
        detail: `the answer was cut at max_tokens: asked again with the newest ${fewer.length} of ${messages.length} messages`,
      })
      messages = fewer
    }
  }
}

/**
 * Proposals placed in the context (scopes, owner), grounded in the turns (src/knowledge/grounding.ts),
 * with the turns they rest on, their messages and secrets; those that cannot be placed or that the
 * turns do not support are dropped, with the reason.
 */
async function planItems(
  proposals: Proposal[],
  context: ExecutionContext,
  conversation: PreparedConversation,
  result: ExtractResult,
  grounding: GroundingOptions,
): Promise<PlannedItem[]> {
  const planned: PlannedItem[] = []
  for (const proposal of proposals) {
    const place = placement(proposal.types, context)
    if (!place) {
      const reason = proposal.types.includes('user_profile') ? 'a user profile needs a user in the context' : 'the context has no id to scope the entry to'
      result.dropped.push({ task: proposal.task, reason })
      continue
    }
    const verdict = await groundProposal(proposal, conversation.turns, grounding)
    planned.push({
      proposal,
      ...place,
      ...restingOn(proposal, verdict, conversation),
      action: 'add',
      existing: undefined,
      reason: 'new knowledge',
      ...(verdict.supported ? {} : { unsupported: verdict }),
    })
  }
  return planned
}

/** What a grounded proposal rests on: the turns that support it (not the ids the model cites: those are often wrong or invented), their messages, secrets and time. */
function restingOn(
  proposal: Proposal,
  verdict: Grounding,
  conversation: PreparedConversation,
): Pick<PlannedItem, 'messageIds' | 'turns' | 'grounding' | 'secrets' | 'statedAt'> {
  const turns = verdict.sources.filter((i) => i >= 0)
  const markers = new Set([...markersIn(proposal.task), ...markersIn(proposal.content)])
  return {
    turns,
    messageIds: turns.flatMap((i) => conversation.turns.find((t) => t.index === i)?.callerId ?? []),
    grounding: reportedGrounding(verdict),
    secrets: conversation.secrets.filter((s) => markers.has(s.n) || turns.includes(s.message)).map((s) => s.n),
    statedAt: statementTime(
      turns.flatMap((i) => conversation.promptIds.get(i) ?? []),
      conversation.times,
    ),
  }
}

/**
 * The proposals the turns alone did not support, settled once the model has decided: one that
 * updates or supersedes an entry is grounded again on the turns plus that entry (as an update's
 * merged content is), and kept when they support it; every other is dropped with its reason and
 * content, so that nothing ungrounded is saved.
 */
async function settleUnsupported(
  planned: PlannedItem[],
  conversation: PreparedConversation,
  grounding: GroundingOptions,
  result: ExtractResult,
): Promise<PlannedItem[]> {
  const kept: PlannedItem[] = []
  for (const item of planned) {
    if (!item.unsupported) {
      kept.push(item)
      continue
    }
    const candidate = item.existing && item.action !== 'noop' ? item.candidates?.find((c) => c.id === item.existing!.id) : undefined
    const verdict = candidate
      ? await groundProposal(item.proposal, conversation.turns, grounding, { index: -1, text: `${candidate.task}\n${candidate.content}` })
      : item.unsupported
    if (verdict.supported) {
      const { unsupported: _dropped, ...rest } = item
      kept.push({ ...rest, ...restingOn(item.proposal, verdict, conversation) })
      continue
    }
    const content = await settleSecrets(item.proposal.content, conversation.secrets, () => '[secret]')
    const source = candidate ? `the conversation and ${candidate.id}` : undefined
    result.dropped.push({ task: item.proposal.task, reason: ungroundedReason(verdict, source), content })
  }
  return kept
}

/**
 * An update's merged content must rest on the conversation and the entry it updates: one the two
 * do not support is refused (the proposal, grounded already, is added instead, and the refusal
 * reported).
 */
async function groundUpdates(planned: PlannedItem[], conversation: PreparedConversation, grounding: GroundingOptions, result: ExtractResult): Promise<void> {
  for (const item of planned) {
    if (item.action !== 'update' || !item.existing) continue
    const candidate = item.candidates?.find((c) => c.id === item.existing!.id)
    // Like the proposal: a user profile rests on the user's own turns (and the entry it updates).
    const profile = item.proposal.types.includes('user_profile')
    const turns = conversation.turns.filter((t) => (profile ? t.role === 'user' : t.role !== 'system'))
    const sources = [...turns.map((t) => ({ index: t.index, text: t.text })), { index: -1, text: candidate?.content ?? '' }]
    const verdict = await checkGrounding(item.existing.content, sources, grounding)
    if (verdict.supported) continue
    result.refused.push({
      task: item.proposal.task,
      action: 'update',
      existing_id: item.existing.id,
      reason: `the updated content is not supported by the conversation and ${item.existing.id} (${ungroundedReason(verdict)}): the proposal is added as a new entry`,
    })
    item.action = 'add'
    item.existing = undefined
    item.reason = 'new entry: the update was not supported by the conversation'
  }
}

/**
 * When a proposal was stated: the newest time of the messages it rests on (any id the model was
 * shown, the caller's or `m<index>`), else the newest time of the conversation, else undefined
 * (the entry is then valid from its save). It becomes the entry's `valid_from`, and the
 * `valid_to` of an entry it supersedes.
 * @example
 * statementTime(['m1'], new Map([['m1', '2025-05-20T14:02:00.000Z']])) // '2025-05-20T14:02:00.000Z'
 */
export function statementTime(messageIds: readonly string[], times: ReadonlyMap<string, string>): string | undefined {
  const newest = (values: Iterable<string | undefined>): string | undefined => {
    let best: string | undefined
    for (const value of values) if (value !== undefined && (best === undefined || Date.parse(value) > Date.parse(best))) best = value
    return best
  }
  return newest(messageIds.map((id) => times.get(id))) ?? newest(times.values())
}

/** For each planned item, the most similar current entries the caller can see (hybrid search, same types). */
async function findCandidates(deps: ExtractionDeps, planned: PlannedItem[], principal: Principal): Promise<DecisionCase[]> {
  const cases: DecisionCase[] = []
  for (const [index, item] of planned.entries()) {
    const { proposal } = item
    const q = `${proposal.task}\n${proposal.content}`.slice(0, 2000)
    const { results } = await deps.knowledge.search({ q, top_k: CANDIDATES, min_score: 0, types: proposal.types }, principal)
    if (results.length === 0) continue
    item.candidates = results.map((r) => ({ id: r.id, types: r.types, task: r.task, content: r.content }))
    cases.push({
      proposal: index,
      types: proposal.types,
      task: proposal.task,
      content: proposal.content,
      ...(item.statedAt !== undefined ? { stated_at: item.statedAt } : {}),
      candidates: item.candidates,
    })
  }
  return cases
}

/**
 * The model's decisions, checked: an unknown proposal keeps `add`; an update or supersede naming an
 * entry that was not a candidate (unknown, or not visible to the caller) keeps `add` and is
 * reported in `result.refused`.
 */
function applyDecisions(planned: PlannedItem[], cases: readonly DecisionCase[], decisions: readonly Decision[], result: ExtractResult): void {
  const asked = new Set(cases.map((c) => c.proposal))
  for (const decision of decisions) {
    const item = planned[decision.proposal]
    if (!item || !asked.has(decision.proposal) || decision.action === 'add') continue
    const candidate = item.candidates?.find((c) => c.id === decision.existing_id)
    if (!candidate) {
      item.reason = 'new knowledge (the model named an entry that was not among the similar ones)'
      if (decision.action !== 'noop') {
        result.refused.push({
          task: item.proposal.task,
          action: decision.action,
          existing_id: decision.existing_id,
          reason: `${decision.existing_id ?? 'no entry'} was not among the similar entries you can see: added as a new entry`,
        })
      }
      continue
    }
    if (decision.action === 'supersede') {
      item.action = 'supersede'
      item.existing = { id: candidate.id, content: candidate.content, contradicts: false }
      item.reason = `supersedes ${candidate.id}`
      continue
    }
    if (decision.action === 'update' && !decision.content?.trim()) {
      item.action = 'noop'
      item.existing = { id: candidate.id, content: candidate.content, contradicts: false }
      item.reason = `already known as ${candidate.id} (the update came without content)`
      continue
    }
    item.action = decision.action
    item.existing = { id: candidate.id, content: decision.content?.trim() || candidate.content, contradicts: decision.contradicts }
    item.reason = decision.action === 'noop' ? `already known as ${candidate.id}` : `${decision.contradicts ? 'contradicts' : 'extends'} ${candidate.id}`
  }
}
