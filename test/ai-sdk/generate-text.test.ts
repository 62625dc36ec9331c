/**
 * `knowhub/ai-sdk` (issue 45) with the real AI SDK (`ai`, pinned in package-lock.json) against a
 * real `knowhub start` on a free port: the AI SDK's own mock model (`MockLanguageModelV3` from
 * `ai/test`) scripts tool calls, and `generateText` runs them through KnowHub — a save, a search
 * that finds it, a failed update the model reads as an error — then `withGoalFocus` puts the goal's
 * knowledge before the conversation. Another org's token finds none of it. The tools' schemas are
 * the tools' one definition (the OpenAI schemas of `knowhub/tools` come from the same).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateText, stepCountIs, type ModelMessage } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { knowhubTools, withGoalFocus, type KnowHubTools } from '../../src/ai-sdk/index.js'
import { createClient } from '../../src/client/index.js'
import { KNOWLEDGE_TOOLS, toOpenAITools, type ToolResult } from '../../src/tools/index.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'knowhub-ai-sdk-'))
const env = {
  KNOWHUB_DATA_DIR: join(dir, 'data'),
  KNOWHUB_EMBEDDER: 'hashed',
  KNOWHUB_SECRET_KEY: 'AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=',
  KNOWHUB_LOG_LEVEL: 'warn',
  DATABASE_URL: '',
  KNOWHUB_URL: '',
}
let server: KnowHubProcess
let alice: string
let eve: string

/** `knowhub token create` beside the running server (it runs there through the lock file). */
function token(user: string, org: string, kind: 'user' | 'agent' = 'user'): string {
  const ran = spawnSync(
    process.execPath,
    [join(ROOT, 'bin', 'knowhub.js'), 'token', 'create', `--${kind}`, user, '--org', org, '--perm', 'read', '--perm', 'write', '--json'],
    { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 },
  )
  expect(ran.status, ran.stderr).toBe(0)
  return (JSON.parse(ran.stdout) as { token: string }).token
}

beforeAll(async () => {
  server = await startKnowHubProcess({ env, entry: 'dist' })
  alice = token('alice', 'acme')
  eve = token('eve', 'evil')
})
afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
/** One scripted answer of the mock model: a tool call, or text to finish. */
const callTool = (name: string, input: Record<string, unknown>, id: string) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
})
const say = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] })

/** A tool's `execute`, as `generateText` runs it. */
async function execute(set: KnowHubTools, name: string, input: Record<string, unknown>): Promise<ToolResult> {
  return (await set[name]!.execute!(input, { toolCallId: `call-${name}`, messages: [] })) as ToolResult
}

/** The tool results the model was shown (the `tool` messages of the prompt of its last call). */
function shown(model: MockLanguageModelV3): Array<{ toolName: string; output: unknown }> {
  const prompt = model.doGenerateCalls.at(-1)!.prompt
  return prompt.flatMap((m) =>
    m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [{ toolName: p.toolName, output: p.output }] : [])) : [],
  )
}

describe('knowhub/ai-sdk', () => {
  let tools: KnowHubTools
  beforeAll(() => {
    tools = knowhubTools({ client: { baseUrl: server.url, token: alice } })
  })

  it('offers the seed-003 tools with their one schema, as the model receives them', async () => {
    const model = new MockLanguageModelV3({ doGenerate: [say('nothing to do')] })
    await generateText({ model, tools, prompt: 'hello' })
    // The AI SDK sends the zod schema as draft-07 JSON Schema, with its `$schema` (the specs leave it out).
    const sent = model.doGenerateCalls[0]!.tools!.map((t) => {
      if (t.type !== 'function') return t
      const { $schema, ...parameters } = t.inputSchema as Record<string, unknown>
      expect($schema).toBe('http://json-schema.org/draft-07/schema#')
      return { name: t.name, description: t.description, parameters }
    })
    const names = sent.map((t) => t.name)
    expect(names.slice(0, KNOWLEDGE_TOOLS.length)).toEqual(KNOWLEDGE_TOOLS.map((t) => t.name))
    expect(names).toContain('goal')
    expect(names).not.toContain('save_knowledge')
    const openai = toOpenAITools(KNOWLEDGE_TOOLS).map((t) => t.function)
    expect(sent.slice(0, KNOWLEDGE_TOOLS.length)).toEqual(openai)
    expect(Object.keys(knowhubTools({ client: { baseUrl: server.url, token: alice }, names: ['get_knowledge', 'knowledge_save'] }))).toEqual([
      'get_knowledge',
      'knowledge_save',
    ])
    expect(() => knowhubTools({ client: { baseUrl: server.url }, names: ['knowledge_delete_everything'] })).toThrow(
      /Unknown tool "knowledge_delete_everything"/,
    )
  })

  it('generateText with the mock model saves, then finds knowledge through KnowHub, and reads a failed call as an error', async () => {
    const tag = Math.random().toString(36).slice(2, 10)
    const task = `Deploy the billing service ${tag} with zero downtime`
    const query = `billing service ${tag} zero downtime deploy`
    const model = new MockLanguageModelV3({
      doGenerate: [
        callTool('knowledge_save', { task, content: 'Drain the old pods before switching the load balancer.', types: ['strategy'], score: 4 }, 'c1'),
        callTool('knowledge_search', { query, top_k: 3 }, 'c2'),
        callTool('knowledge_update', { knowledge_id: 'knowledge-20200101000000-none', update_score: 5 }, 'c3'),
        say('Saved and found it.'),
      ],
    })
    const result = await generateText({ model, tools, prompt: 'Remember how to deploy billing, then look it up.', stopWhen: stepCountIs(6) })
    expect(result.text).toBe('Saved and found it.')
    expect(result.steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([['knowledge_save'], ['knowledge_search'], ['knowledge_update'], []])

    const saved = result.steps[0]!.toolResults[0]!.output as { text: string; data: { id: string } }
    const found = result.steps[1]!.toolResults[0]!.output as { text: string; data: { results: Array<{ id: string }> } }
    const id = saved.data.id
    expect(saved.text).toMatch(new RegExp(`^Saved ${id} \\(types strategy; scopes org:acme; owner user:alice; score 4\\)`))
    expect(found.data.results.map((r) => r.id)).toContain(id)
    expect(found.text).toContain('<knowledge_entries')
    const failed = result.steps[2]!.content.find((p) => p.type === 'tool-error')
    expect(String((failed as { error: Error }).error.message)).toMatch(/^error \[not_found\]: /)

    // The model read the tools' text (knowledge wrapped as data), not the JSON behind it, and the error's text.
    const outputs = shown(model)
    expect(outputs.map((o) => o.toolName)).toEqual(['knowledge_save', 'knowledge_search', 'knowledge_update'])
    expect(outputs[0]!.output).toEqual({ type: 'text', value: saved.text })
    expect(outputs[1]!.output).toEqual({ type: 'text', value: found.text })
    expect(outputs[2]!.output).toMatchObject({ type: 'error-text', value: expect.stringMatching(/^error \[not_found\]: /) })

    // It is in KnowHub; another org's token finds none of it.
    expect((await createClient({ baseUrl: server.url, token: alice }).knowledge.get(id)).task).toBe(task)
    const theirs = await execute(knowhubTools({ client: { baseUrl: server.url, token: eve } }), 'knowledge_search', { query, top_k: 3 })
    expect((theirs.data as { results: unknown[] }).results).toEqual([])
  })

  it('withGoalFocus puts the goal tree with its knowledge, wrapped as data, before the conversation (after its system prompt)', async () => {
    const tag = Math.random().toString(36).slice(2, 10)
    const description = `Rotate the ${tag} database credentials`
    const { data } = await execute(tools, 'knowledge_save', {
      task: description,
      content: 'Keep both credentials valid during the switch.',
      types: ['strategy'],
      score: 5,
    })
    const trace = `run-${tag}`
    await execute(tools, 'goal', { action: 'create', trace_id: trace, description })
    const conversation: ModelMessage[] = [
      { role: 'system', content: 'You are a careful operator.' },
      { role: 'user', content: 'Go on with the rotation.' },
    ]
    const messages = await withGoalFocus(conversation, { tools, trace_id: trace, goal_id: '1' })
    expect(conversation).toHaveLength(2)
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user'])
    const focus = messages[1]!.content as string
    expect(focus).toContain(description)
    expect(focus).toMatch(/📚 Related knowledge \(\d+\)/)
    expect(focus).toContain('<knowledge_entries')
    expect(focus).toContain((data as { id: string }).id)

    const model = new MockLanguageModelV3({ doGenerate: [say('Rotating.')] })
    await generateText({ model, tools, messages, allowSystemInMessages: true })
    const prompt = model.doGenerateCalls[0]!.prompt
    expect(prompt[1]).toEqual({ role: 'user', content: [{ type: 'text', text: focus }] })
    const asSystem = await withGoalFocus(conversation, { tools, trace_id: trace, goal_id: '1', role: 'system' })
    expect(asSystem.map((m) => m.role)).toEqual(['system', 'system', 'user'])
    await expect(withGoalFocus([], { tools: {}, trace_id: trace, goal_id: '1' })).rejects.toThrow(/knowhubTools/)
  })

  it('needs `ai` only when knowhub/ai-sdk is imported (an optional peer): every other entry loads without it', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
    }
    expect(pkg.peerDependencies.ai).toBeDefined()
    expect(pkg.peerDependenciesMeta.ai).toEqual({ optional: true })
    const entries = Object.keys(pkg.exports)
      .filter((e) => e !== './package.json')
      .map((e) => (e === '.' ? 'knowhub' : `knowhub/${e.slice(2)}`))
    expect(entries).toContain('knowhub/ai-sdk')
    // A resolve hook that makes the AI SDK's packages missing, as in a project that did not install them.
    const hook = `export async function resolve(specifier, context, next) {
      if (/^(ai|@ai-sdk\\/[^/]+)(\\/|$)/.test(specifier)) throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: 'ERR_MODULE_NOT_FOUND' })
      return next(specifier, context)
    }`
    const script = `import { register } from 'node:module'
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}))
      const loaded = {}
      for (const name of ${JSON.stringify(entries)}) {
        try { await import(name); loaded[name] = 'ok' } catch (error) { loaded[name] = error.code + ': ' + error.message }
      }
      console.log(JSON.stringify(loaded))`
    const ran = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
    expect(ran.status, ran.stderr).toBe(0)
    const loaded = JSON.parse(ran.stdout) as Record<string, string>
    expect(Object.entries(loaded).filter(([, r]) => r !== 'ok')).toEqual([['knowhub/ai-sdk', "ERR_MODULE_NOT_FOUND: Cannot find package 'ai'"]])
  })

  it("docs/integrations.md's AI SDK example runs as written (the built package, plain node)", () => {
    const page = readFileSync(join(ROOT, 'docs', 'integrations.md'), 'utf8')
    const blocks = [...page.matchAll(/^```js runnable\n([\s\S]*?)^```/gm)].map((m) => m[1]!)
    expect(blocks).toHaveLength(1)
    expect(blocks[0]!.trim().split('\n').length).toBeLessThanOrEqual(12)
    // In the repository, where `knowhub` resolves to this package (package.json's exports) and `ai` is installed.
    mkdirSync(join(ROOT, '.test-tmp'), { recursive: true })
    const work = mkdtempSync(join(ROOT, '.test-tmp', 'ai-sdk-'))
    try {
      writeFileSync(join(work, 'example.mjs'), blocks[0]!)
      const agent = token('research_agent', 'docs', 'agent')
      const ran = spawnSync(process.execPath, [join(work, 'example.mjs')], {
        cwd: work,
        env: { PATH: process.env.PATH, HOME: dir, KNOWHUB_URL: server.url, KNOWHUB_TOKEN: agent },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(ran.status, ran.stderr).toBe(0)
      expect(ran.stdout).toMatch(/^Saved knowledge-\d{14}-[a-z0-9]{4} \(types strategy; scopes org:docs; owner agent:research_agent[^\n]*\n?[\s\S]* Saved\.\n$/)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  })

  it('is the package entry knowhub/ai-sdk (the built files)', async () => {
    const resolved = fileURLToPath(import.meta.resolve('knowhub/ai-sdk'))
    expect(resolved, 'run npm run build').toBe(join(ROOT, 'dist', 'ai-sdk', 'index.js'))
    const built = (await import('knowhub/ai-sdk')) as Record<string, unknown>
    expect(Object.keys(built).sort()).toEqual(['knowhubTools', 'withGoalFocus'])
  })
})
