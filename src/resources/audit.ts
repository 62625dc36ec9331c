/**
 * The audit of secret reads (issue 27): every `secure_body` returned to someone is recorded —
 * who (ids, permissions, token id), which resource, through which surface and operation, when;
 * never the secret — before the secret is returned. The rows are visible to the resource's owner
 * and to the admins of the orgs the row is tagged with, and to nobody else; that rule is in the
 * store's WHERE clause.
 */
import { reach } from '../auth/policy.js'
import { memberScopes, requirePermission, type Principal } from '../core/principal.js'
import { SecretReadsQuery, type SecretReadPage } from '../core/resources.js'
import { parseWith } from '../core/validate.js'
import type { ResourceRecord } from '../store/resources/resources.js'
import type { SecretReadAccess } from '../store/resources/secret-reads.js'
import type { ResourceContext } from './context.js'

/** Where a secret is read: the surface, the operation and the caller's key. */
export interface SecretReadSite {
  /** `api`, `mcp`, `tools`, `dashboard`, `backup`, … */
  via: string
  /** `GET /api/resource/{id}`, `resource_get`, `POST /reveal`, … */
  route: string
  /** `token:tok_…` or `local`; default `local`. */
  caller?: string | undefined
}

/** A reader's ids and permissions, as recorded (a principal holds no token). */
function readerOf(principal: Principal): Record<string, unknown> {
  const { permissions, ...ids } = principal
  return { ...ids, permissions }
}

/**
 * The `org:ID` scopes whose admins see a read: the resource's org scopes, an org owner, and the
 * reader's org when the reader is the owner (a user's own secret, read by that user).
 * @example
 * readOrgs({ scopes: ['user:ann'], owner: 'user:ann' }, { user: 'ann', org: 'acme', permissions: ['read'] }) // ['org:acme']
 */
export function readOrgs(record: Pick<ResourceRecord, 'scopes' | 'owner'>, principal: Principal): string[] {
  const orgs = new Set([...record.scopes, record.owner].filter((s) => s.startsWith('org:')))
  if (principal.org !== undefined && memberScopes(principal).includes(record.owner as never)) orgs.add(`org:${principal.org}`)
  return [...orgs].sort()
}

/**
 * Records one read of `record`'s secret by `principal` (before it is returned).
 * @example
 * await recordSecretRead(ctx, record, principal, { via: 'api', route: 'GET /api/resource/{id}', caller: 'token:tok_1' })
 */
export async function recordSecretRead(
  ctx: ResourceContext,
  record: Pick<ResourceRecord, 'id' | 'scopes' | 'owner'>,
  principal: Principal,
  site: SecretReadSite,
): Promise<void> {
  await ctx.store.secretReads.record({
    resource_id: record.id,
    owner: record.owner,
    orgs: readOrgs(record, principal),
    caller: site.caller ?? 'local',
    principal: readerOf(principal),
    via: site.via,
    route: site.route,
    read_at: ctx.clock.now(),
  })
}

/**
 * Records that a backup carried every secret of the hub: one row per resource with a secret.
 * @example
 * const n = await recordBackupReads(ctx, principal, { via: 'backup', route: 'knowhub backup' })
 */
export async function recordBackupReads(ctx: ResourceContext, principal: Principal | undefined, site: SecretReadSite): Promise<number> {
  return ctx.store.secretReads.recordEverySecret({
    caller: site.caller ?? 'local',
    principal: principal ? readerOf(principal) : {},
    via: site.via,
    route: site.route,
    read_at: ctx.clock.now(),
  })
}

/** Whose reads `principal` sees: those of resources it owns; an admin also those tagged with its org. */
export function secretReadAccess(principal: Principal): SecretReadAccess {
  const admin = principal.permissions.includes('admin') && principal.org !== undefined
  return { own: memberScopes(principal), adminOrgs: admin ? [`org:${principal.org}`] : [] }
}

/**
 * The reads the caller may see, newest first (`GET /api/secret-reads`, the dashboard's log).
 * @example
 * const { items } = await listSecretReads(ctx, { resource: 'cookies/site_a' }, alice)
 */
export async function listSecretReads(ctx: ResourceContext, raw: unknown, principal: Principal): Promise<SecretReadPage> {
  requirePermission(principal, 'read')
  const query = parseWith(SecretReadsQuery, raw ?? {}, 'secret reads query')
  const rows = await ctx.store.secretReads.list(secretReadAccess(principal), {
    resource_id: query.resource,
    owner: query.owner,
    limit: query.limit + 1,
    before: query.before,
  })
  const page = rows.slice(0, query.limit)
  // Token ids are for those who manage tokens (the role table's tokens.manage); an owner sees who read, not with which token.
  const seesTokens = reach(principal, 'tokens.manage') !== 'none'
  const shownCaller = (caller: string): string => (seesTokens || !caller.startsWith('token:') ? caller : 'token')
  return {
    items: page.map(({ orgs: _orgs, read_at, caller, ...row }) => ({ ...row, caller: shownCaller(caller), read_at: read_at.toISOString() })),
    next_before: rows.length > query.limit ? (page[page.length - 1]?.seq ?? null) : null,
  }
}
