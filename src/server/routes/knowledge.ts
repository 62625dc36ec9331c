/**
 * Knowledge routes (seed 003): search, save, feedback, batch feedback, list, slim,
 * plus get, edit, versions, archive/restore and delete. Each parses the request,
 * calls one service function and answers JSON; the services validate and enforce
 * visibility and permissions.
 */
import { Hono } from 'hono'
import type { KnowledgeEntry, SearchResult } from '../../core/knowledge.js'
import type { Principal } from '../../core/principal.js'
import type { KnowledgeService } from '../../knowledge/service.js'
import { caller, queryObject, queryParam, readJson, type AppEnv } from '../http.js'
import type { ResourceApi, SlimApi } from '../services.js'
import { KnowHubError } from '../../core/errors.js'

export interface KnowledgeRouteDeps {
  knowledge: KnowledgeService
  resources: ResourceApi
  slim: SlimApi
}

const EXPANDABLE = ['resources'] as const

function expansions(value: string | undefined): Set<string> {
  const wanted = new Set(
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  for (const name of wanted) {
    if (!(EXPANDABLE as readonly string[]).includes(name)) {
      throw new KnowHubError('validation_error', `Invalid request: expand: unknown expansion "${name}" (expected resources)`, {
        issues: [{ path: 'expand', message: `unknown expansion "${name}" (expected resources)` }],
      })
    }
  }
  return wanted
}

/**
 * Adds `resources`: the referenced resources the caller can see itself, without their
 * secrets (one query for all items). A resource referenced by an entry you can see is
 * not thereby visible to you: those you cannot see are left out.
 */
async function withResources<T extends KnowledgeEntry | SearchResult>(
  items: T[],
  resources: ResourceApi,
  principal: Principal,
): Promise<Array<T & { resources: unknown[] }>> {
  const ids = [...new Set(items.flatMap((item) => item.resource_ids))]
  const found = ids.length > 0 ? await resources.expandResources(ids, principal) : []
  const byId = new Map<string, Record<string, unknown>>()
  for (const resource of found as Array<Record<string, unknown>>) {
    // Never a secret in an expansion, whatever the service returns.
    const { secure_body: _never, ...safe } = resource
    byId.set(String(safe.id), safe)
  }
  return items.map((item) => ({ ...item, resources: item.resource_ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])) }))
}

/** The `/api/knowledge` routes. */
export function knowledgeRoutes(deps: KnowledgeRouteDeps): Hono<AppEnv> {
  const { knowledge } = deps
  const app = new Hono<AppEnv>()

  app.get('/search', async (c) => {
    const expand = expansions(queryParam(c, 'expand'))
    const query = queryObject(c, { booleans: ['explain', 'rerank'] }, ['expand'])
    const { principal } = caller(c)
    const response = await knowledge.search(query, principal)
    if (!expand.has('resources')) return c.json(response)
    const results = await withResources(response.results, deps.resources, principal)
    return c.json({ ...response, results })
  })

  app.post('/', async (c) => {
    const entry = await knowledge.save(await readJson(c), caller(c).principal)
    return c.json(entry, 201)
  })

  app.get('/', async (c) => {
    const expand = expansions(queryParam(c, 'expand'))
    const { principal } = caller(c)
    const page = await knowledge.list(queryObject(c, { lists: ['types', 'scopes', 'status'] }, ['expand']), principal)
    const items = expand.has('resources') ? await withResources(page.items, deps.resources, principal) : page.items
    return c.json({ items, count: items.length, next_cursor: page.next_cursor })
  })

  app.post('/batch_update', async (c) => c.json(await knowledge.batchFeedback(await readJson(c), caller(c).principal)))

  app.post('/slim', async (c) => {
    const body = await readJson(c, { optional: true })
    return c.json(await deps.slim.slim(body ?? {}, caller(c).principal))
  })

  app.get('/:id', async (c) => {
    const expand = expansions(queryParam(c, 'expand'))
    const { principal } = caller(c)
    const entry = await knowledge.get(c.req.param('id'), principal)
    if (!expand.has('resources')) return c.json(entry)
    const [expanded] = await withResources([entry], deps.resources, principal)
    return c.json(expanded)
  })

  app.put('/:id', async (c) => c.json(await knowledge.feedback(c.req.param('id'), await readJson(c), caller(c).principal)))

  app.patch('/:id', async (c) => c.json(await knowledge.edit(c.req.param('id'), await readJson(c), caller(c).principal)))

  app.delete('/:id', async (c) => {
    const id = c.req.param('id')
    await knowledge.delete(id, caller(c).principal)
    return c.json({ id, deleted: true })
  })

  app.get('/:id/versions', async (c) => {
    const id = c.req.param('id')
    return c.json({ id, versions: await knowledge.versions(id, caller(c).principal) })
  })

  app.post('/:id/archive', async (c) => c.json(await knowledge.archive(c.req.param('id'), caller(c).principal)))
  app.post('/:id/restore', async (c) => c.json(await knowledge.restore(c.req.param('id'), caller(c).principal)))
  app.post('/:id/unmerge', async (c) => c.json(await deps.slim.unmerge(c.req.param('id'), caller(c).principal)))

  return app
}
