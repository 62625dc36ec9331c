/**
 * The web dashboard, mounted by `createApp` at `/` (see `DashboardMount`): the page shell
 * and its bundle, the API reference at `/docs`, sign-in and sign-out (`/session`), and the
 * data routes under `/ui` on the same services as the API. Every response carries the
 * dashboard's Content-Security-Policy; every write its CSRF token.
 *
 * Public (no session needed): the shell, the bundle, /docs, and /session. The data routes
 * need a caller: the session cookie's token, or the local principal in local mode.
 */
import { embedderInfo } from '../../admin/status.js'
import { Hono } from 'hono'
import type { KnowHub } from '../../app/open.js'
import type { Authenticator } from '../../auth/authenticate.js'
import type { SessionService } from '../../auth/sessions.js'
import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import type { PackService } from '../../packs/service.js'
import type { DashboardMount } from '../app.js'
import { readJson, type AppEnv } from '../http.js'
import { assetResponse, DEFAULT_ASSETS_DIR, docsAssets, loadBundle, shellPage } from './assets.js'
import { createLatencyWindow, timedSearch, type LatencyWindow } from './latency.js'
import { dashboardDataRoutes } from './routes.js'
import { assertSameOrigin, csrfProtection, securityHeaders } from './security.js'
import { createCsrfTokens, readCookie, SESSION_COOKIE, sessionAuthenticator, sessionCookie } from './session.js'

export { createLatencyWindow, timedSearch, type LatencyWindow } from './latency.js'

export interface DashboardOptions {
  /** The services the dashboard calls, built by `openKnowHub`. */
  hub: Pick<KnowHub, 'knowledge' | 'resources' | 'slim' | 'admin' | 'sessions' | 'reveal' | 'llm'> & Partial<Pick<KnowHub, 'users' | 'embedder'>>
  /** Knowledge packs for the packs page (none: the page says so). */
  packs?: PackService | undefined
  /** The API's authenticator: the dashboard resolves its sessions through it. */
  apiAuthenticate: Authenticator
  /** The server's search latency window (see `timedSearch`); default: a fresh one. */
  latency?: LatencyWindow
  /** Where the built bundle is (default `dist/dashboard`). */
  assetsDir?: string
  /** Mark the session cookie `Secure` (serve behind HTTPS). Default false. */
  secureCookie?: boolean
}

const PUBLIC = new Set(['/', '/session', '/assets/app.js', '/assets/app.css', '/docs'])

/** Paths served without a caller: the shell, its bundle, the API reference, sign-in/out. */
export function isPublicDashboardPath(path: string): boolean {
  return PUBLIC.has(path) || path.startsWith('/docs/')
}

/** `/session`: sign in with a token (starts a server-side session, sets its id as the cookie), sign out (ends it). */
function sessionRoutes(options: DashboardOptions, sessions: SessionService): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const secure = { secure: options.secureCookie === true }
  app.post('/session', async (c) => {
    assertSameOrigin(c.req.raw)
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
      throw new KnowHubError('validation_error', 'Send the token as JSON: {"token": "kh_…"}')
    const body = (await readJson(c)) as { token?: unknown }
    if (typeof body?.token !== 'string' || body.token.trim() === '')
      throw new KnowHubError('validation_error', 'Invalid request: token: an API token is required')
    const token = body.token.trim()
    // A bad token is a failed authentication: createApp's limiter counts it as the API's are (signInPaths).
    const who = await options.apiAuthenticate(new Request(c.req.url, { headers: { authorization: `Bearer ${token}` } }))
    if (!who.key.startsWith('token:')) throw new KnowHubError('validation_error', "Sign in with an API token (kh_…); the server's local key is for the CLI")
    const session = await sessions.start(who.key.slice('token:'.length))
    c.header('set-cookie', sessionCookie(session, secure))
    return c.json({ signed_in: true, caller: who.key })
  })
  app.delete('/session', async (c) => {
    assertSameOrigin(c.req.raw)
    const session = readCookie(c.req.raw, SESSION_COOKIE)
    if (session !== undefined) await sessions.end(session)
    c.header('set-cookie', sessionCookie(undefined, secure))
    return c.json({ signed_in: false })
  })
  return app
}

/**
 * Builds the dashboard for `createApp({ dashboard })` (`startServer` does this for `knowhub start`).
 * @example
 * const dashboard = createDashboard({ hub, apiAuthenticate })
 * const app = createApp({ ...services, authenticate: apiAuthenticate, dashboard })
 */
export function createDashboard(options: DashboardOptions): DashboardMount {
  // Without a built bundle the API still serves; the dashboard's pages say how to build it.
  let bundle: ReturnType<typeof loadBundle> | undefined
  let missing: KnowHubError | undefined
  try {
    bundle = loadBundle(options.assetsDir ?? DEFAULT_ASSETS_DIR)
  } catch (error) {
    if (!isKnowHubError(error, 'config_error')) throw error
    missing = error
  }
  const shell = bundle ? shellPage(bundle) : undefined
  const notBuilt = () =>
    new Response(`${missing?.message ?? 'The dashboard bundle is missing'}\n`, { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  const docs = docsAssets()
  const csrf = createCsrfTokens()
  const { hub } = options
  const { sessions } = hub
  const latency = options.latency ?? createLatencyWindow()

  const routes = new Hono<AppEnv>()
  routes.use('*', securityHeaders())
  routes.get('/', (c) => (shell ? c.html(shell, 200, { 'cache-control': 'no-cache' }) : notBuilt()))
  routes.get('/assets/app.js', (c) => (bundle ? assetResponse(bundle.js, c.req.raw) : notBuilt()))
  routes.get('/assets/app.css', (c) => (bundle ? assetResponse(bundle.css, c.req.raw) : notBuilt()))
  routes.get('/docs', (c) => assetResponse(docs().get('')!, c.req.raw))
  routes.get('/docs/:file', (c) => {
    const file = docs().get(c.req.param('file'))
    if (!file) throw new KnowHubError('not_found', `No file ${c.req.path}`)
    return assetResponse(file, c.req.raw)
  })
  routes.route('/', sessionRoutes(options, sessions))
  routes.use('/ui/*', csrfProtection(csrf))
  routes.route(
    '/ui',
    dashboardDataRoutes({
      knowledge: timedSearch(hub.knowledge, latency),
      resources: hub.resources,
      slim: hub.slim,
      tokens: hub.admin.tokens,
      packs: options.packs,
      users: hub.users,
      reveal: hub.reveal,
      llm: hub.llm !== undefined,
      latency,
      csrf,
      embedder: hub.embedder ? embedderInfo({ embedder: hub.embedder, knowledge: hub.knowledge }) : undefined,
    }),
  )
  return {
    routes,
    authenticate: sessionAuthenticator(options.apiAuthenticate, sessions),
    isPublic: isPublicDashboardPath,
    signInPaths: (method, path) => method === 'POST' && path === '/session',
  }
}
