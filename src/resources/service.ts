/**
 * The resource service (seed doc 003): save, get, update, delete and list
 * resources — code, credentials, cookies — that knowledge entries reference by
 * id. Visibility is enforced by the store's queries. The secret part
 * (`secure_body`) is encrypted before it reaches the store, and decrypted only
 * for a caller that asked for it and holds `secrets:read` in one of the
 * resource's own scopes (never via `public`). Secrets never go into log fields
 * or error messages.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { assertWritableScopes, canManage, hasPermission, memberScopes, requirePermission, visibleScopes, type Principal } from '../core/principal.js'
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
import type { ResourceRecord } from '../store/resources.js'
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
}

const NOT_FOUND = (id: string) => new KnowHubError('not_found', `No resource ${id}`, { id })

function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify(['r', id])).toString('base64url')
}

function decodeCursor(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && value[0] === 'r' && typeof value[1] === 'string' && resourceIdProblem(value[1]) === undefined) return value[1]
  } catch {
    // fall through
  }
  throw new KnowHubError('validation_error', 'Invalid cursor: pass the next_cursor of a previous page', { issues: [{ path: 'cursor', message: 'invalid cursor' }] })
}

/** True when `metadata.expires_at` is a valid time before `now`. */
export function isExpired(metadata: ResourceMetadata, now: Date): boolean {
  const raw = metadata.expires_at
  if (typeof raw !== 'string') return false
  const at = Date.parse(raw)
  return Number.isFinite(at) && at < now.getTime()
}

/**
 * May this principal read the secrets of a resource in `scopes`? It needs `secrets:read`
 * (admin implies it) and one of its own ids among the scopes; `public` never counts.
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
      if (bytes > maxBodyBytes) throw new KnowHubError('too_large', `body is ${bytes} bytes; the limit is ${maxBodyBytes}`, { field: 'body', bytes, limit: maxBodyBytes })
    }
    if (typeof input.secure_body === 'string') {
      const bytes = byteLength(input.secure_body)
      if (bytes > maxSecureBodyBytes) {
        throw new KnowHubError('too_large', `secure_body is ${bytes} bytes; the limit is ${maxSecureBodyBytes}`, { field: 'secure_body', bytes, limit: maxSecureBodyBytes })
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

  function defaultOwner(principal: Principal): string {
    const own = memberScopes(principal)
    const owner = own.find((s) => s.startsWith('user:')) ?? own.find((s) => s.startsWith('agent:')) ?? own[0]
    if (!owner) throw new KnowHubError('forbidden', 'The caller has no user or agent id to own the resource')
    return owner
  }

  async function requireManaged(id: string, principal: Principal): Promise<ResourceRecord> {
    const record = await store.resources.get(id, visibleScopes(principal))
    if (!record) throw NOT_FOUND(id)
    if (!canManage(principal, record.owner)) {
      throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may change resource ${id}`, { id, owner: record.owner })
    }
    return record
  }

  return {
    /**
     * Saves a new resource (`POST /api/resource`). An existing id is a `conflict`: use
     * update. Scopes default to the caller's own user (or first) scope; owner to the caller.
     * The result never carries `secure_body`.
     */
    async save(raw: unknown, principal: Principal): Promise<Resource> {
      requirePermission(principal, 'write')
      const input = parseWith(SaveResourceInput, raw, 'resource')
      checkSizes(input)
      const own = memberScopes(principal)
      const scopes = [...new Set(input.scopes ?? (own.find((s) => s.startsWith('user:')) ? [own.find((s) => s.startsWith('user:'))!] : own.slice(0, 1)))]
      if (scopes.length === 0) throw new KnowHubError('forbidden', 'The caller belongs to no scope it could write to')
      assertWritableScopes(principal, scopes)
      const owner = input.owner ?? defaultOwner(principal)
      if (!canManage(principal, owner)) {
        throw new KnowHubError('forbidden', `You cannot create resources owned by ${owner}: the owner must be one of your own ids`, { owner })
      }
      const now = clock.now()
      const secret = input.secure_body !== undefined ? { envelope: secrets.encrypt(input.secure_body, input.id), keyId: secrets.keyId } : null
      const inserted = await store.resources.insert({
        id: input.id,
        title: input.title,
        body: input.body,
        secret,
        content_type: input.content_type,
        metadata: input.metadata,
        scopes,
        owner,
        created_at: now,
      })
      if (!inserted) throw new KnowHubError('conflict', `Resource ${input.id} exists already; update it with PUT /api/resource/${input.id}`, { id: input.id })
      logger.info('resource.saved', { id: input.id, content_type: input.content_type, scopes, has_secret: secret !== null })
      return toResource({ id: input.id, title: input.title, body: input.body, has_secret: secret !== null, content_type: input.content_type, metadata: input.metadata, scopes, owner, version: 1, created_at: now, updated_at: now }, now)
    },

    /**
     * One resource if the caller can see it (`GET /api/resource/{id}`). With
     * `includeSecret`, `secure_body` is decrypted for a caller allowed to read it;
     * for anyone else the field is absent.
     */
    async get(id: string, principal: Principal, options: GetResourceOptions = {}): Promise<Resource> {
      requirePermission(principal, 'read')
      validId(id)
      const wantSecret = options.includeSecret === true && hasPermission(principal, 'secrets:read')
      // The SQL returns the envelope only where the row's scopes meet the caller's own ids.
      const secretScopes = wantSecret ? memberScopes(principal) : undefined
      const record = await store.resources.get(id, visibleScopes(principal), secretScopes && secretScopes.length > 0 ? secretScopes : undefined)
      if (!record) throw NOT_FOUND(id)
      const now = clock.now()
      const resource = toResource(record, now)
      if (wantSecret && typeof record.secure_body === 'string' && canReadSecrets(principal, record.scopes)) {
        resource.secure_body = secrets.decrypt(record.secure_body, record.id)
        logger.info('resource.secret.read', { id: record.id, by: memberScopes(principal) })
      }
      return resource
    },

    /**
     * Changes a resource (`PUT /api/resource/{id}`; owner or admin). Only the given fields
     * change; `secure_body: null` removes the secret. New scopes must be writable by the caller.
     */
    async update(id: string, raw: unknown, principal: Principal): Promise<Resource> {
      requirePermission(principal, 'write')
      validId(id)
      const input = parseWith(UpdateResourceInput, raw, 'resource update')
      checkSizes(input)
      const record = await requireManaged(id, principal)
      const scopes = input.scopes ? [...new Set(input.scopes)] : record.scopes
      if (input.scopes) assertWritableScopes(principal, scopes)
      if (input.owner !== undefined && input.owner !== record.owner && !canManage(principal, input.owner)) {
        throw new KnowHubError('forbidden', `You cannot give resource ${id} to ${input.owner}: the owner must be one of your own ids`, { id, owner: input.owner })
      }
      const secret =
        input.secure_body === undefined ? undefined : input.secure_body === null ? null : { envelope: secrets.encrypt(input.secure_body, id), keyId: secrets.keyId }
      const now = clock.now()
      const updated = await store.resources.update(
        id,
        visibleScopes(principal),
        record.version,
        {
          title: input.title ?? record.title,
          body: input.body ?? record.body,
          ...(secret !== undefined ? { secret } : {}),
          content_type: input.content_type ?? record.content_type,
          metadata: input.metadata ?? record.metadata,
          scopes,
          owner: input.owner ?? record.owner,
        },
        now,
      )
      if (!updated) throw new KnowHubError('conflict', `Resource ${id} changed while it was being updated; read it again and retry`, { id })
      logger.info('resource.updated', { id, version: updated.version, secret: secret === undefined ? 'kept' : secret === null ? 'removed' : 'replaced' })
      return toResource(updated, now)
    },

    /** Deletes a resource for good (`DELETE /api/resource/{id}`; owner or admin). */
    async delete(id: string, principal: Principal): Promise<void> {
      requirePermission(principal, 'write')
      validId(id)
      await requireManaged(id, principal)
      if (!(await store.resources.delete(id, visibleScopes(principal)))) throw NOT_FOUND(id)
      logger.info('resource.deleted', { id })
    },

    /**
     * Visible resources ordered by id (`GET /api/resource`), as summaries: no body and
     * never a secret. Filters: id prefix, content types, scopes, owner, expired.
     */
    async list(raw: unknown, principal: Principal): Promise<ResourceListPage> {
      requirePermission(principal, 'read')
      const input = parseWith(ListResourcesInput, raw ?? {}, 'resource list options')
      const after = input.cursor ? decodeCursor(input.cursor) : undefined
      const now = clock.now()
      const records = await store.resources.list(
        { visible: visibleScopes(principal), prefix: input.prefix, contentTypes: input.content_type, scopes: input.scopes, owner: input.owner, expired: input.expired, now },
        input.limit + 1,
        after,
      )
      const page = records.slice(0, input.limit)
      const last = page[page.length - 1]
      return { items: page.map((r) => toSummary(r, now)), next_cursor: records.length > input.limit && last ? encodeCursor(last.id) : null }
    },

    /**
     * The resources behind a knowledge entry's `resource_ids`: only those the caller can
     * see (an entry being visible does not make its resources visible), in the order
     * given, without `secure_body`. Ids that are malformed or unknown are left out.
     */
    async expandResources(ids: readonly string[], principal: Principal): Promise<Resource[]> {
      requirePermission(principal, 'read')
      const wanted = [...new Set(ids)].filter((id) => typeof id === 'string' && resourceIdProblem(id) === undefined)
      if (wanted.length === 0) return []
      const now = clock.now()
      const byId = new Map((await store.resources.getMany(wanted, visibleScopes(principal))).map((r) => [r.id, r]))
      return wanted.flatMap((id) => {
        const record = byId.get(id)
        return record ? [toResource(record, now)] : []
      })
    },
  }
}

export type ResourceService = ReturnType<typeof createResourceService>
