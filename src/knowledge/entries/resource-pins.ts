/**
 * Pinning an entry's `resource_ids` (issue 15, item 8). Resource ids are namespaced by owner,
 * and a lookup by id alone resolves among what the caller sees — so, unpinned, an entry's
 * reference could resolve for a reader to a same-id resource that someone else planted in
 * the reader's org. When an entry is saved or its `resource_ids` edited, each id is pinned
 * to the owner of the resource it resolves to for the writer (like `GET /api/resource/{id}`:
 * the writer's own first); an id the writer cannot resolve is pinned to the entry's owner.
 * Expanding resolves exactly the pinned (owner, id), and only if the reader can see it.
 */
import { memberScopes, visibleScopes, type Principal } from '../../core/principal.js'
import type { Store } from '../../store/store.js'

/**
 * The pins of `ids` for an entry owned by `owner` written by `principal`: `existing` pins
 * are kept for ids that have one; the others are resolved now.
 * @example
 * const pins = await pinResources(store, ['credentials/site_a'], alice, 'user:alice')
 * pins // { 'credentials/site_a': 'user:alice' }
 */
export async function pinResources(
  store: Pick<Store, 'resources'>,
  ids: readonly string[],
  principal: Principal,
  owner: string,
  existing: Readonly<Record<string, string>> = {},
): Promise<Record<string, string>> {
  const pins: Record<string, string> = {}
  const open = ids.filter((id) => existing[id] === undefined)
  const found = open.length > 0 ? await store.resources.getMany(open, { visible: visibleScopes(principal), own: memberScopes(principal) }) : []
  const resolved = new Map(found.map((r) => [r.id, r.owner]))
  for (const id of ids) pins[id] = existing[id] ?? resolved.get(id) ?? owner
  return pins
}
