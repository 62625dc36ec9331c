/**
 * Resource routes (seed 003): save, get, update, delete, list. Ids are path-like
 * (`code/selenium/login`): the rest of the path after `/api/resource/`, decoded once
 * and validated (so `..` and its encodings are refused). The service decides whether
 * `secure_body` is shown; lists never carry it.
 */
import { Hono } from 'hono'
import { resourceIdFromPath } from '../../core/resources.js'
import { caller, queryBoolean, queryObject, readJson, type AppContext, type AppEnv } from '../http.js'
import type { ResourceApi } from '../services.js'

const PREFIX = '/api/resource/'

/** The resource id of a request: the raw (percent-encoded) rest of the path, decoded and validated. */
function resourceId(c: AppContext): string {
  const path = new URL(c.req.url).pathname
  const at = path.indexOf(PREFIX)
  const raw = at >= 0 ? path.slice(at + PREFIX.length) : ''
  return resourceIdFromPath(raw)
}

/** The `/api/resource` routes. */
export function resourceRoutes(deps: { resources: ResourceApi }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const service = () => deps.resources

  app.post('/', async (c) => c.json(await service().save(await readJson(c), caller(c).principal), 201))

  app.get('/', async (c) => {
    const page = await service().list(queryObject(c, { booleans: ['expired'] }), caller(c).principal)
    return c.json({ items: page.items, count: page.items.length, next_cursor: page.next_cursor })
  })

  app.get('/*', async (c) => {
    const includeSecret = queryBoolean(c, 'include_secret', true)
    return c.json(await service().get(resourceId(c), caller(c).principal, { includeSecret }))
  })

  app.put('/*', async (c) => {
    const id = resourceId(c)
    return c.json(await service().update(id, await readJson(c), caller(c).principal))
  })

  app.delete('/*', async (c) => {
    const id = resourceId(c)
    await service().delete(id, caller(c).principal)
    return c.json({ id, deleted: true })
  })

  return app
}
