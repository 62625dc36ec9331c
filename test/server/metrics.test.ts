/**
 * `GET /metrics` over real HTTP: after some traffic (saves, searches, a read by id, an unknown
 * path, an extraction against the local OpenAI-compatible stub) the Prometheus exposition holds
 * the request counts by route PATTERN and status, the search stages and response-cache use, the
 * embedder's calls, the LLM's calls, tokens and latency by task and model, the PostgreSQL pool
 * (on a PostgreSQL backend) and the process's memory. Who may scrape: the local principal on a
 * loopback connection, the hub operator's token; any other token (an org admin's too) gets 403, no token in token mode 401.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/app/metrics.js'
import type { RunningServer } from '../../src/server/serve.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { client, errorOf, openTestHub, type TestHub } from './helpers.js'

/** The value of one series (`name{labels}` exactly as exposed), or undefined when absent. */
function series(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const have = (match[2] ?? '').split(/,(?=[a-z_]+=")/).filter(Boolean)
    if (have.length === wanted.length && wanted.every((w) => have.includes(w))) return Number(match[3])
  }
  return undefined
}

const proposal = { types: ['tool'], task: 'Install pnpm in Docker', content: 'Run corepack enable before pnpm install.', tags: {}, message_ids: ['a1'] }

describe('GET /metrics', () => {
  let stub: OpenAIStub
  let t: TestHub
  let server: RunningServer
  let postgres: boolean

  beforeAll(async () => {
    stub = await startOpenAIStub({ chat: () => JSON.stringify({ entries: [proposal] }) })
    t = await openTestHub(
      { embedder: { provider: 'hashed', dimension: 64 }, llm: { url: stub.url, model: 'stub-chat', retries: 0, timeoutMs: 30_000 } },
      { metrics: createMetrics() },
    )
    postgres = t.hub.config.databaseUrl !== undefined
    server = await t.start()
  })
  afterAll(async () => {
    await t?.close()
    await stub?.close()
  })

  it('reports requests by route pattern, search stages, cache, embedder, LLM, pool and memory after traffic', async () => {
    const local = client(server.url)
    const ids: string[] = []
    for (const task of ['Log in with selenium', 'Retry flaky selenium tests']) {
      const saved = await local.post('/api/knowledge', { types: ['tool'], task, content: `${task}: wait for the element first.` })
      expect(saved.status).toBe(201)
      ids.push(saved.body.id as string)
    }
    for (let i = 0; i < 2; i++) expect((await local.get('/api/knowledge/search?q=selenium')).status).toBe(200)
    for (const id of ids) expect((await local.get(`/api/knowledge/${id}`)).status).toBe(200)
    expect((await local.get('/api/knowledge/kn_doesnotexist00')).status).toBe(404)
    expect((await local.get('/no/such/path')).status).toBe(404)
    const scraped = await local.get('/metrics')
    expect(scraped.status).toBe(200)
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = scraped.text

    // Requests: by the route pattern, never the raw path (the ids do not appear at all).
    expect(series(text, 'knowhub_http_requests_total', { method: 'GET', route: '/api/knowledge/search', status: '200' })).toBe(2)
    expect(series(text, 'knowhub_http_requests_total', { method: 'POST', route: '/api/knowledge', status: '201' })).toBe(2)
    expect(series(text, 'knowhub_http_requests_total', { method: 'GET', route: '/api/knowledge/:id', status: '200' })).toBe(2)
    expect(series(text, 'knowhub_http_requests_total', { method: 'GET', route: '/api/knowledge/:id', status: '404' })).toBe(1)
    for (const id of [...ids, 'kn_doesnotexist00', '/no/such/path']) expect(text).not.toContain(id)
    expect(series(text, 'knowhub_http_request_duration_seconds_count', { method: 'GET', route: '/api/knowledge/search', status: '200' })).toBe(2)

    // Search: every stage timed for the computed searches; the response cache on the embedded
    // database (a miss, then a hit), none on a PostgreSQL server (docs/scale.md).
    const computed = postgres ? 2 : 1
    for (const stage of ['fulltext', 'embed', 'vector', 'rank', 'total'])
      expect(series(text, 'knowhub_search_stage_duration_seconds_count', { stage }), stage).toBe(computed)
    if (postgres) expect(series(text, 'knowhub_search_cache_total', { outcome: 'bypass' })).toBe(2)
    else {
      expect(series(text, 'knowhub_search_cache_total', { outcome: 'miss' })).toBe(1)
      expect(series(text, 'knowhub_search_cache_total', { outcome: 'hit' })).toBe(1)
    }

    // Embedder: the saves and the query; nothing in flight now.
    expect(series(text, 'knowhub_embed_texts_total')).toBeGreaterThanOrEqual(3)
    expect(series(text, 'knowhub_embed_in_flight')).toBe(0)
    expect(series(text, 'knowhub_llm_calls_total', { task: 'extract', model: 'stub-chat' })).toBeUndefined()

    // An extraction (its proposals are checked against the store with searches of their own).
    const extracted = await local.post('/api/knowledge/extract', { messages: [{ id: 'a1', role: 'user', content: 'corepack enable fixed pnpm' }] })
    expect(extracted.status).toBe(200)
    const after = (await local.get('/metrics')).text

    // LLM: one extraction call with the stub's token counts, and its latency.
    const llm = { task: 'extract', model: 'stub-chat' }
    expect(series(after, 'knowhub_llm_calls_total', llm)).toBe(1)
    expect(series(after, 'knowhub_llm_failures_total', llm)).toBe(0)
    expect(series(after, 'knowhub_llm_prompt_tokens_total', llm)).toBeGreaterThan(0)
    expect(series(after, 'knowhub_llm_completion_tokens_total', llm)).toBeGreaterThan(0)
    expect(series(after, 'knowhub_llm_request_duration_seconds_count', { ...llm, outcome: 'success' })).toBe(1)

    // The pool on a PostgreSQL server (the embedded database has none); the process's memory.
    if (postgres) {
      expect(series(text, 'knowhub_db_pool_max')).toBe(10)
      expect(series(text, 'knowhub_db_pool_connections')).toBeGreaterThanOrEqual(1)
    } else expect(series(text, 'knowhub_db_pool_max')).toBeUndefined()
    expect(series(text, 'knowhub_process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20)
    expect(series(text, 'knowhub_nodejs_heap_size_used_bytes')).toBeGreaterThan(0)

    // Every series the Grafana dashboard (deploy/) queries is one the server exposes.
    const dashboard = readFileSync(new URL('../../deploy/grafana-knowhub.json', import.meta.url), 'utf8')
    const queried = new Set([...dashboard.matchAll(/\bknowhub_[a-z0-9_]+/g)].map((m) => m[0]))
    expect(queried.size).toBeGreaterThan(15)
    for (const name of queried) {
      if (!postgres && name.startsWith('knowhub_db_pool_')) continue
      expect(after, name).toMatch(new RegExp(`^${name}(\\{| )`, 'm'))
    }
  })

  it('answers the hub operator; an org admin and a reader get 403 (hub-wide figures), no token 401 (token mode)', async () => {
    const reader = await t.hub.tokens.create({ user: 'alice', org: 'acme' })
    const orgAdmin = await t.hub.tokens.create({ user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] })
    const admin = await t.hub.tokens.create({ user: 'root', permissions: ['hub:admin'] })
    // A server started now is in token mode from the start.
    const tokenMode = await t.start()
    expect(tokenMode.local).toBe(false)

    const asReader = await client(tokenMode.url, reader.token).get('/metrics')
    expect(asReader.status).toBe(403)
    expect(errorOf(asReader)).toMatchObject({ code: 'forbidden', details: { permission: 'hub:admin' } })
    expect(asReader.text).not.toContain('knowhub_')
    const asOrgAdmin = await client(tokenMode.url, orgAdmin.token).get('/metrics')
    expect(asOrgAdmin.status).toBe(403)
    expect(asOrgAdmin.text).not.toContain('knowhub_')

    const anonymous = await client(tokenMode.url).get('/metrics')
    expect(anonymous.status).toBe(401)
    expect(errorOf(anonymous).code).toBe('unauthenticated')

    const asAdmin = await client(tokenMode.url, admin.token).get('/metrics')
    expect(asAdmin.status).toBe(200)
    // The refused scrapes are counted too, by status (both servers report to the hub's one registry).
    expect(series(asAdmin.text, 'knowhub_http_requests_total', { method: 'GET', route: '/metrics', status: '403' })).toBe(2)
  })
})
