/**
 * Agent memory belongs to its principal (issue #27), on the real server over HTTP, once per
 * backend (PGlite and the PostgreSQL projects): a stored agent lives in its writer's org with
 * scopes; another org's agent answers exactly like an unknown one; read-only tokens cannot
 * write; the server never reads its own agent home (a folder there whose knowledge.md links to
 * /etc/passwd, by symbolic and by hard link, stays unread), never creates a folder for a read,
 * and never shows a path of its own; compaction works over HTTP for stored agents and for a
 * memory the caller keeps. Attempts and leaks are counted and printed.
 */
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/server/serve.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { client, errorOf, openTestHub, type ApiResponse, type Client, type TestHub } from './helpers.js'

const KNOWLEDGE = '# Book agent\n\n## @outline: plan a chapter\nContract: list the sections first.\n'
const history = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} `.repeat(60) }))

let t: TestHub
let server: RunningServer
let stub: OpenAIStub
let dir: string
let serverHome: string
const tokens: Record<string, Client> = {}
const raw: Record<string, string> = {}
/** Every response body a remote caller got: scanned for server paths and /etc/passwd at the end. */
const seen: string[] = []
const counts = { attempts: 0, leaks: 0 }

async function recorded(response: Promise<ApiResponse>): Promise<ApiResponse> {
  const r = await response
  seen.push(r.text)
  return r
}

/** A cross-tenant or forbidden attempt: counted; a leak when it answers anything but the expected refusal. */
async function attempt(response: Promise<ApiResponse>, status: number, code: string): Promise<ApiResponse> {
  const r = await recorded(response)
  counts.attempts++
  if (r.status !== status || errorOf(r).code !== code) counts.leaks++
  return r
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-agent-memory-'))
  // The server's own agent home: an agent "x" whose files link out of it.
  serverHome = join(dir, 'server-agents')
  mkdirSync(join(serverHome, 'x'), { recursive: true })
  symlinkSync('/etc/passwd', join(serverHome, 'x', 'knowledge.md'))
  writeFileSync(join(dir, 'outside.txt'), 'root:x:0:0:outside the agent folder')
  mkdirSync(join(serverHome, 'y'), { recursive: true })
  linkSync(join(dir, 'outside.txt'), join(serverHome, 'y', 'knowledge.md'))
  symlinkSync(dir, join(serverHome, 'z'))
  stub = await startOpenAIStub({
    chat: (request) => {
      const system = String(request.messages[0]?.content)
      if (system.includes('compact memory')) return '## Decisions\n- Chapter 3 first.'
      return JSON.stringify({ entries: [] })
    },
  })
  t = await openTestHub({
    embedder: { provider: 'hashed', dimension: 64 },
    agent: { home: serverHome },
    llm: { url: stub.url, model: 'stub-model', retries: 0 },
  })
  server = await t.start()
  const make = async (name: string, input: Record<string, unknown>) => {
    const { token } = await t.hub.tokens.create(input)
    raw[name] = token
    tokens[name] = client(server.url, token)
  }
  await make('annWriter', { user: 'ann', org: 'acme', permissions: ['read', 'write'] })
  await make('bookAgent', { agent: 'book', org: 'acme', permissions: ['read', 'write'] })
  await make('acmeReader', { user: 'rob', org: 'acme', permissions: ['read'] })
  await make('acmeAdmin', { user: 'boss', org: 'acme', permissions: ['read', 'write', 'admin'] })
  await make('otherAdmin', { user: 'eve', org: 'other', permissions: ['read', 'write', 'secrets:read', 'admin'] })
  // Another org's token that even carries the same agent id.
  await make('otherBook', { agent: 'book', org: 'other', permissions: ['read', 'write'] })
})

afterAll(async () => {
  console.log(`agent memory isolation: ${counts.attempts} attempts, ${counts.leaks} leaks`)
  await t?.close()
  await stub?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('stored agents over HTTP', () => {
  it('the server never reads its agent home for a caller: linked files there are never read, no folder is created, no path is shown', async () => {
    const before = readdirSync(serverHome).sort()
    for (const agent of ['x', 'y', 'z', 'fresh']) {
      for (const who of ['acmeReader', 'otherAdmin', 'bookAgent'] as const) {
        const r = await attempt(tokens[who]!.post('/api/agent/context', { agent, task: 'anything' }), 404, 'not_found')
        expect(r.text).not.toContain('root:')
      }
    }
    // 50 reads from a read-only token create nothing anywhere.
    for (let i = 0; i < 50; i++) await attempt(tokens.acmeReader!.post('/api/agent/context', { agent: `ghost${i}` }), 404, 'not_found')
    expect(readdirSync(serverHome).sort()).toEqual(before)
    expect(readdirSync(join(serverHome, 'x'))).toEqual(['knowledge.md'])
    expect(readdirSync(dir).sort()).toEqual(['outside.txt', 'server-agents'])
  })

  it('a stored agent: versioned documents with owner and scopes; the context comes from them', async () => {
    const ann = tokens.annWriter!
    const put = await recorded(ann.put('/api/agents/book/documents/knowledge.md', { content: KNOWLEDGE, scopes: ['agent:book', 'org:acme'] }))
    expect(put.status, put.text).toBe(201)
    expect(put.body).toMatchObject({ agent: 'book', name: 'knowledge.md', version: 1, owner: 'user:ann', scopes: ['agent:book', 'org:acme'] })
    const again = await recorded(
      ann.put('/api/agents/book/documents/knowledge.md', { content: `${KNOWLEDGE}\n## @review: read it again\n`, expected_version: 1 }),
    )
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ version: 2, scopes: ['agent:book', 'org:acme'], owner: 'user:ann' })
    const stale = await recorded(ann.put('/api/agents/book/documents/knowledge.md', { content: 'lost update', expected_version: 1 }))
    expect(stale.status).toBe(409)
    expect(errorOf(stale).code).toBe('conflict')
    // The agent itself (its own token) keeps its memory, scoped to the agent only.
    const memory = await recorded(tokens.bookAgent!.put('/api/agents/book/documents/compact.md', { content: 'Earlier: chapter 2 is done.' }))
    expect(memory.body).toMatchObject({ version: 1, owner: 'agent:book', scopes: ['agent:book'] })
    await recorded(tokens.bookAgent!.put('/api/agents/book/documents/skills/style.md', { content: '## @style: short sentences\n' }))

    const versions = await recorded(ann.get('/api/agents/book/versions/knowledge.md'))
    expect(versions.body.documents.map((d: { version: number }) => d.version)).toEqual([2, 1])
    const first = await recorded(ann.get('/api/agents/book/documents/knowledge.md?version=1'))
    expect(first.body.content).toBe(KNOWLEDGE)

    const context = await recorded(
      tokens.bookAgent!.post('/api/agent/context', { agent: 'book', task: 'plan chapter 3', knowledge_files: ['skills/style.md'] }),
    )
    expect(context.status, context.text).toBe(200)
    const { messages, report } = context.body as { messages: { role: string; content: string }[]; report: Record<string, unknown> }
    expect(messages.map((m) => m.role)).toEqual(['system', 'assistant'])
    expect(messages[0]!.content).toContain('## @review: read it again')
    expect(messages[0]!.content).toContain('short sentences')
    expect(messages[1]!.content).toBe('[Loaded compacted memory]\nEarlier: chapter 2 is done.')
    expect(report).toMatchObject({ source: 'store', function_index: { path: '/api/agents/book/documents/knowledge_function_index.json' } })
    expect(report).not.toHaveProperty('home')
    const parts = report.parts as Array<{ name: string; path?: string }>
    expect(parts.find((p) => p.name === 'knowledge.md')!.path).toBe('knowledge.md')
    expect(parts.find((p) => p.name === 'self_awareness.md')!.path).toBe('default:en/self_awareness.md')
    expect(parts.find((p) => p.name === 'template')!.path).toBe('default:en/system_prompt.md')

    // The generated index: stored with knowledge.md's scopes, never written by hand. It lists only what every
    // reader of the index may read: skills/style.md is the agent's alone (scopes agent:book), so it is left out.
    const index = await recorded(tokens.bookAgent!.get('/api/agents/book/documents/knowledge_function_index.json'))
    expect(index.body.scopes).toEqual(['agent:book', 'org:acme'])
    const functions = JSON.parse(index.body.content).functions as Record<string, { path: string }>
    expect(functions.outline).toMatchObject({ path: 'knowledge.md' })
    expect(Object.keys(functions)).toContain('review')
    expect(Object.keys(functions)).not.toContain('style')
    const forged = await attempt(ann.put('/api/agents/book/documents/knowledge_function_index.json', { content: '{}' }), 400, 'validation_error')
    expect(errorOf(forged).message).toContain('generated')
  })

  it('scopes decide within the org: a reader sees what shares its scopes; compact.md stays the agent’s', async () => {
    const reader = tokens.acmeReader!
    const docs = await recorded(reader.get('/api/agents/book/documents'))
    expect(docs.status).toBe(200)
    expect(docs.body.documents.map((d: { name: string }) => d.name)).toEqual(['knowledge.md', 'knowledge_function_index.json'])
    await attempt(reader.get('/api/agents/book/documents/compact.md'), 404, 'not_found')
    await attempt(reader.get('/api/agents/book/versions/compact.md'), 404, 'not_found')
    // The reader's context has no compact memory: it is not among the documents it may read.
    const context = await recorded(reader.post('/api/agent/context', { agent: 'book' }))
    expect(context.body.messages.map((m: { role: string }) => m.role)).toEqual(['system'])
    // Read-only: no write, no compaction.
    await attempt(reader.put('/api/agents/book/documents/knowledge.md', { content: 'vandalised' }), 403, 'forbidden')
    await attempt(reader.post('/api/agents/book/compact', { history: history(4) }), 403, 'forbidden')
    // Ann cannot write the agent's own compact.md (not a scope she shares); nor scopes that are not hers.
    await attempt(tokens.annWriter!.put('/api/agents/book/documents/compact.md', { content: 'overwritten' }), 403, 'forbidden')
    await attempt(tokens.annWriter!.put('/api/agents/book/documents/notes.md', { content: 'x', scopes: ['org:other'] }), 403, 'forbidden')
    await attempt(tokens.annWriter!.put('/api/agents/book/documents/notes.md', { content: 'x', scopes: ['public'] }), 403, 'forbidden')
    expect((await recorded(tokens.bookAgent!.get('/api/agents/book/documents/compact.md'))).body.content).toBe('Earlier: chapter 2 is done.')
    const listed = await recorded(reader.get('/api/agents'))
    expect(listed.body.agents.map((a: { agent: string }) => a.agent)).toEqual(['book'])
  })

  it('another org’s agent answers exactly like an unknown one, on every route, even to a token with the same agent id', async () => {
    const unknown = await recorded(tokens.otherAdmin!.get('/api/agents/nobody/documents'))
    for (const who of ['otherAdmin', 'otherBook'] as const) {
      const c = tokens[who]!
      const list = await attempt(c.get('/api/agents/book/documents'), 404, 'not_found')
      expect(errorOf(list).message).toBe(errorOf(unknown).message.replace('nobody', 'book'))
      await attempt(c.get('/api/agents/book/documents/knowledge.md'), 404, 'not_found')
      await attempt(c.get('/api/agents/book/documents/compact.md?version=1'), 404, 'not_found')
      await attempt(c.get('/api/agents/book/versions/compact.md'), 404, 'not_found')
      await attempt(c.post('/api/agent/context', { agent: 'book' }), 404, 'not_found')
      await attempt(c.post('/api/agents/book/compact', { history: history(4) }), 404, 'not_found')
      expect((await recorded(c.get('/api/agents'))).body.agents).toEqual([])
    }
    // Writing there makes an agent of their own org: acme's is untouched.
    const theirs = await recorded(tokens.otherBook!.put('/api/agents/book/documents/compact.md', { content: 'other org memory' }))
    expect(theirs.status).toBe(201)
    expect((await recorded(tokens.bookAgent!.get('/api/agents/book/documents/compact.md'))).body).toMatchObject({
      version: 1,
      content: 'Earlier: chapter 2 is done.',
    })
    expect((await recorded(tokens.otherBook!.get('/api/agents/book/documents/compact.md'))).body.content).toBe('other org memory')
    expect((await recorded(tokens.otherBook!.get('/api/agents/book/documents'))).body.documents.map((d: { name: string }) => d.name)).toEqual(['compact.md'])
    // An org admin sees its own org's agents as its scopes allow, never another org's.
    await attempt(tokens.acmeAdmin!.get('/api/agents/book/documents/compact.md'), 404, 'not_found')
  })

  it('compaction over HTTP: a stored agent’s compact.md gets a new version; a held memory is answered and nothing stored', async () => {
    const small = await recorded(tokens.bookAgent!.post('/api/agents/book/compact', { history: history(2), threshold: 100_000 }))
    expect(small.body).toMatchObject({ compacted: false })
    const r = await recorded(tokens.bookAgent!.post('/api/agents/book/compact', { history: history(12), threshold: 1000, trace_id: 'run-1' }))
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({
      compacted: true,
      memory_path: '/api/agents/book/documents/compact.md',
      previous_version: '/api/agents/book/documents/compact.md?version=1',
    })
    expect(r.body).not.toHaveProperty('memory')
    const now = await recorded(tokens.bookAgent!.get('/api/agents/book/documents/compact.md'))
    expect(now.body).toMatchObject({ version: 2, content: '## Decisions\n- Chapter 3 first.\n', scopes: ['agent:book'] })
    const before = await recorded(tokens.bookAgent!.get('/api/agents/book/documents/compact.md?version=1'))
    expect(before.body.content).toBe('Earlier: chapter 2 is done.')
    // The compaction request carried the previous memory as data.
    const sent = stub.requests.filter((q) => q.path === '/v1/chat/completions').map((q) => JSON.stringify(q.body))
    expect(sent.some((body) => body.includes('Earlier: chapter 2 is done.'))).toBe(true)

    const agentsBefore = (await recorded(tokens.annWriter!.get('/api/agents'))).body
    const held = await recorded(
      tokens.annWriter!.post('/api/agent/compact', { agent: 'laptop_agent', history: history(12), threshold: 1000, previous_memory: 'kept on my laptop' }),
    )
    expect(held.status, held.text).toBe(200)
    expect(held.body).toMatchObject({ compacted: true, memory: '## Decisions\n- Chapter 3 first.\n' })
    expect(held.body).not.toHaveProperty('memory_path')
    expect((await recorded(tokens.annWriter!.get('/api/agents'))).body).toEqual(agentsBefore)
    await attempt(tokens.acmeReader!.post('/api/agent/compact', { agent: 'laptop_agent', history: history(12), threshold: 1000 }), 403, 'forbidden')
  })

  it('MCP over /mcp: the agent-context prompt and the agent_compact tool act on the agent stored in the caller’s org', async () => {
    const connect = async (token: string) => {
      const mcp = new McpClient({ name: 'agent-memory-test', version: '1.0.0' })
      await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
      return mcp
    }
    const mine = await connect(raw.bookAgent!)
    const theirs = await connect(raw.otherAdmin!)
    try {
      const prompt = await mine.getPrompt({ name: 'agent-context', arguments: { agent: 'book' } })
      seen.push(JSON.stringify(prompt))
      expect((prompt.messages[1]!.content as { text: string }).text).toContain('## Decisions')
      expect(prompt.description).toContain('/api/agents/book/documents/knowledge_function_index.json')
      const refused = await theirs.getPrompt({ name: 'agent-context', arguments: { agent: 'book' } }).catch((e: Error) => e)
      counts.attempts++
      if (!(refused instanceof Error) || !/No agent "book" visible to you/.test(refused.message)) counts.leaks++
      const compacted = (await mine.callTool({ name: 'agent_compact', arguments: { agent: 'book', history: history(12), threshold: 1000 } })) as CallToolResult
      seen.push(JSON.stringify(compacted))
      expect(compacted.isError).toBeFalsy()
      expect((compacted.content[0] as { text: string }).text).toContain('into /api/agents/book/documents/compact.md')
      expect((await recorded(tokens.bookAgent!.get('/api/agents/book/documents/compact.md'))).body.version).toBe(3)
      const other = (await theirs.callTool({ name: 'agent_compact', arguments: { agent: 'book', history: history(12), threshold: 1000 } })) as CallToolResult
      seen.push(JSON.stringify(other))
      counts.attempts++
      expect(other.isError).toBe(true)
      expect((other.content[0] as { text: string }).text).toMatch(/^error \[not_found\]/)
      if (!other.isError) counts.leaks++
    } finally {
      await mine.close()
      await theirs.close()
    }
  })

  it('POST /api/agent/knowledge gives KnowHub’s part of a locally assembled context, as the caller sees it', async () => {
    await t.hub.knowledge.save(
      { task: 'Outline chapters before writing', content: 'Write the outline first', types: ['strategy'], scopes: ['org:acme'] },
      { user: 'ann', org: 'acme', permissions: ['read', 'write'] },
    )
    const mine = await recorded(tokens.acmeReader!.post('/api/agent/knowledge', { task: 'outline chapters' }))
    expect(mine.status, mine.text).toBe(200)
    expect(mine.body.related.map((e: { content: string }) => e.content)).toContain('Write the outline first')
    const theirs = await recorded(tokens.otherAdmin!.post('/api/agent/knowledge', { task: 'outline chapters' }))
    expect(theirs.body.related).toEqual([])
    counts.attempts++
    if (theirs.text.includes('Write the outline first')) counts.leaks++
  })

  it('no response held a server path or a linked file’s content; the counts', async () => {
    const serverPaths = [dir, serverHome, t.dataDir]
    for (const text of seen) {
      for (const path of serverPaths) expect(text).not.toContain(path)
      expect(text).not.toContain('root:x:0:0')
    }
    expect(counts.attempts).toBeGreaterThan(80)
    expect(counts.leaks).toBe(0)
  })
})
