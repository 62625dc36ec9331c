/**
 * Feedback on entries (seed 003 `PUT /api/knowledge/{id}` and `POST /api/knowledge/batch_update`):
 * helpful and harmful cases (atomic counters with history), a new score, and evolve (an LLM
 * rewrite that keeps the previous version).
 */
import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import {
  BatchFeedbackInput,
  FeedbackInput,
  type BatchFeedbackResult,
  type FeedbackRecord,
  type FeedbackResponse,
  type FeedbackSuggestion,
  type KnowledgeEntry,
} from '../../core/knowledge.js'
import { defaultOwnerOf, requirePermission, visibleScopes, type Principal, type WriteAccess } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { embeddingText, searchDocument } from '../search/document.js'
import { redactSecrets } from '../../llm/index.js'
import { checkGrounding, ungroundedReason } from '../grounding.js'
import { evolveCases, evolveContent, type EvolvedContent } from './evolve.js'
import { supersedeEntry } from './supersede.js'
import { requireVisible, toEntry } from './view.js'
import { mayManage, writeAccess } from '../../auth/policy.js'

/** The body of `POST /api/knowledge/batch_update`'s answer: items fail independently. */
export type { BatchFeedbackResult } from '../../core/knowledge.js'

/** An evolved content, checked and embedded, ready to write; or why the model's text was rejected. */
type Evolution = { content: string; embedding: Float32Array; reason: string } | { rejected: string; status: 'rejected' | 'failed' }

/**
 * Asks the model for the evolved content and prepares it (size checked, embedded) before
 * anything is written: a failure here leaves the entry untouched. Owner or admin only.
 */
async function prepareEvolution(
  ctx: KnowledgeContext,
  record: KnowledgeRecord,
  feedback: string,
  principal: Principal,
  pending: { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] },
): Promise<Evolution> {
  if (!ctx.llm) {
    throw new KnowHubError(
      'llm_not_configured',
      'evolve_feedback needs an LLM, and this KnowHub has none configured (set llm.url and llm.model, or KNOWHUB_LLM_URL and KNOWHUB_LLM_MODEL)',
    )
  }
  requirePermission(principal, 'write')
  if (!mayManage(principal, record)) {
    throw new KnowHubError(
      'forbidden',
      `Only the owner (${record.owner}) or an admin may evolve entry ${record.id}; helpful and harmful cases and score votes stay open to every writer who can see it`,
      {
        id: record.id,
        owner: record.owner,
      },
    )
  }
  ctx.requireVectors()
  const stored = (await ctx.store.knowledge.histories([record.id], visibleScopes(principal))).get(record.id) ?? { helpful: [], harmful: [] }
  // The cases sent with this feedback are part of what the model learns from, though they are written after the rewrite.
  const history = { helpful: [...stored.helpful, ...pending.helpful], harmful: [...stored.harmful, ...pending.harmful] }
  let evolved: EvolvedContent
  try {
    evolved = await evolveContent(ctx.llm, record, history, feedback)
  } catch (error) {
    // An answer the model got wrong even after the repair request: the rewrite is not applied, the rest of the feedback is.
    if (!isKnowHubError(error, 'llm_invalid_output')) throw error
    const why = typeof error.details?.reason === 'string' ? error.details.reason : 'invalid'
    ctx.logger.warn('knowledge.evolve.failed', { id: record.id, reason: why })
    return { rejected: `the model's answer could not be used (${why})`, status: 'failed' }
  }
  // The rewrite may only say what the entry, the feedback and its cases say (issue 43).
  const sources = [`${record.task}\n${record.content}`, feedback, ...evolveCases(history).map((c) => JSON.stringify(c))]
  const verdict = await checkGrounding(
    evolved.content,
    sources.map((text, index) => ({ index, text })),
    { ...ctx.grounding, conversational: false },
  )
  if (!verdict.supported) {
    const rejected = ungroundedReason(verdict, 'the entry or the feedback')
    ctx.logger.warn('knowledge.evolve.rejected', { id: record.id, reason: verdict.reason, coverage: verdict.coverage })
    return { rejected, status: 'rejected' }
  }
  ctx.checkContentSize(evolved.content)
  const embedding = await ctx.embedOne(embeddingText(record.task, evolved.content), 'document')
  // The version's reason keeps the feedback, never a secret in it (the model did not see it either).
  const said = (await redactSecrets(feedback)).text
  const reason = `evolve: ${said.slice(0, 500)}${evolved.change ? ` (${evolved.change.slice(0, 300)})` : ''}`
  return { content: evolved.content, embedding, reason }
}

/** Writes the evolved content; scopes, owner, types and tags stay. The previous version is kept. */
async function writeEvolution(
  ctx: KnowledgeContext,
  record: KnowledgeRecord,
  evolution: Exclude<Evolution, { rejected: string }>,
  access: WriteAccess,
  now: Date,
): Promise<KnowledgeRecord> {
  const change = {
    task: record.task,
    content: evolution.content,
    types: record.types,
    tags: record.tags,
    scopes: record.scopes,
    resource_ids: record.resource_ids,
  }
  const doc = searchDocument(change.task, change.content, change.tags)
  const updated = await ctx.store.knowledge.update(record.id, access, record.version, change, doc, evolution.embedding, evolution.reason, now)
  if (!updated) throw new KnowHubError('conflict', `Entry ${record.id} changed while it was being evolved; nothing was rewritten, retry`, { id: record.id })
  ctx.logger.info('knowledge.evolved', { id: record.id, version: updated.version })
  return updated
}

/**
 * Who gave a case or a vote: the principal's user id, else its agent id, else its first
 * other id (`anonymous` for a principal with none — they all count as one).
 * @example
 * feedbackGiver({ user: 'carol', org: 'acme', permissions: ['read', 'write'] }) // 'user:carol'
 */
export function feedbackGiver(principal: Principal): string {
  return defaultOwnerOf(principal) ?? 'anonymous'
}

/** Whether a harmful case says the entry is outdated (`reason: "outdated"`, or a reason that starts with the word). */
export function saysOutdated(reason: unknown): boolean {
  return typeof reason === 'string' && /^\s*outdated\b/i.test(reason)
}

/**
 * What a harmful case with `reason: "outdated"` on a current entry offers (issue 31): superseding
 * it by the entry that holds now, and whether the caller may.
 * @example
 * outdatedSuggestion(entry, true).how // 'PUT /api/knowledge/knowledge-… with {"supersede_with": …}'
 */
export function outdatedSuggestion(entry: Pick<KnowledgeEntry, 'id' | 'owner'>, allowed: boolean): FeedbackSuggestion {
  const how = `PUT /api/knowledge/${entry.id} with {"supersede_with": "<id of the entry that holds now>"} or {"supersede_with": {"task": …, "content": …, "types": […]}} (a new entry), optionally "valid_to"; CLI: knowhub supersede ${entry.id} --by <id>`
  return { action: 'supersede', reason: 'outdated', allowed, how: allowed ? how : `${how}. Only the owner (${entry.owner}) or an admin may: tell them.` }
}

/**
 * A helpful and/or harmful case, a new score, and/or evolve feedback (needs an LLM); or, alone,
 * `supersede_with` (issue 31: see supersede.ts). A harmful case whose reason is `outdated`
 * answers with a `suggest`ion to supersede the entry.
 * Any principal with `write` that can see the entry may give feedback (docs/feedback.md):
 * each case records its giver, and a non-owner's repeated harmful cases weigh less and
 * less; a new score from the owner (or an admin) sets the owner's score, anyone else's is
 * one vote, and the entry's score combines the two.
 * @example
 * await giveFeedback(ctx, id, { add_helpful_case: { task: 'scrape site A', outcome: 'worked' } }, principal)
 */
export async function giveFeedback(ctx: KnowledgeContext, id: string, raw: unknown, principal: Principal): Promise<FeedbackResponse> {
  requirePermission(principal, 'write')
  const input = parseWith(FeedbackInput, raw, 'feedback')
  if (input.supersede_with !== undefined) {
    const { superseded, current } = await supersedeEntry(ctx, id, { by: input.supersede_with, valid_to: input.valid_to }, principal)
    return { ...superseded, current }
  }
  const access = writeAccess(principal)
  let record = await requireVisible(ctx.store, id, principal)
  const now = ctx.clock.now()
  const recorded = (c: Record<string, unknown>): FeedbackRecord => ({ ...c, timestamp: typeof c.timestamp === 'string' ? c.timestamp : now.toISOString() })
  // The rewrite comes first: when the model fails, nothing of this feedback is written.
  const pending = {
    helpful: input.add_helpful_case ? [recorded(input.add_helpful_case)] : [],
    harmful: input.add_harmful_case ? [recorded(input.add_harmful_case)] : [],
  }
  const evolution = input.evolve_feedback !== undefined ? await prepareEvolution(ctx, record, input.evolve_feedback, principal, pending) : undefined
  const feedback = ctx.store.knowledge
  const manager = mayManage(principal, record)
  const giver = feedbackGiver(principal)
  if (input.add_helpful_case) record = (await feedback.addFeedback(id, access, 'helpful', recorded(input.add_helpful_case), giver, now)) ?? record
  if (input.add_harmful_case) record = (await feedback.addFeedback(id, access, 'harmful', recorded(input.add_harmful_case), giver, now)) ?? record
  if (input.update_score !== undefined) {
    const scored = manager
      ? await feedback.setOwnerScore(id, access, input.update_score, now)
      : await feedback.voteScore(id, access, giver, input.update_score, now)
    record = scored ?? record
  }
  if (evolution && !('rejected' in evolution)) record = await writeEvolution(ctx, record, evolution, access, now)
  const entry = await toEntry(ctx.store, record, access.visible)
  const evolve = evolution
    ? { evolve: 'rejected' in evolution ? { status: evolution.status, reason: evolution.rejected } : { status: 'applied' as const } }
    : {}
  if (input.add_harmful_case && saysOutdated(input.add_harmful_case.reason) && record.valid_to === null) {
    return { ...entry, ...evolve, suggest: outdatedSuggestion(entry, manager) }
  }
  return { ...entry, ...evolve }
}

/**
 * One helpful/harmful case per item; items fail independently.
 * @example
 * const { updated } = await batchFeedback(ctx, { feedback_list: [{ knowledge_id: id, is_helpful: true, case: { task: 't' } }] }, principal)
 */
export async function batchFeedback(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<BatchFeedbackResult> {
  requirePermission(principal, 'write')
  const input = parseWith(BatchFeedbackInput, raw, 'batch feedback')
  const results: BatchFeedbackResult['results'] = []
  for (const item of input.feedback_list) {
    try {
      await giveFeedback(ctx, item.knowledge_id, item.is_helpful ? { add_helpful_case: item.case } : { add_harmful_case: item.case }, principal)
      results.push({ knowledge_id: item.knowledge_id, ok: true })
    } catch (error) {
      const e = error as KnowHubError
      results.push({ knowledge_id: item.knowledge_id, ok: false, error: { code: e.code ?? 'internal_error', message: e.message } })
    }
  }
  return { updated: results.filter((r) => r.ok).length, results }
}
