/**
 * Agent routes: `POST /api/agent/context` (seed 004: the assembled starting context of an
 * agent stored in the caller's org; the body cannot name a home or a template), the stored
 * agents' documents (`/api/agents/…`), compaction of a stored agent's history or of one the
 * caller keeps, KnowHub's part of a context assembled by the caller (`POST /api/agent/knowledge`),
 * and `POST /api/goals` (seed 003: the `goal` tool). One service call each; the service checks
 * the permissions (read to read, write to write) and the scopes.
 */
import { Hono } from 'hono'
import type { AgentService } from '../../agent/service.js'
import { AGENT_OPERATIONS } from '../../core/operations.js'
import { caller, queryObject, readJson, type AppEnv } from '../http.js'
import { mountOperations, type OperationServices } from './operations.js'

/** The `/api/agent`, `/api/agents` and `/api/goals` routes. */
export function agentRoutes(deps: {
  agent: Pick<AgentService, 'contextFor' | 'goal' | 'knowledgeFor' | 'documents' | 'compactStored' | 'compactHeld'>
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const { documents } = deps.agent

  app.post('/agent/context', async (c) => c.json(await deps.agent.contextFor(await readJson(c), caller(c).principal)))

  app.post('/agent/knowledge', async (c) => c.json(await deps.agent.knowledgeFor(await readJson(c, { optional: true }), caller(c).principal, { remote: true })))

  app.post('/agent/compact', async (c) => c.json(await deps.agent.compactHeld(await readJson(c), caller(c).principal)))

  app.get('/agents', async (c) => c.json(await documents.list(caller(c).principal)))

  app.get('/agents/:agent/documents', async (c) => c.json(await documents.documents(c.req.param('agent'), caller(c).principal)))

  app.get('/agents/:agent/documents/:name{.+}', async (c) =>
    c.json(await documents.get(c.req.param('agent'), c.req.param('name'), queryObject(c), caller(c).principal)),
  )

  app.put('/agents/:agent/documents/:name{.+}', async (c) => {
    const written = await documents.write(c.req.param('agent'), c.req.param('name'), await readJson(c), caller(c).principal)
    return c.json(written, written.version === 1 ? 201 : 200)
  })

  app.get('/agents/:agent/versions/:name{.+}', async (c) => c.json(await documents.versions(c.req.param('agent'), c.req.param('name'), caller(c).principal)))

  app.post('/agents/:agent/compact', async (c) => c.json(await deps.agent.compactStored(c.req.param('agent'), await readJson(c), caller(c).principal)))

  // The table's agent operations (src/core/operations.ts): the goal tool.
  mountOperations(app, '/api', AGENT_OPERATIONS, { agent: deps.agent } as unknown as OperationServices)

  return app
}
