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
 *
 * The parts live one responsibility to a file: context.ts (dependencies and shared
 * checks), view.ts (what a caller sees), read.ts (get, list, expansions), write.ts (save,
 * update, delete), audit.ts (every secret read recorded, and who sees the records); key
 * handling is in secrets.ts, key-file.ts and rotate.ts.
 */
import type { Principal } from '../core/principal.js'
import type { ExpandedResource, Resource, ResourceListPage, SecretReadPage } from '../core/resources.js'
import { listSecretReads, recordBackupReads, type SecretReadSite } from './audit.js'
import { resourceContext, type ResourceServiceDeps } from './context.js'
import { expandResources, getResource, listResources, withResources, type GetResourceOptions } from './read.js'
import { deleteResource, updateResource, upsertResource, type ResourceTarget } from './write.js'

export type { GetResourceOptions } from './read.js'
export type { SecretReadSite } from './audit.js'
export type { ResourceServiceDeps } from './context.js'
export type { ResourceTarget } from './write.js'

/**
 * Creates the resource service.
 * @example
 * const resources = createResourceService({ store, secrets: createSecretBox(loadOrCreateKey({ keyFile })) })
 * await resources.save({ id: 'cookies/website_a', title: 'Site A cookie', content_type: 'cookie',
 *   secure_body: 'session_id=abc123', metadata: { expires_at: '2026-03-07T10:00:00Z' }, scopes: ['org:acme'] }, alice)
 * const cookie = await resources.get('cookies/website_a', alice, { includeSecret: true })
 */
export function createResourceService(deps: ResourceServiceDeps) {
  const ctx = resourceContext(deps)
  return {
    /** Saves a resource (`POST /api/resource`), see {@link upsertResource}; never returns `secure_body`. */
    save: async (raw: unknown, principal: Principal): Promise<Resource> => (await upsertResource(ctx, raw, principal)).resource,
    /** Like `save`, and says whether the resource was created (201) or updated (200). */
    upsert: (raw: unknown, principal: Principal): Promise<{ resource: Resource; created: boolean }> => upsertResource(ctx, raw, principal),
    /** One resource (`GET /api/resource/{id}`), see {@link getResource}. */
    get: (id: string, principal: Principal, options: GetResourceOptions = {}): Promise<Resource> => getResource(ctx, id, principal, options),
    /** Changes a resource (`PUT /api/resource/{id}`), see {@link updateResource}. */
    update: (id: string, raw: unknown, principal: Principal, options: ResourceTarget = {}): Promise<Resource> =>
      updateResource(ctx, id, raw, principal, options),
    /** Deletes a resource (`DELETE /api/resource/{id}`), see {@link deleteResource}. */
    delete: (id: string, principal: Principal, options: ResourceTarget = {}): Promise<{ owner: string }> => deleteResource(ctx, id, principal, options),
    /** Visible resources as summaries (`GET /api/resource`), see {@link listResources}. */
    list: (raw: unknown, principal: Principal): Promise<ResourceListPage> => listResources(ctx, raw, principal),
    /** The resources behind `resource_ids` that the caller can see, never with secrets, see {@link expandResources}. */
    expandResources: (ids: readonly string[], principal: Principal): Promise<ExpandedResource[]> => expandResources(ctx, ids, principal),
    /** Items (entries, search hits) with `resources` added (`expand=resources`), see {@link withResources}. */
    withResources: <T extends { id: string; resource_ids: readonly string[] }>(items: readonly T[], principal: Principal) =>
      withResources(ctx, items, principal),
    /** The audit of secret reads the caller may see (`GET /api/secret-reads`), see {@link listSecretReads}. */
    reads: (raw: unknown, principal: Principal): Promise<SecretReadPage> => listSecretReads(ctx, raw, principal),
    /** Records that a backup carried every secret (one audit row per resource with a secret), see {@link recordBackupReads}. */
    recordBackup: (principal: Principal | undefined, site: SecretReadSite): Promise<number> => recordBackupReads(ctx, principal, site),
  }
}

export type ResourceService = ReturnType<typeof createResourceService>
