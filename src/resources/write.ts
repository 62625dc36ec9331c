/**
 * Writing resources: save (create, or update the owner's resource with this id), update
 * and delete. The secret is encrypted here, before it reaches the store, with the
 * resource's owner and id as additional authenticated data; it never goes into a log field.
 */
import { KnowHubError } from '../core/errors.js'
import { assertWritableScopes, defaultWriteScopes, foreignOwnerError, requirePermission, type Principal } from '../core/principal.js'
import { SaveResourceInput, UpdateResourceInput, type Resource } from '../core/resources.js'
import { parseWith } from '../core/validate.js'
import type { ResourceChange, ResourceRecord } from '../store/resources/resources.js'
import { accessOf, assertSecretReadable, checkSizes, defaultOwner, notFound, requireManaged, validId, validOwner, type ResourceContext } from './context.js'
import { toResource } from './view.js'
import { mayNameOwner, writeAccess } from '../auth/policy.js'

/** Which resource `update` and `delete` mean when several owners have the id. */
export interface ResourceTarget {
  /** Only in this owner's namespace; default: the one `get` resolves to. */
  owner?: string | undefined
}

function encryptFor(ctx: ResourceContext, id: string, owner: string, secureBody: string | null | undefined): ResourceChange['secret'] {
  return secureBody === undefined ? undefined : secureBody === null ? null : { envelope: ctx.secrets.encrypt(secureBody, id, owner), keyId: ctx.secrets.keyId }
}

/**
 * The secret's envelope is bound to its owner: a resource given to another owner with its
 * secret kept has it re-encrypted for the new owner (in the update's transaction).
 */
function rebindFor(ctx: ResourceContext, record: ResourceRecord, owner: string): ResourceChange['rebind'] {
  if (owner === record.owner || !record.has_secret) return undefined
  return (envelope) => ({ envelope: ctx.secrets.encrypt(ctx.secrets.decrypt(envelope, record.id, record.owner), record.id, owner), keyId: ctx.secrets.keyId })
}

async function applyChange(ctx: ResourceContext, record: ResourceRecord, principal: Principal, change: ResourceChange): Promise<Resource> {
  assertSecretReadable(change.secret === undefined ? record.has_secret : change.secret !== null, change.scopes)
  const now = ctx.clock.now()
  const outcome = await ctx.store.resources.update({ owner: record.owner, id: record.id }, writeAccess(principal), record.version, change, now)
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
  ctx.logger.info('resource.updated', { id: record.id, owner: outcome.record.owner, version: outcome.record.version, secret })
  return toResource(outcome.record, now)
}

/** The fields a save body gives (not null, not absent): the others keep their stored values. */
function givenFields(raw: unknown): Set<string> {
  if (raw === null || typeof raw !== 'object') return new Set()
  return new Set(
    Object.entries(raw)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k]) => k),
  )
}

type SaveInput = ReturnType<typeof SaveResourceInput.parse>

/** A save over the owner's existing resource: the fields given replace the stored ones. */
async function saveOver(ctx: ResourceContext, existing: ResourceRecord, input: SaveInput, given: Set<string>, principal: Principal): Promise<Resource> {
  const scopes = given.has('scopes') && input.scopes ? [...new Set(input.scopes)] : existing.scopes
  if (given.has('scopes')) assertWritableScopes(principal, scopes)
  return applyChange(ctx, existing, principal, {
    title: input.title,
    body: given.has('body') ? input.body : existing.body,
    ...(given.has('secure_body') ? { secret: encryptFor(ctx, input.id, existing.owner, input.secure_body) } : {}),
    content_type: given.has('content_type') ? input.content_type : existing.content_type,
    metadata: given.has('metadata') ? input.metadata : existing.metadata,
    scopes,
    owner: existing.owner,
  })
}

/** A new resource; undefined when a concurrent save took the id first. */
async function insertNew(ctx: ResourceContext, input: SaveInput, owner: string, principal: Principal): Promise<Resource | undefined> {
  const scopes = [...new Set(input.scopes ?? defaultWriteScopes(principal))]
  if (scopes.length === 0) throw new KnowHubError('forbidden', 'The caller belongs to no scope it could write to')
  assertWritableScopes(principal, scopes)
  assertSecretReadable(input.secure_body !== undefined, scopes)
  const now = ctx.clock.now()
  const secret = encryptFor(ctx, input.id, owner, input.secure_body) ?? null
  const record = { id: input.id, title: input.title, body: input.body, content_type: input.content_type, metadata: input.metadata, scopes, owner }
  if (!(await ctx.store.resources.insert({ ...record, secret, created_at: now }))) return undefined
  ctx.logger.info('resource.saved', { id: input.id, owner, content_type: input.content_type, scopes, has_secret: secret !== null })
  return toResource({ ...record, has_secret: secret !== null, version: 1, created_at: now, updated_at: now }, now)
}

/**
 * Saves a resource into the namespace of its owner (`POST /api/resource`; default owner:
 * the caller): creates it, or — when that owner has this id already and the caller can
 * see it — updates it in place: the fields given replace the stored ones, the others are
 * kept. Scopes default to the caller's own user (or first) scope. The result never
 * carries `secure_body`.
 * @example
 * const { resource, created } = await upsertResource(ctx, { id: 'code/x', title: 'X' }, alice)
 */
export async function upsertResource(ctx: ResourceContext, raw: unknown, principal: Principal): Promise<{ resource: Resource; created: boolean }> {
  requirePermission(principal, 'write')
  const input = parseWith(SaveResourceInput, raw, 'resource')
  checkSizes(ctx, input)
  const given = givenFields(raw)
  const owner = input.owner ?? defaultOwner(principal)
  if (!mayNameOwner(principal, owner)) throw foreignOwnerError(principal, owner, 'resources')
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await ctx.store.resources.get(input.id, accessOf(principal), { owner })
    if (existing) return { resource: await saveOver(ctx, existing, input, given, principal), created: false }
    const created = await insertNew(ctx, input, owner, principal)
    if (created) return { resource: created, created: true }
    // Taken by a concurrent save: the next round finds it (the caller sees what it owns) and
    // updates it. Still not visible then: only an admin writing into another owner's
    // namespace can meet a resource it cannot see there.
  }
  throw new KnowHubError('conflict', `${owner} has a resource ${input.id} already, or it changed while it was being saved`, { id: input.id, owner })
}

/**
 * Changes a resource (`PUT /api/resource/{id}`; owner or admin), resolved like `get`.
 * Only the given fields change; `secure_body: null` removes the secret. New scopes must
 * be writable by the caller.
 * @example
 * await updateResource(ctx, 'credentials/site_a', { secure_body: null }, alice)
 */
export async function updateResource(ctx: ResourceContext, id: string, raw: unknown, principal: Principal, options: ResourceTarget = {}): Promise<Resource> {
  requirePermission(principal, 'write')
  validId(id)
  const input = parseWith(UpdateResourceInput, raw, 'resource update')
  checkSizes(ctx, input)
  const record = await requireManaged(ctx, id, principal, validOwner(options.owner))
  const scopes = input.scopes ? [...new Set(input.scopes)] : record.scopes
  if (input.scopes) assertWritableScopes(principal, scopes)
  if (input.owner !== undefined && input.owner !== record.owner && !mayNameOwner(principal, input.owner)) {
    throw new KnowHubError('forbidden', `You cannot give resource ${id} to ${input.owner}: the owner must be one of your own ids`, { id, owner: input.owner })
  }
  const owner = input.owner ?? record.owner
  return applyChange(ctx, record, principal, {
    title: input.title ?? record.title,
    body: input.body ?? record.body,
    ...(input.secure_body !== undefined ? { secret: encryptFor(ctx, id, owner, input.secure_body) } : { rebind: rebindFor(ctx, record, owner) }),
    content_type: input.content_type ?? record.content_type,
    metadata: input.metadata ?? record.metadata,
    scopes,
    owner,
  })
}

/**
 * Deletes a resource for good (`DELETE /api/resource/{id}`; owner or admin), resolved
 * like `get`. Returns the owner whose resource was deleted.
 * @example
 * const { owner } = await deleteResource(ctx, 'code/x', alice)
 */
export async function deleteResource(ctx: ResourceContext, id: string, principal: Principal, options: ResourceTarget = {}): Promise<{ owner: string }> {
  requirePermission(principal, 'write')
  validId(id)
  const record = await requireManaged(ctx, id, principal, validOwner(options.owner))
  if (!(await ctx.store.resources.delete({ owner: record.owner, id }, writeAccess(principal)))) throw notFound(id)
  ctx.logger.info('resource.deleted', { id, owner: record.owner })
  return { owner: record.owner }
}
