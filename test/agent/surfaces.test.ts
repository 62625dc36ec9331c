/**
 * The agent surfaces on real parts: HTTP `POST /api/agent/context` and `POST /api/goals` on a
 * real server (through the typed client and raw fetch), the MCP `agent-context` prompt and the
 * `goal` tool through the official SDK client, the toolkit's `goal` tool, and the CLI
 * (`knowhub agent context|index`) in-process.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localBackend } from '../../src/app/backend.js'
import { openKnowHub } from '../../src/app/open.js'
import { clientBackend } from '../../src/client/backend.js'
import { createClient } from '../../src/client/client.js'
import { isKnowHubClientError } from '../../src/client/errors.js'
import { createMcpServer } from '../../src/mcp/index.js'
import type { RunningServer } from '../../src/server/serve.js'
import { createToolkit } from '../../src/tools/toolkit.js'
import { runCli } from '../helpers/cli.js'
import { knowledge as packKnowledge, writeTree } from '../packs/helpers.js'
import { openTestHub, type TestHub } from '../server/helpers.js'
import { tempDataDir } from '../helpers/stores.js'

const KNOWLEDGE = '# Crawler\n\n## @login: log in to a site\nContract: use the stored credential, never print it.\n'

describe('agent surfaces', () => {
  let dir: string
  let home: string
  let t: TestHub
  let server: RunningServer

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-agent-surfaces-'))
    home = join(dir, 'agents')
    await writeTree(home, { 'crawler/knowledge.md': KNOWLEDGE, 'crawler/compact.md': 'Earlier: site A needs a cookie.', 'outside.md': 'secret' })
    t = await openTestHub({ embedder: { provider: 'hashed', dimension: 128 }, agent: { home } })
    server = await t.start()
    await t.hub.knowledge.save(
      { task: 'Log in to site A with selenium', content: 'Use undetected_chromedriver', types: ['tool'], score: 4 },
      t.hub.config.principal,
    )
    await t.hub.knowledge.save({ task: 'Prefers concise answers', content: 'Keep it short', types: ['user_profile'], confidence: 0.9 }, t.hub.config.principal)
  })
  afterAll(async () => {
    await t.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('HTTP: POST /api/agent/context assembles an agent stored on the server (never its agent home); home and template cannot be chosen by the caller', async () => {
    const client = createClient({ baseUrl: server.url })
    // The folder crawler/ in the server's agent home is not read for a remote caller: the agent is unknown until stored.
    const unknown = await client.agent.context({ agent: 'crawler' }).catch((e: unknown) => e)
    expect(isKnowHubClientError(unknown) && unknown.code).toBe('not_found')
    expect((await client.agent.write('crawler', 'knowledge.md', { content: KNOWLEDGE })).version).toBe(1)
    await client.agent.write('crawler', 'compact.md', { content: 'Earlier: site A needs a cookie.' })
    const { messages, report } = await client.agent.context({ agent: 'crawler', task: 'log in to site A', budget: 4000 })
    expect(messages.map((m) => m.role)).toEqual(['system', 'assistant'])
    expect(messages[0]!.content).toContain('Contract: use the stored credential')
    expect(messages[0]!.content).toContain('Prefers concise answers')
    expect(messages[1]!.content).toBe('[Loaded compacted memory]\nEarlier: site A needs a cookie.')
    expect(report.used).toBeLessThanOrEqual(4000)
    expect(report).toMatchObject({ source: 'store', function_index: { path: '/api/agents/crawler/documents/knowledge_function_index.json', written: false } })
    // The index is stored, generated at the write of knowledge.md: the agent reads it at that path.
    const stored = JSON.parse((await client.agent.document('crawler', 'knowledge_function_index.json')).content) as {
      functions: Record<string, { path: string }>
    }
    expect(stored.functions.login).toMatchObject({ path: 'knowledge.md' })
    expect(report.function_index.functions).toBe(Object.keys(stored.functions).length)
    expect(report.home).toBeUndefined()
    expect(JSON.stringify(report)).not.toContain(dir)
    for (const body of [{ agent: 'crawler', home: '/etc' }, { agent: 'crawler', template: '/etc/passwd' }, { agent: '../x' }]) {
      const response = await fetch(new URL('/api/agent/context', server.url), {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('validation_error')
    }
    const traversal = await client.agent.context({ agent: 'crawler', knowledge_files: ['../outside.md'] }).catch((e: unknown) => e)
    expect(isKnowHubClientError(traversal) && traversal.code).toBe('validation_error')
  })

  it('HTTP: POST /api/goals runs the goal tool; the OpenAPI document lists both paths', async () => {
    const client = createClient({ baseUrl: server.url })
    await client.agent.goal({ action: 'create', trace_id: 'http-1', description: 'Log in to site A with selenium' })
    const tree = await client.agent.goal({ action: 'focus', trace_id: 'http-1', goal_id: '1' })
    expect(tree.text).toContain('📚 Related knowledge (1)')
    expect(tree.knowledge[0]!.content).toBe('Use undetected_chromedriver')
    const bad = await client.agent.goal({ action: 'focus', trace_id: 'http-1' }).catch((e: unknown) => e)
    expect(isKnowHubClientError(bad) && bad.code).toBe('validation_error')
    const doc = (await client.openapi()) as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/agent/context', '/api/goals']))
  })

  it('the goal tool over both backends: in-process and through the HTTP client', async () => {
    for (const backend of [localBackend(t.hub, t.hub.config.principal), clientBackend(createClient({ baseUrl: server.url }))]) {
      const kit = createToolkit({ backend })
      expect(kit.tools.map((tool) => tool.name)).toContain('goal')
      const trace = `kit-${Math.random().toString(36).slice(2)}`
      await kit.callTool('goal', { action: 'create', trace_id: trace, description: 'Log in to site A with selenium' })
      const focused = await kit.callTool('goal', { action: 'focus', trace_id: trace, goal_id: '1' })
      expect(focused.text).toContain('📚 Related knowledge (1)')
      expect(focused.text).toContain('<knowledge_entries count="1">')
    }
  })

  it('MCP: prompts/list offers agent-context; prompts/get returns the assembled context; the goal tool is listed and works', async () => {
    const mcp = createMcpServer({ backend: localBackend(t.hub, t.hub.config.principal) })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await mcp.connect(serverSide)
    const client = new Client({ name: 'agent-test', version: '1.0.0' })
    await client.connect(clientSide)
    try {
      const { prompts } = await client.listPrompts()
      const prompt = prompts.find((p) => p.name === 'agent-context')!
      expect(prompt.arguments?.map((a) => [a.name, a.required])).toEqual([
        ['agent', true],
        ['task', false],
        ['knowledge_files', false],
        ['budget', false],
        ['language', false],
      ])
      const got = await client.getPrompt({ name: 'agent-context', arguments: { agent: 'crawler', task: 'log in', budget: '3000', language: 'zh' } })
      expect(got.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
      const first = got.messages[0]!.content as { type: string; text: string }
      expect(first.text).toContain('你是智能体「crawler」')
      expect((got.messages[1]!.content as { text: string }).text.startsWith('[已加载历史压缩记忆]')).toBe(true)
      expect(got.description).toMatch(/of 3000 tokens/)
      await expect(client.getPrompt({ name: 'agent-context', arguments: { agent: '../etc' } })).rejects.toThrow(/agent name/)
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('goal')
      await client.callTool({ name: 'goal', arguments: { action: 'create', trace_id: 'mcp-1', description: 'Log in to site A with selenium' } })
      const focused = (await client.callTool({ name: 'goal', arguments: { action: 'focus', trace_id: 'mcp-1', goal_id: '1' } })) as CallToolResult
      expect(focused.isError).toBeFalsy()
      expect((focused.content[0] as { text: string }).text).toContain('📚 Related knowledge (1)')
      const missing = (await client.callTool({ name: 'goal', arguments: { action: 'complete', trace_id: 'mcp-1', goal_id: '9' } })) as CallToolResult
      expect(missing.isError).toBe(true)
      expect((missing.content[0] as { text: string }).text).toMatch(/^error \[not_found\]/)
    } finally {
      await client.close()
    }
  })

  it('the composition root gives hub.agent the hub’s packs: their catalog is in the context', async () => {
    await writeTree(dir, { 'project/.agents/knowledge/invoices/KNOWLEDGE.md': packKnowledge({ name: 'invoices', description: 'How invoices are sent.' }) })
    const hub = await openKnowHub(
      { dataDir: tempDataDir('agent-packs'), embedder: { provider: 'hashed', dimension: 64 }, agent: { home } },
      { packs: { project: join(dir, 'project'), user: false } },
    )
    try {
      const { messages, report } = await hub.agent.assembleContext({ agent: 'crawler', principal: hub.config.principal })
      expect(messages[0]!.content).toContain('<available_knowledge_packs>')
      expect(report.parts.find((p) => p.name === 'knowledge_packs')!.status).toBe('included')
    } finally {
      await hub.close()
    }
  })

  it('CLI: knowhub agent context prints the messages and the report (text and --json); agent index writes the index', async () => {
    const saved = { ...process.env }
    try {
      process.env.KNOWHUB_DATA_DIR = join(dir, 'cli-data')
      process.env.KNOWHUB_EMBEDDER = 'hashed'
      process.env.KNOWHUB_AGENT_HOME = home
      delete process.env.DATABASE_URL
      const text = await runCli('agent', 'context', 'crawler', '--task', 'log in')
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain('===== system =====')
      expect(text.stdout).toContain('===== assistant =====\n[Loaded compacted memory]')
      expect(text.stdout).toMatch(/===== report: \d+ of 16000 tokens =====/)
      expect(text.stdout).toMatch(/included\s+knowledge\.md/)
      // In this process on a folder no server holds: said on stderr, with where the knowledge comes from.
      expect(text.stderr).toContain(`knowhub: no KnowHub server holds ${join(dir, 'cli-data')}: the agent’s KnowHub knowledge comes from that folder`)
      // Seed 004's project file (--project, default: this directory) comes before the shipped default.
      mkdirSync(join(dir, 'proj', 'knowledge'), { recursive: true })
      writeFileSync(join(dir, 'proj', 'knowledge', 'self_awareness.md'), 'PROJECT SELF AWARENESS')
      const inProject = await runCli('agent', 'context', 'ghost_agent', '--project', join(dir, 'proj'), '--json')
      expect(inProject.code, inProject.stderr).toBe(0)
      expect(JSON.parse(inProject.stdout).messages[0].content).toContain('PROJECT SELF AWARENESS')
      const json = await runCli('agent', 'context', 'crawler', '--budget', '200', '--json')
      expect(json.code, json.stderr).toBe(0)
      const parsed = JSON.parse(json.stdout) as { report: { used: number; budget: number } }
      expect(parsed.report.budget).toBe(200)
      expect(parsed.report.used).toBeLessThanOrEqual(200)
      const index = await runCli('agent', 'index', 'crawler')
      expect(index.stdout).toContain('@login  contract')
      expect(JSON.parse(readFileSync(join(home, 'crawler', 'knowledge_function_index.json'), 'utf8')).functions.login.summary).toBe('log in to a site')
      const refused = await runCli('agent', 'context', 'crawler', '--file', '../outside.md', '--json')
      expect(refused.code).toBe(1)
      expect(JSON.parse(refused.stdout).error.code).toBe('validation_error')
      // Compaction needs the LLM: without one, a clear error and nothing written; a bad history file is named.
      writeFileSync(join(dir, 'history.json'), JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] }))
      const noLlm = await runCli('agent', 'compact', 'crawler', '--history', join(dir, 'history.json'), '--json')
      expect(noLlm.code).toBe(1)
      expect(JSON.parse(noLlm.stdout).error.code).toBe('llm_not_configured')
      expect(readFileSync(join(home, 'crawler', 'compact.md'), 'utf8')).toBe('Earlier: site A needs a cookie.')
      writeFileSync(join(dir, 'bad.json'), '{ not json')
      const bad = await runCli('agent', 'compact', 'crawler', '--history', join(dir, 'bad.json'))
      expect(bad.code).toBe(1)
      expect(bad.stderr).toContain('is not JSON')
    } finally {
      process.env = saved
    }
  })
})
