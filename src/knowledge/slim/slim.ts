/**
 * Knowledge slimming without an LLM (`POST /api/knowledge/slim`): find groups of
 * near-duplicate entries among those the caller can see, and merge each group into
 * one new entry deterministically. Nothing is deleted: the originals become
 * `merged` with a `merged_into` pointer and {@link unmergeKnowledge} restores them.
 *
 * Near-duplicates: two active entries whose stored vectors have cosine similarity
 * ≥ `threshold` AND whose word sets (task + content) overlap (Jaccard) ≥
 * `min_overlap`, AND whose scope sets are identical (a merge never changes who can
 * read a text: near-duplicates in different scopes are reported as `scopes_differ`);
 * groups are the connected components (union-find). Comparison is pairwise in memory
 * over a window of `limit` entries, newest first (default 2,000: 2 million pairs, 2-5 s
 * at 512 dimensions on a busy 2-core machine; at most 5,000: 12.5 million pairs).
 * When more entries exist (`truncated`), `next_cursor` continues with the next, older
 * window, which starts half a window later: neighbouring windows overlap by half, so
 * two entries fewer than `limit / 2` apart in age order always meet in some window.
 *
 * Detection lives in slim-detect.ts, the merge in slim-merge.ts.
 */
import type { Clock } from '../../core/clock.js'
import { systemClock } from '../../core/clock.js'
import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import { KnowledgeId, MAX_CONTENT_BYTES } from '../../core/knowledge.js'
import type { Logger } from '../../core/logger.js'
import { noopLogger } from '../../core/logger.js'
import { assertWritableScopes, requirePermission, visibleScopes, type Principal } from '../../core/principal.js'
import { SlimInput, type SlimGroup, type SlimResult, type SlimSkipped, type UnmergeResult } from '../../core/slim.js'
import { parseWith } from '../../core/validate.js'
import type { Embedder } from '../../embed/embedder.js'
import type { LlmProvider } from '../../llm/index.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { findDuplicates, loadWindow, windowPosition } from './detect.js'
import { byLead, mergeContent, unite, writeMerge } from './merge.js'
import { llmMergedContent } from './llm.js'
import { checkGrounding, ungroundedReason, type GroundingOptions } from '../grounding.js'
import { mayManage, writeAccess } from '../../auth/policy.js'

export { mergeContent } from './merge.js'

export interface SlimDeps {
  store: Store
  embedder: Embedder
  logger?: Logger
  clock?: Clock
  /** Largest merged content in UTF-8 bytes (default 1 MiB); beyond it the lead entry's text is kept alone. */
  maxContentBytes?: number
  /** Writes merged texts when configured (else the deterministic merge). */
  llm?: LlmProvider | undefined
  /** How the model's merged text is judged against the group's contents (src/knowledge/grounding.ts). */
  grounding?: GroundingOptions | undefined
}

/** Slimming as a service: built once by the composition root. */
export interface SlimService {
  slim(body: unknown, principal: Principal): Promise<SlimResult>
  unmerge(mergedEntryId: string, principal: Principal): Promise<UnmergeResult>
}

/**
 * Slimming over one set of dependencies.
 * @example
 * const slim = createSlimService({ store, embedder, logger })
 * const plan = await slim.slim({ dry_run: true }, principal)
 */
export function createSlimService(deps: SlimDeps): SlimService {
  return {
    slim: (body, principal) => slimKnowledge(deps, body, principal),
    unmerge: (id, principal) => unmergeKnowledge(deps, id, principal),
  }
}

/** The merged text of a group: the LLM's when configured, else the deterministic merge; an LLM failure is reported, not thrown. */
async function mergedText(
  deps: SlimDeps,
  records: KnowledgeRecord[],
  model: string | undefined,
): Promise<{ content: string; merge: 'llm' | 'deterministic' } | { failed: string } | { ungrounded: string }> {
  if (!deps.llm) {
    const [lead, ...others] = records as [KnowledgeRecord, ...KnowledgeRecord[]]
    return {
      content: mergeContent(
        lead.content,
        others.map((o) => o.content),
      ),
      merge: 'deterministic',
    }
  }
  let content: string
  try {
    content = await llmMergedContent(deps.llm, records, model)
  } catch (error) {
    if (isKnowHubError(error) && error.code.startsWith('llm_')) return { failed: error.code }
    throw error
  }
  // The merged text may only say what the entries say (issue 43).
  const sources = records.map((r, index) => ({ index, text: `${r.task}\n${r.content}` }))
  const verdict = await checkGrounding(content, sources, { ...deps.grounding, conversational: false })
  return verdict.supported ? { content, merge: 'llm' } : { ungrounded: ungroundedReason(verdict, 'the entries') }
}

async function readyVectors(store: Store, embedder: Embedder): Promise<void> {
  const state = store.vectorState() ?? (await store.prepareVectors(embedder))
  if (state.status === 'mismatch') {
    throw new KnowHubError(
      'embedder_mismatch',
      `The knowledge base was indexed with ${state.stored.model} (${state.stored.dimension} dimensions) but the configured embedder is ${state.wanted.model} (${state.wanted.dimension}). Run \`knowhub reindex\` first.`,
      { stored: state.stored, wanted: state.wanted },
    )
  }
}

/**
 * Finds near-duplicate entries the caller can see and merges each group the caller may
 * manage (owner or admin of every member, all in the same scopes, which the caller may
 * write) into one new entry in those scopes: counters summed, feedback histories
 * concatenated, sources, types, tags and resource_ids united, score and confidence the
 * maximum. The originals become
 * `merged` (pointing at the new entry); nothing is deleted. With `dry_run` only the plan
 * is returned.
 * @example
 * const plan = await slimKnowledge({ store, embedder }, { dry_run: true }, principal)
 * const done = await slimKnowledge({ store, embedder }, { threshold: 0.92 }, principal)
 */
export async function slimKnowledge(deps: SlimDeps, body: unknown, principal: Principal): Promise<SlimResult> {
  requirePermission(principal, 'write')
  const input = parseWith(SlimInput, body ?? {}, 'slim options')
  const logger = deps.logger ?? noopLogger
  await readyVectors(deps.store, deps.embedder)
  const visible = visibleScopes(principal)
  const window = await loadWindow(deps.store, visible, input.limit, input.cursor !== undefined ? windowPosition(input.cursor) : undefined)
  const found = findDuplicates(window.items, principal, input.threshold, input.min_overlap)
  const skipped: SlimSkipped[] = [...found.skipped]
  const groups: SlimGroup[] = []
  let mergedCount = 0
  for (const group of found.mergeable) {
    const records = group.map((i) => window.items[i]!.record).sort(byLead)
    const ids = records.map((r) => r.id)
    const scopes = unite(
      records.map((r) => r.scopes),
      Number.MAX_SAFE_INTEGER,
    )
    try {
      assertWritableScopes(principal, scopes)
    } catch (error) {
      skipped.push({
        ids,
        reason: 'scopes_not_writable',
        message: `Not merged: the merged entry would be in ${scopes.join(', ')}, and ${(error as Error).message}`,
      })
      continue
    }
    const similarity = found.similarity(group)
    const written = await mergedText(deps, records, input.model)
    if ('failed' in written) {
      skipped.push({ ids, reason: 'llm_failed', message: `Not merged: the LLM's merged text failed (${written.failed}); nothing of the group changed` })
      continue
    }
    if ('ungrounded' in written) {
      skipped.push({
        ids,
        reason: 'ungrounded',
        message: `Not merged: the LLM's merged text says what the entries do not (${written.ungrounded}); nothing of the group changed`,
      })
      continue
    }
    const shown = { merged_content: written.content, merge: written.merge }
    if (input.dry_run) {
      groups.push({ kept_id: null, merged_ids: ids, similarity, ...shown })
      continue
    }
    const content = written.merge === 'llm' ? written.content : undefined
    const outcome = await writeMerge(
      deps,
      records,
      writeAccess(principal),
      (deps.clock ?? systemClock).now(),
      deps.maxContentBytes ?? MAX_CONTENT_BYTES,
      content,
    )
    if (outcome === 'changed') {
      skipped.push({ ids, reason: 'changed', message: 'Not merged: an entry of the group changed (no longer active or visible) during the run' })
      continue
    }
    groups.push({ kept_id: outcome.id, merged_ids: ids, similarity, ...shown })
    mergedCount += ids.length
    logger.info('knowledge.slim.merged', { id: outcome.id, merged_ids: ids, similarity })
  }
  const considered = window.items.length
  logger.info('knowledge.slim.done', { dry_run: input.dry_run, considered, groups: groups.length, merged: mergedCount, skipped: skipped.length })
  return {
    dry_run: input.dry_run,
    threshold: input.threshold,
    min_overlap: input.min_overlap,
    considered,
    truncated: window.truncated,
    next_cursor: window.next_cursor,
    groups,
    merged: mergedCount,
    skipped,
  }
}

/**
 * Undoes a merge made by {@link slimKnowledge}: the originals become active again,
 * exactly as they were, and the merged entry is archived (kept, hidden). The caller
 * must manage the merged entry and every original.
 * @example
 * await unmergeKnowledge({ store, embedder }, 'knowledge-20260306120000-ab12', principal)
 */
export async function unmergeKnowledge(deps: SlimDeps, mergedEntryId: string, principal: Principal): Promise<UnmergeResult> {
  requirePermission(principal, 'write')
  parseWith(KnowledgeId, mergedEntryId, 'knowledge id')
  const { store } = deps
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ?? systemClock
  const visible = visibleScopes(principal)
  const record = await store.knowledge.get(mergedEntryId, visible)
  if (!record) throw new KnowHubError('not_found', `No knowledge entry ${mergedEntryId}`, { id: mergedEntryId })
  if (!mayManage(principal, record)) {
    throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may unmerge entry ${mergedEntryId}`, {
      id: mergedEntryId,
      owner: record.owner,
    })
  }
  const { records, total } = await store.knowledge.mergedFrom(mergedEntryId, visible)
  if (total === 0)
    throw new KnowHubError('conflict', `Nothing is merged into entry ${mergedEntryId}: it is not the result of a merge, or it was unmerged already`, {
      id: mergedEntryId,
    })
  if (records.length < total)
    throw new KnowHubError('forbidden', `Some entries merged into ${mergedEntryId} are not visible to you; ask their owner or an admin`, { id: mergedEntryId })
  const foreign = records.filter((r) => !mayManage(principal, r)).map((r) => r.id)
  if (foreign.length > 0) throw new KnowHubError('forbidden', `You may not restore ${foreign.join(', ')}: only the owner or an admin may`, { ids: foreign })
  if (record.status !== 'active')
    throw new KnowHubError('conflict', `Entry ${mergedEntryId} is ${record.status}; only an active merged entry can be unmerged`, {
      id: mergedEntryId,
      status: record.status,
    })
  const ids = records.map((r) => r.id)
  if (!(await store.knowledge.unmerge(mergedEntryId, ids, writeAccess(principal), clock.now()))) {
    throw new KnowHubError('conflict', `Entry ${mergedEntryId} or its originals changed during the unmerge; try again`, { id: mergedEntryId })
  }
  logger.info('knowledge.slim.unmerged', { id: mergedEntryId, restored_ids: ids })
  return { id: mergedEntryId, status: 'archived', restored_ids: ids }
}
