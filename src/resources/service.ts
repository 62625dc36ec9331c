/**
 * The resource service (seed doc 003): save, get, update, delete and list
 * resources — code, credentials, cookies — that knowledge entries reference by
 * id. Ids are namespaced by owner: two owners may each have `credentials/website_a`.
 * A caller sees a resource when its scopes meet the caller's visible scopes or the
 * caller is its owner; an id alone resolves among what the caller sees — its own
 * first (user namespace, then agent, project, team, org: a caller reads back what
 * it saved without an owner), then scope priority (user > project > agent > team > org > public), then
 * the oldest — so a resource the caller cannot see never changes an answer, and a
 * save never collides with one (except for an admin writing into another owner's
 * namespace). Visibility is enforced by the store's queries. The secret part
 * (`secure_body`) is encrypted before it reaches the store, and decrypted only
 * for a caller that asked for it and holds `secrets:read` in one of the
 * resource's own scopes (never via `public`). Secrets never go into log fields
 * or error messages.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { decodeCursor, encodeCursor } from '../core/cursor.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import {
  Owner,
  assertWritableScopes,
  canManage,
  defaultOwnerOf,
  defaultWriteScopes,
  foreignOwnerError,
  hasPermission,
  memberScopes,
  requirePermission,
  visibleScopes,
  type Principal,
} from '../core/principal.js'
import {
  ListResourcesInput,
  MAX_RESOURCE_BODY_BYTES,
  MAX_SECURE_BODY_BYTES,
  ResourceId,
  SaveResourceInput,
  UpdateResourceInput,
  resourceIdProblem,
  type Resource,
  type ResourceListPage,
  type ResourceMetadata,
  type ResourceSummary,
} from '../core/resources.js'
import { parseWith } from '../core/validate.js'
import type { ResourceAccess, ResourceChange, ResourceRecord } from '../store/resources.js'
import type { Store } from '../store/store.js'
import type { SecretBox } from './secrets.js'

export interface ResourceServiceDeps {
  store: Store
  /** Encrypts and decrypts `secure_body` (see createSecretBox). */
  secrets: SecretBox
  logger?: Logger
  clock?: Clock
  /** Size limits in UTF-8 bytes (defaults: body 1 MiB, secure_body 64 KiB). */
  limits?: { bodyBytes?: number; secureBodyBytes?: number }
}

export interface GetResourceOptions {
  /**
   * Ask for `secure_body`. It is returned only when the caller holds `secrets:read`
   * and belongs to (one of its own ids is) one of the resource's scopes; otherwise
   * the field is absent. Default false.
   */
  includeSecret?: boolean
  /** Only in this owner's namespace (`kind:id`); default: resolve among every visible owner. */
  owner?: string | undefined
}

/** Which resource `update` and `delete` mean when several owners have the id. */
export interface ResourceTarget {
  /** Only in this owner's namespace; default: the one `get` resolves to. */
  owner?: string | undefined
}

/** What the caller may see: rows in its visible scopes, and rows it owns. */
function accessOf(principal: Principal): ResourceAccess {
  return { visible: visibleScopes(principal), own: memberScopes(principal) }
}

const NOT_FOUND = (id: string) => new KnowHubError('not_found', `No resource ${id}`, { id })

function listCursor(last: { id: string; owner: string }): string {
  return encodeCursor(['r', last.id, last.owner])
}

/** The position after which a page starts; cursors of older versions carry only the id. */
function listPosition(cursor: string): { id: string; owner?: string } {
  return decodeCursor(cursor, (value) => {
    if (value[0] !== 'r' || typeof value[1] !== 'string' || resourceIdProblem(value[1]) !== undefined) return undefined
    if (value.length === 2) return { id: value[1] }
    if (value.length === 3 && typeof value[2] === 'string' && Owner.safeParse(value[2]).success) return { id: value[1], owner: value[2] }
    return undefined
  })
}

/**
 * True when `metadata.expires_at` is a valid time before `now`.
 * @example
 * isExpired({ expires_at: '2026-03-07T10:00:00Z' }, new Date('2026-04-01T00:00:00Z')) // true
 */
export function isExpired(metadata: ResourceMetadata, now: Date): boolean {
  const raw = metadata.expires_at
  if (typeof raw !== 'string') return false
  const at = Date.parse(raw)
  return Number.isFinite(at) && at < now.getTime()
}

/**
 * May this principal read the secrets of a resource in `scopes`? It needs `secrets:read`
 * (admin implies it) and one of its own ids among the scopes; `public` never counts.
 * @example
 * canReadSecrets({ user: 'alice', org: 'acme', permissions: ['read', 'secrets:read'] }, ['org:acme']) // true
 * canReadSecrets({ user: 'alice', permissions: ['admin'] }, ['public']) // false
 */
export function canReadSecrets(principal: Principal, scopes: readonly string[]): boolean {
  if (!hasPermission(principal, 'secrets:read')) return false
  const own = memberScopes(principal)
  return scopes.some((scope) => scope !== 'public' && own.includes(scope))
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * Creates the resource service.
 * @example
 * const resources = createResourceService({ store, secrets: createSecretBox(loadOrCreateKey({ keyFile })) })
 * await resources.save({ id: 'cookies/website_a', title: 'Site A cookie', content_type: 'cookie',
 *   secure_body: 'session_id=abc123', metadata: { expires_at: '2026-03-07T10:00:00Z' }, scopes: ['org:acme'] }, alice)
 * const cookie = await resources.get('cookies/website_a', alice, { includeSecret: true })
 */
export function createResourceService(deps: ResourceServiceDeps) {
  const { store, secrets } = deps
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ?? systemClock
  const maxBodyBytes = deps.limits?.bodyBytes ?? MAX_RESOURCE_BODY_BYTES
  const maxSecureBodyBytes = deps.limits?.secureBodyBytes ?? MAX_SECURE_BODY_BYTES

  function checkSizes(input: { body?: string | undefined; secure_body?: string | null | undefined }): void {
    if (input.body !== undefined) {
      const bytes = byteLength(input.body)
      if (bytes > maxBodyBytes)
        throw new KnowHubError('too_large', `body is ${bytes} bytes; the limit is ${maxBodyBytes}`, { field: 'body', bytes, limit: maxBodyBytes })
    }
    if (typeof input.secure_body === 'string') {
      const bytes = byteLength(input.secure_body)
      if (bytes > maxSecureBodyBytes) {
        throw new KnowHubError('too_large', `secure_body is ${bytes} bytes; the limit is ${maxSecureBodyBytes}`, {
          field: 'secure_body',
          bytes,
          limit: maxSecureBodyBytes,
        })
      }
    }
  }

  function toSummary(record: ResourceRecord, now: Date): ResourceSummary {
    return {
      id: record.id,
      title: record.title,
      content_type: record.content_type,
      metadata: record.metadata,
      scopes: record.scopes,
      owner: record.owner,
      has_secret: record.has_secret,
      expired: isExpired(record.metadata, now),
      version: record.version,
      created_at: record.created_at.toISOString(),
      updated_at: record.updated_at.toISOString(),
    }
  }

  /** The resource without its secret (the `secure_body` key is absent). */
  function toResource(record: ResourceRecord, now: Date): Resource {
    const summary = toSummary(record, now)
    return {
      id: summary.id,
      title: summary.title,
      body: record.body,
      content_type: summary.content_type,
      metadata: summary.metadata,
      scopes: summary.scopes,
      owner: summary.owner,
      has_secret: summary.has_secret,
      expired: summary.expired,
      version: summary.version,
      created_at: summary.created_at,
      updated_at: summary.updated_at,
    }
  }

  function validId(id: string): string {
    return parseWith(ResourceId, id, 'resource id')
  }

  function validOwner(owner: string | undefined): string | undefined {
    return owner === undefined ? undefined : parseWith(Owner, owner, 'owner')
  }

  function defaultOwner(principal: Principal): string {
    const owner = defaultOwnerOf(principal)
    if (!owner) throw new KnowHubError('forbidden', 'The caller has no user or agent id to own the resource')
    return owner
  }

  /** A secret nobody could ever read: `public` never grants one. */
  function assertSecretReadable(hasSecret: boolean, scopes: readonly string[]): void {
    if (hasSecret && scopes.every((s) => s === 'public')) {
      const message =
        'a resource whose only scope is public cannot hold a secure_body: nobody could ever read it (public never grants a secret). Add one of your own scopes, or leave secure_body out'
      throw new KnowHubError('validation_error', `Invalid resource: secure_body: ${message}`, { issues: [{ path: 'secure_body', message }] })
    }
  }

  /** The resource `id` resolves to for this caller (see the module comment), and that it may change it. */
  async function requireManaged(id: string, principal: Principal, owner?: string): Promise<ResourceRecord> {
    const record = await store.resources.get(id, accessOf(principal), { owner })
    if (!record) throw NOT_FOUND(id)
    if (!canManage(principal, record.owner)) {
      throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may change resource ${id}`, { id, owner: record.owner })
    }
    return record
  }

  function encryptFor(id: string, secureBody: string | null | undefined): ResourceChange['secret'] {
    return secureBody === undefined ? undefined : secureBody === null ? null : { envelope: secrets.encrypt(secureBody, id), keyId: secrets.keyId }
  }

  async function applyChange(record: ResourceRecord, principal: Principal, change: ResourceChange): Promise<Resource> {
    assertSecretReadable(change.secret === undefined ? record.has_secret : change.secret !== null, change.scopes)
    const now = clock.now()
    const outcome = await store.resources.update({ owner: record.owner, id: record.id }, accessOf(principal), record.version, change, now)
    if ('conflict' in outcome) {
      if (outcome.conflict === 'id_taken') {
        throw new KnowHubError('conflict', `${change.owner} has a resource ${record.id} already: delete or rename one of them first`, {
          id: record.id,
          owner: change.owner,
        })
      }
      throw new KnowHubError('conflict', `Resource ${record.id} changed while it was being updated; read it again and retry`, { id: record.id })
    }
    const secret = change.secret === undefined ? 'kept' : change.secret === null ? 'removed' : 'replaced'
    logger.info('resource.updated', { id: record.id, owner: outcome.record.owner, version: outcome.record.version, secret })
    return toResource(outcome.record, now)
  }

  /**
   * Saves a resource into the namespace of its owner (`POST /api/resource`): creates it,
   * or — when that owner has this id already and the caller can see it — updates it in
   * place: the fields given replace the stored ones, the others are kept.
   */
  async function upsert(raw: unknown, principal: Principal): Promise<{ resource: Resource; created: boolean }> {
    requirePermission(principal, 'write')
    const input = parseWith(SaveResourceInput, raw, 'resource')
    checkSizes(input)
    const given = new Set(
      raw !== null && typeof raw === 'object'
        ? Object.entries(raw)
            .filter(([, v]) => v !== null && v !== undefined)
            .map(([k]) => k)
        : [],
    )
    const owner = input.owner ?? defaultOwner(principal)
    if (!canManage(principal, owner)) {
      throw foreignOwnerError(principal, owner, 'resources')
    }
    const access = accessOf(principal)
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await store.resources.get(input.id, access, { owner })
      if (existing) {
        const scopes = given.has('scopes') && input.scopes ? [...new Set(input.scopes)] : existing.scopes
        if (given.has('scopes')) assertWritableScopes(principal, scopes)
        const resource = await applyChange(existing, principal, {
          title: input.title,
          body: given.has('body') ? input.body : existing.body,
          ...(given.has('secure_body') ? { secret: encryptFor(input.id, input.secure_body) } : {}),
          content_type: given.has('content_type') ? input.content_type : existing.content_type,
          metadata: given.has('metadata') ? input.metadata : existing.metadata,
          scopes,
          owner,
        })
        return { resource, created: false }
      }
      const scopes = [...new Set(input.scopes ?? defaultWriteScopes(principal))]
      if (scopes.length === 0) throw new KnowHubError('forbidden', 'The caller belongs to no scope it could write to')
      assertWritableScopes(principal, scopes)
      assertSecretReadable(input.secure_body !== undefined, scopes)
      const now = clock.now()
      const secret = encryptFor(input.id, input.secure_body) ?? null
      const record = { id: input.id, title: input.title, body: input.body, content_type: input.content_type, metadata: input.metadata, scopes, owner }
      if (await store.resources.insert({ ...record, secret, created_at: now })) {
        logger.info('resource.saved', { id: input.id, owner, content_type: input.content_type, scopes, has_secret: secret !== null })
        return { resource: toResource({ ...record, has_secret: secret !== null, version: 1, created_at: now, updated_at: now }, now), created: true }
      }
      // Taken by a concurrent save: the next round finds it (the caller sees what it owns) and
      // updates it. Still not visible then: only an admin writing into another owner's
      // namespace can meet a resource it cannot see there.
    }
    throw new KnowHubError('conflict', `${owner} has a resource ${input.id} already, or it changed while it was being saved`, { id: input.id, owner })
  }

  return {
    /**
     * Saves a resource (`POST /api/resource`): creates it in the namespace of its owner
     * (default: the caller), or updates it when that owner has this id already (see
     * {@link upsert}). Scopes default to the caller's own user (or first) scope. The
     * result never carries `secure_body`.
     */
    async save(raw: unknown, principal: Principal): Promise<Resource> {
      return (await upsert(raw, principal)).resource
    },

    /** Like `save`, and says whether the resource was created (201) or updated (200). */
    upsert,

    /**
     * One resource if the caller can see it (`GET /api/resource/{id}`), resolved among
     * every visible resource with this id (own first, then scope priority), or in
     * `owner`'s namespace only. With `includeSecret`, `secure_body` is decrypted for a
     * caller allowed to read it; for anyone else the field is absent.
     */
    async get(id: string, principal: Principal, options: GetResourceOptions = {}): Promise<Resource> {
      requirePermission(principal, 'read')
      validId(id)
      const owner = validOwner(options.owner)
      const wantSecret = options.includeSecret === true && hasPermission(principal, 'secrets:read')
      // The SQL returns the envelope only where the row's scopes meet the caller's own ids.
      const secretScopes = wantSecret ? memberScopes(principal) : undefined
      const record = await store.resources.get(id, accessOf(principal), {
        owner,
        secretScopes: secretScopes && secretScopes.length > 0 ? secretScopes : undefined,
      })
      if (!record) throw NOT_FOUND(id)
      const now = clock.now()
      const resource = toResource(record, now)
      if (wantSecret && typeof record.secure_body === 'string' && canReadSecrets(principal, record.scopes)) {
        resource.secure_body = secrets.decrypt(record.secure_body, record.id)
        logger.info('resource.secret.read', { id: record.id, owner: record.owner, by: memberScopes(principal) })
      }
      return resource
    },

    /**
     * Changes a resource (`PUT /api/resource/{id}`; owner or admin), resolved like `get`.
     * Only the given fields change; `secure_body: null` removes the secret. New scopes
     * must be writable by the caller.
     */
    async update(id: string, raw: unknown, principal: Principal, options: ResourceTarget = {}): Promise<Resource> {
      requirePermission(principal, 'write')
      validId(id)
      const input = parseWith(UpdateResourceInput, raw, 'resource update')
      checkSizes(input)
      const record = await requireManaged(id, principal, validOwner(options.owner))
      const scopes = input.scopes ? [...new Set(input.scopes)] : record.scopes
      if (input.scopes) assertWritableScopes(principal, scopes)
      if (input.owner !== undefined && input.owner !== record.owner && !canManage(principal, input.owner)) {
        throw new KnowHubError('forbidden', `You cannot give resource ${id} to ${input.owner}: the owner must be one of your own ids`, {
          id,
          owner: input.owner,
        })
      }
      return applyChange(record, principal, {
        title: input.title ?? record.title,
        body: input.body ?? record.body,
        ...(input.secure_body !== undefined ? { secret: encryptFor(id, input.secure_body) } : {}),
        content_type: input.content_type ?? record.content_type,
        metadata: input.metadata ?? record.metadata,
        scopes,
        owner: input.owner ?? record.owner,
      })
    },

    /** Deletes a resource for good (`DELETE /api/resource/{id}`; owner or admin), resolved like `get`. */
    async delete(id: string, principal: Principal, options: ResourceTarget = {}): Promise<{ owner: string }> {
      requirePermission(principal, 'write')
      validId(id)
      const record = await requireManaged(id, principal, validOwner(options.owner))
      if (!(await store.resources.delete({ owner: record.owner, id }, accessOf(principal)))) throw NOT_FOUND(id)
      logger.info('resource.deleted', { id, owner: record.owner })
      return { owner: record.owner }
    },

    /**
     * Visible resources ordered by id, then owner (`GET /api/resource`), as summaries: no
     * body and never a secret. Filters: id prefix, content types, scopes, owner, expired.
     */
    async list(raw: unknown, principal: Principal): Promise<ResourceListPage> {
      requirePermission(principal, 'read')
      const input = parseWith(ListResourcesInput, raw ?? {}, 'resource list options')
      const after = input.cursor ? listPosition(input.cursor) : undefined
      const now = clock.now()
      const records = await store.resources.list(
        {
          access: accessOf(principal),
          prefix: input.prefix,
          contentTypes: input.content_type,
          scopes: input.scopes,
          owner: input.owner,
          expired: input.expired,
          now,
        },
        input.limit + 1,
        after,
      )
      const page = records.slice(0, input.limit)
      const last = page[page.length - 1]
      return { items: page.map((r) => toSummary(r, now)), next_cursor: records.length > input.limit && last ? listCursor(last) : null }
    },

    /**
     * The resources behind a knowledge entry's `resource_ids`, each resolved for the
     * caller like `get` (own first, then scope priority): only those the caller can see
     * (an entry being visible does not make its resources visible), in the order given,
     * without `secure_body`. Ids that are malformed or unknown are left out.
     */
    async expandResources(ids: readonly string[], principal: Principal): Promise<Resource[]> {
      requirePermission(principal, 'read')
      const wanted = [...new Set(ids)].filter((id) => typeof id === 'string' && resourceIdProblem(id) === undefined)
      if (wanted.length === 0) return []
      const now = clock.now()
      const byId = new Map((await store.resources.getMany(wanted, accessOf(principal))).map((r) => [r.id, r]))
      return wanted.flatMap((id) => {
        const record = byId.get(id)
        return record ? [toResource(record, now)] : []
      })
    },
  }
}

export type ResourceService = ReturnType<typeof createResourceService>
