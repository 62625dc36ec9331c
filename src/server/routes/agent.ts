/**
 * Agent routes: `POST /api/agent/context` (seed 004: the assembled starting context of an
 * agent living in the server's agent home; the body cannot name another home or template)
 * and `POST /api/goals` (seed 003: the `goal` tool). One service call each; the context is a
 * remote caller's (the packs it may see, pack-relative paths).
 */
import { Hono } from 'hono'
import type { AgentService } from '../../agent/service.js'
import { AgentContextRequest } from '../../core/agent.js'
import { parseWith } from '../../core/validate.js'
import { caller, readJson, type AppEnv } from '../http.js'

/** The `/api/agent` and `/api/goals` routes. */
export function agentRoutes(deps: { agent: Pick<AgentService, 'assembleContext' | 'goal'> }): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.post('/agent/context', async (c) => {
    const { knowledge_files: knowledgeFiles, ...body } = parseWith(AgentContextRequest, await readJson(c), 'agent context request')
    return c.json(await deps.agent.assembleContext({ ...body, ...(knowledgeFiles ? { knowledgeFiles } : {}), principal: caller(c).principal, remote: true }))
  })

  app.post('/goals', async (c) => {
    return c.json(await deps.agent.goal((await readJson(c)) as never, caller(c).principal))
  })

  return app
}
