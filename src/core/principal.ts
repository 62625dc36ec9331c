import { z } from 'zod'
import { KnowHubError } from './errors.js'

/** The kinds of scope, highest retrieval priority first (seed 002: user > project > agent > team > org > public). */
export const SCOPE_KINDS = ['user', 'project', 'agent', 'team', 'org'] as const
export type ScopeKind = (typeof SCOPE_KINDS)[number]

const SCOPE_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/
const SCOPE_PATTERN = new RegExp(`^(?:public|(?:${SCOPE_KINDS.join('|')}):[A-Za-z0-9][A-Za-z0-9._@+-]{0,127})$`)

/** A visibility scope: `user:ID`, `agent:ID`, `project:ID`, `team:ID`, `org:ID` or `public`. */
export const Scope = z.string().regex(SCOPE_PATTERN, 'scope must be public or kind:id with kind one of user, project, agent, team, org')
export type Scope = z.infer<typeof Scope>

/** An owner: `kind:id` (never `public`). */
export const Owner = Scope.refine((s) => s !== 'public', 'owner cannot be public')
export type Owner = z.infer<typeof Owner>

/**
 * What a principal may do. `admin` (an org admin) implies read, write and secrets:read;
 * `hub:admin` (the hub operator, see src/auth/policy.ts) implies every other permission.
 */
export const Permission = z.enum(['read', 'write', 'secrets:read', 'admin', 'hub:admin'])
export type Permission = z.infer<typeof Permission>

const Id = z.string().regex(SCOPE_ID, 'ids are 1-128 characters: letters, digits and . _ @ + -')

/**
 * Who is calling: ids for user, agent, project, team and org (each optional), and permissions.
 * @example
 * const alice = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })
 */
export const Principal = z.object({
  user: Id.optional(),
  agent: Id.optional(),
  project: Id.optional(),
  team: Id.optional(),
  org: Id.optional(),
  permissions: z.array(Permission).default(['read', 'write']),
})
export type Principal = z.output<typeof Principal>

/**
 * What the store lets a caller write, in its SQL (built from a principal by `writeAccess` in
 * src/auth/policy.ts, the one place that decides it): every statement that changes, replaces,
 * merges or closes a row by id carries this condition, so a service that forgets a check still
 * cannot write across a tenant. Empty lists match nothing (a reader writes nothing).
 * @example
 * // an org admin of acme (user ann): adds feedback to what it sees, changes rows of acme of any owner
 * const access: WriteAccess = { visible: ['user:ann', 'org:acme', 'public'], owners: ['user:ann', 'org:acme'], scopes: ['user:ann', 'org:acme'] }
 */
export interface WriteAccess {
  /** Rows it may add feedback to or vote on: those visible through these scopes. */
  readonly visible: readonly string[]
  /** Rows it may change: visible through `visible`, and owned by one of these… */
  readonly owners: readonly string[]
  /** …or in one of these scopes, whatever their owner (org admins and the hub operator: their own ids, never `public`). */
  readonly scopes: readonly string[]
}

/** Throws `invalid_scope` unless `value` is a well-formed scope. */
export function assertScope(value: string): Scope {
  if (!SCOPE_PATTERN.test(value)) {
    throw new KnowHubError('invalid_scope', `Malformed scope "${value}": expected public or kind:id (kinds: ${SCOPE_KINDS.join(', ')})`, { scope: value })
  }
  return value
}

/** The scopes a principal belongs to (its own ids, without `public`). */
export function memberScopes(principal: Principal): Scope[] {
  const scopes: Scope[] = []
  for (const kind of SCOPE_KINDS) {
    const id = principal[kind]
    if (id !== undefined) scopes.push(`${kind}:${id}`)
  }
  return scopes
}

/** Kinds of id in the order a save picks its owner when it names none: user first, then agent. */
export const DEFAULT_OWNER_KINDS = ['user', 'agent', 'project', 'team', 'org'] as const satisfies readonly ScopeKind[]

/**
 * The owner of something a principal saves without naming one: its user id, else its agent
 * id, else its first other id; undefined for a principal with no ids.
 * @example
 * defaultOwnerOf({ agent: 'coder', project: 'app', permissions: ['write'] }) // 'agent:coder'
 */
export function defaultOwnerOf(principal: Principal): Scope | undefined {
  for (const kind of DEFAULT_OWNER_KINDS) {
    const id = principal[kind]
    if (id !== undefined) return `${kind}:${id}`
  }
  return undefined
}

/**
 * The scopes of something a principal saves without naming any: its first own scope (its
 * user scope when it has a user id); empty for a principal with no ids.
 * @example
 * defaultWriteScopes({ user: 'alice', org: 'acme', permissions: ['write'] }) // ['user:alice']
 */
export function defaultWriteScopes(principal: Principal): Scope[] {
  return memberScopes(principal).slice(0, 1)
}

/**
 * The scopes whose entries a principal can see: its own ids plus `public`.
 * @example
 * visibleScopes({ user: 'u1', org: 'acme', permissions: ['read'] }) // ['user:u1', 'org:acme', 'public']
 */
export function visibleScopes(principal: Principal): Scope[] {
  return [...memberScopes(principal), 'public']
}

export function hasPermission(principal: Principal, permission: Permission): boolean {
  const p = principal.permissions
  if (p.includes(permission) || p.includes('hub:admin')) return true
  return permission !== 'hub:admin' && p.includes('admin')
}

/** Throws `forbidden` unless the principal has the permission. */
export function requirePermission(principal: Principal, permission: Permission): void {
  if (!hasPermission(principal, permission)) {
    throw new KnowHubError('forbidden', `This operation needs the "${permission}" permission`, { permission })
  }
}

/**
 * Throws `forbidden` unless the principal may write every scope. Every principal, admins
 * included, writes only scopes it can see — its own ids, plus `public` for admins only — so
 * nothing is ever saved where its writer could not read, edit or delete it again.
 * @example
 * assertWritableScopes({ user: 'alice', org: 'acme', permissions: ['write'] }, ['org:acme']) // ok
 * assertWritableScopes({ user: 'root', permissions: ['admin'] }, ['org:acme']) // throws forbidden: not one of root's scopes
 */
export function assertWritableScopes(principal: Principal, scopes: readonly string[]): void {
  const own = memberScopes(principal)
  const foreign = [...new Set(scopes.filter((scope) => scope !== 'public' && !own.includes(scope)))]
  const publicRefused = scopes.includes('public') && !hasPermission(principal, 'admin')
  if (foreign.length === 0 && !publicRefused) return
  const refused = [...foreign, ...(publicRefused ? ['public'] : [])]
  const reasons: string[] = []
  if (foreign.length > 0) {
    const one = foreign.length === 1
    const ids = foreign.map(splitScope)
    reasons.push(
      `${one ? 'it is' : `${foreign.join(', ')} are`} not among your scopes (${own.join(', ') || 'none'}), so you could never read, edit or delete what you wrote there. ` +
        `To write ${one ? 'it' : 'them'}, act as ${ids.map(([kind, id]) => `${kind} "${id}"`).join(' and ')}: ` +
        `${ids.map(([kind, id]) => `KNOWHUB_${kind.toUpperCase()}=${id}`).join(' ')} for the CLI, \`knowhub token create ${ids.map(([kind, id]) => `--${kind} ${id}`).join(' ')} …\` for an API token`,
    )
  }
  if (publicRefused) reasons.push(`${foreign.length > 0 ? 'public' : 'it'} needs the admin permission`)
  throw new KnowHubError('forbidden', `You cannot write to scope${refused.length > 1 ? 's' : ''} ${refused.join(', ')}: ${reasons.join('; ')}`, {
    scopes: refused,
    your_scopes: own,
  })
}

/** The kind and the id of a `kind:id` scope or owner. */
function splitScope(value: string): readonly [kind: string, id: string] {
  const at = value.indexOf(':')
  return [value.slice(0, at), value.slice(at + 1)]
}

/**
 * True when the principal may act as `owner`: it is one of its own `kind:id`, or the principal
 * is the hub operator (`hub:admin`). An org admin is no exception: src/auth/policy.ts decides
 * what an admin may change (`mayManage`).
 */
export function canManage(principal: Principal, owner: string): boolean {
  return principal.permissions.includes('hub:admin') || memberScopes(principal).includes(owner)
}

/**
 * The `forbidden` error for saving something owned by an id the caller does not have,
 * saying how to fix it: e.g. seed agents send `owner: "agent:research_agent"`, which
 * needs a token created with `--agent research_agent`.
 * @example
 * if (!canManage(principal, owner)) throw foreignOwnerError(principal, owner, 'entries')
 */
export function foreignOwnerError(principal: Principal, owner: string, what: string): KnowHubError {
  const [kind, id] = splitScope(owner)
  const own = memberScopes(principal)
  return new KnowHubError(
    'forbidden',
    `You cannot create ${what} owned by ${owner}: the owner must be one of your own ids (${own.length > 0 ? own.join(', ') : 'none'}). ` +
      `To save as ${owner}, use a token that has that id — create it with \`knowhub token create --${kind} ${id} …\` (in local mode set KNOWHUB_${kind.toUpperCase()}=${id}) — or leave owner out to own it yourself.`,
    { owner, your_ids: own, fix: `knowhub token create --${kind} ${id}` },
  )
}

/**
 * Retrieval priority of an entry for a principal: the best rank among the entry's scopes
 * that the principal can see (0 = user … 5 = public; 6 = not visible).
 */
export function scopePriority(entryScopes: readonly string[], visible: readonly string[]): number {
  let best = 6
  for (const scope of entryScopes) {
    if (!visible.includes(scope)) continue
    const kind = scope === 'public' ? 'public' : splitScope(scope)[0]
    const rank = kind === 'public' ? 5 : SCOPE_KINDS.indexOf(kind as ScopeKind)
    if (rank >= 0 && rank < best) best = rank
  }
  return best
}
