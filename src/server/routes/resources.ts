/**
 * Resource routes (seed 003): save, list, get and update are the table's (src/core/operations.ts,
 * mounted by ./operations.ts); the deletion and the audit of secret reads are here. Ids are path-like
 * (`code/selenium/login`): the rest of the path after `/api/resource/`, decoded once
 * and validated (so `..` and its encodings are refused). Ids are namespaced by owner:
 * `?owner=kind:id` picks one owner's resource, otherwise the service resolves the id
 * among what the caller sees. POST creates (201) or updates the caller's own (200).
 * The service decides whether `secure_body` is shown; lists never carry it.
 */
import { Hono } from 'hono'
import { resourceIdFromPath, type ResourceDeleted, type SecretReadPage } from '../../core/resources.js'
import type { ResourceService } from '../../resources/service.js'
import { RESOURCE_OPERATIONS } from '../../core/operations.js'
import { caller, queryObject, queryParam, type AppContext, type AppEnv } from '../http.js'
import { mountOperations, type OperationServices } from './operations.js'

const PREFIX = '/api/resource/'

/** The resource id of a request: the raw (percent-encoded) rest of the path, decoded and validated. */
function resourceId(c: AppContext): string {
  const path = new URL(c.req.url).pathname
  const at = path.indexOf(PREFIX)
  const raw = at >= 0 ? path.slice(at + PREFIX.length) : ''
  return resourceIdFromPath(raw)
}

/** `?owner=kind:id`: one owner's resource rather than the one the id resolves to. */
function target(c: AppContext): { owner?: string } {
  const owner = queryParam(c, 'owner')
  return owner === undefined ? {} : { owner }
}

/**
 * `GET /api/secret-reads`: the audit of secret reads the caller may see (its own resources'; an
 * org admin's, its org's), newest first.
 */
export function secretReadRoutes(deps: { resources: ResourceService }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/', async (c) => c.json((await deps.resources.reads(queryObject(c), caller(c).principal)) satisfies SecretReadPage))
  return app
}

/** The `/api/resource` routes: the table's operations (src/core/operations.ts), and the deletion. */
export function resourceRoutes(deps: { resources: ResourceService }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.delete('/*', async (c) => {
    const id = resourceId(c)
    const { owner } = await deps.resources.delete(id, caller(c).principal, target(c))
    return c.json({ id, owner, deleted: true } satisfies ResourceDeleted)
  })

  mountOperations(app, '/api/resource', RESOURCE_OPERATIONS, deps as unknown as OperationServices)
  return app
}
