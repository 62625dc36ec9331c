/**
 * Feedback on entries (seed 003 `PUT /api/knowledge/{id}` and `POST /api/knowledge/batch_update`):
 * helpful and harmful cases (atomic counters with history), a new score, and evolve (an LLM
 * rewrite that keeps the previous version).
 */
import { KnowHubError } from '../core/errors.js'
import { BatchFeedbackInput, FeedbackInput, type FeedbackRecord, type BatchFeedbackResult, type KnowledgeEntry } from '../core/knowledge.js'
import { requirePermission, visibleScopes, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { KnowledgeRecord } from '../store/knowledge.js'
import type { KnowledgeContext } from './context.js'
import { embeddingText, searchDocument } from './document.js'
import { requireVisible, toEntry } from './view.js'

/** The body of `POST /api/knowledge/batch_update`'s answer: items fail independently. */
export type { BatchFeedbackResult } from '../core/knowledge.js'

/** Rewrites the entry's content with the configured evolve step; the previous version is kept. */
async function evolveEntry(ctx: KnowledgeContext, record: KnowledgeRecord, feedback: string, visible: string[], now: Date): Promise<KnowledgeRecord> {
  const evolve = ctx.evolve!
  const content = await evolve(await toEntry(ctx.store, record), feedback)
  ctx.checkContentSize(content)
  const change = { task: record.task, content, types: record.types, tags: record.tags, scopes: record.scopes, resource_ids: record.resource_ids }
  const updated = await ctx.store.knowledge.update(
    record.id,
    visible,
    record.version,
    change,
    searchDocument(change.task, content, change.tags),
    await ctx.embedOne(embeddingText(change.task, content)),
    `evolve: ${feedback.slice(0, 500)}`,
    now,
  )
  if (!updated) throw new KnowHubError('conflict', `Entry ${record.id} changed while it was being evolved; retry`, { id: record.id })
  return updated
}

/**
 * A helpful and/or harmful case, a new score, and/or evolve feedback (needs an LLM).
 * Anyone who can see the entry may give feedback.
 * @example
 * await giveFeedback(ctx, id, { add_helpful_case: { task: 'scrape site A', outcome: 'worked' } }, principal)
 */
export async function giveFeedback(ctx: KnowledgeContext, id: string, raw: unknown, principal: Principal): Promise<KnowledgeEntry> {
  requirePermission(principal, 'read')
  const input = parseWith(FeedbackInput, raw, 'feedback')
  const visible = visibleScopes(principal)
  let record = await requireVisible(ctx.store, id, principal)
  if (input.evolve_feedback !== undefined && !ctx.evolve) {
    throw new KnowHubError('llm_not_configured', 'evolve_feedback needs an LLM, and this KnowHub has none configured')
  }
  const now = ctx.clock.now()
  const recorded = (c: Record<string, unknown>): FeedbackRecord => ({ ...c, timestamp: typeof c.timestamp === 'string' ? c.timestamp : now.toISOString() })
  const feedback = ctx.store.knowledge
  if (input.add_helpful_case) record = (await feedback.addFeedback(id, visible, 'helpful', recorded(input.add_helpful_case), now)) ?? record
  if (input.add_harmful_case) record = (await feedback.addFeedback(id, visible, 'harmful', recorded(input.add_harmful_case), now)) ?? record
  if (input.update_score !== undefined) record = (await feedback.setScore(id, visible, input.update_score, now)) ?? record
  if (input.evolve_feedback !== undefined) record = await evolveEntry(ctx, record, input.evolve_feedback, visible, now)
  return toEntry(ctx.store, record)
}

/**
 * One helpful/harmful case per item; items fail independently.
 * @example
 * const { updated } = await batchFeedback(ctx, { feedback_list: [{ knowledge_id: id, is_helpful: true, case: { task: 't' } }] }, principal)
 */
export async function batchFeedback(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<BatchFeedbackResult> {
  requirePermission(principal, 'read')
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
