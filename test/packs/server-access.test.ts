/**
 * Server-side packs are scoped by principal (`packs.access`) and shown to remote callers by
 * pack-relative paths (#15.8): over real HTTP, with two tokens in different orgs, the acme
 * token sees the acme pack root and the beta token does not — absent from its catalog and
 * tools, and `not_found` by name exactly like a pack that does not exist (no 403 that would
 * confirm it exists) — and no response body, for either, holds the server's absolute paths.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { createDashboard } from '../../src/server/dashboard/index.js'
import { startServer, type RunningServer } from '../../src/server/serve.js'
import { toolDefaults } from '../../src/cli/tool-options.js'
import { knowledge, tempDir, writeTree } from './helpers.js'

let root: string
let cleanup: () => Promise<void>
let hub: KnowHub
let server: RunningServer
let acme: string
let beta: string
const bodies: string[] = []

const cookies = new Map<string, string>()

/** The dashboard session of a token (signed in once; the cookie holds a session id). */
async function sessionOf(token: string): Promise<string> {
  let cookie = cookies.get(token)
  if (cookie === undefined) {
    const signed = await fetch(`${server.url}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
    cookie = (signed.headers.get('set-cookie') ?? '').split(';')[0]!
    cookies.set(token, cookie)
  }
  return cookie
}

// Response bodies are checked field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ui(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const cookie = await sessionOf(token)
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json', 'x-csrf-token': await csrf(token) }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  bodies.push(text)
  return { status: response.status, body: JSON.parse(text) }
}

async function csrf(token: string): Promise<string> {
  const me = await fetch(`${server.url}/ui/me`, { headers: { cookie: await sessionOf(token) } })
  return ((await me.json()) as { csrf: string }).csrf
}

async function mcp<T>(token: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'pack-access-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  try {
    const result = await run(client)
    bodies.push(JSON.stringify(result))
    return result
  } finally {
    await client.close()
  }
}

beforeAll(async () => {
  ;({ dir: root, cleanup } = await tempDir('knowhub-pack-access-'))
  const acmeRoot = join(root, 'acme-packs')
  const sharedRoot = join(root, 'shared-packs')
  await writeTree(join(acmeRoot, 'acme-brief'), {
    'KNOWLEDGE.md': knowledge({ name: 'acme-brief', description: 'Acme pricing brief: the Team plan price.' }, '# Acme brief\n\nRead documents/pricing.md.\n'),
    'documents/pricing.md': '# Pricing\n\nThe Team plan of Acme costs 42 euros per seat.\n',
  })
  await writeTree(join(sharedRoot, 'shared-notes'), {
    'KNOWLEDGE.md': knowledge(
      { name: 'shared-notes', description: 'Shared notes: how deployments are rolled back.' },
      '# Notes\n\nSee documents/rollback.md.\n',
    ),
    'documents/rollback.md': '# Rollback\n\nRoll back a deployment with the previous image tag.\n',
  })
  const project = join(root, 'project')
  mkdirSync(project)
  await writeTree(join(root, 'agents'), { 'crawler/knowledge.md': '# Crawler\n\nLog in first.\n' })
  hub = await openKnowHub(
    {
      dataDir: join(root, 'data'),
      embedder: { provider: 'hashed' },
      secrets: { key: Buffer.alloc(32, 7).toString('base64') },
      server: { port: 0, rateLimit: 0 },
      agent: { home: join(root, 'agents') },
      packs: { paths: [acmeRoot, sharedRoot], access: [{ root: acmeRoot, allow: ['org:acme'] }] },
    },
    { packs: { project, user: false } },
  )
  acme = (await hub.tokens.create({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })).token
  beta = (await hub.tokens.create({ user: 'bob', org: 'beta', permissions: ['read', 'write'] })).token
  await hub.packs.discover()
  server = await startServer({
    hub,
    host: '127.0.0.1',
    port: 0,
    mcp: { packService: hub.packs, defaults: toolDefaults(hub.config.tools) },
    dashboard: (api) => createDashboard({ hub, apiAuthenticate: api.authenticate, latency: api.latency, packs: hub.packs }),
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await hub?.close()
  await cleanup?.()
})

describe('server packs by principal (packs.access)', () => {
  it('the dashboard catalog lists the acme root only to the acme token', async () => {
    const seen = await ui(acme, 'GET', '/ui/packs')
    expect(seen.status).toBe(200)
    expect(seen.body.catalog.items.map((i: { name: string }) => i.name).sort()).toEqual(['acme-brief', 'shared-notes'])
    expect(seen.body.catalog.xml).toContain('<location>packs/acme-brief/KNOWLEDGE.md</location>')
    const other = await ui(beta, 'GET', '/ui/packs')
    expect(other.body.catalog.items.map((i: { name: string }) => i.name)).toEqual(['shared-notes'])
    expect(JSON.stringify(other.body)).not.toContain('acme-brief')
  })

  it('by name the hidden pack is not_found, word for word like a pack that does not exist', async () => {
    const shown = await ui(acme, 'GET', '/ui/packs/acme-brief')
    expect(shown.status).toBe(200)
    expect(shown.body.item).toMatchObject({ location: 'packs/acme-brief/KNOWLEDGE.md', packRoot: 'packs/acme-brief' })
    const hidden = await ui(beta, 'GET', '/ui/packs/acme-brief')
    const unknown = await ui(beta, 'GET', '/ui/packs/no-such-pack')
    expect(hidden.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(hidden.body.error.code).toBe('not_found')
    expect(hidden.body.error.message.replace('acme-brief', 'X')).toBe(unknown.body.error.message.replace('no-such-pack', 'X'))
    expect((await ui(beta, 'POST', '/ui/packs/acme-brief/activate', {})).status).toBe(404)
    expect((await ui(beta, 'POST', '/ui/packs/resolve', { task: 'What does the Team plan cost?', packs: ['acme-brief'] })).status).toBe(404)
    const resolved = await ui(beta, 'POST', '/ui/packs/resolve', { task: 'What does the Acme Team plan cost per seat?' })
    expect(JSON.stringify(resolved.body)).not.toContain('42 euros')
    const own = await ui(acme, 'POST', '/ui/packs/resolve', { task: 'What does the Team plan cost?', packs: ['acme-brief'] })
    expect(own.status).toBe(200)
    expect(JSON.stringify(own.body)).toContain('42 euros')
  })

  it('at /mcp the pack tools and resources offer the hidden pack only to the acme token', async () => {
    const listed = await mcp(beta, (c) => c.callTool({ name: 'knowledge_pack_list', arguments: {} }))
    expect(JSON.stringify(listed)).toContain('shared-notes')
    expect(JSON.stringify(listed)).not.toContain('acme-brief')
    const tools = await mcp(beta, (c) => c.listTools())
    expect(JSON.stringify(tools)).not.toContain('acme-brief')
    const resources = await mcp(beta, (c) => c.listResources())
    expect(resources.resources.map((r) => r.uri).some((u) => u.includes('acme-brief'))).toBe(false)
    const read = await mcp(beta, (c) => c.readResource({ uri: 'knowhub-pack://acme-brief/documents/pricing.md' }).catch((e: Error) => ({ error: e.message })))
    expect(JSON.stringify(read)).not.toContain('42 euros')
    expect(JSON.stringify(read)).toMatch(/not_found|No knowledge pack|not found/i)
    const activated = await mcp(acme, (c) => c.callTool({ name: 'knowledge_pack_activate', arguments: { name: 'acme-brief' } }))
    expect(activated.structuredContent).toMatchObject({ location: 'packs/acme-brief/KNOWLEDGE.md', pack_root: 'packs/acme-brief' })
    const file = await mcp(acme, (c) => c.readResource({ uri: 'knowhub-pack://acme-brief/documents/pricing.md' }))
    expect(JSON.stringify(file)).toContain('42 euros')
    const resolved = await mcp(acme, (c) =>
      c.callTool({ name: 'knowledge_pack_resolve', arguments: { task: 'What does the Team plan cost?', packs: ['acme-brief'] } }),
    )
    expect(JSON.stringify(resolved)).toContain('42 euros')
  })

  it('an agent context over HTTP carries the catalog of the packs its caller may see, by pack-relative paths', async () => {
    const context = async (token: string) => {
      // The agent is stored in the caller's org first: a server reads no agent folder for a caller.
      const stored = await fetch(`${server.url}/api/agents/crawler/documents/knowledge.md`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: '# Crawler' }),
      })
      expect(stored.status).toBeLessThan(300)
      const response = await fetch(`${server.url}/api/agent/context`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'crawler', budget: 8000 }),
      })
      expect(response.status).toBe(200)
      return JSON.stringify(((await response.json()) as { messages: unknown }).messages)
    }
    const own = await context(acme)
    expect(own).toContain('packs/acme-brief/KNOWLEDGE.md')
    const other = await context(beta)
    expect(other).toContain('packs/shared-notes/KNOWLEDGE.md')
    expect(other).not.toContain('acme-brief')
    for (const text of [own, other]) for (const folder of ['acme-packs', 'shared-packs']) expect(text).not.toContain(join(root, folder))
  })

  it('no response body to a remote caller holds the server’s absolute paths; the local service keeps them', async () => {
    expect(bodies.length).toBeGreaterThan(10)
    for (const token of [acme, beta]) await ui(token, 'GET', '/ui/packs')
    for (const body of bodies) expect(body).not.toContain(root)
    // The doctor part of the packs page names locations by scope and folder name, each once.
    const page = await ui(acme, 'GET', '/ui/packs')
    const shown = page.body.doctor.locations.map((l: { path: string }) => l.path) as string[]
    expect(shown).toContain('extra/acme-packs')
    expect(shown).toContain('project/.agents/knowledge')
    expect(new Set(shown).size).toBe(shown.length)
    // Local callers (the CLI) still see where the packs are.
    expect((await hub.packs.show('acme-brief')).item.location).toBe(join(root, 'acme-packs', 'acme-brief', 'KNOWLEDGE.md'))
  })
})
