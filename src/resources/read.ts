/**
 * Reading resources: one resource (with its secret for a caller allowed to read it), a
 * page of summaries, and the expansion of the resources a knowledge entry references.
 * Visibility is the store query's; the secret is decided here and nowhere else.
 */
import { decodeCursor, encodeCursor } from '../core/cursor.js'
import { Owner, hasPermission, memberScopes, requirePermission, visibleScopes, type Principal } from '../core/principal.js'
import { ListResourcesInput, resourceIdProblem, type ExpandedResource, type Resource, type ResourceListPage } from '../core/resources.js'
import { parseWith } from '../core/validate.js'
import type { ResourceKey } from '../store/resources/resources.js'
import { accessOf, notFound, validId, validOwner, type ResourceContext } from './context.js'
import { recordSecretRead, type SecretReadSite } from './audit.js'
import { canReadSecrets, toExpanded, toResource, toSummary } from './view.js'

export interface GetResourceOptions {
  /**
   * Ask for `secure_body`. It is returned only when the caller holds `secrets:read`
   * and belongs to (one of its own ids is) one of the resource's scopes; otherwise
   * the field is absent. Default false.
   */
  includeSecret?: boolean
  /** Only in this owner's namespace (`kind:id`); default: resolve among every visible owner. */
  owner?: string | undefined
  /** Where the secret is read (recorded in the audit when it is returned); default: `service`, `local`. */
  site?: SecretReadSite | undefined
}

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
 * One resource if the caller can see it, resolved among every visible resource with this
 * id (own first, then scope priority), or in `owner`'s namespace only. With
 * `includeSecret`, `secure_body` is decrypted for a caller allowed to read it; for anyone
 * else the field is absent.
 * @example
 * const cookie = await getResource(ctx, 'cookies/website_a', alice, { includeSecret: true })
 */
export async function getResource(ctx: ResourceContext, id: string, principal: Principal, options: GetResourceOptions = {}): Promise<Resource> {
  requirePermission(principal, 'read')
  validId(id)
  const owner = validOwner(options.owner)
  const wantSecret = options.includeSecret === true && hasPermission(principal, 'secrets:read')
  // The SQL returns the envelope only where the row's scopes meet the caller's own ids.
  const secretScopes = wantSecret ? memberScopes(principal) : undefined
  const record = await ctx.store.resources.get(id, accessOf(principal), {
    owner,
    secretScopes: secretScopes && secretScopes.length > 0 ? secretScopes : undefined,
  })
  if (!record) throw notFound(id)
  const resource = toResource(record, ctx.clock.now())
  if (wantSecret && typeof record.secure_body === 'string' && canReadSecrets(principal, record.scopes)) {
    const secret = ctx.secrets.decrypt(record.secure_body, record.id, record.owner)
    // Audited before it is returned: a read that cannot be recorded is not made.
    const site = options.site ?? { via: 'service', route: 'resources.get' }
    await recordSecretRead(ctx, record, principal, site)
    resource.secure_body = secret
    ctx.logger.info('resource.secret.read', { id: record.id, owner: record.owner, by: memberScopes(principal), via: site.via })
  }
  return resource
}

/**
 * Visible resources ordered by id, then owner, as summaries: no body and never a secret.
 * Filters: id prefix, content types, scopes, owner, expired.
 * @example
 * const { items, next_cursor } = await listResources(ctx, { prefix: 'code/' }, alice)
 */
export async function listResources(ctx: ResourceContext, raw: unknown, principal: Principal): Promise<ResourceListPage> {
  requirePermission(principal, 'read')
  const input = parseWith(ListResourcesInput, raw ?? {}, 'resource list options')
  const after = input.cursor ? listPosition(input.cursor) : undefined
  const now = ctx.clock.now()
  const filter = {
    access: accessOf(principal),
    prefix: input.prefix,
    contentTypes: input.content_type,
    scopes: input.scopes,
    owner: input.owner,
    expired: input.expired,
    now,
  }
  const records = await ctx.store.resources.list(filter, input.limit + 1, after)
  const page = records.slice(0, input.limit)
  const last = page[page.length - 1]
  const items = page.map((r) => toSummary(r, now))
  return { items, count: items.length, next_cursor: records.length > input.limit && last ? listCursor(last) : null }
}

/**
 * The resources behind a knowledge entry's `resource_ids`, each resolved for the caller
 * like `get` (own first, then scope priority): only those the caller can see (an entry
 * being visible does not make its resources visible), in the order given, never with
 * `secure_body`. Ids that are malformed or unknown are left out.
 * @example
 * const resources = await expandResources(ctx, entry.resource_ids, alice)
 */
export async function expandResources(ctx: ResourceContext, ids: readonly string[], principal: Principal): Promise<ExpandedResource[]> {
  requirePermission(principal, 'read')
  const wanted = [...new Set(ids)].filter((id) => typeof id === 'string' && resourceIdProblem(id) === undefined)
  if (wanted.length === 0) return []
  const now = ctx.clock.now()
  const byId = new Map((await ctx.store.resources.getMany(wanted, accessOf(principal))).map((r) => [r.id, r]))
  return wanted.flatMap((id) => {
    const record = byId.get(id)
    return record ? [toExpanded(record, now)] : []
  })
}

/**
 * Adds `resources` to each entry (entries, search hits): the referenced resources the caller
 * can see itself, never their secrets, in two queries for all items. Each reference resolves
 * to the resource the entry's writer meant — the owner pinned when it was saved (issue
 * 15.8; an unpinned id: the entry owner's own) — never to a same-id resource of someone else
 * that the caller happens to see. A resource referenced by an entry you can see is not
 * thereby visible to you: those you cannot see are left out.
 * @example
 * const results = await withResources(ctx, response.results, alice) // each with .resources
 */
export async function withResources<T extends { id: string; resource_ids: readonly string[] }>(
  ctx: ResourceContext,
  items: readonly T[],
  principal: Principal,
): Promise<Array<T & { resources: ExpandedResource[] }>> {
  requirePermission(principal, 'read')
  const referring = items.filter((item) => item.resource_ids.length > 0)
  if (referring.length === 0) return items.map((item) => ({ ...item, resources: [] }))
  const pins = await ctx.store.knowledge.resourcePins(
    referring.map((item) => item.id),
    visibleScopes(principal),
  )
  const keyOf = (item: T, id: string): ResourceKey | undefined => {
    const entry = pins.get(item.id)
    return entry && resourceIdProblem(id) === undefined ? { owner: entry.pins[id] ?? entry.owner, id } : undefined
  }
  const keys = new Map<string, ResourceKey>()
  for (const item of referring) {
    for (const id of item.resource_ids) {
      const key = keyOf(item, id)
      if (key) keys.set(JSON.stringify([key.owner, key.id]), key)
    }
  }
  const now = ctx.clock.now()
  const found = await ctx.store.resources.getExact([...keys.values()], accessOf(principal))
  const byKey = new Map(found.map((r) => [JSON.stringify([r.owner, r.id]), toExpanded(r, now)]))
  return items.map((item) => ({
    ...item,
    resources: item.resource_ids.flatMap((id) => {
      const key = keyOf(item, id)
      return (key && byKey.get(JSON.stringify([key.owner, key.id]))) || []
    }),
  }))
}
