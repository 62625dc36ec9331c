/**
 * Knowledge routes (seed 003): search, save, feedback, batch feedback, list, slim,
 * plus get, edit, versions, archive/restore and delete, and the JSONL export and import
 * (`GET /export`, `POST /import`: the CLI's export and import beside a running server). Each parses the request,
 * calls one service function and answers JSON; the services validate and enforce
 * visibility and permissions.
 */
import { Hono } from 'hono'
import type { Deleted } from '../../core/api.js'
import { KnowHubError } from '../../core/errors.js'
import { type ImportReport, type KnowledgeListPage, type SearchResponse } from '../../core/knowledge.js'
import type { KnowledgeService } from '../../knowledge/service.js'
import type { ResourceService } from '../../resources/service.js'
import { caller, queryObject, queryParam, readJson, readText, type AppEnv } from '../http.js'
import type { SlimService } from '../../knowledge/slim/slim.js'
import type { ExtractionService } from '../../knowledge/extract/extract.js'
import type { ExtractResult } from '../../core/extract.js'
import { KNOWLEDGE_OPERATIONS } from '../../core/operations.js'
import { expansions, mountOperations } from './operations.js'

export interface KnowledgeRouteDeps {
  knowledge: KnowledgeService
  /** `expand=resources`: the resource service builds the caller's view of referenced resources. */
  resources: Pick<ResourceService, 'withResources'>
  slim: SlimService
  /** `POST /api/knowledge/extract`; absent: `llm_not_configured`. */
  extraction?: ExtractionService | undefined
}

/** Lines as a byte stream, one per line, pulled as the client reads. */
function jsonlStream(lines: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    async pull(controller) {
      const next = await lines.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(`${next.value}\n`))
    },
    async cancel() {
      await lines.return(undefined)
    },
  })
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
    // Semantic routing's outcome: `llm`, `fallback; reason=llm_timeout`, … (absent when routing is off).
    if (response.routing)
      c.header(
        'X-KnowHub-Routing',
        response.routing.status === 'fallback' ? `fallback; reason=${response.routing.reason ?? 'unknown'}` : response.routing.status,
      )
    if (!expand.has('resources')) return c.json(response satisfies SearchResponse)
    const results = await deps.resources.withResources(response.results, principal)
    return c.json({ ...response, results } satisfies SearchResponse)
  })

  app.post('/', async (c) => {
    const entry = await knowledge.save(await readJson(c), caller(c).principal)
    return c.json(entry, 201)
  })

  app.get('/', async (c) => {
    const expand = expansions(queryParam(c, 'expand'))
    const { principal } = caller(c)
    const page = await knowledge.list(queryObject(c, { lists: ['types', 'scopes', 'status'] }, ['expand']), principal)
    if (!expand.has('resources')) return c.json(page satisfies KnowledgeListPage)
    return c.json({ ...page, items: await deps.resources.withResources(page.items, principal) } satisfies KnowledgeListPage)
  })

  app.post('/batch_update', async (c) => c.json(await knowledge.batchFeedback(await readJson(c), caller(c).principal)))

  app.post('/slim', async (c) => {
    return c.json(await deps.slim.slim(await readJson(c, { optional: true }), caller(c).principal))
  })

  app.post('/extract', async (c) => {
    const body = await readJson(c)
    if (!deps.extraction) throw new KnowHubError('llm_not_configured', 'Extraction needs an LLM, and this server has none configured')
    return c.json((await deps.extraction.extract(body, caller(c).principal)) satisfies ExtractResult)
  })

  // Before `/:id`: these two names are routes, not ids.
  app.get('/export', (c) => c.body(jsonlStream(knowledge.exportJsonl(caller(c).principal)), 200, { 'content-type': 'application/x-ndjson; charset=UTF-8' }))

  app.post('/import', async (c) => {
    const query = queryObject(c)
    const lines = (await readText(c)).split('\n')
    return c.json((await knowledge.importJsonl(lines, caller(c).principal, query)) satisfies ImportReport)
  })

  app.get('/:id', async (c) => {
    const expand = expansions(queryParam(c, 'expand'))
    const { principal } = caller(c)
    const entry = await knowledge.get(c.req.param('id'), principal)
    if (!expand.has('resources')) return c.json(entry)
    const [expanded] = await deps.resources.withResources([entry], principal)
    return c.json(expanded)
  })

  app.put('/:id', async (c) => c.json(await knowledge.feedback(c.req.param('id'), await readJson(c), caller(c).principal)))

  app.patch('/:id', async (c) => c.json(await knowledge.edit(c.req.param('id'), await readJson(c), caller(c).principal)))

  app.delete('/:id', async (c) => {
    const id = c.req.param('id')
    await knowledge.delete(id, caller(c).principal)
    return c.json({ id, deleted: true } satisfies Deleted)
  })

  app.post('/:id/archive', async (c) => c.json(await knowledge.archive(c.req.param('id'), caller(c).principal)))
  app.post('/:id/restore', async (c) => c.json(await knowledge.restore(c.req.param('id'), caller(c).principal)))
  app.post('/:id/unmerge', async (c) => c.json(await deps.slim.unmerge(c.req.param('id'), caller(c).principal)))

  // The operations of the table (src/core/operations.ts).
  mountOperations(app, '/api/knowledge', KNOWLEDGE_OPERATIONS, deps)
  return app
}
