/**
 * Re-owning entries (admin): entries saved under one owner — typically `user:local`, the
 * principal of local mode — handed to another owner and/or shared with more scopes, for
 * example after the server switched to token mode. Every changed entry keeps its previous
 * version with the reason (`knowhub show ID --versions`), so the reown is recorded.
 */
import { ReownInput, type ReownResult } from '../../core/knowledge.js'
import { authorize } from '../../auth/policy.js'
import { memberScopes, type Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeContext } from '../context.js'

/**
 * Re-owns every entry of `from` in the caller's reach (src/auth/policy.ts, `reown`): any
 * status, any scope for the hub operator; for an org admin only entries visible through one of
 * its own ids (its org, never `public` alone), so an owner it cannot see answers like an unknown
 * one (nothing owned). Who may be named as `to`, and which scopes added, the admin service
 * checks first. With `dry_run`, only reports what would change.
 * @example
 * const result = await reownEntries(ctx, { from: 'user:local', to: 'user:alice', scopes: ['org:acme'] }, admin)
 * result.changed // entries that got the new owner or scopes
 */
export async function reownEntries(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<ReownResult> {
  const reach = authorize(principal, 'reown')
  const within = reach === 'hub' ? undefined : memberScopes(principal)
  const input = parseWith(ReownInput, raw, 'reown')
  const to = input.to ?? input.from
  const addScopes = [...new Set(input.scopes ?? [])]
  const moved = to === input.from ? '' : `${input.from} -> ${to}`
  const shared = addScopes.length > 0 ? `shared with ${addScopes.join(', ')}` : ''
  const reason = input.reason ?? `reown: ${[moved, shared].filter(Boolean).join(', ')}`
  const change = { from: input.from, to, addScopes, within }
  const plan = await ctx.store.knowledge.reownPlan(change)
  const base = { from: input.from, to, added_scopes: addScopes, dry_run: input.dry_run === true, owned: plan.owned, reason }
  if (input.dry_run) return { ...base, changed: plan.changing.length, ids: plan.changing }
  const ids = plan.changing.length === 0 ? [] : await ctx.store.knowledge.reown({ ...change, reason, at: ctx.clock.now() })
  ctx.logger.info('knowledge.reowned', { from: input.from, to, added_scopes: addScopes, changed: ids.length })
  return { ...base, changed: ids.length, ids }
}
