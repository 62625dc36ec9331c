/**
 * Resource routes (seed 003): save, get, update, delete, list. Ids are path-like
 * (`code/selenium/login`): the rest of the path after `/api/resource/`, decoded once
 * and validated (so `..` and its encodings are refused). Ids are namespaced by owner:
 * `?owner=kind:id` picks one owner's resource, otherwise the service resolves the id
 * among what the caller sees. POST creates (201) or updates the caller's own (200).
 * The service decides whether `secure_body` is shown; lists never carry it.
 */
import { Hono } from 'hono'
import { resourceIdFromPath, type ResourceDeleted, type SecretReadPage } from '../../core/resources.js'
import type { ResourceService } from '../../resources/service.js'
import { caller, queryBoolean, queryObject, queryParam, readJson, type AppContext, type AppEnv } from '../http.js'

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

/** The `/api/resource` routes. */
export function resourceRoutes(deps: { resources: ResourceService }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const service = () => deps.resources

  app.post('/', async (c) => {
    const { resource, created } = await service().upsert(await readJson(c), caller(c).principal)
    return c.json(resource, created ? 201 : 200)
  })

  app.get('/', async (c) => {
    return c.json(await service().list(queryObject(c, { booleans: ['expired'] }), caller(c).principal))
  })

  app.get('/*', async (c) => {
    const includeSecret = queryBoolean(c, 'include_secret', true)
    const { principal, key } = caller(c)
    const site = { via: 'api', route: 'GET /api/resource/{id}', caller: key }
    return c.json(await service().get(resourceId(c), principal, { includeSecret, ...target(c), site }))
  })

  app.put('/*', async (c) => {
    const id = resourceId(c)
    return c.json(await service().update(id, await readJson(c), caller(c).principal, target(c)))
  })

  app.delete('/*', async (c) => {
    const id = resourceId(c)
    const { owner } = await service().delete(id, caller(c).principal, target(c))
    return c.json({ id, owner, deleted: true } satisfies ResourceDeleted)
  })

  return app
}
