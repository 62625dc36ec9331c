/**
 * MCP over streamable HTTP at `/mcp` on a real started server (port 0), with the
 * official client (StreamableHTTPClientTransport): same auth as the API (bearer
 * tokens; the local principal in local mode), every knowledge tool, tool errors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/server/serve.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

let t: TestHub
let server: RunningServer
let alice: string
let bob: string
const clients: Client[] = []

async function connect(token: string | undefined, base = server.url): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {})
  const client = new Client({ name: 'knowhub-http-test', version: '1.0.0' })
  await client.connect(transport)
  clients.push(client)
  return client
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('')
}

beforeAll(async () => {
  t = await openTestHub()
  alice = (await t.hub.tokens.create({ user: 'alice', agent: 'helper', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })).token
  bob = (await t.hub.tokens.create({ user: 'bob', permissions: ['read', 'write'] })).token
  server = await t.start()
})

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  await t.close()
})

describe('/mcp (streamable HTTP, token mode)', () => {
  it('refuses a request without a valid token, like the API', async () => {
    await expect(connect(undefined)).rejects.toThrow(/401|unauthenticated|token/i)
    await expect(connect('kh_not-a-real-token')).rejects.toThrow(/401|unauthenticated|token/i)
    const get = await fetch(new URL('/mcp', server.url), { headers: { authorization: `Bearer ${alice}` } })
    expect(get.status).toBe(405)
  })

  it('lists the knowledge tools and the goal tool (no pack tools: the server was given no packs) and calls each as the token principal', async () => {
    const client = await connect(alice)
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
    expect(client.getServerVersion()).toMatchObject({ name: 'knowhub', version: pkg.version })
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual([
      'knowledge_search',
      'knowledge_save',
      'knowledge_update',
      'knowledge_batch_update',
      'knowledge_list',
      'knowledge_slim',
      'knowledge_extract',
      'resource_save',
      'resource_get',
      'user_profile',
      'get_knowledge',
      'save_knowledge',
      'goal',
      'agent_compact',
    ])

    const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult
      expect(result.isError, `${name}: ${text(result)}`).toBeFalsy()
      return result
    }
    await call('resource_save', {
      id: 'credentials/site_a',
      title: 'Site A account',
      body: 'daily limit 100',
      secure_body: 'alice / hunter2',
      content_type: 'credential',
      scopes: ['org:acme'],
    })
    const saved = (
      await call('knowledge_save', {
        task: 'Log in to site A',
        content: 'Use the shared test account; respect the daily limit',
        types: ['tool', 'usecase'],
        scopes: ['org:acme'],
        resource_ids: ['credentials/site_a'],
      })
    ).structuredContent as { id: string; owner: string }
    // Seed 003's default owner: the agent the token is (alice's token acts as agent helper).
    expect(saved.owner).toBe('agent:helper')
    await call('knowledge_save', {
      task: 'Log in to site A',
      content: 'Use the shared test account; respect the daily limit',
      types: ['tool', 'usecase'],
      scopes: ['org:acme'],
    })

    expect(text(await call('knowledge_search', { query: 'site A login account' }))).toContain(`<knowledge_entry id="${saved.id}"`)
    expect(text(await call('knowledge_update', { knowledge_id: saved.id, add_harmful_case: { task: 't', outcome: 'blocked', reason: 'limit' } }))).toContain(
      'harmful 1',
    )
    expect(text(await call('knowledge_batch_update', { feedback_list: [{ knowledge_id: saved.id, is_helpful: true }] }))).toContain(
      'Recorded feedback on 1 of 1 entry.',
    )
    expect((await call('knowledge_list', {})).structuredContent).toMatchObject({ count: 2 })
    expect((await call('knowledge_slim', { dry_run: true })).structuredContent).toMatchObject({ dry_run: true, groups: [{ kept_id: null }] })
    expect(text(await call('resource_get', { id: 'credentials/site_a', include_secret: true }))).toContain('alice / hunter2')
  })

  it("enforces the caller's visibility and permissions, errors as isError with the server message", async () => {
    const client = await connect(bob)
    const listed = (await client.callTool({ name: 'knowledge_list', arguments: {} })) as CallToolResult
    expect(listed.structuredContent).toMatchObject({ count: 0 })
    const hidden = (await client.callTool({ name: 'resource_get', arguments: { id: 'credentials/site_a' } })) as CallToolResult
    expect(hidden.isError).toBe(true)
    expect(text(hidden)).toBe('error [not_found]: No resource credentials/site_a')
    const forbidden = (await client.callTool({
      name: 'knowledge_save',
      arguments: { task: 't', content: 'c', types: ['plan'], scopes: ['org:acme'] },
    })) as CallToolResult
    expect(forbidden.isError).toBe(true)
    expect(text(forbidden)).toMatch(/^error \[forbidden\]: You cannot write to scope org:acme/)
  })
})

describe('/mcp (local mode)', () => {
  it('acts as the configured local principal without a token', async () => {
    const local = await openTestHub({ principal: { user: 'me', permissions: ['read', 'write'] } })
    try {
      const running = await local.start()
      expect(running.local).toBe(true)
      const client = await connect(undefined, running.url)
      const saved = (await client.callTool({
        name: 'knowledge_save',
        arguments: { task: 'local task', content: 'local content', types: ['plan'] },
      })) as CallToolResult
      expect(saved.structuredContent).toMatchObject({ owner: 'user:me', scopes: ['user:me'] })
      await client.close()
    } finally {
      await local.close()
    }
  })
})

describe('/mcp with knowledge packs (as `knowhub start` serves it)', () => {
  it('offers the pack tools with the catalog, and the pack guides as resources', async () => {
    const { discoverPacks } = await import('../../src/packs/discover/discover.js')
    const fixtures = new URL('../fixtures/packs/scopes/project', import.meta.url).pathname
    const packs = (await discoverPacks({ projectDir: fixtures })).packs
    expect(packs.length).toBeGreaterThan(0)
    const local = await openTestHub({ principal: { user: 'me', permissions: ['read', 'write'] } })
    try {
      const running = await local.start({ mcp: { packs } })
      const client = await connect(undefined, running.url)
      const tools = (await client.listTools()).tools
      const activate = tools.find((tool) => tool.name === 'knowledge_pack_activate')
      expect(activate?.description).toContain('<available_knowledge_packs>')
      expect(activate?.description).toContain('acme-product-brief')
      const guide = (await client.callTool({ name: 'knowledge_pack_activate', arguments: { name: 'acme-product-brief' } })) as CallToolResult
      expect(guide.isError).toBeFalsy()
      expect(text(guide)).toContain('<knowledge_pack_guide')
      const resources = (await client.listResources()).resources.map((r) => r.uri)
      expect(resources).toContain('knowhub-pack://acme-product-brief/KNOWLEDGE.md')
      await client.close()
    } finally {
      await local.close()
    }
  })
})
