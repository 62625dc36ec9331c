/**
 * Who may do what: the one role × action table of KnowHub (docs/server.md prints it), and the
 * checks every service, route, MCP tool and dashboard page goes through.
 *
 * Roles follow from a principal's permissions, highest first:
 * - `operator` — the hub operator: the local principal on the server's machine (the CLI's
 *   in-process principal, or the CLI beside a running server through the server's local key),
 *   or a token with `hub:admin`, which only the CLI there can mint. It manages the whole hub.
 * - `admin` — an org admin: administers its own org only (the tokens of its org's members,
 *   reown and slim within what it sees, its org's counts).
 * - `writer`, `reader` — `write` or `read` within the scopes they see.
 * `secrets:read` is orthogonal: it reads a resource's `secure_body` in one of its own (not
 * public) scopes; `admin` and `hub:admin` imply it.
 *
 * Reach, per action: `hub` (everything), `org` (its own org), `scopes` (what its scopes make
 * visible, through its own ids for changes), `own` (its own ids), `none`. Naming something out
 * of reach answers as an unknown id would: `not_found` for things looked up by id, and the
 * same `forbidden` whether or not the named org, owner or scope exists.
 */
import { KnowHubError } from '../core/errors.js'
import { hasPermission, memberScopes, visibleScopes, type Principal, type WriteAccess } from '../core/principal.js'
import { ROLES } from '../core/actions.js'

export { ROLES, ACTIONS, type Role, type Action } from '../core/actions.js'
import type { Action, Role } from '../core/actions.js'

/** How far an action reaches for a role. */
export type Reach = 'hub' | 'org' | 'scopes' | 'own' | 'none'

/** One row of the table: what the action is, and its reach per role. */
export interface PolicyRow {
  action: Action
  /** Routes, tools and pages that perform it (for the documentation). */
  where: string
  reach: Record<Role, Reach>
}

const row = (action: Action, where: string, operator: Reach, admin: Reach, writer: Reach, reader: Reach): PolicyRow => ({
  action,
  where,
  reach: { operator, admin, writer, reader },
})

/**
 * The role × action table. `scopes`: entries and resources visible to the caller (its ids and
 * `public`); for changes, those visible through one of its own ids (never through `public` alone)
 * or owned by it. `resource.secret` also needs `secrets:read` (implied by `admin`, `hub:admin`).
 */
export const POLICY: readonly PolicyRow[] = [
  row('knowledge.read', 'search, list, get, versions, export; MCP knowledge_search/get; dashboard knowledge', 'scopes', 'scopes', 'scopes', 'scopes'),
  row('knowledge.write', 'save, feedback, batch_update, import, extract (save); MCP knowledge_save/feedback', 'scopes', 'scopes', 'scopes', 'none'),
  row('knowledge.manage', 'edit, archive, restore, delete, evolve, unmerge an entry of another owner', 'scopes', 'scopes', 'own', 'none'),
  row('resource.read', 'GET /api/resource…, MCP resource_get/list, dashboard resources', 'scopes', 'scopes', 'scopes', 'scopes'),
  row('resource.secret', 'secure_body (include_secret, dashboard reveal): needs secrets:read', 'scopes', 'scopes', 'scopes', 'scopes'),
  row('resource.write', 'save, update, delete a resource (update/delete of another owner: as knowledge.manage)', 'scopes', 'scopes', 'own', 'none'),
  row('owner.name', 'save or reown with "owner"/"to" naming an owner', 'hub', 'own', 'own', 'none'),
  row('scope.public', 'write into the public scope', 'hub', 'hub', 'none', 'none'),
  row('slim', 'POST /api/knowledge/slim, unmerge: groups of one owner it may manage', 'scopes', 'scopes', 'own', 'none'),
  row('reown', 'POST /api/reown', 'hub', 'scopes', 'none', 'none'),
  row('tokens.manage', 'POST/GET /api/tokens, revoke; dashboard Tokens page', 'hub', 'org', 'none', 'none'),
  row('tokens.mint_admin', 'a token with admin (org admins: of their own org)', 'hub', 'org', 'none', 'none'),
  row('tokens.mint_operator', 'a token with hub:admin (`knowhub token create --hub-admin` on the server machine)', 'hub', 'none', 'none', 'none'),
  row('status', 'GET /api/status: counts (org admins: of what they see)', 'hub', 'org', 'none', 'none'),
  row('status.hub', 'status with the data folder or database host, hub-wide counts and LLM usage', 'hub', 'none', 'none', 'none'),
  row('backup', 'POST /api/admin/backup, knowhub backup', 'hub', 'none', 'none', 'none'),
  row('metrics', 'GET /metrics: hub-wide requests, searches, LLM usage, memory (also the local principal on loopback)', 'hub', 'none', 'none', 'none'),
  row('orgs.manage', 'other orgs: their tokens, their admins; packs.access (server config)', 'hub', 'none', 'none', 'none'),
  row(
    'principals.forget',
    'DELETE /api/principals/user:ID, knowhub forget: erase a user everywhere (org admins: users of their own org only)',
    'hub',
    'org',
    'none',
    'none',
  ),
  row(
    'retention.purge',
    'POST /api/admin/purge, knowhub purge: merged and archived entries for good (org admins: what their ids reach)',
    'hub',
    'org',
    'none',
    'none',
  ),
  row(
    'profile.read',
    "GET /api/users/{id}/profile, GET /api/me, MCP user_profile, dashboard profile: a user's own (org admins: their org's users)",
    'hub',
    'org',
    'own',
    'own',
  ),
]

const BY_ACTION = new Map(POLICY.map((r) => [r.action, r]))

/**
 * The role of a principal: `operator` with `hub:admin`, `admin` with `admin`, `writer` with
 * `write`, else `reader`.
 * @example
 * roleOf({ user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] }) // 'admin'
 */
export function roleOf(principal: Principal): Role {
  const p = principal.permissions
  if (p.includes('hub:admin')) return 'operator'
  if (p.includes('admin')) return 'admin'
  if (p.includes('write')) return 'writer'
  return 'reader'
}

/**
 * How far an action reaches for a principal (a reader without `read` reaches nothing).
 * @example
 * reach({ user: 'ann', org: 'acme', permissions: ['admin'] }, 'tokens.manage') // 'org'
 */
export function reach(principal: Principal, action: Action): Reach {
  const role = roleOf(principal)
  if (role === 'reader' && !principal.permissions.includes('read') && action !== 'resource.secret') return 'none'
  const found = BY_ACTION.get(action)!.reach[role]
  // An org admin without an org administers no org.
  if (found === 'org' && principal.org === undefined) return 'none'
  return found
}

/** True when the principal is the hub operator. */
export function isOperator(principal: Principal): boolean {
  return roleOf(principal) === 'operator'
}

/**
 * Throws `forbidden` unless the action reaches anything for the principal.
 * @example
 * authorize(principal, 'backup') // throws for anyone but the hub operator
 */
export function authorize(principal: Principal, action: Action): Reach {
  const found = reach(principal, action)
  if (found === 'none') {
    const needs = BY_ACTION.get(action)!.reach
    const forAdmins = needs.admin !== 'none'
    const who = forAdmins ? 'an org admin (of its own org) or the hub operator' : 'the hub operator (hub:admin)'
    throw new KnowHubError('forbidden', `This operation (${action}) is for ${who}`, { action, permission: forAdmins ? 'admin' : 'hub:admin' })
  }
  return found
}

/**
 * May the principal name `owner` as the owner of something it saves (or re-owns to)? Its own
 * ids always; any owner for the hub operator; nobody else's otherwise — whether or not that
 * owner exists, so the answer says nothing about other tenants.
 * @example
 * mayNameOwner({ user: 'ann', org: 'acme', permissions: ['admin'] }, 'user:bob') // false
 */
export function mayNameOwner(principal: Principal, owner: string): boolean {
  if (reach(principal, 'owner.name') === 'hub') return true
  return memberScopes(principal).includes(owner)
}

/**
 * May the principal change a record (entry or resource) it can see, owned by someone else?
 * Its own records always. An admin (and the hub operator) also those visible to it through one
 * of its own ids — its org, project, team, agent — never one it sees only because it is public.
 * @example
 * mayManage({ user: 'ann', org: 'acme', permissions: ['admin'] }, { owner: 'user:bob', scopes: ['org:acme'] }) // true
 * mayManage({ user: 'ann', org: 'acme', permissions: ['admin'] }, { owner: 'user:bob', scopes: ['public'] }) // false
 */
export function mayManage(principal: Principal, record: { owner: string; scopes: readonly string[] }): boolean {
  const own = memberScopes(principal)
  if (own.includes(record.owner)) return true
  if (reach(principal, 'knowledge.manage') !== 'scopes') return false
  return record.scopes.some((scope) => scope !== 'public' && own.includes(scope))
}

/**
 * What the store's SQL lets the principal write ({@link WriteAccess}): the same rule as
 * {@link mayManage}, as lists the store puts in its WHERE clauses. Without `write`, nothing.
 * @example
 * writeAccess({ user: 'ann', org: 'acme', permissions: ['read', 'write'] })
 * // { visible: ['user:ann', 'org:acme', 'public'], owners: ['user:ann', 'org:acme'], scopes: [] }
 */
export function writeAccess(principal: Principal): WriteAccess {
  if (!hasPermission(principal, 'write')) return { visible: [], owners: [], scopes: [] }
  const own = memberScopes(principal)
  return { visible: visibleScopes(principal), owners: own, scopes: reach(principal, 'knowledge.manage') === 'scopes' ? own : [] }
}

const REACH_LABEL: Record<Reach, string> = { hub: 'hub', org: 'org', scopes: 'scopes', own: 'own', none: '—' }

/**
 * The table as Markdown rows (docs/server.md holds it between `policy-table` markers; a test
 * checks that they agree).
 * @example
 * policyTableRows()[0] // '| knowledge.read | scopes | scopes | scopes | scopes | search, list, … |'
 */
export function policyTableRows(): string[] {
  return POLICY.map((r) => `| ${r.action} | ${ROLES.map((role) => REACH_LABEL[r.reach[role]]).join(' | ')} | ${r.where} |`)
}
