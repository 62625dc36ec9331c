/**
 * What a server offers its administrators beside the knowledge API: the hub's status, its
 * API tokens, re-owning entries and backups (`/api/status`, `/api/tokens`, `/api/reown`,
 * `/api/admin/backup`). Who may do which, and how far, is src/auth/policy.ts's table: the hub
 * operator everything; an org admin its own org's tokens, reown within what it sees, and its
 * org's counts. The one-shot CLI uses them when a running server holds the embedded database
 * (`knowhub status`, `knowhub token create` beside `npm start`).
 */
import { authorize } from '../auth/policy.js'
import { createTokenAdmin, type TokenAdminCaller } from '../auth/token-admin.js'
import type { HubStatus } from '../core/api.js'
import { KnowHubError } from '../core/errors.js'
import { ReownInput, type ReownResult } from '../core/knowledge.js'
import { assertWritableScopes, memberScopes, visibleScopes, type Principal } from '../core/principal.js'
import type { CreatedToken, TokenInfo } from '../core/tokens.js'
import { parseWith } from '../core/validate.js'
import { backupHub } from './backup.js'
import type { KnowHub } from './open.js'

/** The admin operations of a server, each checked against the role × action table. */
export interface AdminService {
  /** The hub's status (hub operator), or the counts of what an org admin sees (no data location, no hub-wide usage). */
  status(principal: Principal): Promise<HubStatus>
  tokens: {
    /** `local`: the caller is the CLI on the server's machine (only it may mint `hub:admin`). */
    create(input: unknown, principal: Principal, options?: { local?: boolean }): Promise<CreatedToken>
    list(principal: Principal): Promise<TokenInfo[]>
    revoke(id: string, principal: Principal): Promise<TokenInfo>
  }
  /** Re-owns or shares every entry of one owner within the caller's reach (the knowledge service's `reown`). */
  reown(input: unknown, principal: Principal): Promise<ReownResult>
  /** A backup file of the embedded database, consistent while the server writes (`knowhub backup`); PostgreSQL: use pg_dump. */
  backup(principal: Principal, caller?: string): Promise<Uint8Array>
}

/**
 * The admin operations over an open hub.
 * @example
 * const admin = adminService(hub)
 * await admin.tokens.create({ user: 'alice', org: 'acme' }, hub.config.principal, { local: true })
 */
export function adminService(hub: Pick<KnowHub, 'status' | 'tokens' | 'knowledge' | 'store' | 'resources'>): AdminService {
  const tokenAdmin = createTokenAdmin(hub.tokens)
  return {
    async status(principal) {
      if (authorize(principal, 'status') === 'hub') return { ...(await hub.status()), principal }
      const { location: _location, llm, entries: _entries, ...rest } = await hub.status()
      return {
        ...rest,
        reach: 'org',
        entries: await hub.knowledge.count(visibleScopes(principal).filter((s) => s !== 'public')),
        llm: llm ? { ...llm, usage: [] } : null,
        principal,
      }
    },
    tokens: {
      create: (input, principal, options = {}) => tokenAdmin.create(input, { principal, local: options.local === true } satisfies TokenAdminCaller),
      list: (principal) => tokenAdmin.list(principal),
      revoke: (id, principal) => tokenAdmin.revoke(id, principal),
    },
    async reown(raw, principal) {
      if (authorize(principal, 'reown') !== 'hub') {
        const input = parseWith(ReownInput, raw, 'reown')
        // An org admin hands entries only to its org's members, and shares them only where it writes.
        if (input.to !== undefined && !memberScopes(principal).includes(input.to) && !(await tokenAdmin.ownsWithinOrg(principal, input.to))) {
          throw new KnowHubError('forbidden', `You cannot reown to ${input.to}: the new owner must be a member of org ${principal.org ?? '(none)'}`, {
            to: input.to,
          })
        }
        if (input.scopes) assertWritableScopes(principal, input.scopes)
      }
      return hub.knowledge.reown(raw, principal)
    },
    async backup(principal, caller) {
      authorize(principal, 'backup')
      return backupHub(hub, { principal, site: { via: 'backup', route: 'POST /api/admin/backup', caller } })
    },
  }
}
