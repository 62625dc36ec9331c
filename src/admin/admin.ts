/**
 * The administration service: what a hub offers its administrators beside the knowledge API —
 * the hub's status, its API tokens, re-owning entries and backups (`/api/status`, `/api/tokens`,
 * `/api/reown`, `/api/admin/backup`, the dashboard's Tokens page, the CLI in process). Who may do
 * which, and how far, is src/auth/policy.ts's table, checked here through `authorize`/`reach`
 * (tokens: src/auth/token-admin.ts): the hub operator everything; an org admin its own org's
 * tokens, reown within what it sees, and its org's counts. The composition root builds it once
 * (`hub.admin`); every entry point calls it.
 */
import { authorize } from '../auth/policy.js'
import { createTokenAdmin, type TokenAdminCaller } from '../auth/token-admin.js'
import type { TokenService } from '../auth/tokens.js'
import type { HubStatus } from '../core/api.js'
import { KnowHubError } from '../core/errors.js'
import { ReownInput, type ReownResult } from '../core/knowledge.js'
import { assertWritableScopes, memberScopes, visibleScopes, type Principal } from '../core/principal.js'
import type { CreatedToken, TokenInfo } from '../core/tokens.js'
import { parseWith } from '../core/validate.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { BackupDeps } from './backup.js'

/** What the admin service is built on (the composition root passes the hub's parts). */
export interface AdminDeps extends BackupDeps {
  /** The hub operator's status (see `hubStatus`). */
  status(): Promise<HubStatus>
  tokens: Pick<TokenService, 'create' | 'list' | 'revoke'>
  knowledge: Pick<KnowledgeService, 'count' | 'reown'>
}

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
  /**
   * A backup file of the embedded database, consistent while the server writes (`knowhub backup`); PostgreSQL: use pg_dump.
   * `route`: where the audit of secret reads says it was taken (default the HTTP route; the CLI in process: `knowhub backup`).
   */
  backup(principal: Principal, caller?: string, route?: string): Promise<Uint8Array>
}

/**
 * The admin operations over a hub's parts (`hub.admin`, built by `openKnowHub`).
 * @example
 * const admin = createAdminService({ status: () => hub.status(), tokens, knowledge, store, resources, version: '0.1.0' })
 * await admin.tokens.create({ user: 'alice', org: 'acme' }, hub.config.principal, { local: true })
 */
export function createAdminService(deps: AdminDeps): AdminService {
  const tokenAdmin = createTokenAdmin(deps.tokens)
  return {
    async status(principal) {
      if (authorize(principal, 'status') === 'hub') return { ...(await deps.status()), principal }
      const { location: _location, llm, entries: _entries, ...rest } = await deps.status()
      return {
        ...rest,
        reach: 'org',
        entries: await deps.knowledge.count(visibleScopes(principal).filter((s) => s !== 'public')),
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
      return deps.knowledge.reown(raw, principal)
    },
    async backup(principal, caller, route = 'POST /api/admin/backup') {
      authorize(principal, 'backup')
      // Loaded on use: the backup code (store, zlib, migrations) is no part of a server's start.
      const { backupHub } = await import('./backup.js')
      return backupHub(deps, { principal, site: { via: 'backup', route, caller } })
    },
  }
}
