/**
 * All SQL about dashboard sessions (migration 0046): the hash of a session id, the token it
 * stands for, and its expiry. The session id itself is never stored.
 */
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'

export interface SessionStore {
  insert(record: { id_hash: string; token_id: string; created_at: Date; expires_at: Date }): Promise<void>
  /** The token id of an unexpired session, or undefined. */
  tokenOf(idHash: string, now: Date): Promise<string | undefined>
  delete(idHash: string): Promise<void>
  /** Drops expired sessions; returns how many. */
  prune(now: Date): Promise<number>
}

/**
 * The session repository over a database.
 * @example
 * const sessions = sessionStore(store.db)
 * await sessions.tokenOf(sha256hex, new Date())
 */
export function sessionStore(db: Queryable): SessionStore {
  return {
    async insert(r) {
      await db.query(sql`INSERT INTO knowhub_dashboard_session (id_hash, token_id, created_at, expires_at)
        VALUES (${r.id_hash}, ${r.token_id}, ${r.created_at.toISOString()}, ${r.expires_at.toISOString()})`)
    },
    async tokenOf(idHash, now) {
      const [row] = await db.query<{ token_id: string }>(
        sql`SELECT token_id FROM knowhub_dashboard_session WHERE id_hash = ${idHash} AND expires_at > ${now.toISOString()}::timestamptz`,
      )
      return row?.token_id
    },
    async delete(idHash) {
      await db.query(sql`DELETE FROM knowhub_dashboard_session WHERE id_hash = ${idHash}`)
    },
    async prune(now) {
      const rows = await db.query(sql`DELETE FROM knowhub_dashboard_session WHERE expires_at <= ${now.toISOString()}::timestamptz RETURNING id_hash`)
      return rows.length
    },
  }
}
