/**
 * The dashboard's data routes under `/ui`: the session's view of itself (`/ui/me`), the
 * API's own knowledge routes (mounted as they are: the same handlers, so a principal sees
 * exactly what the API shows it), resources with the secret masked and an audited reveal,
 * knowledge packs, the overview, and API tokens (by role: src/auth/policy.ts). Each parses, calls one
 * service function and answers JSON.
 */
import type { EmbedderInfo } from '../../core/api.js'
import { Hono } from 'hono'
import { z } from 'zod'
import { KnowHubError } from '../../core/errors.js'
import type { Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { AdminService } from '../../admin/admin.js'
import type { KnowledgeService } from '../../knowledge/service.js'
import type { SlimService } from '../../knowledge/slim/slim.js'
import type { PackService } from '../../packs/service.js'
import type { SecretReveal } from '../../resources/reveal.js'
import type { ResourceService } from '../../resources/service.js'
import type { UsersService } from '../../users/profile.js'
import { caller, queryObject, queryParam, readJson, type AppEnv } from '../http.js'
import { knowledgeRoutes } from '../routes/knowledge.js'
import { knowledgeFolderRoutes } from '../routes/knowledge-folder.js'
import type { LatencyWindow } from './latency.js'
import type { CsrfTokens } from './session.js'

export interface DashboardServices {
  knowledge: KnowledgeService
  resources: ResourceService
  slim: SlimService
  /** Token administration by role (the hub operator: every token; an org admin: its org's): the API's own, `hub.admin.tokens`. */
  tokens: AdminService['tokens']
  reveal: SecretReveal
  /** Knowledge packs; absent: the packs page says none are configured. */
  packs?: PackService | undefined
  /** Users' profiles (the profile page); absent: not served. */
  users?: UsersService | undefined
  /** Whether an LLM is configured (evolve is offered only then). */
  llm: boolean
  latency: LatencyWindow
  csrf: CsrfTokens
  /** The embedder search uses, shown on the overview (model, dimensions, convention, calibration). */
  embedder?: EmbedderInfo | undefined
}

const ResourceTarget = z.strictObject({ id: z.string().min(1).max(512), owner: z.string().max(200).optional() })

/** The body of a pack resolve preview. */
const ResolvePreview = z.strictObject({
  task: z.string().trim().min(1, 'task is required').max(10_000),
  packs: z.array(z.string().max(200)).max(50).optional(),
  budget: z.coerce.number().int().min(100).max(200_000).default(4000),
})

function principalView(principal: Principal) {
  return { ...principal }
}

function resourceRoutes(s: DashboardServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/', async (c) => c.json(await s.resources.list(queryObject(c, { booleans: ['expired'] }), caller(c).principal)))
  // The secret stays masked here: only `reveal` shows it, and logs it.
  app.get('/item', async (c) => {
    const { id, owner } = parseWith(ResourceTarget, { id: queryParam(c, 'id'), owner: queryParam(c, 'owner') }, 'resource')
    const { principal } = caller(c)
    const resource = await s.resources.get(id, principal, { includeSecret: false, owner })
    // Every read of the secret, through any surface: shown to the resource's owner and its org
    // admin only (the rule is the audit store's), like GET /api/secret-reads.
    const log = await s.resources.reads({ resource: resource.id, owner: resource.owner, limit: 20 }, principal)
    return c.json({
      ...resource,
      reveals: log.items.map((r) => ({ caller: r.caller, principal: r.principal, via: r.via, route: r.route, revealed_at: r.read_at })),
    })
  })
  app.post('/reveal', async (c) => {
    const { id, owner } = parseWith(ResourceTarget, await readJson(c), 'resource')
    return c.json(await s.reveal(id, caller(c), { owner, via: 'dashboard' }))
  })
  return app
}

function packRoutes(s: DashboardServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/', async (c) => {
    if (!s.packs) return c.json({ configured: false, catalog: null, doctor: null })
    const service = s.packs.forCaller(caller(c).principal)
    const [catalog, doctor] = [await service.catalog({ language: 'auto' }), await service.doctor()]
    return c.json({ configured: true, catalog, doctor })
  })
  app.get('/:name', async (c) => c.json(await packsOf(s, caller(c).principal).show(c.req.param('name'))))
  app.post('/:name/activate', async (c) => {
    const body = (await readJson(c, { optional: true })) as { confirm?: unknown } | undefined
    return c.json(await packsOf(s, caller(c).principal).activate(c.req.param('name'), { confirm: body?.confirm === true }))
  })
  app.post('/resolve', async (c) => {
    const input = parseWith(ResolvePreview, await readJson(c), 'resolve preview')
    const packs = packsOf(s, caller(c).principal)
    return c.json(await packs.resolve({ task: input.task, budget: input.budget, ...(input.packs?.length ? { packs: input.packs } : {}) }))
  })
  return app
}

/** The packs as the caller sees them (see `PackService.forCaller`); `not_found` when the server has none. */
function packsOf(s: DashboardServices, principal: Principal): PackService {
  if (!s.packs) throw new KnowHubError('not_found', 'No knowledge packs are configured on this server')
  return s.packs.forCaller(principal)
}

function tokenRoutes(s: DashboardServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  // Each operation checks the role table's tokens.manage first (src/auth/token-admin.ts), as for /api/tokens.
  app.get('/', async (c) => c.json({ items: await s.tokens.list(caller(c).principal) }))
  // Never `local` here: a hub:admin token is minted only by the CLI on the server's machine.
  app.post('/', async (c) => c.json(await s.tokens.create(await readJson(c), caller(c).principal, { local: false }), 201))
  app.post('/:id/revoke', async (c) => c.json(await s.tokens.revoke(c.req.param('id'), caller(c).principal)))
  return app
}

/**
 * The `/ui` routes (mounted by {@link createDashboard}).
 * @example
 * routes.route('/ui', dashboardDataRoutes(services))
 */
export function dashboardDataRoutes(s: DashboardServices): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/me', (c) => {
    const who = caller(c)
    return c.json({
      principal: principalView(who.principal),
      caller: who.key,
      mode: who.key === 'local' ? 'local' : 'token',
      csrf: s.csrf.tokenFor(c.req.raw),
      features: { llm: s.llm, packs: s.packs !== undefined },
    })
  })
  app.get('/overview', async (c) =>
    c.json({ ...(await s.knowledge.overview(caller(c).principal)), search_latency_ms: s.latency.summary(), ...(s.embedder ? { embedder: s.embedder } : {}) }),
  )
  // The knowledge folder's zip (the overview's download button), before `/knowledge/:id`.
  app.route('/knowledge/folder', knowledgeFolderRoutes({ knowledge: s.knowledge }))
  app.route('/knowledge', knowledgeRoutes({ knowledge: s.knowledge, resources: s.resources, slim: s.slim }))
  app.route('/resources', resourceRoutes(s))
  app.route('/packs', packRoutes(s))
  app.route('/tokens', tokenRoutes(s))
  // A user's profile, current view (the profile page): the same service and rule as GET /api/users/{id}/profile.
  const users = s.users
  if (users) app.get('/users/:id/profile', async (c) => c.json(await users.profile(c.req.param('id'), caller(c).principal)))
  return app
}
