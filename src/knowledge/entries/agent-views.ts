/**
 * The entries an agent's context and its goal focus show (src/agent/): the caller's
 * `user_profile` entries, most confident first, and the active entries attached to a goal, as
 * the wrapper's entry views, current ones only (issue 31). Visibility is the store query's, as for every read.
 */
import { isCurrentAt } from '../../core/knowledge.js'
import { visibleScopes, type Principal } from '../../core/principal.js'
import type { EntryView } from '../../core/wrap-entries.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'

const toView = (r: KnowledgeRecord): EntryView => ({ ...r, eval: { score: r.score, helpful: r.helpful, harmful: r.harmful } })

/**
 * Up to `limit` `user_profile` entries the caller sees, highest confidence first (then most helpful, newest).
 * @example
 * const profile = await profileViews(ctx, principal, 5)
 */
export async function profileViews(ctx: KnowledgeContext, principal: Principal, limit: number): Promise<EntryView[]> {
  if (limit <= 0) return []
  // Current entries only (issue 31): neither superseded nor expired now, as search filters them.
  const filter = { visible: visibleScopes(principal), types: ['user_profile'], validity: { now: ctx.clock.now() } }
  return (await ctx.store.knowledge.topByConfidence(filter, limit)).map(toView)
}

/**
 * The active entries among `ids` that the caller sees now, in the order of `ids` (others are left out).
 * @example
 * const attached = await activeViews(ctx, goal.knowledge_ids, principal)
 */
export async function activeViews(ctx: KnowledgeContext, ids: readonly string[], principal: Principal): Promise<EntryView[]> {
  if (ids.length === 0) return []
  const records = await ctx.store.knowledge.getMany(ids, visibleScopes(principal))
  // Attached while current; shown only while still current (issue 31: not superseded or expired since).
  const now = ctx.clock.now()
  const byId = new Map(records.filter((r) => r.status === 'active' && isCurrentAt(r, now)).map((r) => [r.id, r]))
  return ids.flatMap((id) => {
    const r = byId.get(id)
    return r ? [toView(r)] : []
  })
}
