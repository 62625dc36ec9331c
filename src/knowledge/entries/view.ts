/**
 * The caller's view of stored entries (records + feedback histories → `KnowledgeEntry`),
 * and the visibility/ownership checks every operation on one entry starts with.
 */
import { KnowHubError } from '../../core/errors.js'
import { KnowledgeId, type KnowledgeEntry } from '../../core/knowledge.js'
import { visibleScopes, type Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { mayManage } from '../../auth/policy.js'
import { visibilityOf } from '../../core/visibility.js'

/** `not_found` for an entry the caller cannot see (or that does not exist: the two are not told apart). */
export const entryNotFound = (id: string): KnowHubError => new KnowHubError('not_found', `No knowledge entry ${id}`, { id })

/**
 * Entries as callers see them: records joined with their helpful/harmful histories (one query,
 * through the caller's visible scopes like every read).
 * @example
 * const entries = await toEntries(store, records, visibleScopes(principal))
 */
export async function toEntries(store: Store, records: KnowledgeRecord[], visible: readonly string[]): Promise<KnowledgeEntry[]> {
  const histories = await store.knowledge.histories(
    records.map((r) => r.id),
    visible,
  )
  return records.map((r) => {
    const history = histories.get(r.id) ?? { helpful: [], harmful: [] }
    return {
      id: r.id,
      message_id: r.message_id,
      types: r.types,
      task: r.task,
      tags: r.tags,
      scopes: r.scopes,
      owner: r.owner,
      content: r.content,
      resource_ids: r.resource_ids,
      source: r.source,
      eval: {
        score: r.score,
        helpful: r.helpful,
        harmful: r.harmful,
        confidence: r.confidence,
        helpful_history: history.helpful,
        harmful_history: history.harmful,
      },
      status: r.status,
      merged_into: r.merged_into,
      version: r.version,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
      valid_from: r.valid_from.toISOString(),
      valid_to: r.valid_to?.toISOString() ?? null,
      superseded_by: r.superseded_by,
      supersedes: r.supersedes,
      expires_at: r.expires_at?.toISOString() ?? null,
      visibility: visibilityOf(r.scopes, r.owner),
    }
  })
}

/**
 * One entry as the caller sees it.
 * @example
 * const entry = await toEntry(store, record, visibleScopes(principal))
 */
export async function toEntry(store: Store, record: KnowledgeRecord, visible: readonly string[]): Promise<KnowledgeEntry> {
  const [entry] = await toEntries(store, [record], visible)
  return entry!
}

/**
 * The record of an entry the caller can see, or `not_found`.
 * @example
 * const record = await requireVisible(store, 'knowledge-20260305120000-a1b2', principal)
 */
export async function requireVisible(store: Store, id: string, principal: Principal): Promise<KnowledgeRecord> {
  parseWith(KnowledgeId, id, 'knowledge id')
  const record = await store.knowledge.get(id, visibleScopes(principal))
  if (!record) throw entryNotFound(id)
  return record
}

/**
 * The record of an entry the caller can see and manage (its owner or an admin), else `not_found` / `forbidden`.
 * @example
 * const record = await requireManaged(store, id, principal)
 */
export async function requireManaged(store: Store, id: string, principal: Principal): Promise<KnowledgeRecord> {
  const record = await requireVisible(store, id, principal)
  if (!mayManage(principal, record)) {
    throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may change entry ${id}`, { id, owner: record.owner })
  }
  return record
}
