/**
 * Bad input, errors and limits over real HTTP: malformed JSON, wrong types, unknown
 * fields, oversized bodies, invalid ids, traversal in resource ids; 401/403/404/409/
 * 413/429/501 with the one error shape; request ids; local mode (binding refusal,
 * Host and Origin checks); a database failure answers 500 without internals.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { slimKnowledge, unmergeKnowledge } from '../../src/knowledge/slim/slim.js'
import { createApp } from '../../src/server/app.js'
import { createAuthenticator } from '../../src/auth/authenticate.js'
import { startServer } from '../../src/server/serve.js'
import { client, errorOf, openTestHub, type Client, type TestHub } from './helpers.js'

let t: TestHub
let local: Client
let localUrl: string
let localPort: number

/** A raw request (no URL normalisation by fetch), for traversal and header tests. */
function raw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
    })
    req.on('error', reject)
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })
}

/** The same API in-process (`app.request`), over the same hub, with its own auth mode and limits. */
function appFor(options: { localMode: boolean; rateLimit?: { perSecond: number; burst: number } }) {
  const deps = { store: t.hub.store, embedder: t.hub.embedder }
  return createApp({
    knowledge: t.hub.knowledge,
    resources: t.hub.resources,
    slim: { slim: (body, p) => slimKnowledge(deps, body, p), unmerge: (id, p) => unmergeKnowledge(deps, id, p) },
    authenticate: createAuthenticator({
      tokens: t.hub.tokens,
      localPrincipal: t.hub.config.principal,
      localMode: options.localMode,
      recheckMs: Number.MAX_SAFE_INTEGER,
    }),
    logger: t.logger,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  })
}

beforeAll(async () => {
  t = await openTestHub({ server: { bodyLimit: 100 * 1024 } })
  const server = await t.start()
  expect(server.local).toBe(true)
  localUrl = server.url
  localPort = server.port
  local = client(localUrl)
})
afterAll(async () => t?.close())

describe('local mode (no token exists)', () => {
  it('serves the configured local principal without a token', async () => {
    const saved = await local.post('/api/knowledge', { task: 'Local mode works', content: 'No token needed on 127.0.0.1', types: ['definition'] })
    expect(saved.status).toBe(201)
    expect(saved.body.owner).toBe('user:local')
  })

  it('refuses to bind a non-loopback address while no token exists', async () => {
    let error: unknown
    try {
      await startServer({ hub: t.hub, host: '0.0.0.0', port: 0 })
    } catch (e) {
      error = e
    }
    expect(isKnowHubError(error, 'config_error')).toBe(true)
    expect((error as Error).message).toMatch(/Refusing to listen on 0\.0\.0\.0: no API token exists.*knowhub token create/)
  })

  it('answers only to local Host headers (DNS rebinding) and refuses cross-site browser requests', async () => {
    const rebound = await raw(localPort, '/api/knowledge?limit=1', { headers: { host: `attacker.example:${localPort}` } })
    expect(rebound.status).toBe(403)
    expect(JSON.parse(rebound.body).error.code).toBe('forbidden')
    expect((await raw(localPort, '/healthz', { headers: { host: `localhost:${localPort}` } })).status).toBe(200)
    const crossOrigin = await local.post('/api/knowledge', { task: 'csrf', content: 'x', types: ['plan'] }, { origin: 'https://evil.example' })
    expect(crossOrigin.status).toBe(403)
    const crossSite = await local.get('/api/knowledge', { 'sec-fetch-site': 'cross-site' })
    expect(crossSite.status).toBe(403)
    const sameOrigin = await local.get('/api/knowledge', { origin: localUrl })
    expect(sameOrigin.status).toBe(200)
  })

  it('still checks a token that is sent, and rejects a malformed Authorization header', async () => {
    const bad = await client(localUrl, `kh_${'A'.repeat(43)}`).get('/api/knowledge')
    expect(bad.status).toBe(401)
    expect(errorOf(bad).code).toBe('unauthenticated')
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect((await local.get('/api/knowledge', { authorization: 'Basic Zm9vOmJhcg==' })).status).toBe(401)
  })
})

describe('bad input', () => {
  it('malformed JSON: 400 at path (body), without echoing the body', async () => {
    const r = await local.post('/api/knowledge', '{"task": "x", "content": "hunter2-secret", ')
    expect(r.status).toBe(400)
    const error = errorOf(r)
    expect(error.code).toBe('validation_error')
    expect(error.details.issues).toEqual([{ path: '(body)', message: 'malformed JSON' }])
    expect(r.text).not.toContain('hunter2')
    expect((await local.post('/api/knowledge', '')).status).toBe(400)
    expect(errorOf(await local.put('/api/resource/a/b', 'nope')).details.issues).toEqual([{ path: '(body)', message: 'malformed JSON' }])
  })

  it('wrong types: 400 with every field path', async () => {
    const r = await local.post('/api/knowledge', { task: 42, content: 'x', types: ['tool', 'nonsense'], score: 9, source: { urls: 'not-a-list' } })
    expect(r.status).toBe(400)
    const paths = (errorOf(r).details.issues as Array<{ path: string }>).map((i) => i.path)
    expect(paths).toEqual(expect.arrayContaining(['task', 'types.1', 'score', 'source.urls']))
    const search = await local.get('/api/knowledge/search?q=x&top_k=many&min_score=9&types=tool,bogus')
    expect(search.status).toBe(400)
    expect((errorOf(search).details.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(expect.arrayContaining(['top_k', 'min_score', 'types']))
    expect((await local.get('/api/knowledge/search')).status).toBe(400)
    expect((await local.get('/api/knowledge?limit=0')).status).toBe(400)
    expect((await local.post('/api/knowledge/batch_update', { feedback_list: [{ knowledge_id: 'x', is_helpful: 'yes' }] })).status).toBe(400)
    expect((await local.post('/api/knowledge', [1, 2])).status).toBe(400)
    expect((await local.post('/api/knowledge/slim', { threshold: 'high' })).status).toBe(400)
  })

  it('unknown fields and parameters: 400 naming them', async () => {
    const body = await local.post('/api/knowledge', { task: 't', content: 'c', types: ['tool'], sekret: 1 })
    expect(body.status).toBe(400)
    expect(errorOf(body).message).toMatch(/sekret/)
    const put = await local.put('/api/knowledge/knowledge-20260101000000-abcd', { add_helpful_case: {}, delete_everything: true })
    expect(put.status).toBe(400)
    const query = await local.get('/api/knowledge/search?q=x&drop_table=1')
    expect(query.status).toBe(400)
    expect(errorOf(query).message).toMatch(/drop_table/)
    expect((await local.get('/api/knowledge?limit=5&bogus=1')).status).toBe(400)
    expect((await local.get('/api/knowledge/search?q=x&expand=secrets')).status).toBe(400)
    expect((await local.post('/api/resource', { id: 'a/b', title: 't', extra: true })).status).toBe(400)
  })

  it('an unknown field is reported at its own path, one issue each', async () => {
    const body = await local.post('/api/knowledge', {
      task: 't',
      content: 'c',
      types: ['tool'],
      sekret: 1,
      colour: 'red',
      source: { name: 'n', surprise: true },
    })
    expect(errorOf(body).details.issues).toEqual(
      expect.arrayContaining([
        { path: 'sekret', message: 'unknown field "sekret"' },
        { path: 'colour', message: 'unknown field "colour"' },
        { path: 'source.surprise', message: 'unknown field "surprise"' },
      ]),
    )
    expect(errorOf(body).message).toMatch(/^Invalid knowledge entry: (sekret|colour|source\.surprise): unknown field/)
    const put = await local.put('/api/knowledge/knowledge-20260101000000-abcd', { add_helpful_case: {}, delete_everything: true })
    expect(errorOf(put).details.issues).toEqual([{ path: 'delete_everything', message: 'unknown field "delete_everything"' }])
    const batch = await local.post('/api/knowledge/batch_update', {
      feedback_list: [{ knowledge_id: 'knowledge-20260101000000-abcd', is_helpful: true, why: 'x' }],
    })
    expect(errorOf(batch).details.issues).toEqual([{ path: 'feedback_list.0.why', message: 'unknown field "why"' }])
    const query = await local.get('/api/knowledge/search?q=x&drop_table=1')
    expect(errorOf(query).details.issues).toEqual([{ path: 'drop_table', message: 'unknown field "drop_table"' }])
  })

  it('oversized bodies: 413, by Content-Length and when streamed without one', async () => {
    const big = JSON.stringify({ task: 'big', content: 'x'.repeat(110 * 1024), types: ['tool'] })
    const r = await local.post('/api/knowledge', big)
    expect(r.status).toBe(413)
    expect(errorOf(r)).toMatchObject({ code: 'too_large', details: { limit: 100 * 1024 } })
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 11; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(10 * 1024)))
        controller.close()
      },
    })
    const streamed = await fetch(`${localUrl}/api/knowledge`, {
      method: 'POST',
      body: chunks,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(413)
    expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('too_large')
    // Under the body limit but over the service's limit of a secret (64 KiB).
    const tooLargeSecret = await local.post('/api/resource', { id: 'big/secret', title: 't', secure_body: 's'.repeat(65_537) })
    expect(tooLargeSecret.status).toBe(413)
    expect(errorOf(tooLargeSecret)).toMatchObject({ code: 'too_large', details: { field: 'secure_body' } })
    expect(tooLargeSecret.text).not.toContain('sssss')
  })

  it('invalid ids: 400 for malformed knowledge ids, 404 for unknown ones', async () => {
    const malformed = await local.get(`/api/knowledge/${encodeURIComponent('bad id!')}`)
    expect(malformed.status).toBe(400)
    expect(errorOf(malformed).code).toBe('validation_error')
    const unknown = await local.get('/api/knowledge/knowledge-20260101000000-zzzz')
    expect(unknown.status).toBe(404)
    expect(errorOf(unknown)).toMatchObject({ code: 'not_found', details: { id: 'knowledge-20260101000000-zzzz' } })
    expect((await local.put('/api/knowledge/knowledge-20260101000000-zzzz', { update_score: 3 })).status).toBe(404)
    expect((await local.delete(`/api/knowledge/${'x'.repeat(300)}`)).status).toBe(400)
  })

  it('traversal in resource ids: refused whatever the encoding', async () => {
    await local.post('/api/resource', { id: 'safe/one', title: 'safe', secure_body: 'TRAVERSAL-SECRET' })
    const paths = [
      '/api/resource/code/%2e%2e/safe/one',
      '/api/resource/code/%2E%2e/%2e%2E/knowledge',
      '/api/resource/..%2Fsafe%2Fone',
      '/api/resource/safe/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '/api/resource/a%5C..%5Cb',
      '/api/resource/a/%00',
      '/api/resource/%E0%A4%A',
      '/api/resource/a//b',
      '/api/resource/',
      // Plain dot segments would be resolved by URL parsing (to another id or route): refused instead.
      '/api/resource/x/../../knowledge/../resource/safe/one',
      '/api/resource/../../../etc/passwd',
      '/api/resource/./safe/one',
    ]
    for (const path of paths) {
      const r = await raw(localPort, path, { headers: { 'x-request-id': 'traversal-check-1' } })
      expect(r.status, path).toBe(400)
      expect(JSON.parse(r.body).error.code, path).toBe('validation_error')
      expect(r.body).not.toContain('TRAVERSAL-SECRET')
      // Like every other answer: a request id, and an access log line.
      expect(r.headers['x-request-id'], path).toBe('traversal-check-1')
    }
    const dotted = await raw(localPort, '/api/resource/x/../y')
    const id = dotted.headers['x-request-id'] as string
    expect(id).toMatch(/^req_/)
    expect(JSON.parse(dotted.body).error.details.issues).toEqual([{ path: '(path)', message: expect.stringContaining('. or ..') }])
    const logged = t.logs.filter((line) => line.includes(id)).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(logged).toEqual([expect.objectContaining({ message: 'http.request', request_id: id, status: 400, method: 'GET' })])
    expect((await raw(localPort, '/api/resource/safe/one')).status).toBe(200)
    expect((await raw(localPort, '/api/resource/safe%2Fone')).status).toBe(200)
    expect((await local.post('/api/resource', { id: '../etc/passwd', title: 't' })).status).toBe(400)
  })

  it('unknown routes and methods: 404 in the error shape', async () => {
    const r = await local.get('/api/nothing')
    expect(r.status).toBe(404)
    expect(errorOf(r).code).toBe('not_found')
    expect((await local.patch('/api/resource', {})).status).toBe(404)
  })
})

describe('errors and limits', () => {
  it("POST /api/resource on an id you own updates it (200); 409 only when an admin meets an id it cannot see in another owner's namespace", async () => {
    const first = await local.post('/api/resource', { id: 'dup/one', title: 'first', body: 'kept' })
    expect(first.status).toBe(201)
    const again = await local.post('/api/resource', { id: 'dup/one', title: 'second' })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ id: 'dup/one', title: 'second', body: 'kept', version: 2, created_at: first.body.created_at })
    // The local principal is an admin; someone else's resource in a scope it does not belong to:
    await t.hub.resources.save({ id: 'dup/one', title: 'hidden', scopes: ['user:someone'] }, { user: 'someone', permissions: ['read', 'write'] })
    expect((await local.get('/api/resource/dup/one')).body.title).toBe('second')
    const r = await local.post('/api/resource', { id: 'dup/one', title: 'third', owner: 'user:someone' })
    expect(r.status).toBe(409)
    expect(errorOf(r).code).toBe('conflict')
    expect(r.text).not.toContain('hidden')
  })

  it('evolve without an LLM: 501 llm_not_configured', async () => {
    const saved = await local.post('/api/knowledge', { task: 'evolve me', content: 'old text', types: ['plan'] })
    const r = await local.put(`/api/knowledge/${saved.body.id}`, { evolve_feedback: 'make it better' })
    expect(r.status).toBe(501)
    expect(errorOf(r).code).toBe('llm_not_configured')
  })

  it('request ids: echoed when safe, generated otherwise, on errors too', async () => {
    const echoed = await local.get('/healthz', { 'x-request-id': 'agent-run-42.step_7' })
    expect(echoed.headers.get('x-request-id')).toBe('agent-run-42.step_7')
    const replaced = await local.get('/api/nothing', { 'x-request-id': 'bad id <script>' })
    const generated = replaced.headers.get('x-request-id')!
    expect(generated).toMatch(/^req_[a-f0-9]{20}$/)
    expect(errorOf(replaced).code).toBe('not_found')
    const logged = t.logs.filter((line) => line.includes(generated))
    expect(logged.length).toBe(1)
    expect(JSON.parse(logged[0]!)).toMatchObject({ message: 'http.request', method: 'GET', path: '/api/nothing', status: 404 })
  })

  it('token mode (in-process app on the same hub): 401 without or with a bad token, 403 without the permission; rate limit 429 with Retry-After', async () => {
    const reader = await t.hub.tokens.create({ user: 'r', org: 'acme', permissions: ['read'] })
    const writer = await t.hub.tokens.create({ user: 'w', org: 'acme' })
    const app = appFor({ localMode: false, rateLimit: { perSecond: 1, burst: 3 } })
    const call = async (path: string, token?: string, init: RequestInit = {}) => {
      const response = await app.request(path, {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string> | undefined) },
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as unknown }
    }
    const none = await call('/api/knowledge')
    expect(none.status).toBe(401)
    expect(errorOf(none).message).toMatch(/Bearer/)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect((await call('/healthz')).status).toBe(200)
    expect((await call('/api/knowledge', 'kh_not-a-token')).status).toBe(401)
    const forbidden = await call('/api/knowledge', reader.token, { method: 'POST', body: JSON.stringify({ task: 't', content: 'c', types: ['tool'] }) })
    expect(forbidden.status).toBe(403)
    expect(errorOf(forbidden)).toMatchObject({ code: 'forbidden', details: { permission: 'write' } })
    // The writer's bucket holds 3; the 4th request at once is refused.
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await call('/api/knowledge', writer.token)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    const limited = await call('/api/knowledge', writer.token)
    expect(limited.status).toBe(429)
    expect(errorOf(limited).code).toBe('rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Limits are per token: the reader still has its own bucket.
    expect((await call('/api/knowledge', reader.token)).status).toBe(200)
    // A revoked token stops working at once.
    await t.hub.tokens.revoke(reader.id)
    expect((await call('/api/knowledge', reader.token)).status).toBe(401)
  })

  it('failed authentication is limited per client address: past the burst, a failed attempt answers 429, and a valid token from there still works', async () => {
    let lookups = 0
    let now = Date.parse('2026-03-06T12:00:00Z')
    const clock = { now: () => new Date(now) }
    const tokens = { verify: (token: string) => (lookups++, t.hub.tokens.verify(token)), hasAny: () => t.hub.tokens.hasAny() }
    const good = await t.hub.tokens.create({ user: 'g', org: 'acme' })
    let address = '203.0.113.5'
    const deps = { store: t.hub.store, embedder: t.hub.embedder }
    const app = createApp({
      knowledge: t.hub.knowledge,
      resources: t.hub.resources,
      slim: { slim: (body, p) => slimKnowledge(deps, body, p), unmerge: (id, p) => unmergeKnowledge(deps, id, p) },
      authenticate: createAuthenticator({ tokens, localPrincipal: t.hub.config.principal, localMode: false, clock }),
      clock,
      authFailureLimit: { perSecond: 1, burst: 3 },
      connection: () => ({ address }),
    })
    const call = async (token?: string) => {
      const response = await app.request('/api/knowledge?limit=1', { headers: token ? { authorization: `Bearer ${token}` } : {} })
      return {
        status: response.status,
        retry: response.headers.get('retry-after'),
        body: (await response.json()) as { error?: { code: string; message: string } },
      }
    }
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call(`kh_wrong-${i}`)).status)
    statuses.push((await call()).status) // no token at all: a failure too, though it costs no lookup
    expect(statuses).toEqual([401, 401, 401, 429])
    expect(lookups).toBe(3)
    const blocked = await call('kh_wrong-again')
    expect(blocked).toMatchObject({ status: 429, body: { error: { code: 'rate_limited', message: expect.stringContaining('failed authentications') } } })
    expect(Number(blocked.retry)).toBeGreaterThanOrEqual(1)
    expect(lookups).toBe(4) // every presented token is checked first…
    // …so an attacker's failures never lock out a valid token from the same address (#15.3).
    expect((await call(good.token)).status).toBe(200)
    expect((await call('kh_wrong-again')).status).toBe(429)
    // Another address has its own allowance; a valid token from another address works.
    address = '198.51.100.7'
    expect((await call('kh_wrong-x')).status).toBe(401)
    expect((await call(good.token)).status).toBe(200)
    // A second later the first address may try once more.
    address = '203.0.113.5'
    now += 1000
    expect((await call('kh_wrong-later')).status).toBe(401)
    expect((await call('kh_wrong-later')).status).toBe(429)
    // Over real sockets, the server limits by the peer address: 20 failures, then 429.
    const server = await startServer({ hub: t.hub, host: '127.0.0.1', port: 0 })
    try {
      const seen = []
      for (let i = 0; i < 22; i++) seen.push((await raw(server.port, '/api/knowledge', { headers: { authorization: `Bearer kh_bad-${i}` } })).status)
      expect(seen.slice(0, 20).every((s) => s === 401)).toBe(true)
      expect(seen.slice(20)).toEqual([429, 429])
    } finally {
      await server.close()
    }
  })

  it('a failure inside answers 500 internal_error without internals (the store is closed here)', async () => {
    const app = appFor({ localMode: true })
    await t.hub.store.close()
    // A list reads the table (a search may answer from the in-memory index without SQL).
    const response = await app.request('/api/knowledge?limit=5')
    const r = { status: response.status, text: await response.text() }
    expect(r.status).toBe(500)
    expect(JSON.parse(r.text)).toEqual({
      error: { code: 'internal_error', message: expect.stringMatching(/^Internal server error \(request id req_/), details: {} },
    })
    expect(r.text).not.toMatch(/SELECT|knowledge_|pglite|stack|at /i)
    expect(t.logs.some((line) => JSON.parse(line).message === 'http.error')).toBe(true)
  })
})
