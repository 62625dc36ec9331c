/**
 * examples/agent-loop as an agent (seed 004 + 003) against a real server: the assembled
 * context of an agent stored on the server, a goal focused on the task, research saved,
 * the goal focused again with the new entry injected, then what the run taught extracted by the
 * server's LLM; and with a model (the OpenAI-compatible stub), the model starts from the assembled
 * context and the focused goal tree, and its conversation is extracted at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgent } from '../../examples/agent-loop/agent.js'
import { createClient } from '../../src/client/index.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

describe('examples/agent-loop as an agent', () => {
  let dir: string
  let t: TestHub
  let url: string
  let stub: OpenAIStub

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-agent-example-'))
    stub = await startOpenAIStub()
    t = await openTestHub({
      embedder: { provider: 'hashed', dimension: 128 },
      agent: { home: join(dir, 'agents') },
      llm: { url: stub.url, model: 'extractor', retries: 0, timeoutMs: 30_000 },
    })
    url = (await t.start()).url
    // The agent is stored on the server (its documents in the store): a server reads no agent folder for a caller.
    await createClient({ baseUrl: url }).agent.write('deployer', 'knowledge.md', { content: '## @deploy: ship a release\nContract: run the checks first.\n' })
  })
  afterAll(async () => {
    await stub?.close()
    await t?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The server's extraction (model `extractor`): one lesson from the run; its dedupe pass keeps it. */
  const extraction = (request: ChatRequest): string | undefined => {
    if (request.model !== 'extractor') return undefined
    if (String(request.messages[0]?.content).includes('free of duplicates')) return JSON.stringify({ decisions: [] })
    // What the run said (issue 43: extraction keeps only what the conversation supports).
    const lesson = { types: ['strategy'], task: 'Rotate credentials safely', content: 'Rotate database credentials without downtime.', message_ids: ['m2'] }
    return JSON.stringify({ entries: [lesson] })
  }

  it('without a model: context, goal focus, save, focus again (the new entry is injected), feedback, complete, extraction', async () => {
    stub.setChat((request) => extraction(request) ?? 'unused')
    const lines: string[] = []
    const report = await runAgent({
      knowhubUrl: url,
      agent: 'deployer',
      traceId: 'example-1',
      task: 'Rotate database credentials without downtime',
      log: (l) => lines.push(l),
    })
    expect(report.mode).toBe('agent-no-model')
    expect(report.steps.map((s) => [s.tool, String(s.args.action ?? ''), s.ok])).toEqual([
      ['goal', 'create', true],
      ['goal', 'focus', true],
      ['knowledge_save', '', true],
      ['goal', 'focus', true],
      ['knowledge_update', '', true],
      ['goal', 'complete', true],
      ['knowledge_extract', '', true],
    ])
    const id = String(report.steps[2]!.data!.id)
    expect(report.steps[1]!.text).toContain('📚 Related knowledge (0)')
    expect(report.steps[3]!.text).toContain('📚 Related knowledge (1)')
    expect(report.steps[3]!.text).toContain(id)
    expect(report.answer).toBe(`Focus found 0 related entries; saved ${id}; the next focus found 1.`)
    const learned = report.steps[6]!.data as { items: Array<{ action: string; id: string }> }
    expect(learned.items).toEqual([expect.objectContaining({ action: 'add' })])
    const entry = await createClient({ baseUrl: url }).knowledge.get(learned.items[0]!.id)
    expect(entry).toMatchObject({ task: 'Rotate credentials safely', source: { trace_id: 'example-1' } })
    expect(lines[1]).toMatch(
      /^Context of deployer: \d+ of 16000 tokens \(template included, task included, self_awareness\.md included, knowledge\.md included/,
    )
  })

  it('with a model: the model starts from the assembled context and the focused goal tree', async () => {
    const seen: ChatRequest[] = []
    stub.setChat((request) => {
      const extracted = extraction(request)
      if (extracted) return extracted
      seen.push(structuredClone(request))
      return 'Rotate with a dual-credential window.'
    })
    const report = await runAgent({
      knowhubUrl: url,
      agent: 'deployer',
      task: 'Rotate database credentials without downtime',
      model: { baseUrl: stub.url, model: 'stub-chat' },
    })
    expect(report).toMatchObject({ mode: 'model', answer: 'Rotate with a dual-credential window.' })
    const messages = seen[0]!.messages
    expect(messages[0]!.role).toBe('system')
    expect(String(messages[0]!.content)).toContain('You are the agent "deployer"')
    expect(String(messages[0]!.content)).toContain('Contract: run the checks first.')
    const task = messages.at(-1)!
    expect(task.role).toBe('user')
    expect(String(task.content)).toContain('🎯 Goal tree')
    // The first run's research entry and the lesson extracted from it are there to inject.
    expect(Number(/📚 Related knowledge \((\d+)\)/.exec(String(task.content))?.[1])).toBeGreaterThanOrEqual(1)
    expect((seen[0]!.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).toContain('goal')
    // The conversation, without the system prompt, went to the server's extraction at the end.
    expect(report.steps.at(-1)).toMatchObject({ tool: 'knowledge_extract', ok: true })
    const sent = stub.requests.filter((r) => (r.body as ChatRequest).model === 'extractor').map((r) => JSON.stringify(r.body))
    expect(sent.some((body) => body.includes('Rotate with a dual-credential window.'))).toBe(true)
    expect(sent.some((body) => body.includes('You are the agent \\"deployer\\"'))).toBe(false)
  })
})
