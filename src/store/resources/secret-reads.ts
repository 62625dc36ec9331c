/**
 * SQL of the audit of secret reads (migrations 0020 and 0045): one row each time a
 * `secure_body` is returned to someone, through any surface, and the rows a principal may see:
 * those of resources it owns, and, for an org admin, those tagged with its org. Never the secret.
 */
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'

/** One read of a secret. */
export interface SecretRead {
  resource_id: string
  /** The resource's owner namespace (`kind:id`). */
  owner: string
  /** `org:ID` scopes whose admins see this row. */
  orgs: string[]
  /** `token:tok_…` or `local`. */
  caller: string
  /** The reader's ids and permissions (never a token). */
  principal: Record<string, unknown>
  /** The surface: `api`, `mcp`, `tools`, `dashboard`, `backup`, … */
  via: string
  /** The operation: `GET /api/resource/{id}`, `resource_get`, `POST /reveal`, … */
  route: string
  read_at: Date
}

/** A stored read, with its position in the log. */
export interface SecretReadRow extends SecretRead {
  seq: number
}

/** Whose reads a principal sees: resources owned by one of `own`, and rows tagged with one of `adminOrgs`. */
export interface SecretReadAccess {
  own: readonly string[]
  adminOrgs: readonly string[]
}

export interface SecretReadFilter {
  resource_id?: string | undefined
  owner?: string | undefined
  limit: number
  /** Only rows older than this position (the next page). */
  before?: number | undefined
}

export interface SecretReadStore {
  record(read: SecretRead): Promise<void>
  /** One row for every resource that holds a secret (a backup carries them all); the count. */
  recordEverySecret(read: Omit<SecretRead, 'resource_id' | 'owner' | 'orgs'>): Promise<number>
  /** The rows `access` may see, newest first. */
  list(access: SecretReadAccess, filter: SecretReadFilter): Promise<SecretReadRow[]>
}

function toRow(row: Record<string, unknown>): SecretReadRow {
  return {
    seq: Number(row.seq),
    resource_id: String(row.resource_id),
    owner: String(row.owner),
    orgs: (row.orgs as string[] | null) ?? [],
    caller: String(row.caller),
    principal: row.principal as Record<string, unknown>,
    via: String(row.via),
    route: String(row.route),
    read_at: new Date(row.revealed_at as string | Date),
  }
}

/**
 * The audit of secret reads over a database.
 * @example
 * await secretReadStore(store.db).record({ resource_id: 'credentials/a', owner: 'user:ann', orgs: ['org:acme'], caller: 'local', principal: { user: 'ann' }, via: 'api', route: 'GET /api/resource/{id}', read_at: new Date() })
 */
export function secretReadStore(db: Queryable): SecretReadStore {
  return {
    async record(r) {
      await db.query(sql`INSERT INTO knowhub_secret_reveal (resource_id, owner, orgs, caller, principal, via, route, revealed_at)
        VALUES (${r.resource_id}, ${r.owner}, ${r.orgs}::text[], ${r.caller}, ${JSON.stringify(r.principal)}::jsonb, ${r.via}, ${r.route}, ${r.read_at.toISOString()})`)
    },
    async recordEverySecret(r) {
      const rows = await db.query<{ n: number }>(sql`WITH added AS (
          INSERT INTO knowhub_secret_reveal (resource_id, owner, orgs, caller, principal, via, route, revealed_at)
          SELECT id, owner,
            ARRAY(SELECT DISTINCT s FROM unnest(scopes || ARRAY[owner]) AS s WHERE s LIKE 'org:%' ORDER BY s),
            ${r.caller}, ${JSON.stringify(r.principal)}::jsonb, ${r.via}, ${r.route}, ${r.read_at.toISOString()}
          FROM resources WHERE secure_body IS NOT NULL ORDER BY id, owner
          RETURNING 1)
        SELECT count(*)::int AS n FROM added`)
      return rows[0]?.n ?? 0
    },
    async list(access, filter) {
      const rows = await db.query(sql`SELECT seq, resource_id, owner, orgs, caller, principal, via, route, revealed_at FROM knowhub_secret_reveal
        WHERE (owner = ANY(${[...access.own]}::text[]) OR orgs && ${[...access.adminOrgs]}::text[])
          AND (${filter.resource_id ?? null}::text IS NULL OR resource_id = ${filter.resource_id ?? null})
          AND (${filter.owner ?? null}::text IS NULL OR owner = ${filter.owner ?? null})
          AND (${filter.before ?? null}::bigint IS NULL OR seq < ${filter.before ?? null})
        ORDER BY seq DESC LIMIT ${filter.limit}`)
      return rows.map(toRow)
    },
  }
}
