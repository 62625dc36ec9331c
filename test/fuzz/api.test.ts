/**
 * Fuzzing every write and read endpoint and every agent tool (#15.4), seeded and bounded:
 * fast-check generates near-valid and arbitrary JSON (deep nesting, NUL, lone surrogates,
 * huge numbers, wrong types) for each endpoint of the API over real HTTP and each MCP tool.
 * The rules: no 5xx, every response is JSON in the one error shape or a result; no tool
 * answers an internal error; and afterwards every stored entry and resource reads back —
 * through its owner and through a second client of the same org — as JSON any parser takes.
 *
 * Replay a run with KNOWHUB_FUZZ_SEED=<seed> (printed at the start); KNOWHUB_FUZZ_RUNS sets
 * the number of generated request sequences (default 250, about 1,000 requests).
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, openTestHub, type ApiResponse, type Client, type TestHub } from '../server/helpers.js'

// The process environment is read here only to replay a run.
const env = process.env
const SEED = Number(env.KNOWHUB_FUZZ_SEED ?? 20261123)
const RUNS = Number(env.KNOWHUB_FUZZ_RUNS ?? 250)

let t: TestHub
let url: string
let alice: Client
let bob: Client
let aliceToken: string
const ids: string[] = []

/** Any JSON value, deep and with hostile text. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '<script>alert(1)</script>', '../../etc/passwd', '💥'.repeat(50), ''),
)
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 6 }) },
  { weight: 1, arbitrary: hostileText },
  // Deep nesting travels as a marker, spelled out only in the request text (no deep value lives in this process).
  { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.constantFrom(4_000, 12_000)).map((depth) => `__DEEP_${depth}__`) },
  { weight: 1, arbitrary: fc.constantFrom(1e308, -1, 0, 2 ** 53 + 1, true, null, [], {}) },
)
/** Text as agents send it — any Unicode — and now and then with a NUL or a lone surrogate inside. */
const text = (minLength: number, maxLength: number) =>
  fc.oneof(
    { weight: 15, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.string({ maxLength }), fc.constantFrom('\u0000', '\ud800', '\udfff'), fc.string({ maxLength })).map((parts) => parts.join('')),
    },
  )
/** A field value: usually plausible, sometimes anything. */
const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: anyJson })
const types = fc.subarray(['tool', 'strategy', 'plan', 'usecase', 'definition', 'user_profile'], { minLength: 1 })
const scopes = fc.constantFrom(['org:acme'], ['user:alice'], ['public'], ['org:other'], ['project:x', 'org:acme'])

const entryBody = fc.record(
  {
    task: field(text(1, 80)),
    content: field(text(1, 200)),
    types: field(types),
    tags: field(fc.dictionary(text(1, 10), fc.array(text(0, 10), { maxLength: 3 }), { maxKeys: 3 })),
    scopes: field(scopes),
    score: field(fc.integer({ min: 1, max: 5 })),
    source: field(fc.record({ agent_id: fc.string({ maxLength: 10 }) })),
  },
  { requiredKeys: ['task', 'content', 'types'] },
)
const feedbackBody = fc.record(
  {
    add_helpful_case: field(fc.dictionary(text(0, 8), text(0, 20), { maxKeys: 3 })),
    add_harmful_case: field(fc.dictionary(text(0, 8), text(0, 20), { maxKeys: 3 })),
    update_score: field(fc.integer({ min: 1, max: 5 })),
  },
  { requiredKeys: [] },
)
const resourceBody = fc.record(
  {
    id: field(fc.stringMatching(/^[a-z][a-z0-9/-]{0,20}$/)),
    title: field(text(1, 30)),
    body: field(text(0, 100)),
    secure_body: field(text(1, 30)),
    metadata: field(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 })),
    scopes: field(scopes),
  },
  { requiredKeys: ['id', 'title'] },
)
const query = fc.dictionary(
  fc.constantFrom('q', 'top_k', 'types', 'scopes', 'min_score', 'explain', 'limit', 'cursor', 'mode', 'x'),
  fc.string({ unit: 'binary', maxLength: 20 }),
  {
    maxKeys: 4,
  },
)
const someId = fc.oneof(fc.constantFrom('KNOWN'), fc.string({ unit: 'binary', maxLength: 30 }))

type Op = { method: string; path: string; body?: unknown }
const op: fc.Arbitrary<Op> = fc.oneof(
  entryBody.map((body) => ({ method: 'POST', path: '/api/knowledge', body })),
  entryBody.map((body) => ({ method: 'POST', path: '/api/knowledge', body })),
  fc.tuple(someId, feedbackBody).map(([id, body]) => ({ method: 'PUT', path: `/api/knowledge/{${id}}`, body })),
  fc.tuple(someId, fc.oneof(entryBody, anyJson)).map(([id, body]) => ({ method: 'PATCH', path: `/api/knowledge/{${id}}`, body })),
  fc
    .array(fc.record({ knowledge_id: field(fc.constant('KNOWN')), is_helpful: field(fc.boolean()), case: field(fc.object({ maxDepth: 2 })) }), { maxLength: 3 })
    .map((list) => ({ method: 'POST', path: '/api/knowledge/batch_update', body: { feedback_list: list } })),
  query.map((q) => ({ method: 'GET', path: `/api/knowledge/search?${new URLSearchParams(q).toString()}` })),
  query.map((q) => ({ method: 'GET', path: `/api/knowledge?${new URLSearchParams(q).toString()}` })),
  someId.map((id) => ({ method: 'GET', path: `/api/knowledge/{${id}}` })),
  fc.oneof(fc.constant({ dry_run: true }), anyJson).map((body) => ({ method: 'POST', path: '/api/knowledge/slim', body })),
  resourceBody.map((body) => ({ method: 'POST', path: '/api/resource', body })),
  fc
    .tuple(fc.string({ maxLength: 20 }), fc.oneof(resourceBody, anyJson))
    .map(([id, body]) => ({ method: 'PUT', path: `/api/resource/${encodeURIComponent(id)}`, body })),
  fc.string({ unit: 'binary', maxLength: 30 }).map((id) => ({ method: 'GET', path: `/api/resource/${encodeURIComponent(id)}` })),
  anyJson.map((body) => ({ method: 'POST', path: '/api/knowledge', body })),
)

/** The request text of a payload: deep-nesting markers spelled out as `{"a":{"a":…1}}` (at most `maxDepth` deep). */
function requestText(payload: unknown, maxDepth = Infinity): string {
  return (JSON.stringify(payload) ?? 'null').replace(/"__DEEP_(\d+)__"/g, (_, depth: string) => {
    const n = Math.min(Number(depth), maxDepth)
    return '{"a":'.repeat(n) + '1' + '}'.repeat(n)
  })
}

/** `{id}` placeholders become a known entry id (KNOWN) or the generated text, URL-encoded. */
function concrete(path: string, pick: number): string {
  return path.replace(/\{([^}]*)\}/g, (_, id: string) => (id === 'KNOWN' && ids.length > 0 ? ids[pick % ids.length]! : encodeURIComponent(id)))
}

function withKnownIds(value: unknown, pick: number): unknown {
  if (value === 'KNOWN') return ids.length > 0 ? ids[pick % ids.length] : 'knowledge-20260101000000-zzzz'
  if (Array.isArray(value)) return value.map((v) => withKnownIds(v, pick))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withKnownIds(v, pick)]))
  return value
}

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (replay: KNOWHUB_FUZZ_SEED=${SEED}), ${RUNS} runs`)
  t = await openTestHub({ embedder: { provider: 'hashed' } })
  aliceToken = (await t.hub.tokens.create({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })).token
  const bobToken = (await t.hub.tokens.create({ user: 'bob', org: 'acme', permissions: ['read'] })).token
  url = (await t.start()).url
  alice = client(url, aliceToken)
  bob = client(url, bobToken)
  const seeded = await alice.post('/api/knowledge', { task: 'Rotate logs', content: 'copytruncate', types: ['tool'], scopes: ['org:acme'] })
  expect(seeded.status, seeded.text).toBe(201)
  ids.push(seeded.body.id)
})

afterAll(async () => {
  await t.close()
})

describe('fuzzing the API and the tools', () => {
  it('never answers 5xx, always answers JSON, on every endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(op, fc.nat()), { minLength: 1, maxLength: 5 }), async (ops) => {
        for (const [{ method, path, body }, pick] of ops) {
          const target = concrete(path, pick)
          const payload = body === undefined ? undefined : requestText(withKnownIds(body, pick))
          const call =
            method === 'GET'
              ? alice.get(target)
              : method === 'POST'
                ? alice.post(target, payload)
                : method === 'PUT'
                  ? alice.put(target, payload)
                  : alice.patch(target, payload)
          const response = await call
          expect(response.status, `${method} ${target} ${payload?.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBeLessThan(500)
          expect(() => JSON.parse(response.text), `${method} ${target} answered non-JSON`).not.toThrow()
          if (method === 'POST' && target === '/api/knowledge' && response.status === 201) ids.push(response.body.id)
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  }, 600_000)

  it('never answers an internal error from a tool', async () => {
    const mcp = new McpClient({ name: 'knowhub-fuzz', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${aliceToken}` } } }))
    try {
      const tools = (await mcp.listTools()).tools.map((tool) => tool.name)
      expect(tools.length).toBeGreaterThan(5)
      const args = fc.oneof(entryBody, feedbackBody, resourceBody, fc.dictionary(fc.string({ maxLength: 12 }), anyJson, { maxKeys: 4 }))
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...tools), args, fc.nat(), async (name, raw, pick) => {
          // The MCP client serialises arguments itself: nesting stays within what it can write.
          const input = JSON.parse(requestText(withKnownIds(raw, pick), 1_000)) as unknown
          const result = (await mcp.callTool({
            name,
            arguments: (input && typeof input === 'object' && !Array.isArray(input) ? input : { value: input }) as Record<string, unknown>,
          })) as CallToolResult
          const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
          expect(text, `${name} ${JSON.stringify(input).slice(0, 300)}`).not.toMatch(/internal_error|database_error/)
        }),
        { seed: SEED, numRuns: Math.ceil(RUNS * 1.5), endOnFailure: true },
      )
    } finally {
      await mcp.close()
    }
  }, 600_000)

  it('leaves nothing stored that its owner or another client of the org cannot read back', async () => {
    // The generators reach the store: many generated saves were valid.
    expect(ids.length).toBeGreaterThan(20)
    for (const reader of [alice, bob]) {
      let cursor: string | null = null
      let pages = 0
      do {
        const page: ApiResponse = await reader.get(`/api/knowledge?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        expect(page.status, page.text).toBe(200)
        for (const item of page.body.items as { id: string }[]) {
          const one = await reader.get(`/api/knowledge/${item.id}`)
          expect(one.status, one.text).toBe(200)
          expect(() => JSON.parse(one.text)).not.toThrow()
        }
        cursor = page.body.next_cursor
        pages++
      } while (cursor && pages < 100)
      const resources = await reader.get('/api/resource?limit=100')
      expect(resources.status, resources.text).toBe(200)
      for (const item of resources.body.items as { id: string; owner: string }[]) {
        const one = await reader.get(`/api/resource/${item.id.split('/').map(encodeURIComponent).join('/')}?owner=${encodeURIComponent(item.owner)}`)
        expect(one.status, one.text).toBe(200)
      }
    }
  })
})
