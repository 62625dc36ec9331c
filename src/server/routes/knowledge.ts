/**
 * Knowledge routes (seed 003): the operations of the table (src/core/operations.ts: search, save,
 * list, get, versions, feedback, batch feedback, edit, archive/restore, delete, slim, unmerge,
 * extract), mounted by the generic loop of ./operations.ts, and the JSONL export and import
 * (`GET /export`, `POST /import`: the CLI's export and import beside a running server), streams
 * the table does not declare. The services validate and enforce visibility and permissions.
 */
import { Hono } from 'hono'
import { type ImportReport } from '../../core/knowledge.js'
import { KNOWLEDGE_OPERATIONS } from '../../core/operations.js'
import type { ExtractionService } from '../../knowledge/extract/extract.js'
import type { KnowledgeService } from '../../knowledge/service.js'
import type { SlimService } from '../../knowledge/slim/slim.js'
import type { ResourceService } from '../../resources/service.js'
import { caller, queryObject, readText, type AppEnv } from '../http.js'
import { mountOperations } from './operations.js'

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

  // Before the table's `/:id`: these two names are routes, not ids.
  app.get('/export', (c) => c.body(jsonlStream(knowledge.exportJsonl(caller(c).principal)), 200, { 'content-type': 'application/x-ndjson; charset=UTF-8' }))

  app.post('/import', async (c) => {
    const query = queryObject(c)
    const lines = (await readText(c)).split('\n')
    return c.json((await knowledge.importJsonl(lines, caller(c).principal, query)) satisfies ImportReport)
  })

  mountOperations(app, '/api/knowledge', KNOWLEDGE_OPERATIONS, deps)
  return app
}
