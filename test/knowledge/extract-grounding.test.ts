/**
 * Grounded extraction (issue 43) on a real hub and the test's OpenAI-compatible server, with the
 * answers a small model gives scripted: a proposal the conversation does not support is dropped
 * with its reason (never saved), the turns that support a kept one are recorded (not the ids the
 * model cites), guesses and small talk support nothing, a user profile rests on the user's turns
 * only, an answer in the other language is kept only when grounded, an answer cut at max_tokens
 * is asked again with fewer messages, and one broken entry or decision does not sink the others.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { Principal } from '../../src/core/principal.js'
import { sql } from '../../src/store/sql.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'

const alice = Principal.parse({ user: 'alice', agent: 'coder', project: 'app', org: 'acme' })

type Reply = Record<string, unknown>
function model(stub: OpenAIStub, proposals: Reply[] | ((request: ChatRequest) => unknown), decide: () => unknown[] = () => []): void {
  stub.setChat((request: ChatRequest) => {
    const system = String(request.messages[0]?.content)
    if (system.includes('You extract reusable knowledge')) {
      const answer = typeof proposals === 'function' ? proposals(request) : { entries: proposals }
      return typeof answer === 'string' || (answer as { choices?: unknown }).choices ? (answer as string) : JSON.stringify(answer)
    }
    return JSON.stringify({ decisions: decide() })
  })
}
const entry = (content: string, extra: Reply = {}): Reply => ({ types: ['strategy'], task: 'Build the app image', content, message_ids: ['m0'], ...extra })

const build = [
  { id: 'b1', role: 'user', content: 'The Docker build failed because pnpm was missing.' },
  { id: 'b2', role: 'assistant', content: 'Running corepack enable before pnpm install fixed the build.' },
  { id: 'b3', role: 'user', content: 'Great, thanks! Nice weather today, by the way.' },
]

describe('grounded extraction', () => {
  let stub: OpenAIStub
  let hub: KnowHub

  beforeAll(async () => {
    stub = await startOpenAIStub()
    hub = await openKnowHub(
      {
        dataDir: 'memory://',
        embedder: { provider: 'hashed', dimension: 128 },
        search: { cacheSize: 0 },
        llm: { url: stub.url, model: 'small', timeoutMs: 5000, retries: 0 },
      },
      { llmRetryBaseDelayMs: 1 },
    )
  })
  afterAll(async () => {
    await hub.close()
    await stub.close()
  })
  beforeEach(async () => {
    await hub.store.db.query(sql`TRUNCATE knowledge, knowledge_feedback, knowledge_version, resources CASCADE`)
  })
  const entries = async () => (await hub.knowledge.list({ limit: 100 }, alice)).items

  it('drops what the conversation does not say, with the reason and the text for review; keeps and saves what it does, with its turns', async () => {
    model(stub, [
      entry('Run corepack enable before pnpm install in the Docker build.', { message_ids: ['b3', 'invented-7'] }),
      entry('Use Kubernetes with 3 replicas for the build.'),
      entry('Pin pnpm to version 9 in the Dockerfile.'),
    ])
    const result = await hub.extraction.extract({ messages: build, mode: 'save', context: { trace_id: 'tr-1' } }, alice)
    expect(result.items).toHaveLength(1)
    const [kept] = result.items
    // The turns that support it, whatever the model cited.
    expect(kept).toMatchObject({ action: 'add', message_ids: ['b1', 'b2'], turns: [0, 1], grounding: { coverage: 1, other_language: false } })
    expect(result.dropped).toEqual([
      { task: 'Build the app image', reason: 'ungrounded: numbers not in the conversation (3)', content: 'Use Kubernetes with 3 replicas for the build.' },
      { task: 'Build the app image', reason: 'ungrounded: numbers not in the conversation (9)', content: 'Pin pnpm to version 9 in the Dockerfile.' },
    ])
    const saved = await entries()
    expect(saved.map((e) => e.content)).toEqual(['Run corepack enable before pnpm install in the Docker build.'])
    expect(saved[0]).toMatchObject({ status: 'active', message_id: 'b1' })
    expect(saved[0]!.eval.helpful_history[0]).toMatchObject({ trace_id: 'tr-1', message_ids: ['b1', 'b2'], turns: [0, 1] })
  })

  it('takes no guess and no small talk for a fact, in English and in Chinese', async () => {
    const talk = [
      { role: 'user', content: 'I think the staging database is maybe on Frankfurt, not sure.' },
      { role: 'user', content: 'Hi! The weather is lovely today.' },
      { role: 'user', content: '你好！今天天气真好。' },
      { role: 'user', content: '测试服务器可能在上海机房，我不太确定。' },
    ]
    model(stub, [entry('The staging database is on Frankfurt.'), entry('The weather is lovely today.'), entry('今天天气真好'), entry('测试服务器在上海机房')])
    const result = await hub.extraction.extract({ messages: talk, mode: 'save' }, alice)
    expect(result.items).toEqual([])
    expect(result.dropped.map((d) => d.reason)).toEqual(Array(4).fill(expect.stringMatching(/^ungrounded: the conversation says nothing it could rest on/)))
    expect(await entries()).toEqual([])
  })

  it("rests a user profile on the user's own turns only; other knowledge on any turn", async () => {
    const talk = [
      { id: 'u1', role: 'user', content: 'Please format my files.' },
      { id: 'a1', role: 'assistant', content: 'I will indent your files with tabs of width 4 and use Prettier.' },
    ]
    const profile = entry('The user indents files with tabs of width 4 and uses Prettier.', { types: ['user_profile'], tags: { category: 'preference' } })
    model(stub, [profile, entry('Indent files with tabs of width 4 and use Prettier.')])
    const result = await hub.extraction.extract({ messages: talk }, alice)
    expect(result.items.map((i) => [i.types, i.message_ids])).toEqual([[['strategy'], ['a1']]])
    expect(result.dropped).toEqual([expect.objectContaining({ reason: expect.stringMatching(/^ungrounded: numbers not in the conversation \(4\)/) })])
  })

  it('keeps an answer in the other language only when the conversation supports it', async () => {
    const zh = [{ id: 'z1', role: 'user', content: '我们之前用 Java，现在改用 Python 3.12 了。' }]
    model(stub, [entry('The team now uses Python 3.12.'), entry('The team uses Python 3.12 with Django and Celery.')])
    const result = await hub.extraction.extract({ messages: zh }, alice)
    expect(result.items).toEqual([expect.objectContaining({ content: 'The team now uses Python 3.12.', grounding: { coverage: 1, other_language: true } })])
    expect(result.dropped).toEqual([expect.objectContaining({ reason: 'ungrounded: names not in the conversation (django, celery)' })])
  })

  it('asks again with the newest half of the messages when the answer is cut at max_tokens, and says so', async () => {
    const turns = Array.from({ length: 8 }, (_, i) => ({ id: `t${i}`, role: 'user', content: `Step ${i}: run corepack enable before pnpm install.` }))
    const seen: number[] = []
    model(stub, (request) => {
      const shown = (String(request.messages[1]!.content).match(/"id":"t\d"/gu) ?? []).length
      seen.push(shown)
      if (shown > 4)
        return { choices: [{ index: 0, message: { role: 'assistant', content: '{"entries": [{"types": ["strategy"], "task": "Bu' }, finish_reason: 'length' }] }
      return { entries: [entry('Run corepack enable before pnpm install.')] }
    })
    const result = await hub.extraction.extract({ messages: turns }, alice)
    expect(seen).toEqual([8, 4])
    expect(result.llm_calls).toBe(2)
    expect(result.problems).toEqual([
      { stage: 'propose', reason: 'truncated', detail: 'the answer was cut at max_tokens: asked again with the newest 4 of 8 messages' },
    ])
    // It rests on the turns the model was shown (the fewest that hold its words), not the older ones.
    expect(result.items).toEqual([expect.objectContaining({ turns: [4], message_ids: ['t4'] })])
    expect(hub.llm!.health().failures.truncated).toBeGreaterThanOrEqual(1)
  })

  it('drops an entry that breaks the schema and keeps the others; leaves out a broken decision and adds its proposal', async () => {
    model(stub, [entry('Run corepack enable before pnpm install.'), { types: ['nonsense'], task: 'Broken', content: 5 }])
    const first = await hub.extraction.extract({ messages: build, mode: 'save' }, alice)
    expect(first.items).toHaveLength(1)
    expect(first.dropped).toEqual([{ task: 'Broken', reason: expect.stringMatching(/^invalid: types/) }])
    model(stub, [entry('Run corepack enable before pnpm install.'), entry('Corepack enable fixed the pnpm build.')], () => [
      { proposal: 0, action: 'noop', existing_id: first.items[0]!.id },
      { proposal: 1, action: 'merge' },
    ])
    const second = await hub.extraction.extract({ messages: build }, alice)
    expect(second.items.map((i) => i.action)).toEqual(['noop', 'add'])
    expect(second.problems).toEqual([{ stage: 'decide', reason: 'invalid', detail: expect.stringContaining('a decision was left out') }])
  })

  it('refuses an update whose merged text the conversation and the entry do not support: the proposal is added', async () => {
    model(stub, [entry('Run corepack enable before pnpm install.')])
    const first = await hub.extraction.extract({ messages: build, mode: 'save' }, alice)
    const id = first.items[0]!.id!
    model(stub, [entry('Corepack enable fixed the pnpm build.')], () => [
      { proposal: 0, action: 'update', existing_id: id, content: 'Run corepack enable before pnpm install on Node 22 with Turborepo.' },
    ])
    const result = await hub.extraction.extract({ messages: build, mode: 'save' }, alice)
    expect(result.items).toEqual([expect.objectContaining({ action: 'add', content: 'Corepack enable fixed the pnpm build.' })])
    expect(result.refused).toEqual([expect.objectContaining({ action: 'update', existing_id: id, reason: expect.stringContaining('not supported') })])
    expect((await hub.knowledge.get(id, alice)).content).toBe('Run corepack enable before pnpm install.')
  })

  it('keeps a new fact that names what the entry it supersedes said (the turns and that entry support it); drops it as an addition', async () => {
    const before = [{ id: 'a1', role: 'user', content: 'The mobile app must support Android 8: the shops still use old tablets.' }]
    const after = [{ id: 'a2', role: 'user', content: 'All shop tablets were replaced; the minimum Android version is now 10.' }]
    const android = (content: string, ids: string[]): Reply => ({ types: ['strategy'], task: 'Minimum Android version of the app', content, message_ids: ids })
    model(stub, [android('The mobile app must support Android 8.', ['a1'])])
    const old = (await hub.extraction.extract({ messages: before, mode: 'save' }, alice)).items[0]!.id!
    // "mobile app" is said by the entry, not by the new turn: the turns alone do not support it.
    const newer = android('The mobile app needs Android 10 at least.', ['a2'])
    model(stub, [newer], () => [{ proposal: 0, action: 'add' }])
    const added = await hub.extraction.extract({ messages: after, mode: 'save' }, alice)
    expect(added.items).toEqual([])
    expect(added.dropped).toEqual([
      expect.objectContaining({ task: 'Minimum Android version of the app', content: 'The mobile app needs Android 10 at least.' }),
    ])
    model(stub, [newer], () => [{ proposal: 0, action: 'supersede', existing_id: old }])
    const result = await hub.extraction.extract({ messages: after, mode: 'save' }, alice)
    expect(result.dropped).toEqual([])
    expect(result.items).toEqual([expect.objectContaining({ action: 'supersede', content: 'The mobile app needs Android 10 at least.', message_ids: ['a2'] })])
    // A supersession that the entry does not support either stays dropped.
    const invented = android('The mobile app needs Android 12 on Samsung tablets.', ['a2'])
    model(stub, [invented], () => [{ proposal: 0, action: 'supersede', existing_id: result.items[0]!.id! }])
    const refused = await hub.extraction.extract({ messages: after, mode: 'save' }, alice)
    expect(refused.items).toEqual([])
    expect(refused.dropped).toEqual([expect.objectContaining({ reason: expect.stringContaining('12') })])
  })
})
