/**
 * What the routes need of the services they do not own, as structural types: the
 * resources service and knowledge slimming. The real implementations
 * (src/resources/service.ts, src/knowledge/slim.ts) satisfy these.
 */
import type { Principal } from '../core/principal.js'

/** The resources service, as the routes use it. */
export interface ResourceApi {
  /** Creates a resource in its owner's namespace, or updates the one that owner has with this id. */
  save(body: unknown, principal: Principal): Promise<unknown>
  /** Like `save`, saying whether it created (201) or updated (200). */
  upsert(body: unknown, principal: Principal): Promise<{ resource: unknown; created: boolean }>
  /**
   * `secure_body` is included only when `includeSecret` and the caller may read the resource's secrets.
   * `owner` picks one owner's resource; otherwise the id resolves among those the caller sees.
   */
  get(id: string, principal: Principal, options?: { includeSecret?: boolean; owner?: string }): Promise<unknown>
  update(id: string, body: unknown, principal: Principal, options?: { owner?: string }): Promise<unknown>
  /** Returns the owner whose resource was deleted. */
  delete(id: string, principal: Principal, options?: { owner?: string }): Promise<{ owner: string }>
  list(query: unknown, principal: Principal): Promise<{ items: unknown[]; next_cursor: string | null }>
  /** The resources behind `resource_ids` that the caller can see, without secrets. */
  expandResources(ids: readonly string[], principal: Principal): Promise<unknown[]>
}

/** Knowledge slimming (`POST /api/knowledge/slim`) and its undo. */
export interface SlimApi {
  slim(body: unknown, principal: Principal): Promise<unknown>
  unmerge(id: string, principal: Principal): Promise<unknown>
}
