/**
 * Token administration by role (the `tokens.*` rows of src/auth/policy.ts): the hub operator
 * manages every token; an org admin only its own org's — it lists and revokes tokens of its
 * org, and creates tokens of its org for its org's members with permissions at most its own.
 *
 * A member id of org O is an id (user, agent, project, team) that appears in a token of O
 * (which the hub operator, or O's admin, created), or an id ending in `@O` (`carol@acme`: no
 * other org's admin can name it). Ids are global — `user:bob` reads whatever bob's entries are
 * scoped to, in every org — so an org admin cannot mint a token for an id outside its org, and
 * is told so in the same words whether or not that id exists elsewhere.
 */
import { KnowHubError } from '../core/errors.js'
import { SCOPE_KINDS, hasPermission, type Principal } from '../core/principal.js'
import { CreateTokenInput, type CreatedToken, type TokenInfo } from '../core/tokens.js'
import { parseWith } from '../core/validate.js'
import { authorize, reach } from './policy.js'
import type { TokenService } from './tokens.js'

/** Who asks: its principal, and whether it is the CLI on the server's machine (the local principal). */
export interface TokenAdminCaller {
  principal: Principal
  /** True for the local principal (in process, or the CLI beside a server through its local key). */
  local?: boolean
}

/** The ids of a principal that name a member (everything but the org). */
const MEMBER_KINDS = SCOPE_KINDS.filter((kind) => kind !== 'org')

/** The same answer for every token out of reach, known or not. */
const noToken = (id: string) => new KnowHubError('not_found', `No token ${id}`, { id })

/** Whether a token belongs to org `org` as an org admin sees it (hub operators' tokens never do). */
function inOrg(info: TokenInfo, org: string): boolean {
  return info.principal.org === org && !info.principal.permissions.includes('hub:admin')
}

/** Whether `kind:id` is a member of `org`, given the tokens of the hub. */
function isMember(tokens: readonly TokenInfo[], org: string, kind: (typeof MEMBER_KINDS)[number], id: string): boolean {
  const suffix = `@${org}`
  if (id.endsWith(suffix) && !id.slice(0, -suffix.length).includes('@') && id.length > suffix.length) return true
  return tokens.some((t) => t.principal.org === org && t.principal[kind] === id)
}

/**
 * Token administration over the token service.
 * @example
 * const admin = createTokenAdmin(hub.tokens)
 * await admin.create({ user: 'carol@acme', permissions: ['read'] }, { principal: annTheAcmeAdmin })
 */
export function createTokenAdmin(tokens: Pick<TokenService, 'create' | 'list' | 'revoke'>) {
  /** The org an org admin administers (after `authorize`); undefined for the hub operator. */
  const orgOf = (principal: Principal): string | undefined => (authorize(principal, 'tokens.manage') === 'hub' ? undefined : principal.org)

  /** Whether an owner (`kind:id`) is in the org admin's org: a member id, or the org itself. */
  async function ownsWithinOrg(principal: Principal, owner: string): Promise<boolean> {
    const org = orgOf(principal)
    if (org === undefined) return true
    const at = owner.indexOf(':')
    const kind = owner.slice(0, at)
    const id = owner.slice(at + 1)
    if (kind === 'org') return id === org
    if (!(MEMBER_KINDS as readonly string[]).includes(kind)) return false
    return isMember(await tokens.list(), org, kind as (typeof MEMBER_KINDS)[number], id)
  }

  return {
    /**
     * Creates a token. The hub operator: any principal; `hub:admin` only from the server's
     * machine (`local`). An org admin: of its own org (the default), for members of its org,
     * with permissions it has itself (never `hub:admin`).
     */
    async create(raw: unknown, caller: TokenAdminCaller): Promise<CreatedToken> {
      const { principal } = caller
      const org = orgOf(principal)
      const withOrg = org !== undefined && raw !== null && typeof raw === 'object' && !('org' in raw) ? { ...raw, org } : raw
      const input = parseWith(CreateTokenInput, withOrg, 'token')
      if (input.permissions.includes('hub:admin') && (reach(principal, 'tokens.mint_operator') !== 'hub' || caller.local !== true)) {
        throw new KnowHubError(
          'forbidden',
          'A hub:admin token is created only on the server machine: knowhub token create --hub-admin (as the local principal, beside or without the server)',
          { permission: 'hub:admin' },
        )
      }
      if (org !== undefined) {
        if (input.org !== org) {
          throw new KnowHubError('forbidden', `You administer org ${org}: the tokens you create belong to org ${org}`, {
            org: input.org ?? null,
            your_org: org,
          })
        }
        const beyond = input.permissions.filter((p) => !hasPermission(principal, p) || p === 'hub:admin')
        if (beyond.length > 0) {
          throw new KnowHubError('forbidden', `You cannot give permissions you do not have: ${beyond.join(', ')}`, { permissions: beyond })
        }
        const all = await tokens.list()
        const outside = MEMBER_KINDS.flatMap((kind) => {
          const id = input[kind]
          return id !== undefined && principal[kind] !== id && !isMember(all, org, kind, id) ? [`${kind}:${id}`] : []
        })
        if (outside.length > 0) {
          throw new KnowHubError(
            'forbidden',
            `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not a member of org ${org}. Members are ids that have a token of org ${org}, or ids ending in @${org} (e.g. carol@${org}); the hub operator adds others (knowhub token create --org ${org} … on the server machine)`,
            { ids: outside, org },
          )
        }
      }
      return tokens.create(input)
    },

    /** Every token in reach, newest first: all of them for the hub operator, its org's for an org admin. */
    async list(principal: Principal): Promise<TokenInfo[]> {
      const org = orgOf(principal)
      const all = await tokens.list()
      return org === undefined ? all : all.filter((t) => inOrg(t, org))
    },

    /** Revokes a token in reach; any other id answers `not_found`, exactly as an unknown one. */
    async revoke(id: string, principal: Principal): Promise<TokenInfo> {
      const org = orgOf(principal)
      if (org !== undefined) {
        const target = (await tokens.list()).find((t) => t.id === id)
        if (!target || !inOrg(target, org)) throw noToken(id)
      }
      return tokens.revoke(id)
    },

    /** Whether an org admin may name `owner` (a member of its org, or the org); always for the hub operator. */
    ownsWithinOrg,
  }
}

export type TokenAdmin = ReturnType<typeof createTokenAdmin>
