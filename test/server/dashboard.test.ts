/**
 * The dashboard slot of createApp: routes mounted at `/` with their own authenticator
 * (a cookie session here) beside the API's bearer tokens, on the same middleware. A
 * trivial page stands in for the dashboard.
 */
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuthenticator, type Authenticator } from '../../src/auth/authenticate.js'
import { KnowHubError } from '../../src/core/errors.js'
import { slimKnowledge, unmergeKnowledge } from '../../src/knowledge/slim/slim.js'
import { createApp } from '../../src/server/app.js'
import { caller, type AppEnv } from '../../src/server/http.js'
import { openTestHub, type TestHub } from './helpers.js'

let t: TestHub
let token: string

/** `Cookie: kh_session=s3cret` is the session of user dash; anything else is unauthenticated. */
const cookieSession: Authenticator = async (request) => {
  const cookie = request.headers.get('cookie') ?? ''
  if (!/(^|;\s*)kh_session=s3cret(;|$)/.test(cookie)) throw new KnowHubError('unauthenticated', 'Log in first')
  return { key: 'session:dash', principal: { user: 'dash', permissions: ['read'] } }
}

function dashboardRoutes(): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/', (c) => c.html(`<p>hello ${caller(c).key}</p>`))
  routes.get('/login', (c) => c.html('<form>log in</form>'))
  return routes
}

function appFor(withDashboard: boolean) {
  return createApp({
    knowledge: t.hub.knowledge,
    resources: t.hub.resources,
    slim: { slim: (body, p) => slimKnowledge(t.hub, body, p), unmerge: (id, p) => unmergeKnowledge(t.hub, id, p) },
    authenticate: createAuthenticator({ tokens: t.hub.tokens, localPrincipal: t.hub.config.principal, localMode: false }),
    ...(withDashboard ? { dashboard: { routes: dashboardRoutes(), authenticate: cookieSession, isPublic: (path: string) => path === '/login' } } : {}),
  })
}

async function get(app: ReturnType<typeof appFor>, path: string, headers: Record<string, string> = {}) {
  const response = await app.request(path, { headers })
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
    requestId: response.headers.get('x-request-id'),
  }
}

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed' } })
  token = (await t.hub.tokens.create({ user: 'alice', org: 'acme' })).token
})
afterAll(async () => t?.close())

describe('dashboard slot', () => {
  it('serves the dashboard at / with its own authentication, on the same middleware', async () => {
    const app = appFor(true)
    const page = await get(app, '/', { cookie: 'theme=dark; kh_session=s3cret' })
    expect(page).toMatchObject({ status: 200, text: '<p>hello session:dash</p>' })
    expect(page.type).toContain('text/html')
    expect(page.requestId).toMatch(/^req_/)
    expect((await get(app, '/login')).status).toBe(200)
    expect((await get(app, '/healthz')).status).toBe(200)
  })

  it('keeps each realm to its own credentials: no cookie into the API, no bearer token into the dashboard', async () => {
    const app = appFor(true)
    const bearer = { authorization: `Bearer ${token}` }
    const session = { cookie: 'kh_session=s3cret' }
    expect((await get(app, '/')).status).toBe(401)
    expect((await get(app, '/', bearer)).status).toBe(401)
    expect((await get(app, '/', { cookie: 'kh_session=wrong' })).status).toBe(401)
    expect((await get(app, '/api/knowledge', session)).status).toBe(401)
    const listed = await get(app, '/api/knowledge', bearer)
    expect(listed.status).toBe(200)
    expect(JSON.parse(listed.text)).toMatchObject({ items: [], count: 0, next_cursor: null })
    expect((await get(app, '/mcp', session)).status).toBe(401)
    expect((await get(app, '/api/nowhere', bearer)).status).toBe(404)
    expect((await get(app, '/nowhere', session)).status).toBe(404)
  })

  it('without a dashboard, every path but the public ones needs an API token (401 before 404)', async () => {
    const app = appFor(false)
    expect((await get(app, '/', { cookie: 'kh_session=s3cret' })).status).toBe(401)
    expect((await get(app, '/', { authorization: `Bearer ${token}` })).status).toBe(404)
    expect((await get(app, '/healthz')).status).toBe(200)
  })
})
