/**
 * `clientBackend`: the agent tools' backend over HTTP, against a real server on
 * embedded PGlite. It answers like `localBackend` on the same hub, and rejects with
 * `KnowHubError`s carrying the server's code and the request id.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientBackend, createClient } from '../../src/client/index.js'
import { createMcpServer } from '../../src/mcp/index.js'
import type { Principal } from '../../src/core/principal.js'
import { localBackend } from '../../src/app/backend.js'
import type { KnowHubBackend } from '../../src/core/backend.js'
import { openTestHub, type TestHub } from '../server/helpers.js'
import { rejection } from '../helpers/errors.js'

let t: TestHub
let remote: KnowHubBackend
let local: KnowHubBackend
let mcp: Client | undefined

beforeAll(async () => {
  t = await openTestHub()
  const principal: Principal = { user: 'alice', agent: 'research_agent', org: 'cybertogether', permissions: ['read', 'write', 'secrets:read'] }
  const { token } = await t.hub.tokens.create(principal)
  const server = await t.start()
  remote = clientBackend(createClient({ baseUrl: server.url, token, retry: { baseDelayMs: 1 } }))
  local = localBackend(t.hub, principal)
})
afterAll(async () => {
  await mcp?.close()
  await t?.close()
})

describe('clientBackend', () => {
  it('every method round-trips and matches the in-process backend', async () => {
    const { resource } = await remote.resources.save({
      id: 'credentials/site_a',
      title: 'Site A account',
      secure_body: 'user / pass',
      content_type: 'credential',
      scopes: ['org:cybertogether'],
    })
    expect(resource).toMatchObject({ id: 'credentials/site_a', has_secret: true })
    expect((await remote.resources.get('credentials/site_a')).secure_body).toBe('user / pass')
    expect(await remote.resources.get('credentials/site_a', { includeSecret: false })).not.toHaveProperty('secure_body')

    const entry = await remote.knowledge.save({
      task: 'Log in to site A',
      content: 'Use the test account; 100 logins a day',
      types: ['tool', 'usecase'],
      scopes: ['org:cybertogether'],
      resource_ids: ['credentials/site_a'],
    })
    expect(await remote.knowledge.get(entry.id)).toEqual(await local.knowledge.get(entry.id))

    // Query values arrive as the tools pass them (strings from a model are fine: the schemas coerce).
    const query = { q: 'log in to site A', top_k: '3', min_score: 1, types: 'tool' }
    const found = await remote.knowledge.search(query)
    expect(found.results[0]?.id).toBe(entry.id)
    expect(found).toEqual(await local.knowledge.search(query))

    expect((await remote.knowledge.feedback(entry.id, { add_helpful_case: { task: 'scrape', outcome: 'worked' } })).eval.helpful).toBe(1)
    expect(await remote.knowledge.batchFeedback({ feedback_list: [{ knowledge_id: entry.id, is_helpful: false, case: { reason: 'limit hit' } }] })).toEqual({
      updated: 1,
      results: [{ knowledge_id: entry.id, ok: true }],
    })
    const page = await remote.knowledge.list({ limit: 5, types: ['usecase'] })
    expect(page).toEqual(await local.knowledge.list({ limit: 5, types: ['usecase'] }))
    expect(page.items[0]?.eval).toMatchObject({ helpful: 1, harmful: 1 })
    expect(await remote.knowledge.slim({ dry_run: true })).toMatchObject({ dry_run: true, merged: 0, groups: [] })
  })

  it('rejects with KnowHubError: the server’s code, details and request id', async () => {
    const missing = await rejection(remote.knowledge.get('knowledge-20990101000000-none'))
    expect(missing.code).toBe('not_found')
    expect(missing.details).toMatchObject({ id: 'knowledge-20990101000000-none', status: 404, request_id: expect.stringMatching(/^req_/) })

    const invalid = await rejection(remote.knowledge.save({ task: 't', content: 'c', types: ['tool'], score: 7 }))
    expect(invalid.code).toBe('validation_error')
    expect(invalid.details?.issues).toEqual([{ path: 'score', message: expect.any(String) }])

    // Bad queries fail before anything is sent, with the same code and path.
    const query = await rejection(remote.knowledge.search({ q: 'x', top_k: 'many' }))
    expect(query).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'top_k', message: expect.any(String) }] } })
    expect((await rejection(remote.resources.get('../etc/passwd'))).code).toBe('validation_error')
  })

  it('network failures become KnowHubErrors that say what happened', async () => {
    const offline = clientBackend(createClient({ baseUrl: 'http://127.0.0.1:9', retry: false }))
    const error = await rejection(offline.knowledge.search({ q: 'x' }))
    expect(error.code).toBe('internal_error')
    expect(error.details).toMatchObject({ client_code: 'network_error' })
    expect(error.message).toContain('GET /api/knowledge/search failed')
  })
})

describe('the MCP server on clientBackend (tools against a remote KnowHub)', () => {
  it('lists the tools, runs them over HTTP, and surfaces server errors as MCP tool errors', async () => {
    const server = createMcpServer({ backend: remote, defaults: { scopes: ['org:cybertogether'], agent_id: 'research_agent' } })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    mcp = new Client({ name: 'knowhub-client-test', version: '1.0.0' })
    await mcp.connect(clientSide)

    const { tools } = await mcp.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['knowledge_search', 'knowledge_save', 'knowledge_update', 'resource_get']))

    const saved = (await mcp.callTool({
      name: 'knowledge_save',
      arguments: { task: 'Rotate API keys', content: 'Create the new key before revoking the old one', types: ['strategy'] },
    })) as CallToolResult
    expect(saved.isError).toBeFalsy()
    const id = /Saved (knowledge-\S+)/.exec(text(saved))?.[1]
    expect(id).toBeDefined()
    // Saved on the server, with the tool defaults, as the token's principal.
    expect(await local.knowledge.get(id!)).toMatchObject({ scopes: ['org:cybertogether'], source: { agent_id: 'research_agent' } })

    const found = (await mcp.callTool({ name: 'knowledge_search', arguments: { query: 'rotate API keys', min_score: 1 } })) as CallToolResult
    expect(text(found)).toContain(id!)

    const missing = (await mcp.callTool({
      name: 'knowledge_update',
      arguments: { knowledge_id: 'knowledge-20990101000000-none', update_score: 4 },
    })) as CallToolResult
    expect(missing.isError).toBe(true)
    expect(text(missing)).toMatch(/^error \[not_found\]: No knowledge entry knowledge-20990101000000-none/)
  })
})

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
}
