/**
 * What a server offers its administrators beside the knowledge API: the hub's status, its
 * API tokens, re-owning entries and backups (`/api/status`, `/api/tokens`, `/api/reown`, `/api/admin/backup`), each checked for the `admin`
 * permission. The one-shot CLI uses them when a running server holds the embedded
 * database (`knowhub status`, `knowhub token create` beside `npm start`).
 */
import type { HubStatus } from '../core/api.js'
import type { ReownResult } from '../core/knowledge.js'
import { requirePermission, type Principal } from '../core/principal.js'
import type { CreatedToken, TokenInfo } from '../core/tokens.js'
import { backupHub } from './backup.js'
import type { KnowHub } from './open.js'

/** The admin operations of a server, each for a caller with the `admin` permission. */
export interface AdminService {
  /** The hub's status, with the caller as its principal. */
  status(principal: Principal): Promise<HubStatus>
  tokens: {
    create(input: unknown, principal: Principal): Promise<CreatedToken>
    list(principal: Principal): Promise<TokenInfo[]>
    revoke(id: string, principal: Principal): Promise<TokenInfo>
  }
  /** Re-owns or shares every entry of one owner (the knowledge service's `reown`). */
  reown(input: unknown, principal: Principal): Promise<ReownResult>
  /** A backup file of the embedded database, consistent while the server writes (`knowhub backup`); PostgreSQL: use pg_dump. */
  backup(principal: Principal, caller?: string): Promise<Uint8Array>
}

/**
 * The admin operations over an open hub.
 * @example
 * const admin = adminService(hub)
 * await admin.tokens.create({ user: 'alice', org: 'acme' }, hub.config.principal)
 */
export function adminService(hub: Pick<KnowHub, 'status' | 'tokens' | 'knowledge' | 'store' | 'resources'>): AdminService {
  const admin = (principal: Principal): void => requirePermission(principal, 'admin')
  return {
    async status(principal) {
      admin(principal)
      return { ...(await hub.status()), principal }
    },
    tokens: {
      async create(input, principal) {
        admin(principal)
        return hub.tokens.create(input)
      },
      async list(principal) {
        admin(principal)
        return hub.tokens.list()
      },
      async revoke(id, principal) {
        admin(principal)
        return hub.tokens.revoke(id)
      },
    },
    async reown(input, principal) {
      admin(principal)
      return hub.knowledge.reown(input, principal)
    },
    async backup(principal, caller) {
      admin(principal)
      return backupHub(hub, { principal, site: { via: 'backup', route: 'POST /api/admin/backup', caller } })
    },
  }
}
