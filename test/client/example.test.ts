/**
 * The agent-loop example against a real server: its no-model path (search, save,
 * search, feedback) in-process and as the real command, and its model path with the
 * OpenAI-compatible stub scripting the tool calls.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgent } from '../../examples/agent-loop/agent.js'
import { openExampleStore, parseExampleArgs } from '../../examples/agent-loop/store.js'
import { createClient } from '../../src/client/index.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

const root = join(import.meta.dirname, '..', '..')
let t: TestHub
let url: string
let stub: OpenAIStub

beforeAll(async () => {
  t = await openTestHub()
  url = (await t.start()).url
  stub = await startOpenAIStub()
})
afterAll(async () => {
  await stub?.close()
  await t?.close()
})

describe('examples/agent-loop', () => {
  it('imports KnowHub by package name (knowhub/client, knowhub/tools), never from src/', async () => {
    const dir = join(root, 'examples', 'agent-loop')
    for (const file of ['agent.ts', 'main.ts']) {
      const imports = [...readFileSync(join(dir, file), 'utf8').matchAll(/^import .* from '([^']+)'/gm)].map((m) => m[1])
      expect(
        imports.filter((s) => s?.includes('src/')),
        file,
      ).toEqual([])
    }
    expect(readFileSync(join(dir, 'agent.ts'), 'utf8')).toMatch(/from 'knowhub\/client'[\s\S]*from 'knowhub\/tools'/)
    // The names resolve to the package's built files (self-reference through package.json exports, from anywhere in the repository).
    for (const name of ['knowhub/client', 'knowhub/tools']) {
      const resolved = fileURLToPath(import.meta.resolve(name))
      expect(resolved, `${name}: run npm run build (npm install does it)`).toBe(join(root, 'dist', name.slice('knowhub/'.length), 'index.js'))
      expect(existsSync(resolved), `${resolved} is missing: run npm run build (npm install does it)`).toBe(true)
    }
  })

  it('without a model: search → save → search → feedback, through the tools over HTTP', async () => {
    const lines: string[] = []
    const report = await runAgent({ knowhubUrl: url, task: 'Deploy a Node service with zero downtime', log: (line) => lines.push(line) })
    expect(report.mode).toBe('no-model')
    expect(report.steps.map((s) => [s.tool, s.ok])).toEqual([
      ['knowledge_search', true],
      ['knowledge_save', true],
      ['knowledge_search', true],
      ['knowledge_update', true],
    ])
    const id = String(report.steps[1]?.data?.id)
    expect(report.steps[0]?.data).toMatchObject({ count: 0 })
    expect(report.steps[2]?.text).toContain(id)
    expect(report.answer).toBe(`Found 0 entries before, saved ${id}, found 1 after, and recorded a helpful case.`)
    expect(lines.join('\n')).toContain('No model configured')
    const stored = await createClient({ baseUrl: url }).knowledge.get(id)
    expect(stored.eval).toMatchObject({ score: 4, helpful: 1 })
    expect(stored.eval.helpful_history[0]).toMatchObject({ outcome: 'found again by the next search' })
  })

  it('runs as a command (npm run example) and prints what it did', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(root, 'examples/agent-loop/main.ts'), 'Rotate', 'API', 'keys', 'safely'],
      {
        cwd: root,
        env: { ...process.env, KNOWHUB_URL: url, OPENAI_MODEL: '' },
        timeout: 60_000,
      },
    )
    expect(stdout.split('\n')[0]).toBe(`Store: the KnowHub server at ${url}.`)
    expect(stdout).toContain('→ knowledge_save(')
    expect(stdout).toMatch(/saved knowledge-\S+, found \d+ after, and recorded a helpful case\./)
    expect(stdout).toContain('4 tool call(s), 0 failed.')
  })

  it('npm run example without a server or data folder uses a temporary store, removed afterwards, and says so', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'knowhub-example-test-'))
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', join(root, 'examples/agent-loop/main.ts'), 'Bust', 'a', 'CDN', 'cache'],
        {
          cwd: root,
          env: { ...process.env, TMPDIR: tmp, KNOWHUB_URL: '', KNOWHUB_DATA_DIR: '', KNOWHUB_EMBEDDER: 'hashed', OPENAI_MODEL: '' },
          timeout: 150_000,
        },
      )
      const first = stdout.split('\n')[0] ?? ''
      const used = /^Store: a temporary data folder (\S+), removed afterwards/.exec(first)?.[1]
      expect(used, first).toBeDefined()
      expect(used!.startsWith(join(tmp, 'knowhub-example-'))).toBe(true)
      expect(stdout).toContain('Found 0 entries before')
      expect(stdout).toContain('4 tool call(s), 0 failed.')
      expect(existsSync(used!)).toBe(false)
      expect(readdirSync(tmp).filter((f) => f.startsWith('knowhub-example-'))).toEqual([])
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  }, 180_000)

  it('--data-dir DIR keeps that folder, and goes through the server that holds it when one does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-example-dir-'))
    const env = { ...process.env, KNOWHUB_URL: '', KNOWHUB_EMBEDDER: 'hashed' }
    expect(parseExampleArgs(['--data-dir', dir, 'Bust', 'a', 'cache'])).toEqual({ task: 'Bust a cache', dataDir: dir })
    expect(parseExampleArgs(['--url=http://h:1', 'x'])).toEqual({ task: 'x', url: 'http://h:1' })
    const started = await openExampleStore({ task: 't', dataDir: dir }, env)
    try {
      expect(started.label).toBe(`Store: data folder ${dir} (kept).`)
      const first = await runAgent({ knowhubUrl: started.url, task: 'Bust a CDN cache' })
      expect(first.answer).toMatch(/^Found 0 entries before/)
      // A second run on the same folder while the first server holds it: through that server, with the lock's key.
      const beside = await openExampleStore({ task: 't' }, { ...env, KNOWHUB_DATA_DIR: dir })
      expect(beside.url).toBe(started.url)
      expect(beside.label).toBe(`Store: data folder ${dir}, through the KnowHub server at ${started.url} that holds it.`)
      expect(beside.token).toMatch(/\S{16,}/)
      const second = await runAgent({ knowhubUrl: beside.url, token: beside.token!, task: 'Bust a CDN cache' })
      expect(second.answer).toMatch(/^Found 1 entry before/)
      await beside.close()
    } finally {
      await started.close()
    }
    expect(existsSync(join(dir, 'db'))).toBe(true)
    rmSync(dir, { recursive: true, force: true })
  }, 240_000)

  it('with a model: the loop runs the model’s tool calls and returns its answer', async () => {
    const seen: ChatRequest[] = []
    let turn = 0
    const call = (name: string, args: unknown) => ({ id: `call_${turn}`, type: 'function', function: { name, arguments: JSON.stringify(args) } })
    const completion = (message: Record<string, unknown>) => ({
      id: `c${turn}`,
      object: 'chat.completion',
      created: 0,
      model: 'stub-chat',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    })
    stub.setChat((request) => {
      seen.push(structuredClone(request))
      turn++
      if (turn === 1) return completion({ content: null, tool_calls: [call('knowledge_search', { query: 'cache busting for a CDN' })] })
      if (turn === 2)
        return completion({
          content: null,
          tool_calls: [
            call('knowledge_save', { task: 'Cache busting for a CDN', content: 'Put a content hash in asset file names', types: ['strategy'] }),
            call('knowledge_update', { knowledge_id: 'nope' }),
          ],
        })
      return completion({ content: 'Use hashed asset names.' })
    })
    const report = await runAgent({ knowhubUrl: url, task: 'How do I bust a CDN cache?', model: { baseUrl: stub.url, model: 'stub-chat', apiKey: 'sk-test' } })
    expect(report).toMatchObject({ mode: 'model', answer: 'Use hashed asset names.' })
    expect(report.steps.map((s) => [s.tool, s.ok])).toEqual([
      ['knowledge_search', true],
      ['knowledge_save', true],
      ['knowledge_update', false],
    ])
    // The model got the tools as OpenAI function tools, and every tool result (errors too) went back to it.
    expect((seen[0]?.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['knowledge_search', 'knowledge_save', 'knowledge_update']),
    )
    expect(stub.requestsTo('/v1/chat/completions')[0]?.headers.authorization).toBe('Bearer sk-test')
    const toolMessages = seen[2]?.messages.filter((m) => m.role === 'tool') ?? []
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['call_1', 'call_2', 'call_2'])
    expect(String(toolMessages[2]?.content)).toMatch(/^error \[validation_error\]/)
    const saved = String(report.steps[1]?.data?.id)
    expect((await createClient({ baseUrl: url }).knowledge.get(saved)).task).toBe('Cache busting for a CDN')
  })
})
