/**
 * All SQL about API tokens. Only hashes are stored: the token itself is shown
 * once by the token service and never reaches the database.
 */
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'

/** A stored token (without the token, which is never stored). */
export interface TokenRecord {
  id: string
  token_hash: string
  /** The first characters of the token, to recognise it in a list. */
  prefix: string
  name: string
  /** The principal the token authenticates as (ids and permissions), as JSON. */
  principal: Record<string, unknown>
  created_at: Date
  expires_at: Date | null
  last_used_at: Date | null
  revoked_at: Date | null
}

export interface TokenStore {
  insert(record: TokenRecord): Promise<void>
  /** The token with this hash, revoked or not. */
  findByHash(hash: string): Promise<TokenRecord | undefined>
  get(id: string): Promise<TokenRecord | undefined>
  /** Every token, newest first. */
  list(): Promise<TokenRecord[]>
  /** Marks the token revoked; returns it, or undefined when there is no such token. */
  revoke(id: string, at: Date): Promise<TokenRecord | undefined>
  touch(id: string, at: Date): Promise<void>
  /** Whether a token exists that is neither revoked nor expired at `now`. */
  hasActive(now: Date): Promise<boolean>
}

const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : new Date(value as string | Date))

function toRecord(row: Record<string, unknown>): TokenRecord {
  return {
    id: String(row.id),
    token_hash: String(row.token_hash),
    prefix: String(row.prefix),
    name: String(row.name),
    principal: row.principal as Record<string, unknown>,
    created_at: new Date(row.created_at as string | Date),
    expires_at: dateOrNull(row.expires_at),
    last_used_at: dateOrNull(row.last_used_at),
    revoked_at: dateOrNull(row.revoked_at),
  }
}

const COLUMNS = sql.raw('id, token_hash, prefix, name, principal, created_at, expires_at, last_used_at, revoked_at')

/**
 * The token repository over a database.
 * @example
 * const tokens = tokenStore(store.db)
 * const record = await tokens.findByHash(sha256hex)
 */
export function tokenStore(db: Queryable): TokenStore {
  return {
    async insert(r) {
      await db.query(sql`INSERT INTO knowhub_token (id, token_hash, prefix, name, principal, created_at, expires_at)
        VALUES (${r.id}, ${r.token_hash}, ${r.prefix}, ${r.name}, ${JSON.stringify(r.principal)}::jsonb, ${r.created_at.toISOString()}, ${r.expires_at?.toISOString() ?? null})`)
    },
    async findByHash(hash) {
      const [row] = await db.query(sql`SELECT ${COLUMNS} FROM knowhub_token WHERE token_hash = ${hash}`)
      return row ? toRecord(row) : undefined
    },
    async get(id) {
      const [row] = await db.query(sql`SELECT ${COLUMNS} FROM knowhub_token WHERE id = ${id}`)
      return row ? toRecord(row) : undefined
    },
    async list() {
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowhub_token ORDER BY created_at DESC, id DESC`)
      return rows.map(toRecord)
    },
    async revoke(id, at) {
      const [row] = await db.query(
        sql`UPDATE knowhub_token SET revoked_at = COALESCE(revoked_at, ${at.toISOString()}::timestamptz) WHERE id = ${id} RETURNING ${COLUMNS}`,
      )
      return row ? toRecord(row) : undefined
    },
    async touch(id, at) {
      await db.query(sql`UPDATE knowhub_token SET last_used_at = ${at.toISOString()} WHERE id = ${id}`)
    },
    async hasActive(now) {
      const rows = await db.query(
        sql`SELECT 1 FROM knowhub_token WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now.toISOString()}::timestamptz) LIMIT 1`,
      )
      return rows.length > 0
    },
  }
}
