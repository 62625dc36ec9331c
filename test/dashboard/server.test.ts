/**
 * The dashboard's server side over real HTTP: the shell and bundle (CSP, gzip, no inline
 * script), /docs from swagger-ui-dist, sign-in with a token into an HttpOnly SameSite=Strict
 * cookie and sign-out, CSRF and same-origin checks on writes, each realm's credentials kept
 * apart, the audited secret reveal, and the admin-only tokens routes. The browser tests
 * (browser.test.ts) drive the pages themselves.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDashboard } from '../../src/server/dashboard/index.js'
import { openTestHub } from '../server/helpers.js'
import { openDashboardHub, type DashboardHub } from './helpers.js'

interface Reply {
  status: number
  headers: Headers
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

async function request(base: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.body !== undefined) headers['content-type'] ??= 'application/json'
  const response = await fetch(`${base}${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) })
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, text, body }
}

describe('dashboard in local mode', () => {
  let t: DashboardHub
  beforeAll(async () => {
    t = await openDashboardHub({ config: { principal: { user: 'me', org: 'acme', permissions: ['read', 'write', 'secrets:read'] } } })
  })
  afterAll(async () => t?.close())

  it('serves the shell with a strict CSP and no inline script, and the bundle gzipped and cacheable', async () => {
    const page = await request(t.server.url, 'GET', '/')
    expect(page.status).toBe(200)
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).toContain("frame-ancestors 'none'")
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    // Every script of the page is a file of this origin.
    expect(page.text.match(/<script\b[^>]*>/g)).toEqual([expect.stringMatching(/^<script type="module" src="\/assets\/app\.js\?v=[0-9a-f]{12}">$/)])
    const js = page.text.match(/src="(\/assets\/app\.js\?v=[0-9a-f]+)"/)![1]!
    const bundle = await fetch(`${t.server.url}${js}`, { headers: { 'accept-encoding': 'gzip' } })
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('content-type')).toContain('text/javascript')
    expect(bundle.headers.get('cache-control')).toContain('immutable')
    expect((await bundle.text()).length).toBeGreaterThan(1000)
  })

  it('opens directly as the local principal; writes need the CSRF token and the same origin', async () => {
    const me = await request(t.server.url, 'GET', '/ui/me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ caller: 'local', mode: 'local', principal: { user: 'me', org: 'acme' }, features: { llm: false, packs: false } })
    const entry = { task: 'dashboard write', content: 'text', types: ['tool'] }
    const refused = await request(t.server.url, 'POST', '/ui/knowledge', { body: entry })
    expect(refused.status).toBe(403)
    expect(refused.body.error.message).toMatch(/CSRF/)
    const wrong = await request(t.server.url, 'POST', '/ui/knowledge', { body: entry, headers: { 'x-csrf-token': 'x'.repeat(43) } })
    expect(wrong.status).toBe(403)
    const csrf = { 'x-csrf-token': me.body.csrf as string }
    const crossSite = await request(t.server.url, 'POST', '/ui/knowledge', { body: entry, headers: { ...csrf, origin: 'http://evil.example' } })
    expect(crossSite.status).toBe(403)
    const saved = await request(t.server.url, 'POST', '/ui/knowledge', { body: entry, headers: csrf })
    expect(saved.status).toBe(201)
    expect(saved.body).toMatchObject({ task: 'dashboard write', owner: 'user:me' })
    expect((await t.hub.knowledge.get(saved.body.id, t.hub.config.principal)).task).toBe('dashboard write')
  })

  it('answers only to local Host headers, like the API', async () => {
    // fetch() cannot send another Host header: a raw request can (DNS rebinding).
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${t.server.url}/`, { headers: { host: `evil.example:${t.server.port}` } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      req.end()
    })
    expect(status).toBe(403)
    expect((await request(t.server.url, 'GET', '/')).status).toBe(200)
  })

  it('serves the API reference at /docs from swagger-ui-dist, reading /api/openapi.json', async () => {
    const docs = await request(t.server.url, 'GET', '/docs')
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-type')).toContain('text/html')
    const scripts = [...docs.text.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!)
    expect(scripts.map((s) => s.replace(/\?v=.*/, ''))).toEqual(['/docs/swagger-ui-bundle.js', '/docs/init.js'])
    expect(docs.text).not.toMatch(/<script>(?!<)/)
    const init = await request(t.server.url, 'GET', scripts[1]!)
    expect(init.text).toContain("url: '/api/openapi.json'")
    expect((await request(t.server.url, 'GET', scripts[0]!)).status).toBe(200)
    expect((await request(t.server.url, 'GET', '/docs/nothing.js')).status).toBe(404)
    expect((await request(t.server.url, 'GET', '/api/openapi.json')).body.openapi).toMatch(/^3\./)
  })
})

describe('dashboard in token mode', () => {
  let t: DashboardHub
  let alice: string
  let admin: string
  let bob: string
  beforeAll(async () => {
    t = await openDashboardHub()
    // Tokens exist before the server starts: token mode.
    await t.server.close()
    alice = (await t.hub.tokens.create({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })).token
    bob = (await t.hub.tokens.create({ user: 'bob', org: 'acme', permissions: ['read', 'write'] })).token
    admin = (await t.hub.tokens.create({ user: 'root', org: 'ops', permissions: ['admin'] })).token
    const { createDashboard } = await import('../../src/server/dashboard/index.js')
    const { dashboardAssets } = await import('./helpers.js')
    const assetsDir = await dashboardAssets()
    t.server = await t.start({ dashboard: (api) => createDashboard({ hub: t.hub, apiAuthenticate: api.authenticate, assetsDir }) })
  })
  afterAll(async () => t?.close())

  async function signIn(token: string): Promise<{ cookie: string; csrf: string }> {
    const response = await request(t.server.url, 'POST', '/session', { body: { token } })
    expect(response.status).toBe(200)
    const setCookie = response.headers.get('set-cookie') ?? ''
    const cookie = setCookie.split(';')[0]!
    const me = await request(t.server.url, 'GET', '/ui/me', { headers: { cookie } })
    expect(me.status).toBe(200)
    return { cookie, csrf: me.body.csrf }
  }

  it('asks for a token; keeps the session in an HttpOnly, SameSite=Strict cookie; signs out', async () => {
    expect((await request(t.server.url, 'GET', '/')).status).toBe(200)
    const anonymous = await request(t.server.url, 'GET', '/ui/me')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.error.message).toMatch(/Sign in/)
    const bad = await request(t.server.url, 'POST', '/session', { body: { token: 'kh_' + 'A'.repeat(43) } })
    expect(bad.status).toBe(401)
    expect(bad.headers.get('set-cookie')).toBeNull()
    const response = await request(t.server.url, 'POST', '/session', { body: { token: alice } })
    const setCookie = response.headers.get('set-cookie') ?? ''
    // Issue 27: the cookie holds a server-side session id, never the API token.
    expect(setCookie).toMatch(/^kh_session=khs_[\w-]{43};/)
    expect(setCookie).not.toContain(alice)
    expect(setCookie).toContain('HttpOnly')
    expect(setCookie).toContain('SameSite=Strict')
    const cookie = setCookie.split(';')[0]!
    const me = await request(t.server.url, 'GET', '/ui/me', { headers: { cookie } })
    expect(me.body).toMatchObject({ mode: 'token', principal: { user: 'alice', org: 'acme' } })
    expect(me.body.caller).toMatch(/^token:tok_/)
    // The raw token as a cookie opens nothing; a made-up session id neither.
    expect((await request(t.server.url, 'GET', '/ui/me', { headers: { cookie: `kh_session=${alice}` } })).status).toBe(401)
    expect((await request(t.server.url, 'GET', '/ui/me', { headers: { cookie: `kh_session=khs_${'A'.repeat(43)}` } })).status).toBe(401)
    const out = await request(t.server.url, 'DELETE', '/session', { headers: { cookie } })
    expect(out.headers.get('set-cookie')).toMatch(/^kh_session=; .*Max-Age=0/)
    // Signing out ended the session on the server: a copy of the cookie no longer works.
    expect((await request(t.server.url, 'GET', '/ui/me', { headers: { cookie } })).status).toBe(401)
  })

  it('refuses a sign-in posted as a form or from another origin', async () => {
    const form = await fetch(`${t.server.url}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${alice}`,
    })
    expect(form.status).toBe(400)
    const cross = await request(t.server.url, 'POST', '/session', { body: { token: alice }, headers: { origin: 'http://evil.example' } })
    expect(cross.status).toBe(403)
    expect(cross.headers.get('set-cookie')).toBeNull()
  })

  it('keeps each realm to its credentials: the cookie opens no API route, a bearer token no dashboard route', async () => {
    const { cookie } = await signIn(alice)
    expect((await request(t.server.url, 'GET', '/api/knowledge', { headers: { cookie } })).status).toBe(401)
    expect((await request(t.server.url, 'GET', '/ui/me', { headers: { authorization: `Bearer ${alice}` } })).status).toBe(401)
  })

  it('ends the session when its token is revoked', async () => {
    const temp = await t.hub.tokens.create({ user: 'temp', permissions: ['read'] })
    const { cookie } = await signIn(temp.token)
    await t.hub.tokens.revoke(temp.id)
    const after = await request(t.server.url, 'GET', '/ui/me', { headers: { cookie } })
    expect(after.status).toBe(401)
    expect(after.body.error.message).toMatch(/revoked or expired/)
  })

  it('reveals a secret only to a principal allowed to read it, and logs each reveal', async () => {
    const saved = await t.hub.resources.save(
      { id: 'cookies/site', title: 'Site', content_type: 'cookie', body: 'public part', secure_body: 'session=TOPSECRET', scopes: ['org:acme'] },
      { user: 'alice', org: 'acme', permissions: ['read', 'write'] },
    )
    const owner = saved.owner
    const asAlice = await signIn(alice)
    const masked = await request(t.server.url, 'GET', `/ui/resources/item?id=cookies/site&owner=${owner}`, { headers: { cookie: asAlice.cookie } })
    expect(masked.status).toBe(200)
    expect(masked.body.has_secret).toBe(true)
    expect(masked.text).not.toContain('TOPSECRET')
    const list = await request(t.server.url, 'GET', '/ui/resources', { headers: { cookie: asAlice.cookie } })
    expect(list.text).not.toContain('TOPSECRET')

    const noCsrf = await request(t.server.url, 'POST', '/ui/resources/reveal', { body: { id: 'cookies/site', owner }, headers: { cookie: asAlice.cookie } })
    expect(noCsrf.status).toBe(403)
    const shown = await request(t.server.url, 'POST', '/ui/resources/reveal', {
      body: { id: 'cookies/site', owner },
      headers: { cookie: asAlice.cookie, 'x-csrf-token': asAlice.csrf },
    })
    expect(shown.status).toBe(200)
    expect(shown.body.secure_body).toBe('session=TOPSECRET')

    const asBob = await signIn(bob)
    const refused = await request(t.server.url, 'POST', '/ui/resources/reveal', {
      body: { id: 'cookies/site', owner },
      headers: { cookie: asBob.cookie, 'x-csrf-token': asBob.csrf },
    })
    expect(refused.status).toBe(403)
    expect(refused.text).not.toContain('TOPSECRET')
    expect(refused.body.error.message).toMatch(/secrets:read/)

    const log = await t.hub.store.secretReads.list({ own: [owner], adminOrgs: [] }, { resource_id: 'cookies/site', owner, limit: 10 })
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({ resource_id: 'cookies/site', owner, via: 'dashboard', route: 'POST /reveal', principal: { user: 'alice', org: 'acme' } })
    expect(log[0]!.caller).toMatch(/^token:tok_/)
    expect(JSON.stringify(log)).not.toContain('TOPSECRET')
    const again = await request(t.server.url, 'GET', `/ui/resources/item?id=cookies/site&owner=${owner}`, { headers: { cookie: asAlice.cookie } })
    expect(again.body.reveals).toHaveLength(1)
    // The reveal log is shown only to principals who may reveal the secret themselves.
    const asBobAgain = await request(t.server.url, 'GET', `/ui/resources/item?id=cookies/site&owner=${owner}`, { headers: { cookie: asBob.cookie } })
    expect(asBobAgain.status).toBe(200)
    expect(asBobAgain.body.reveals).toEqual([])
  })

  it('offers the tokens routes to admins only', async () => {
    const asBob = await signIn(bob)
    const refused = await request(t.server.url, 'GET', '/ui/tokens', { headers: { cookie: asBob.cookie } })
    expect(refused.status).toBe(403)
    const refusedCreate = await request(t.server.url, 'POST', '/ui/tokens', {
      body: { user: 'x' },
      headers: { cookie: asBob.cookie, 'x-csrf-token': asBob.csrf },
    })
    expect(refusedCreate.status).toBe(403)
    const asAdmin = await signIn(admin)
    const listed = await request(t.server.url, 'GET', '/ui/tokens', { headers: { cookie: asAdmin.cookie } })
    expect(listed.status).toBe(200)
    // Issue 27: an admin of org ops sees its org's tokens only, not acme's alice and bob.
    expect(listed.body.items.map((i: { principal: { user: string } }) => i.principal.user)).toEqual(['root'])
    expect(listed.text).not.toContain(alice)
    const outsider = await request(t.server.url, 'POST', '/ui/tokens', {
      body: { user: 'carol', permissions: ['read'] },
      headers: { cookie: asAdmin.cookie, 'x-csrf-token': asAdmin.csrf },
    })
    expect(outsider.status).toBe(403)
    const created = await request(t.server.url, 'POST', '/ui/tokens', {
      body: { user: 'carol@ops', permissions: ['read'] },
      headers: { cookie: asAdmin.cookie, 'x-csrf-token': asAdmin.csrf },
    })
    expect(created.status).toBe(201)
    expect(created.body.token).toMatch(/^kh_/)
    const revoked = await request(t.server.url, 'POST', `/ui/tokens/${created.body.id}/revoke`, {
      headers: { cookie: asAdmin.cookie, 'x-csrf-token': asAdmin.csrf },
    })
    expect(revoked.body.status).toBe('revoked')
    expect(await t.hub.tokens.verify(created.body.token)).toBeUndefined()
  })

  it('counts the overview over what the principal sees only', async () => {
    await t.hub.knowledge.save(
      { task: 'acme tip', content: 'c', types: ['tool'], scopes: ['org:acme'] },
      { user: 'alice', org: 'acme', permissions: ['read', 'write'] },
    )
    await t.hub.knowledge.save(
      { task: 'ops secret plan', content: 'c', types: ['plan'], scopes: ['org:ops'] },
      { user: 'root', org: 'ops', permissions: ['admin'] },
    )
    const asBob = await signIn(bob)
    const overview = await request(t.server.url, 'GET', '/ui/overview', { headers: { cookie: asBob.cookie } })
    expect(overview.status).toBe(200)
    expect(overview.body.by_type).toEqual([{ type: 'tool', count: 1 }])
    expect(overview.body.by_scope).toEqual([{ scope: 'org:acme', count: 1 }])
    expect(overview.body.saves_per_day).toEqual([{ day: new Date().toISOString().slice(0, 10), count: 1 }])
    expect(overview.body.search_latency_ms).toMatchObject({ count: expect.any(Number) })
    // The embedder search uses, named for the overview (issue 40): an offline one has no convention and its own floors.
    expect(overview.body.embedder).toMatchObject({ model: expect.stringMatching(/^hashed-ngram-/), convention: null, calibration: { source: 'builtin' } })
  })
})

describe('dashboard without a built bundle', () => {
  it('answers 503 saying how to build it, while the API still serves', async () => {
    const t = await openTestHub({ embedder: { provider: 'hashed' } })
    const empty = mkdtempSync(join(tmpdir(), 'knowhub-no-bundle-'))
    try {
      const server = await t.start({ dashboard: (api) => createDashboard({ hub: t.hub, apiAuthenticate: api.authenticate, assetsDir: empty }) })
      const page = await request(server.url, 'GET', '/')
      expect(page.status).toBe(503)
      expect(page.text).toContain('npm run build')
      expect((await request(server.url, 'GET', '/assets/app.js')).status).toBe(503)
      expect((await request(server.url, 'GET', '/api/knowledge')).status).toBe(200)
      expect((await request(server.url, 'GET', '/ui/me')).status).toBe(200)
    } finally {
      await t.close()
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
