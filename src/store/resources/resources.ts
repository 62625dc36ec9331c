/**
 * All SQL about resources. Resources are keyed by (owner, id): each owner has its own
 * namespace of ids. Every read and write takes the caller's access (its visible scopes
 * and its own ids) and puts it in the WHERE clause: a row is visible when its scopes
 * meet the visible scopes or its owner is one of the caller's own ids. A lookup by id
 * alone resolves among the visible rows: the caller's own first (its user's namespace,
 * then its agent's, project's, team's, org's), then by scope priority (user > project >
 * agent > team > org > public), then the oldest, then by owner. The encrypted secret is selected only by {@link ResourceStore.get}, and only
 * when the row's scopes meet the scopes the caller may read secrets in (also in SQL):
 * list and expand views never carry it, not even encrypted.
 */
import { DEFAULT_OWNER_KINDS, SCOPE_KINDS, type WriteAccess } from '../../core/principal.js'
import type { ResourceMetadata } from '../../core/resources.js'
import type { Database, Queryable } from '../database.js'
import type { Sql } from '../sql.js'
import { sql } from '../sql.js'

/** A stored resource. `secure_body` is the encrypted envelope, present only when selected. */
export interface ResourceRecord {
  id: string
  title: string
  body: string
  /** The encrypted envelope; undefined when not selected or not allowed, null when there is none. */
  secure_body?: string | null
  has_secret: boolean
  content_type: string
  metadata: ResourceMetadata
  scopes: string[]
  owner: string
  version: number
  created_at: Date
  updated_at: Date
}

/** A resource's key: its owner's namespace and its id there. */
export interface ResourceKey {
  owner: string
  id: string
}

/**
 * What a caller may see: rows whose scopes meet `visible`, and rows owned by one of
 * `own` (the caller's own ids: whoever may manage a resource may see it).
 */
export interface ResourceAccess {
  visible: readonly string[]
  own: readonly string[]
}

/** A new resource to insert. */
export interface NewResource {
  id: string
  title: string
  body: string
  /** Encrypted envelope and the id of its key, or null for none. */
  secret: { envelope: string; keyId: string } | null
  content_type: string
  metadata: ResourceMetadata
  scopes: string[]
  owner: string
  created_at: Date
}

/** The changes of an update; `secret` undefined keeps the stored secret, null removes it. */
export interface ResourceChange {
  title: string
  body: string
  secret?: { envelope: string; keyId: string } | null
  /**
   * With `secret` undefined: the stored secret (if any) is passed through this, under the
   * update's row lock, and the result is stored (an owner change re-binds its envelope).
   */
  rebind?: ((envelope: string) => { envelope: string; keyId: string }) | undefined
  content_type: string
  metadata: ResourceMetadata
  scopes: string[]
  owner: string
}

/** Filters of list. */
export interface ResourceFilter {
  access: ResourceAccess
  prefix?: string | undefined
  contentTypes?: readonly string[] | undefined
  scopes?: readonly string[] | undefined
  owner?: string | undefined
  /** true: only expired at `now`; false: only not expired. */
  expired?: boolean | undefined
  now: Date
}

const SUMMARY = sql.raw(`r.id, r.title, r.content_type, r.metadata, r.scopes, r.owner, r.version, r.created_at, r.updated_at,
  (r.secure_body IS NOT NULL) AS has_secret`)
const FULL = sql`${SUMMARY}, r.body`

function toRecord(row: Record<string, unknown>): ResourceRecord {
  const record: ResourceRecord = {
    id: row.id as string,
    title: row.title as string,
    body: (row.body as string | undefined) ?? '',
    has_secret: Boolean(row.has_secret),
    content_type: row.content_type as string,
    metadata: row.metadata as ResourceMetadata,
    scopes: row.scopes as string[],
    owner: row.owner as string,
    version: Number(row.version),
    created_at: new Date(row.created_at as string | Date),
    updated_at: new Date(row.updated_at as string | Date),
  }
  if ('secure_body' in row) record.secure_body = row.secure_body as string | null
  return record
}

/** `expires_at` compared as a timestamp (CASE keeps the cast from running on malformed text: those count as not expired). */
function expiredSql(now: Date): Sql {
  return sql`(CASE WHEN jsonb_typeof(r.metadata -> 'expires_at') = 'string'
      AND (r.metadata ->> 'expires_at') ~ '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})$'
    THEN (r.metadata ->> 'expires_at')::timestamptz < ${now.toISOString()}::timestamptz ELSE false END)`
}

/** The row is visible to the caller. */
function visibleSql(access: ResourceAccess): Sql {
  return sql`(r.scopes && ${access.visible}::text[] OR r.owner = ANY(${access.own}::text[]))`
}

/**
 * The rows the caller may change (src/auth/policy.ts `mayManage`, as SQL): its own (a resource
 * its owner always sees), or, for admins, one in a scope it manages (never through public alone).
 */
function manageableSql(access: WriteAccess): Sql {
  return sql`(r.owner = ANY(${access.owners}::text[]) OR r.scopes && ${access.scopes}::text[])`
}

/** A scope's retrieval priority, as `scopePriority` ranks it: user 0, project 1, agent 2, team 3, org 4, public 5. */
const SCOPE_RANK = sql.raw(
  `CASE WHEN s = 'public' THEN ${SCOPE_KINDS.length} ${SCOPE_KINDS.map((kind, rank) => `WHEN s LIKE '${kind}:%' THEN ${rank}`).join(' ')} END`,
)

/** An owner's rank among the caller's own: the order in which a save picks its default owner. */
const OWNER_KIND_RANK = sql.raw(
  `(CASE ${DEFAULT_OWNER_KINDS.map((kind, rank) => `WHEN r.owner LIKE '${kind}:%' THEN ${rank}`).join(' ')} ELSE ${DEFAULT_OWNER_KINDS.length} END)`,
)

/**
 * The order in which rows sharing an id are chosen for a caller: its own first — among
 * them by owner kind in the order a save picks its default owner (user, agent, project,
 * team, org), so a caller reads back what it saved — then the best scope priority among
 * the row's scopes it can see (user 0 … public 5), then the oldest, then by owner.
 */
function resolutionOrder(access: ResourceAccess): Sql {
  return sql`(r.owner = ANY(${access.own}::text[])) DESC,
    CASE WHEN r.owner = ANY(${access.own}::text[]) THEN ${OWNER_KIND_RANK} ELSE 0 END,
    COALESCE((SELECT min(${SCOPE_RANK}) FROM unnest(r.scopes) AS s WHERE s = ANY(${access.visible}::text[])), 6),
    r.created_at, r.owner COLLATE "C"`
}

function filterSql(filter: ResourceFilter): Sql {
  const parts: Sql[] = [visibleSql(filter.access)]
  if (filter.prefix) parts.push(sql`starts_with(r.id, ${filter.prefix})`)
  if (filter.contentTypes && filter.contentTypes.length > 0) parts.push(sql`r.content_type = ANY(${filter.contentTypes}::text[])`)
  if (filter.scopes && filter.scopes.length > 0) parts.push(sql`r.scopes && ${filter.scopes}::text[]`)
  if (filter.owner) parts.push(sql`r.owner = ${filter.owner}`)
  if (filter.expired === true) parts.push(expiredSql(filter.now))
  if (filter.expired === false) parts.push(sql`NOT ${expiredSql(filter.now)}`)
  return sql.join(parts, ' AND ')
}

/** Options of {@link ResourceStore.get}. */
export interface ResourceGetOptions {
  /** Only in this owner's namespace (default: resolve among every visible owner). */
  owner?: string | undefined
  /** Select the encrypted secret when the row's scopes meet these (the caller's own ids). */
  secretScopes?: readonly string[] | undefined
}

/** The outcome of an update: the new row, or why nothing changed. */
export type ResourceUpdateOutcome =
  | { record: ResourceRecord }
  /** `changed`: not visible or not at the expected version any more; `id_taken`: the new owner has this id already. */
  | { conflict: 'changed' | 'id_taken' }

export interface ResourceStore {
  /** Inserts a resource; returns false when its owner has this id already. */
  insert(resource: NewResource): Promise<boolean>
  /**
   * The resource with this id that the caller sees first (own first by owner kind, then
   * scope priority, then oldest, then owner), or undefined. The encrypted secret is selected
   * only when `secretScopes` is given and meets the row's scopes; otherwise
   * `secure_body` is undefined.
   */
  get(id: string, access: ResourceAccess, options?: ResourceGetOptions): Promise<ResourceRecord | undefined>
  /** For each of `ids`, the visible resource resolved as in `get` (with body, never the secret). */
  getMany(ids: readonly string[], access: ResourceAccess): Promise<ResourceRecord[]>
  /** The visible resources with exactly these keys (owner and id), without secrets, in no particular order. */
  getExact(keys: readonly ResourceKey[], access: ResourceAccess): Promise<ResourceRecord[]>
  /** Summaries (no body, no secret) ordered by id then owner, after `after`. */
  list(filter: ResourceFilter, limit: number, after?: { id: string; owner?: string | undefined }): Promise<ResourceRecord[]>
  /** Applies a change if the caller may change the resource (`access`, in the statement's SQL) and it is still at `expectedVersion`. */
  update(key: ResourceKey, access: WriteAccess, expectedVersion: number, change: ResourceChange, at: Date): Promise<ResourceUpdateOutcome>
  /** Deletes a resource the caller may change; false when it may not (or there is none). */
  delete(key: ResourceKey, access: WriteAccess): Promise<boolean>
  count(): Promise<number>
  /** How many secrets each key id protects (for status and rotation checks). */
  secretKeyIds(): Promise<Array<{ key_id: string; count: number }>>
  /**
   * In one transaction (rows locked), passes every stored secret to `transform` and
   * writes back what it returns; undefined leaves the row alone. A throw rolls back all.
   */
  rewriteSecrets(transform: SecretTransform): Promise<{ rewritten: number; unchanged: number }>
  /**
   * A one-time rewrite of the stored secrets (a data migration that needs the key), recorded
   * in `knowhub_meta` under `data-migration:<name>` (`knowhub_migrations` lists the SQL files
   * only): like {@link rewriteSecrets} but only while `name` is not recorded (and it is
   * recorded in the same transaction). Returns undefined when it had run already.
   */
  upgradeSecrets(name: string, transform: SecretTransform): Promise<{ rewritten: number; unchanged: number } | undefined>
}

/** Given a stored secret's resource key and envelope: its replacement, or undefined to leave it. */
export type SecretTransform = (key: ResourceKey, envelope: string) => { envelope: string; keyId: string } | undefined

/**
 * The resource queries over a database.
 * @example
 * const resources = resourceStore(db) // or resourceStore(db, router.reads) with read replicas
 * await resources.get('code/selenium/login', { visible: ['user:alice', 'public'], own: ['user:alice'] })
 */
export function resourceStore(db: Database, reads: Queryable = db): ResourceStore {
  return { ...resourceReads(reads), ...resourceWrites(db), ...resourceSecrets(db) }
}

/**
 * Reads: one resource (resolved among the caller's namespaces), several, a page, the count. `db`
 * is where reads go: read replicas when configured (src/store/replicas.ts), else the database.
 */
function resourceReads(db: Queryable): Pick<ResourceStore, 'get' | 'getMany' | 'getExact' | 'list' | 'count'> {
  return {
    async get(id, access, options = {}) {
      const secret = options.secretScopes ? sql`, CASE WHEN r.scopes && ${options.secretScopes}::text[] THEN r.secure_body END AS secure_body` : sql.empty
      const owner = options.owner !== undefined ? sql` AND r.owner = ${options.owner}` : sql.empty
      const rows = await db.query(sql`SELECT ${FULL}${secret} FROM resources r WHERE r.id = ${id}${owner} AND ${visibleSql(access)}
        ORDER BY ${resolutionOrder(access)} LIMIT 1`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },

    async getMany(ids, access) {
      if (ids.length === 0) return []
      const rows = await db.query(sql`SELECT DISTINCT ON (r.id) ${FULL} FROM resources r WHERE r.id = ANY(${ids}::text[]) AND ${visibleSql(access)}
        ORDER BY r.id, ${resolutionOrder(access)}`)
      return rows.map(toRecord)
    },

    async getExact(keys, access) {
      if (keys.length === 0) return []
      const owners = keys.map((k) => k.owner)
      const ids = keys.map((k) => k.id)
      const rows = await db.query(sql`SELECT ${FULL} FROM resources r
        JOIN unnest(${owners}::text[], ${ids}::text[]) AS wanted(owner, id) ON r.owner = wanted.owner AND r.id = wanted.id
        WHERE ${visibleSql(access)}`)
      return rows.map(toRecord)
    },

    async list(filter, limit, after) {
      const page =
        after === undefined ? sql.empty : after.owner === undefined ? sql` AND r.id > ${after.id}` : sql` AND (r.id, r.owner) > (${after.id}, ${after.owner})`
      const rows = await db.query(sql`SELECT ${SUMMARY} FROM resources r WHERE ${filterSql(filter)}${page} ORDER BY r.id, r.owner LIMIT ${limit}`)
      return rows.map(toRecord)
    },

    async count() {
      const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM resources`)
      return rows[0]?.n ?? 0
    },
  }
}

/** Writes of one resource, keyed by owner and id, under the caller's visibility. */
function resourceWrites(db: Database): Pick<ResourceStore, 'insert' | 'update' | 'delete'> {
  return {
    async insert(r) {
      const rows =
        await db.query(sql`INSERT INTO resources (id, title, body, secure_body, secret_key_id, content_type, metadata, scopes, owner, version, created_at, updated_at)
        VALUES (${r.id}, ${r.title}, ${r.body}, ${r.secret?.envelope ?? null}, ${r.secret?.keyId ?? null}, ${r.content_type},
          ${JSON.stringify(r.metadata)}::jsonb, ${r.scopes}::text[], ${r.owner}, 1, ${r.created_at.toISOString()}, ${r.created_at.toISOString()})
        ON CONFLICT (owner, id) DO NOTHING
        RETURNING id`)
      return rows.length > 0
    },

    async update(key, access, expectedVersion, change, at) {
      if (change.secret === undefined && change.rebind) {
        const rebind = change.rebind
        return db.transaction(async (tx) => {
          const rows = await tx.query<{ secure_body: string | null }>(sql`SELECT r.secure_body FROM resources r
            WHERE r.owner = ${key.owner} AND r.id = ${key.id} AND r.version = ${expectedVersion} AND ${manageableSql(access)} FOR UPDATE`)
          if (!rows[0]) return { conflict: 'changed' as const }
          const stored = rows[0].secure_body
          return updateRow(tx, key, access, expectedVersion, { ...change, rebind: undefined, secret: stored === null ? null : rebind(stored) }, at)
        })
      }
      return updateRow(db, key, access, expectedVersion, change, at)
    },

    async delete(key, access) {
      const rows = await db.query(sql`DELETE FROM resources r WHERE r.owner = ${key.owner} AND r.id = ${key.id} AND ${manageableSql(access)} RETURNING r.id`)
      return rows.length > 0
    },
  }
}

/** The UPDATE of one resource at `expectedVersion` (see {@link ResourceStore.update}). */
async function updateRow(
  q: Queryable,
  key: ResourceKey,
  access: WriteAccess,
  expectedVersion: number,
  change: ResourceChange,
  at: Date,
): Promise<ResourceUpdateOutcome> {
  const secret =
    change.secret === undefined ? sql.empty : sql`, secure_body = ${change.secret?.envelope ?? null}, secret_key_id = ${change.secret?.keyId ?? null}`
  const statement = sql`UPDATE resources r SET title = ${change.title}, body = ${change.body}, content_type = ${change.content_type},
      metadata = ${JSON.stringify(change.metadata)}::jsonb, scopes = ${change.scopes}::text[], owner = ${change.owner}${secret},
      version = r.version + 1, updated_at = ${at.toISOString()}
    WHERE r.owner = ${key.owner} AND r.id = ${key.id} AND r.version = ${expectedVersion} AND ${manageableSql(access)}
    RETURNING ${FULL}`
  try {
    const rows = await q.query(statement)
    return rows[0] ? { record: toRecord(rows[0]) } : { conflict: 'changed' }
  } catch (error) {
    // A new owner that has this id already (unique key (owner, id)).
    if ((error as { details?: { sqlstate?: unknown } }).details?.sqlstate === '23505') return { conflict: 'id_taken' }
    throw error
  }
}

/** The encrypted secrets as a whole: which keys encrypted them, and re-encryption (key rotation) in one transaction. */
function resourceSecrets(db: Database): Pick<ResourceStore, 'secretKeyIds' | 'rewriteSecrets' | 'upgradeSecrets'> {
  return {
    async secretKeyIds() {
      const rows = await db.query<{ key_id: string; count: number }>(
        sql`SELECT secret_key_id AS key_id, count(*)::int AS count FROM resources WHERE secret_key_id IS NOT NULL GROUP BY secret_key_id ORDER BY secret_key_id`,
      )
      return rows.map((row) => ({ key_id: row.key_id, count: Number(row.count) }))
    },

    async rewriteSecrets(transform) {
      return db.transaction(async (tx) => rewriteIn(tx, transform))
    },

    async upgradeSecrets(name, transform) {
      return db.transaction(async (tx) => {
        const key = `data-migration:${name}`
        const done = await tx.query(sql`SELECT 1 FROM knowhub_meta WHERE key = ${key}`)
        if (done.length > 0) return undefined
        const result = await rewriteIn(tx, transform)
        await tx.query(sql`INSERT INTO knowhub_meta (key, value) VALUES (${key}, ${JSON.stringify({ applied_at: new Date().toISOString(), ...result })}::jsonb)
          ON CONFLICT (key) DO NOTHING`)
        return result
      })
    },
  }
}

/** Passes every stored secret (rows locked) to `transform` and writes back what it returns. */
async function rewriteIn(tx: Queryable, transform: SecretTransform): Promise<{ rewritten: number; unchanged: number }> {
  const rows = await tx.query<{ owner: string; id: string; secure_body: string }>(
    sql`SELECT owner, id, secure_body FROM resources WHERE secure_body IS NOT NULL ORDER BY id, owner FOR UPDATE`,
  )
  let rewritten = 0
  let unchanged = 0
  for (const row of rows) {
    const next = transform({ owner: row.owner, id: row.id }, row.secure_body)
    if (!next) {
      unchanged++
      continue
    }
    await tx.query(sql`UPDATE resources SET secure_body = ${next.envelope}, secret_key_id = ${next.keyId} WHERE owner = ${row.owner} AND id = ${row.id}`)
    rewritten++
  }
  return { rewritten, unchanged }
}
