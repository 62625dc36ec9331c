/**
 * Extraction, last step: the planned items become entries (save mode) or a report of what
 * would happen (propose mode). ADD saves a new entry (helpful 1, confidence 0.5: seed 002);
 * UPDATE edits the existing entry (its previous version kept); SUPERSEDE saves the new entry
 * and closes the existing one (`valid_to` = when the new statement was made, `superseded_by`)
 * in one transaction; NOOP adds a helpful case to it. Nothing is ever deleted: a superseded
 * entry stays, as history. User profiles accumulate confidence (see {@link PROFILE_CONFIRM}).
 * New entries are valid from the time of the messages they rest on, when the caller gave it.
 * Secrets referenced by the items go into one resource's `secure_body`.
 */
import { randomBytes } from 'node:crypto'
import { isKnowHubError } from '../../core/errors.js'
import type { ExtractGrounding, ExtractItem, ExtractResult } from '../../core/extract.js'
import type { KnowledgeEntry } from '../../core/knowledge.js'
import type { Principal } from '../../core/principal.js'
import type { Clock } from '../../core/clock.js'
import type { Logger } from '../../core/logger.js'
import type { LlmProvider } from '../../llm/index.js'
import type { ResourceService } from '../../resources/service.js'
import type { Store } from '../../store/store.js'
import type { KnowledgeService } from '../service.js'
import type { Grounding, GroundingOptions } from '../grounding.js'
import { secretsPlacement, type ExecutionContext } from './execution-context.js'
import type { Proposal } from './prompt.js'
import { settleSecrets, type FoundSecret } from './secrets.js'
import { mayManage, writeAccess } from '../../auth/policy.js'

/**
 * A restated (or extended) user profile moves 30 % of the way to confidence 0.95:
 * 0.5 → 0.635 → 0.73 → 0.80 → 0.85 …
 */
export const PROFILE_CONFIRM = { target: 0.95, rate: 0.3 } as const
/** A contradicted user profile moves half of the way to 0.1 (0.8 → 0.45), and its text gets a new version. */
export const PROFILE_CONTRADICT = { target: 0.1, rate: 0.5 } as const

/** What extraction is built on (see createExtractionService in extract.ts). */
export interface ExtractionDeps {
  knowledge: Pick<KnowledgeService, 'search' | 'save' | 'edit' | 'feedback' | 'get' | 'supersede'>
  resources: Pick<ResourceService, 'save'>
  /** For the atomic confidence changes of user profiles. */
  store: Store
  llm: LlmProvider | undefined
  /** How proposals are judged against the conversation (thresholds; the embedding similarity when a semantic model is configured). */
  grounding?: GroundingOptions
  logger?: Logger
  clock?: Clock
}

/** One proposal on its way to the store. */
export interface PlannedItem {
  proposal: Proposal
  scopes: string[]
  owner: string
  messageIds: string[]
  /** The turns it rests on (positions in the caller's messages). */
  turns: number[]
  grounding: ExtractGrounding
  /** Markers of the secrets it needs. */
  secrets: number[]
  /** When it was stated (see statementTime in extract.ts): the new entry's `valid_from`. */
  statedAt: string | undefined
  action: 'add' | 'update' | 'supersede' | 'noop'
  /** The existing entry of an update, supersede or noop, and the new content of an update. */
  existing: { id: string; content: string; contradicts: boolean } | undefined
  candidates?: Array<{ id: string; types: string[]; task: string; content: string }>
  reason: string
  /**
   * The verdict on a proposal the turns alone do not support: kept only when the model decides it
   * updates or supersedes a similar entry and the turns with that entry support it (a new fact
   * that names what the old one said: "the App's minimum is now Android 10"); dropped otherwise.
   */
  unsupported?: Grounding
}

export interface ApplyOptions {
  principal: Principal
  context: ExecutionContext
  mode: 'propose' | 'save'
  secrets: FoundSecret[]
  now: Date
}

/**
 * The confidence after a confirmation or a contradiction (the store applies the same rule atomically).
 * @example
 * movedConfidence(0.5, PROFILE_CONFIRM) // 0.635
 */
export function movedConfidence(confidence: number, rule: { target: number; rate: number }): number {
  return confidence + (rule.target - confidence) * rule.rate
}

/** The resource holding the secrets the items need (save mode); its id, or undefined. */
async function saveSecrets(deps: ExtractionDeps, planned: PlannedItem[], options: ApplyOptions, result: ExtractResult): Promise<string | undefined> {
  const needed = new Set(planned.flatMap((item) => item.secrets))
  const first = planned.find((item) => item.secrets.length > 0)
  if (options.mode !== 'save' || needed.size === 0 || !first) return undefined
  const secrets = options.secrets.filter((s) => needed.has(s.n))
  const cookies = secrets.every((s) => s.kind === 'cookie')
  const stamp = options.now.toISOString().replace(/[-:T]/g, '').slice(0, 14)
  const id = `${cookies ? 'cookies' : 'credentials'}/extracted-${stamp}-${randomBytes(3).toString('hex')}`
  const trace = options.context.trace_id ? ` (trace ${options.context.trace_id})` : ''
  await deps.resources.save(
    {
      id,
      title: `Secrets from a conversation${trace}`,
      body: `Found by knowledge extraction: ${secrets.map((s) => s.label).join(', ')}. Referenced by the extracted entries through resource_ids.`,
      secure_body: secrets.map((s) => `${s.label}: ${s.value}`).join('\n'),
      content_type: cookies ? 'cookie' : 'credential',
      metadata: { acquired_at: options.now.toISOString() },
      // The user's own scope by default: a conversation's secrets are not the org's (issue 27).
      ...secretsPlacement(options.context, { scopes: first.scopes, owner: first.owner }),
    },
    options.principal,
  )
  result.resources_created.push(id)
  return id
}

/**
 * Writes (save) or reports (propose) every planned item into `result.items`.
 * @example
 * await applyPlan(deps, planned, { principal, context, mode: 'save', secrets, now: new Date() }, result)
 */
export async function applyPlan(deps: ExtractionDeps, planned: PlannedItem[], options: ApplyOptions, result: ExtractResult): Promise<void> {
  const resourceId = await saveSecrets(deps, planned, options, result)
  const settle = (text: string): Promise<string> =>
    settleSecrets(text, options.secrets, () => (resourceId ? `[secret stored in resource ${resourceId}]` : '[secret]'))
  for (const item of planned) {
    const { proposal } = item
    const tags: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(proposal.tags)) tags[k] = typeof v === 'string' ? await settle(v) : v
    const shown: ExtractItem = {
      action: item.action,
      id: null,
      existing_id: item.existing?.id ?? null,
      types: proposal.types,
      task: await settle(proposal.task),
      content: await settle(item.action === 'update' && item.existing ? item.existing.content : proposal.content),
      tags,
      scopes: item.scopes,
      owner: item.owner,
      message_ids: item.messageIds,
      turns: item.turns,
      grounding: item.grounding,
      resource_ids: resourceId && item.secrets.length > 0 ? [resourceId] : [],
      confidence: 0.5,
      reason: item.reason,
    }
    result.items.push(
      options.mode === 'save'
        ? await writeItem(deps, item, shown, await settle(proposal.content), options, result)
        : await predictItem(deps, shown, options.principal, result),
    )
  }
}

/** Why the caller's extraction may not supersede `id` (not visible, not editable, no longer current), or undefined when it may. */
async function supersedeRefusal(deps: ExtractionDeps, id: string, principal: Principal): Promise<string | undefined> {
  let existing: KnowledgeEntry
  try {
    existing = await deps.knowledge.get(id, principal)
  } catch (error) {
    if (isKnowHubError(error, 'not_found')) return `${id} is not an entry you can see`
    throw error
  }
  if (!mayManage(principal, existing)) return `${id} is owned by ${existing.owner}, and you may not edit it`
  if (existing.valid_to !== null) return `${id} was already superseded${existing.superseded_by ? ` by ${existing.superseded_by}` : ''}`
  return undefined
}

/** A refused decision: the item becomes an ADD of the proposal, and the refusal is reported. */
function refuse(shown: ExtractItem, proposedContent: string, why: string, result: ExtractResult): ExtractItem {
  result.refused.push({ task: shown.task, action: shown.action, existing_id: shown.existing_id, reason: `${why}: the proposal is added as a new entry` })
  return { ...shown, action: 'add', existing_id: null, content: proposedContent, reason: `new entry: ${why}` }
}

/** Propose mode: what the item would do, with the confidence it would leave. */
async function predictItem(deps: ExtractionDeps, shown: ExtractItem, principal: Principal, result: ExtractResult): Promise<ExtractItem> {
  if (shown.action === 'add' || !shown.existing_id) return shown
  if (shown.action === 'supersede') {
    const refusal = await supersedeRefusal(deps, shown.existing_id, principal)
    return refusal ? refuse(shown, shown.content, refusal, result) : shown
  }
  const existing = await deps.knowledge.get(shown.existing_id, principal)
  const rule = shown.action === 'update' && shown.reason.startsWith('contradicts') ? PROFILE_CONTRADICT : PROFILE_CONFIRM
  const confidence = existing.types.includes('user_profile') ? movedConfidence(existing.eval.confidence, rule) : existing.eval.confidence
  return { ...shown, id: existing.id, confidence }
}

/** The helpful case an extraction records: what it rests on (the caller's message ids and the turns' positions). */
function extractionCase(item: ExtractItem, context: ExecutionContext, outcome: string): Record<string, unknown> {
  return { task: 'knowledge extraction', outcome, trace_id: context.trace_id, message_ids: item.message_ids, turns: item.turns }
}

/** The save input of a new entry: valid from when it was stated, when the conversation says. */
function newEntryInput(shown: ExtractItem, item: PlannedItem, context: ExecutionContext): Record<string, unknown> {
  const stated = item.statedAt !== undefined ? { valid_from: item.statedAt } : {}
  return {
    task: shown.task,
    content: shown.content,
    types: shown.types,
    tags: shown.tags as Record<string, string>,
    scopes: shown.scopes,
    owner: shown.owner,
    message_id: shown.message_ids[0] ?? '',
    resource_ids: shown.resource_ids,
    confidence: 0.5,
    ...stated,
    source: {
      name: 'conversation',
      category: 'exp',
      agent_id: context.ids.agent ?? '',
      trace_id: context.trace_id,
      message_id: shown.message_ids[0] ?? '',
      ...(item.statedAt !== undefined ? { timestamp: item.statedAt } : {}),
    },
  }
}

/** Save mode: one item written. */
async function writeItem(
  deps: ExtractionDeps,
  item: PlannedItem,
  shown: ExtractItem,
  proposedContent: string,
  options: ApplyOptions,
  result: ExtractResult,
): Promise<ExtractItem> {
  const { principal, context } = options
  if (item.action === 'supersede' && item.existing) {
    let refusal = await supersedeRefusal(deps, item.existing.id, principal)
    if (!refusal) {
      try {
        // The new entry is inserted and the old one closed in one transaction (src/knowledge/supersede.ts).
        const { current } = await deps.knowledge.supersede(item.existing.id, { by: newEntryInput(shown, item, context) }, principal)
        const withCase = await deps.knowledge.feedback(
          current.id,
          { add_helpful_case: extractionCase(shown, context, 'superseded an entry from a conversation') },
          principal,
        )
        return { ...shown, id: current.id, confidence: withCase.eval.confidence }
      } catch (error) {
        // Changed since the check (superseded, archived or moved meanwhile): nothing was written.
        if (!isKnowHubError(error, 'conflict') && !isKnowHubError(error, 'not_found') && !isKnowHubError(error, 'forbidden')) throw error
        refusal = (error as Error).message
      }
    }
    shown = refuse(shown, proposedContent, refusal, result)
  } else if (item.action !== 'add' && item.existing) {
    const existing = await deps.knowledge.get(item.existing.id, principal)
    if (item.action === 'noop' || mayManage(principal, existing)) {
      if (item.action === 'update') {
        const resource_ids = [...new Set([...existing.resource_ids, ...shown.resource_ids])]
        await deps.knowledge.edit(
          existing.id,
          { content: shown.content, resource_ids, reason: `extract: ${item.reason}${context.trace_id ? ` (trace ${context.trace_id})` : ''}` },
          principal,
        )
      }
      const outcome = item.action === 'noop' ? 'restated in a conversation' : 'updated from a conversation'
      let updated = await deps.knowledge.feedback(existing.id, { add_helpful_case: extractionCase(shown, context, outcome) }, principal)
      if (existing.types.includes('user_profile')) {
        const rule = item.existing.contradicts ? PROFILE_CONTRADICT : PROFILE_CONFIRM
        const moved = await deps.store.knowledge.moveConfidence(existing.id, writeAccess(principal), rule.target, rule.rate, options.now)
        if (moved) updated = { ...updated, eval: { ...updated.eval, confidence: moved.confidence } }
      }
      return { ...shown, content: updated.content, id: existing.id, confidence: updated.eval.confidence }
    }
    shown = refuse(shown, proposedContent, `${existing.id} is similar but owned by ${existing.owner}`, result)
  }
  const saved = await deps.knowledge.save(newEntryInput(shown, item, context), principal)
  const withCase = await deps.knowledge.feedback(saved.id, { add_helpful_case: extractionCase(shown, context, 'extracted from a conversation') }, principal)
  return { ...shown, id: saved.id, confidence: withCase.eval.confidence }
}
