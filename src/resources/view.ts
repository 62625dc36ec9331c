/**
 * The caller's view of a resource: summaries (lists), the full resource (get, save,
 * update) and the expanded form added to knowledge entries — each without the secret.
 * Only `getResource` (read.ts) ever adds a decrypted `secure_body`, for a caller allowed
 * to read it.
 */
import { hasPermission, memberScopes, type Principal } from '../core/principal.js'
import type { ExpandedResource, Resource, ResourceMetadata, ResourceSummary } from '../core/resources.js'
import type { ResourceRecord } from '../store/resources/resources.js'

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

/**
 * What every view shows: no body, never the secret.
 * @example
 * toSummary(record, clock.now()).has_secret // true when a secure_body is stored
 */
export function toSummary(record: ResourceRecord, now: Date): ResourceSummary {
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

/**
 * The resource with its body and without its secret (the `secure_body` key is absent,
 * whatever the record holds): the view of an expansion.
 * @example
 * 'secure_body' in toExpanded(record, now) // false
 */
export function toExpanded(record: ResourceRecord, now: Date): ExpandedResource {
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

/**
 * The resource as get/save/update return it: without its secret until `getResource`
 * adds it for a caller allowed to read it.
 * @example
 * const resource = toResource(record, now) // resource.secure_body === undefined
 */
export function toResource(record: ResourceRecord, now: Date): Resource {
  return toExpanded(record, now)
}
