/**
 * The knowledge overview (the dashboard's first page): how many entries the caller sees, by
 * status, type and scope, and the saves and feedback of the last days — counted in the store's
 * query over the caller's visible scopes (src/store/knowledge/overview.ts), like every read.
 */
import { requirePermission, visibleScopes, type Principal } from '../../core/principal.js'
import { overviewQueries, type KnowledgeOverviewCounts } from '../../store/knowledge/overview.js'
import type { KnowledgeContext } from '../context.js'

export type { KnowledgeOverviewCounts } from '../../store/knowledge/overview.js'

/** How many days the per-day counts cover by default. */
export const OVERVIEW_DAYS = 30

/**
 * The overview of what `principal` sees (`read` needed), the per-day counts over the last `days`.
 * @example
 * const { total, by_type, saves_per_day } = await knowledgeOverview(ctx, principal)
 */
export async function knowledgeOverview(ctx: KnowledgeContext, principal: Principal, options: { days?: number } = {}): Promise<KnowledgeOverviewCounts> {
  requirePermission(principal, 'read')
  const since = new Date(ctx.clock.now().getTime() - (options.days ?? OVERVIEW_DAYS) * 24 * 3600 * 1000)
  return overviewQueries(ctx.store.db).overview(visibleScopes(principal), since)
}
