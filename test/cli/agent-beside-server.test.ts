/**
 * `knowhub agent context|compact` beside a running server (issue #27): the server is a real
 * `knowhub start` process with a HOME of its own; the CLI runs with the user's HOME. The CLI
 * reads and writes the USER's `~/.agent/NAME/` itself, with knowledge from the server and
 * compaction by the server's LLM (the CLI has none); the server's `~/.agent` is never read or
 * written. `--stored` works on the agent stored on the server; `--url` reaches it too.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'

let dir: string
let userHome: string
let serverHome: string
let data: string
let server: KnowHubProcess
let stub: OpenAIStub
const saved = { ...process.env }
const history = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} `.repeat(80) }))

function tree(home: string): string[] {
  const root = join(home, '.agent', 'writer')
  return existsSync(root) ? readdirSync(root, { recursive: true }).map(String).sort() : []
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-agent-beside-'))
  userHome = join(dir, 'user-home')
  serverHome = join(dir, 'server-home')
  data = join(dir, 'data')
  for (const [home, mark] of [
    [userHome, 'user'],
    [serverHome, 'server'],
  ] as const) {
    mkdirSync(join(home, '.agent', 'writer'), { recursive: true })
    writeFileSync(join(home, '.agent', 'writer', 'knowledge.md'), `## @${mark}_side: ${mark} knowledge\nContract: ${mark} rules.\n`)
    writeFileSync(join(home, '.agent', 'writer', 'compact.md'), `${mark} memory`)
  }
  stub = await startOpenAIStub({
    chat: (request) =>
      String(request.messages[0]?.content).includes('compact memory') ? '## Decisions\n- compacted by the server' : JSON.stringify({ entries: [] }),
  })
  for (const name of ['DATABASE_URL', 'KNOWHUB_URL', 'KNOWHUB_TOKEN', 'KNOWHUB_AGENT_HOME', 'KNOWHUB_LLM_URL', 'KNOWHUB_LLM_MODEL']) delete process.env[name]
  process.env.KNOWHUB_EMBEDDER = 'hashed'
  process.env.KNOWHUB_EMBED_DIM = '64'
  process.env.KNOWHUB_DATA_DIR = data
  server = await startKnowHubProcess({ env: { HOME: serverHome, KNOWHUB_LLM_URL: stub.url, KNOWHUB_LLM_MODEL: 'stub-model' } })
  // The CLI: the user's HOME, no LLM of its own.
  process.env.HOME = userHome
})
afterAll(async () => {
  process.env = saved
  await server?.stop()
  await stub?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('agent commands beside a running server', () => {
  it('agent context reads the user’s ~/.agent/NAME/ (not the server’s) and gets knowledge from the server', async () => {
    const serverFiles = tree(serverHome)
    const save = await runCli('save', '--task', 'Write chapter summaries', '--content', 'Summaries go last', '--type', 'strategy', '--json')
    expect(save.code, save.stderr).toBe(0)
    const run = await runCli('agent', 'context', 'writer', '--task', 'write chapter summaries', '--json')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe(
      `knowhub: the KnowHub server at ${server.url} (process ${server.child.pid}) holds ${data}: reading the agent folder "writer" here, on this machine; knowledge and packs come from that server`,
    )
    const { messages, report } = JSON.parse(run.stdout) as { messages: { role: string; content: string }[]; report: Record<string, unknown> }
    expect(messages[0]!.content).toContain('@user_side')
    expect(messages[0]!.content).not.toContain('server_side')
    expect(messages[0]!.content).toContain('Summaries go last')
    expect(messages[1]!.content).toBe('[Loaded compacted memory]\nuser memory')
    expect(report).toMatchObject({ source: 'folder', home: join(userHome, '.agent'), function_index: { written: true } })
    expect(JSON.parse(readFileSync(join(userHome, '.agent', 'writer', 'knowledge_function_index.json'), 'utf8')).functions.user_side).toBeDefined()
    expect(tree(serverHome)).toEqual(serverFiles)
  })

  it('agent compact beside the server: the server’s LLM compacts, the user’s memory is read and written here', async () => {
    const serverFiles = tree(serverHome)
    writeFileSync(join(dir, 'history.json'), JSON.stringify(history))
    const run = await runCli('agent', 'compact', 'writer', '--history', join(dir, 'history.json'), '--threshold', '500', '--json')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`that server's LLM compacts; the memory of the agent "writer" is read and written here, on this machine`)
    const result = JSON.parse(run.stdout) as { compacted: boolean; memory_path: string; previous_version: string }
    expect(result).toMatchObject({ compacted: true, memory_path: join(userHome, '.agent', 'writer', 'compact.md') })
    expect(result).not.toHaveProperty('memory')
    expect(readFileSync(join(userHome, '.agent', 'writer', 'compact.md'), 'utf8')).toBe('## Decisions\n- compacted by the server\n')
    expect(readFileSync(result.previous_version, 'utf8')).toBe('user memory')
    expect(result.previous_version.startsWith(join(userHome, '.agent', 'writer', 'compact_history'))).toBe(true)
    // The server got the user's memory as the previous one; its own HOME is as it was.
    expect(stub.requests.some((r) => JSON.stringify(r.body).includes('user memory'))).toBe(true)
    expect(stub.requests.some((r) => JSON.stringify(r.body).includes('server memory'))).toBe(false)
    expect(readFileSync(join(serverHome, '.agent', 'writer', 'compact.md'), 'utf8')).toBe('server memory')
    expect(tree(serverHome)).toEqual(serverFiles)
  })

  it('--stored: the agent stored on the server, over HTTP (--url), context and compaction', async () => {
    const key = (JSON.parse(readFileSync(join(data, 'db.lock'), 'utf8')) as { key: string }).key
    const missing = await runCli('agent', 'context', 'writer', '--stored', '--json')
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'not_found' } })
    const put = await fetch(`${server.url}/api/agents/writer/documents/compact.md`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'stored memory' }),
    })
    expect(put.status).toBe(201)
    const context = await runCli('agent', 'context', 'writer', '--stored', '--url', server.url, '--token', key, '--json')
    expect(context.code, context.stderr).toBe(0)
    const assembled = JSON.parse(context.stdout) as { messages: { content: string }[]; report: Record<string, unknown> }
    expect(assembled.messages[1]!.content).toBe('[Loaded compacted memory]\nstored memory')
    expect(assembled.report).toMatchObject({ source: 'store' })
    expect(JSON.stringify(assembled)).not.toContain(serverHome)
    const compact = await runCli('agent', 'compact', 'writer', '--stored', '--history', join(dir, 'history.json'), '--threshold', '500', '--json')
    expect(compact.code, compact.stderr).toBe(0)
    expect(JSON.parse(compact.stdout)).toMatchObject({
      compacted: true,
      memory_path: '/api/agents/writer/documents/compact.md',
      previous_version: '/api/agents/writer/documents/compact.md?version=1',
    })
    const text = await runCli('agent', 'compact', 'writer', '--stored', '--history', join(dir, 'history.json'), '--threshold', '500')
    expect(text.stdout).toContain('into /api/agents/writer/documents/compact.md')
    expect(readFileSync(join(userHome, '.agent', 'writer', 'compact.md'), 'utf8')).toBe('## Decisions\n- compacted by the server\n')
  })
})
