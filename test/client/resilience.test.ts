/**
 * Timeouts, retries, Retry-After, network failures and bad responses, against a tiny
 * local node:http server that misbehaves on request (no mocks: real sockets). Every case
 * runs over both requesters: `fetch` (the library's default) and the CLI's `node:http` one.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createClient, isKnowHubClientError, parseRetryAfter, type KnowHubClientError } from '../../src/client/index.js'
import { createClientOver, type ClientOptions } from '../../src/client/client.js'
import { nodeHttpRequest } from '../../src/cli/http-requester.js'

type Plan =
  | { kind: 'respond'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number; status: number; body: unknown }
  | { kind: 'reset' }

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

const HEALTH = { status: 'ok', version: '9.9.9' }
const ERROR_503 = { error: { code: 'embedder_mismatch', message: 'reindex first', details: {} } }

let server: Server
let base: string
const plans: Plan[] = []
const seen: Seen[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      const plan = plans.shift() ?? { kind: 'respond', status: 200, body: HEALTH }
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        const text = typeof payload === 'string' ? payload : JSON.stringify(payload)
        res.writeHead(status, { 'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json', ...headers })
        res.end(text)
      }
      if (plan.kind === 'hang') return
      if (plan.kind === 'reset') return req.socket.destroy()
      if (plan.kind === 'slow') return void setTimeout(() => send(plan.status, plan.body), plan.ms)
      send(plan.status, plan.body ?? '', plan.headers)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})
beforeEach(() => {
  plans.length = 0
  seen.length = 0
})

const fast = { baseDelayMs: 5, maxDelayMs: 20 }

async function failure(promise: Promise<unknown>): Promise<KnowHubClientError> {
  try {
    await promise
  } catch (error) {
    if (isKnowHubClientError(error)) return error
    throw error
  }
  throw new Error('expected the call to fail')
}

const transports: Array<{ name: string; make: (options: ClientOptions) => ReturnType<typeof createClient> }> = [
  { name: 'fetch', make: (options) => createClient(options) },
  { name: 'node:http (the CLI)', make: (options) => createClientOver(nodeHttpRequest, options) },
]

describe.each(transports)('over $name', ({ make }) => {
  describe('timeouts', () => {
    it('a call with no answer fails with code timeout after timeoutMs', async () => {
      plans.push({ kind: 'hang' })
      const kh = make({ baseUrl: base, timeoutMs: 150, retry: false })
      const started = Date.now()
      const error = await failure(kh.healthz())
      expect(error).toMatchObject({ code: 'timeout', status: undefined, details: { timeout_ms: 150 }, attempts: 1 })
      expect(Date.now() - started).toBeLessThan(2000)
    })

    it('a per-call timeout overrides the client’s; a slow answer within it succeeds', async () => {
      plans.push({ kind: 'slow', ms: 300, status: 200, body: HEALTH })
      const kh = make({ baseUrl: base, timeoutMs: 50, retry: false })
      expect(await kh.healthz({ timeoutMs: 10_000 })).toEqual(HEALTH)
    })

    it('a timed-out GET is retried; a timed-out POST is not (it may have been saved)', async () => {
      plans.push({ kind: 'hang' }, { kind: 'respond', status: 200, body: HEALTH })
      // The retry must be answered within the same timeout: 1 s, not 150 ms, on a loaded machine.
      const kh = make({ baseUrl: base, timeoutMs: 1_000, retry: fast })
      expect(await kh.healthz()).toEqual(HEALTH)
      expect(seen).toHaveLength(2)

      seen.length = 0
      plans.push({ kind: 'hang' })
      const error = await failure(kh.knowledge.save({ task: 't', content: 'c', types: ['tool'] }))
      expect(error).toMatchObject({ code: 'timeout', attempts: 1 })
      expect(seen).toHaveLength(1)
    })

    it('the caller’s signal aborts a call, and a backoff wait, with code aborted', async () => {
      plans.push({ kind: 'hang' })
      const kh = make({ baseUrl: base, retry: fast })
      const error = await failure(kh.healthz({ signal: AbortSignal.timeout(100) }))
      expect(error.code).toBe('aborted')

      plans.push({ kind: 'respond', status: 429, body: '', headers: { 'retry-after': '60' } })
      const waiting = make({ baseUrl: base, retry: { ...fast, maxRetryAfterMs: 120_000 } })
      const controller = new AbortController()
      const pending = failure(waiting.healthz({ signal: controller.signal }))
      await new Promise((resolve) => setTimeout(resolve, 100))
      controller.abort()
      expect((await pending).code).toBe('aborted')
    })
  })

  describe('retries', () => {
    it('GET: 503 then 200 succeeds, with the same request id on every attempt', async () => {
      plans.push({ kind: 'respond', status: 503, body: 'upstream down' }, { kind: 'respond', status: 200, body: HEALTH })
      const kh = make({ baseUrl: base, retry: fast })
      expect(await kh.healthz()).toEqual(HEALTH)
      expect(seen).toHaveLength(2)
      expect(seen[0]?.headers['x-request-id']).toMatch(/^req_/)
      expect(seen[1]?.headers['x-request-id']).toBe(seen[0]?.headers['x-request-id'])
    })

    it('502 and 504 are retried too, and a dropped connection; PUT and DELETE by id are retried', async () => {
      const kh = make({ baseUrl: base, retry: { ...fast, retries: 3 } })
      plans.push({ kind: 'respond', status: 502 }, { kind: 'respond', status: 504 }, { kind: 'reset' }, { kind: 'respond', status: 200, body: HEALTH })
      expect(await kh.healthz()).toEqual(HEALTH)
      expect(seen).toHaveLength(4)

      seen.length = 0
      plans.push({ kind: 'respond', status: 503 }, { kind: 'respond', status: 200, body: { id: 'a/b', deleted: true } })
      expect(await kh.resources.delete('a/b')).toEqual({ id: 'a/b', deleted: true })
      expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['DELETE /api/resource/a/b', 'DELETE /api/resource/a/b'])

      seen.length = 0
      plans.push({ kind: 'reset' }, { kind: 'respond', status: 503 })
      const error = await failure(kh.knowledge.update('k1', { update_score: 4 }))
      expect(seen.map((s) => s.method)).toEqual(['PUT', 'PUT', 'PUT'])
      // The third attempt got the default answer (healthz JSON), which is not an entry.
      expect(error.code).toBe('invalid_response')
    })

    it('POST is never retried on 503 or a dropped connection', async () => {
      const kh = make({ baseUrl: base, retry: fast })
      plans.push({ kind: 'respond', status: 503, body: 'busy' })
      const unavailable = await failure(kh.knowledge.save({ task: 't', content: 'c', types: ['tool'] }))
      expect(unavailable).toMatchObject({ code: 'http_error', status: 503, attempts: 1 })
      expect(seen).toHaveLength(1)
      expect(JSON.parse(seen[0]!.body)).toEqual({ task: 't', content: 'c', types: ['tool'] })

      seen.length = 0
      plans.push({ kind: 'reset' })
      expect((await failure(kh.knowledge.batchUpdate({ feedback_list: [{ knowledge_id: 'k1', is_helpful: true }] }))).code).toBe('network_error')
      expect(seen).toHaveLength(1)
    })

    it('feedback that adds a case is not repeated after a dropped connection (it would count twice)', async () => {
      const kh = make({ baseUrl: base, retry: fast })
      plans.push({ kind: 'reset' })
      const error = await failure(kh.knowledge.update('k1', { add_helpful_case: { task: 't', outcome: 'ok' } }))
      expect(error.code).toBe('network_error')
      expect(seen).toHaveLength(1)
    })

    it('gives up after `retries`, reporting the attempts; a non-transient 503 code is not retried', async () => {
      const kh = make({ baseUrl: base, retry: { ...fast, retries: 2 } })
      plans.push({ kind: 'respond', status: 503 }, { kind: 'respond', status: 503 }, { kind: 'respond', status: 503 })
      expect(await failure(kh.healthz())).toMatchObject({ code: 'http_error', status: 503, attempts: 3 })
      expect(seen).toHaveLength(3)

      seen.length = 0
      plans.push({ kind: 'respond', status: 503, body: ERROR_503 })
      expect(await failure(kh.knowledge.search({ q: 'x' }))).toMatchObject({ code: 'embedder_mismatch', status: 503, message: 'reindex first', attempts: 1 })
      expect(seen).toHaveLength(1)
    })

    it('a connection refused is a network_error, retried for GET', async () => {
      const closed = createServer()
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
      const port = (closed.address() as AddressInfo).port
      await new Promise<void>((resolve) => closed.close(() => resolve()))
      const error = await failure(make({ baseUrl: `http://127.0.0.1:${port}`, retry: fast }).healthz())
      expect(error).toMatchObject({ code: 'network_error', attempts: 3 })
      expect(error.message).toContain('ECONNREFUSED')
    })
  })

  describe('429 and Retry-After', () => {
    const limited = (retryAfter: string) => ({
      kind: 'respond' as const,
      status: 429,
      body: { error: { code: 'rate_limited', message: 'Too many requests', details: { retry_after_s: 1 } } },
      headers: { 'retry-after': retryAfter },
    })

    it('waits as long as Retry-After says, then succeeds', async () => {
      plans.push(limited('1'), { kind: 'respond', status: 200, body: HEALTH })
      const kh = make({ baseUrl: base, retry: fast })
      const started = Date.now()
      expect(await kh.healthz()).toEqual(HEALTH)
      expect(Date.now() - started).toBeGreaterThanOrEqual(950)
      expect(seen).toHaveLength(2)
    })

    it('a POST refused with 429 is retried too: the server did nothing with it', async () => {
      const entry = { error: 'not an entry' }
      plans.push(limited('0'), { kind: 'respond', status: 201, body: entry })
      const kh = make({ baseUrl: base, retry: fast })
      expect((await failure(kh.knowledge.save({ task: 't', content: 'c', types: ['tool'] }))).code).toBe('invalid_response')
      expect(seen.map((s) => s.method)).toEqual(['POST', 'POST'])
    })

    it('a Retry-After longer than maxRetryAfterMs fails at once with rate_limited and retryAfterMs', async () => {
      plans.push(limited('120'))
      const kh = make({ baseUrl: base, retry: { ...fast, maxRetryAfterMs: 5000 } })
      const error = await failure(kh.healthz())
      expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 120_000, details: { retry_after_s: 1 } })
      expect(seen).toHaveLength(1)
    })

    it('parses delta-seconds and HTTP dates', () => {
      expect(parseRetryAfter('3')).toBe(3000)
      expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000)
      expect(parseRetryAfter('soon')).toBeUndefined()
      expect(parseRetryAfter(null)).toBeUndefined()
    })
  })

  describe('requests and responses', () => {
    it('sends the bearer token, JSON bodies, encoded queries; honours a base path and extra headers', async () => {
      plans.push({ kind: 'respond', status: 200, body: { results: [], count: 0 } })
      const kh = make({ baseUrl: `${base}/knowhub/`, token: 'kh_secret', headers: { 'x-agent': 'tester' } })
      await kh.knowledge.search({ q: 'selenium & 登录', types: ['tool', 'plan'], top_k: 3, explain: true })
      const request = seen[0]!
      expect(request.headers.authorization).toBe('Bearer kh_secret')
      expect(request.headers['x-agent']).toBe('tester')
      const target = new URL(request.url, base)
      expect(target.pathname).toBe('/knowhub/api/knowledge/search')
      expect(Object.fromEntries(target.searchParams)).toEqual({ q: 'selenium & 登录', types: 'tool,plan', top_k: '3', explain: 'true' })
    })

    it('an injected fetch is used for every call', async () => {
      const urls: string[] = []
      const kh = createClient({ baseUrl: base, fetch: (url, init) => (urls.push(url), fetch(url, init)) })
      await kh.healthz()
      expect(urls).toEqual([`${base}/healthz`])
    })

    it('a body that is not JSON, or not the API’s shape, is invalid_response', async () => {
      const kh = make({ baseUrl: base, retry: false })
      plans.push({ kind: 'respond', status: 200, body: '<html>proxy</html>' })
      expect(await failure(kh.healthz())).toMatchObject({ code: 'invalid_response', status: 200 })
      plans.push({ kind: 'respond', status: 200, body: { results: 'nope', count: 1 } })
      const error = await failure(kh.knowledge.search({ q: 'x' }))
      expect(error.code).toBe('invalid_response')
      expect(error.issues[0]?.path).toBe('results')
      // Validation can be turned off (e.g. against a newer server).
      plans.push({ kind: 'respond', status: 200, body: { results: 'nope', count: 1 } })
      expect(await make({ baseUrl: base, validateResponses: false }).knowledge.search({ q: 'x' })).toEqual({ results: 'nope', count: 1 })
    })

    it('an error body with an unknown code keeps it as serverCode; a bare status maps to its code', async () => {
      const kh = make({ baseUrl: base, retry: false })
      plans.push({ kind: 'respond', status: 418, body: { error: { code: 'teapot', message: 'short and stout', details: { spout: true } } } })
      expect(await failure(kh.healthz())).toMatchObject({
        code: 'http_error',
        serverCode: 'teapot',
        message: 'short and stout',
        details: { spout: true },
        status: 418,
      })
      plans.push({ kind: 'respond', status: 404, body: 'Not Found' })
      expect(await failure(kh.healthz())).toMatchObject({ code: 'not_found', status: 404 })
    })
    it('sends a non-ASCII JSON body whole and reads a bytes response', async () => {
      const kh = make({ baseUrl: base, retry: false })
      plans.push({ kind: 'respond', status: 400, body: { error: { code: 'validation_error', message: 'bad', details: {} } } })
      await failure(kh.knowledge.save({ task: '登录 über', content: 'c', types: ['tool'] }))
      expect(JSON.parse(seen[0]!.body)).toEqual({ task: '登录 über', content: 'c', types: ['tool'] })
      plans.push({ kind: 'respond', status: 200, body: 'KHB\u0001' })
      expect(Array.from(await kh.admin.backup())).toEqual([75, 72, 66, 1])
    })
  })
})
