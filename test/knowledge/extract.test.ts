/**
 * Knowledge extraction from conversations (seed 002) on a real hub and a real
 * OpenAI-compatible HTTP server: proposals, ADD/UPDATE/NOOP, user-profile accumulation,
 * language, secrets, the execution context, the LLM call budget and every bad answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import type { ErrorCode } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { sql } from '../../src/store/sql.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'

const alice = Principal.parse({ user: 'alice', agent: 'coder', project: 'app', org: 'acme' })
const bob = Principal.parse({ user: 'bob', project: 'app', org: 'acme' })

type Reply = Record<string, unknown>
/** A scripted model: proposals for the proposal request, decisions for the decision request. */
function model(stub: OpenAIStub, proposals: Reply[], decide: (body: string) => Reply[] = () => []): void {
  stub.setChat((request: ChatRequest) => {
    const system = String(request.messages[0]?.content)
    if (system.includes('You extract reusable knowledge')) return JSON.stringify({ entries: proposals })
    return JSON.stringify({ decisions: decide(String(request.messages[1]?.content)) })
  })
}

const conversation = [
  { id: 'msg-1', role: 'user', content: 'Please always use TypeScript, never plain JavaScript. I care about type safety.' },
  { id: 'msg-2', role: 'assistant', content: 'Understood, I will write TypeScript.' },
  { id: 'msg-3', role: 'user', content: 'The Docker build failed because pnpm was missing.' },
  { id: 'msg-4', role: 'assistant', content: 'Running corepack enable before pnpm install fixed the build.' },
]

const profile = {
  types: ['user_profile'],
  task: 'Coding style preference of the user',
  content: 'The user prefers TypeScript over JavaScript and cares about type safety.',
  tags: { category: 'preference', domain: 'coding_style' },
  message_ids: ['msg-1', 'invented-9'],
}
const strategy = {
  types: ['strategy', 'tool'],
  task: 'Install dependencies with pnpm in a Docker build',
  content: 'Run corepack enable before pnpm install; without it pnpm is missing in node images.',
  tags: { domain: 'ci' },
  message_ids: ['msg-3', 'msg-4'],
}

describe('knowledge extraction', () => {
  let stub: OpenAIStub
  let hub: KnowHub

  beforeAll(async () => {
    stub = await startOpenAIStub()
    hub = await openKnowHub(
      {
        dataDir: 'memory://',
        embedder: { provider: 'hashed', dimension: 128 },
        search: { cacheSize: 0 },
        // 1.5 s: the first attempt of a call on a loaded 2-core machine can pass 400 ms (the retry then doubles the request count).
        llm: { url: stub.url, model: 'extractor', timeoutMs: 4000, retries: 1 },
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

  const entries = async (principal = alice) => (await hub.knowledge.list({ limit: 100 }, principal)).items
  const resources = async () => (await hub.store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM resources`))[0]!.n

  it('proposes without writing: scopes and owner from the context, message ids only the real ones', async () => {
    model(stub, [profile, strategy])
    const before = stub.requests.length
    const result = await hub.extraction.extract({ messages: conversation, context: { trace_id: 'trace-7' } }, alice)
    expect(result).toMatchObject({ mode: 'propose', llm_calls: 1, secrets_found: 0, dropped: [] })
    expect(result.items).toEqual([
      expect.objectContaining({ action: 'add', id: null, scopes: ['user:alice'], owner: 'user:alice', message_ids: ['msg-1'], confidence: 0.5 }),
      expect.objectContaining({ action: 'add', id: null, scopes: ['project:app'], owner: 'agent:coder', message_ids: ['msg-3', 'msg-4'] }),
    ])
    expect(stub.requests.length - before).toBe(1)
    const sent = stub.requests.at(-1)!.body as ChatRequest
    expect(sent.model).toBe('extractor')
    expect(String(sent.messages[1]!.content)).toContain(JSON.stringify(conversation[0]!.content))
    expect(await entries()).toEqual([])
  })

  it('saves new entries with helpful 1 and confidence 0.5, the source and message ids kept', async () => {
    model(stub, [profile, strategy])
    const result = await hub.extraction.extract({ messages: conversation, context: { trace_id: 'trace-7' }, mode: 'save' }, alice)
    const [p, s] = result.items
    const saved = await hub.knowledge.get(s!.id!, alice)
    expect(saved).toMatchObject({ types: ['strategy', 'tool'], scopes: ['project:app'], owner: 'agent:coder', message_id: 'msg-3' })
    expect(saved.source).toMatchObject({ agent_id: 'coder', trace_id: 'trace-7', message_id: 'msg-3' })
    expect(saved.eval).toMatchObject({ helpful: 1, harmful: 0, confidence: 0.5 })
    expect(saved.eval.helpful_history[0]).toMatchObject({ trace_id: 'trace-7', message_ids: ['msg-3', 'msg-4'] })
    expect((await hub.knowledge.get(p!.id!, alice)).tags).toEqual({ category: 'preference', domain: 'coding_style' })
  })

  it('accumulates a user profile: a restatement is a NOOP that raises confidence, a contradiction a new version that lowers it', async () => {
    model(stub, [profile])
    const first = await hub.extraction.extract({ messages: conversation.slice(0, 1), mode: 'save' }, alice)
    const id = first.items[0]!.id!

    let shown = ''
    model(stub, [{ ...profile, content: 'The user wants TypeScript, not JavaScript.' }], (body) => {
      shown = body
      return [{ proposal: 0, action: 'noop', existing_id: id }]
    })
    const again = await hub.extraction.extract({ messages: conversation.slice(0, 1), mode: 'save' }, alice)
    expect(again.llm_calls).toBe(2)
    expect(shown).toContain(id)
    expect(again.items[0]).toMatchObject({ action: 'noop', id, existing_id: id })
    expect(again.items[0]!.confidence).toBeCloseTo(0.635, 3)
    const confirmed = await hub.knowledge.get(id, alice)
    expect(confirmed.eval).toMatchObject({ helpful: 2 })
    expect(confirmed.version).toBe(1)

    model(stub, [{ ...profile, content: 'The user now prefers Go for backend services.' }], () => [
      {
        proposal: 0,
        action: 'update',
        existing_id: id,
        content: 'The user prefers Go for backend services and TypeScript for the frontend.',
        contradicts: true,
      },
    ])
    const contradicted = await hub.extraction.extract({ messages: [{ role: 'user', content: 'Actually use Go for the backend.' }], mode: 'save' }, alice)
    expect(contradicted.items[0]).toMatchObject({ action: 'update', id })
    const after = await hub.knowledge.get(id, alice)
    expect(after.content).toBe('The user prefers Go for backend services and TypeScript for the frontend.')
    expect(after.eval.confidence).toBeCloseTo(0.635 + (0.1 - 0.635) * 0.5, 3)
    expect(after.version).toBe(2)
    expect((await hub.knowledge.versions(id, alice)).map((v) => v.content)).toEqual([profile.content])
    expect(await entries()).toHaveLength(1)
  })

  it('ignores decisions about entries that were not candidates, and adds', async () => {
    model(stub, [strategy])
    await hub.extraction.extract({ messages: conversation, mode: 'save' }, alice)
    model(stub, [strategy], () => [{ proposal: 0, action: 'update', existing_id: 'knowledge-20200101000000-zzzz', content: 'x' }])
    const result = await hub.extraction.extract({ messages: conversation, mode: 'save' }, alice)
    expect(result.items[0]).toMatchObject({ action: 'add' })
    expect(await entries()).toHaveLength(2)
  })

  it("adds its own entry instead of updating one the caller may not edit; the other's entry stays as it was", async () => {
    model(stub, [strategy])
    const mine = (await hub.extraction.extract({ messages: conversation, mode: 'save' }, alice)).items[0]!
    const before = await hub.knowledge.get(mine.id!, alice)
    model(stub, [{ ...strategy }], () => [{ proposal: 0, action: 'update', existing_id: mine.id, content: 'bob rewrites it' }])
    const result = await hub.extraction.extract({ messages: conversation, mode: 'save' }, bob)
    expect(result.items[0]).toMatchObject({ action: 'add', owner: 'user:bob', scopes: ['project:app'] })
    expect(await hub.knowledge.get(mine.id!, alice)).toEqual(before)
  })

  it('makes at most 2 LLM calls for a conversation of 50 turns, all turns in one request', async () => {
    const turns = Array.from({ length: 50 }, (_, i) => ({
      id: `t${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `turn ${i}: step ${i} of the deployment with pnpm and docker: run corepack enable before pnpm install, without it pnpm is missing in node images; mount the pnpm store as a build cache`,
    }))
    model(stub, [strategy])
    await hub.extraction.extract({ messages: turns, mode: 'save' }, alice)
    model(stub, [strategy, { ...strategy, task: 'Cache the pnpm store in Docker builds', content: 'Mount the pnpm store as a build cache.' }], () => [
      { proposal: 0, action: 'noop', existing_id: null },
    ])
    const before = stub.requests.length
    const result = await hub.extraction.extract({ messages: turns, mode: 'save' }, alice)
    // Two distinct requests: a retry after a timeout on a loaded machine resends the same body, it is not another call.
    expect(new Set(stub.requests.slice(before).map((r) => JSON.stringify(r.body))).size).toBe(2)
    expect(result.llm_calls).toBe(2)
    const conversationSent = String((stub.requests[before]!.body as ChatRequest).messages[1]!.content)
    expect(turns.every((t) => conversationSent.includes(t.content))).toBe(true)
  })

  it('keeps Chinese conversations in Chinese', async () => {
    const zh = [
      { id: 'z1', role: 'user', content: '我更喜欢用 TypeScript 写代码,不用 JavaScript,注重类型安全。' },
      { id: 'z2', role: 'assistant', content: '好的,以后都用 TypeScript。' },
    ]
    model(stub, [
      {
        types: ['user_profile'],
        task: '用户编码风格偏好',
        content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全',
        tags: { category: 'preference', domain: 'coding_style' },
        message_ids: ['z1'],
      },
    ])
    const before = stub.requests.length
    const result = await hub.extraction.extract({ messages: zh, mode: 'save' }, alice)
    expect(String((stub.requests[before]!.body as ChatRequest).messages[0]!.content)).toContain('Write task and content in Chinese')
    const saved = await hub.knowledge.get(result.items[0]!.id!, alice)
    expect(saved).toMatchObject({ task: '用户编码风格偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全' })
    expect((await hub.knowledge.search({ q: '用户喜欢什么样的编码风格' }, alice)).results.map((r) => r.id)).toEqual([saved.id])
  })

  it('never sends secrets to the model nor puts them in entries: they go into a resource secure_body', async () => {
    const secrets = ['SecurePass123!', 'session_id=9f8e7d6c5b4a', 'sk-proj-Zx81Lq0Wm3Pe9Rt7Yu5Io2', 'ghp_16C7e42F292c6912E7710c838347Ae178B4a']
    const leaky = [
      { id: 's1', role: 'user', content: `Log in to the admin site with user ops@example.com, 密码: ${secrets[0]}` },
      { id: 's2', role: 'user', content: `If login is flaky, reuse the cookie. Cookie: ${secrets[1]}; theme=dark` },
      { id: 's3', role: 'assistant', content: `Use the API key ${secrets[2]} and, for GitHub, the Bearer token: ${secrets[3]}` },
    ]
    model(stub, [
      {
        types: ['tool', 'usecase'],
        task: 'Log in to the admin site',
        content: 'Log in as ops@example.com with password [SECRET_1]; reuse the cookie when login is flaky.',
        message_ids: ['s1', 's2'],
      },
      {
        types: ['tool'],
        task: 'Call the API',
        // The model copied a secret, and wrote one of its own.
        content: `Use the API key ${secrets[2]} and, for GitHub, the token Bearer abcdefghijklmnopqrstuvwx.`,
        message_ids: [],
      },
    ])
    const before = stub.requests.length
    const result = await hub.extraction.extract({ messages: leaky, mode: 'save' }, alice)
    const sent = JSON.stringify(stub.requests.slice(before).map((r) => r.body))
    for (const secret of secrets) expect(sent).not.toContain(secret.replace('session_id=', ''))
    expect(result.secrets_found).toBeGreaterThanOrEqual(4)
    expect(result.resources_created).toHaveLength(1)
    const [login, api] = result.items
    const resourceId = result.resources_created[0]!
    expect(login!.resource_ids).toEqual([resourceId])
    expect(login!.content).toContain(`[secret stored in resource ${resourceId}]`)
    for (const item of result.items) {
      const entry = await hub.knowledge.get(item.id!, alice)
      for (const secret of [...secrets, 'abcdefghijklmnopqrstuvwx']) expect(JSON.stringify(entry)).not.toContain(secret.replace('session_id=', ''))
    }
    expect(api!.content).toContain('[redacted]')
    const resource = await hub.resources.get(resourceId, { ...alice, permissions: ['read', 'secrets:read'] }, { includeSecret: true })
    // A user's conversation secrets are the user's, not the project's (issue 27): bob, in the
    // same project and org, sees the entries but not the resource.
    expect(resource).toMatchObject({ content_type: 'credential', scopes: ['user:alice'], owner: 'user:alice' })
    expect(resource.secure_body).toContain(secrets[0])
    expect(resource.secure_body).toContain('9f8e7d6c5b4a')
    expect((await rejection(hub.resources.get(resourceId, { ...bob, permissions: ['read', 'secrets:read'] }))).code).toBe('not_found')
  })

  it('puts the secrets in a wider scope only when the caller says so, and only one of its own', async () => {
    const leaky = [{ id: 's1', role: 'user', content: 'Deploy with mysql -u root -pPassw0rd9 on the staging box' }]
    model(stub, [{ types: ['tool'], task: 'Deploy to staging', content: 'Deploy with mysql -u root [SECRET_1] on the staging box.', message_ids: ['s1'] }])
    const result = await hub.extraction.extract({ messages: leaky, mode: 'save', context: { secrets_scope: 'project' } }, alice)
    const resource = await hub.resources.get(result.resources_created[0]!, { ...bob, permissions: ['read', 'secrets:read'] }, { includeSecret: true })
    expect(resource).toMatchObject({ scopes: ['project:app'], owner: 'agent:coder' })
    expect(resource.secure_body).toContain('Passw0rd9')
    const error = await rejection(hub.extraction.extract({ messages: leaky, mode: 'save', context: { secrets_scope: 'team' } }, alice))
    expect(error.code).toBe('validation_error')
    expect(error.message).toContain('no team id')
  })

  it('refuses a context naming ids the caller does not hold, before calling the model', async () => {
    const before = stub.requests.length
    const error = await rejection(hub.extraction.extract({ messages: conversation, context: { project: 'secret-project' }, mode: 'save' }, alice))
    expect(error.code).toBe('forbidden')
    expect(error.message).toContain('project:secret-project')
    expect(stub.requests.length).toBe(before)
    expect((await rejection(hub.extraction.extract({ messages: [] }, alice))).code).toBe('validation_error')
  })

  // An answer the model gets wrong even after the repair request is handled (issue 43): see below.
  const badAnswers: Array<[string, () => void, ErrorCode]> = [
    ['HTTP 500', () => stub.failNext(2, 500), 'llm_failed'],
    ['a timeout', () => stub.hangNext(2), 'llm_timeout'],
  ]
  it.each(badAnswers)('changes nothing on %s, with a clear code', async (_name, arrange, code) => {
    model(stub, [strategy])
    const existing = (await hub.extraction.extract({ messages: conversation, mode: 'save' }, alice)).items[0]!
    const snapshot = await entries()
    arrange()
    const leaky = [...conversation, { id: 'x', role: 'user', content: 'password: Hunter2Hunter2' }]
    const error = await rejection(hub.extraction.extract({ messages: leaky, mode: 'save' }, alice))
    expect(error.code).toBe(code)
    expect(error.details).toMatchObject({ task: 'extract' })
    expect(await entries()).toEqual(snapshot)
    expect(await hub.knowledge.get(existing.id!, alice)).toEqual(snapshot[0])
    expect(await resources()).toBe(0)
  })

  const unusable: Array<[string, () => void, string]> = [
    ['garbage text', () => stub.setChat(() => 'Here are some thoughts about the conversation...'), 'not_json'],
    ['schema-violating JSON', () => stub.setChat(() => JSON.stringify({ entries: [{ types: ['nonsense'], task: '', content: 5 }] })), 'schema'],
  ]
  it.each(unusable)('answers %s after the repair request with the reason, not an error, and changes nothing (issue 43)', async (_name, arrange, reason) => {
    model(stub, [strategy])
    const existing = (await hub.extraction.extract({ messages: conversation, mode: 'save' }, alice)).items[0]!
    const snapshot = await entries()
    arrange()
    const leaky = [...conversation, { id: 'x', role: 'user', content: 'password: Hunter2Hunter2' }]
    const result = await hub.extraction.extract({ messages: leaky, mode: 'save' }, alice)
    expect(result).toMatchObject({ items: [], problems: [{ stage: 'propose', reason, detail: expect.stringContaining('nothing was proposed') }] })
    expect(await entries()).toEqual(snapshot)
    expect(await hub.knowledge.get(existing.id!, alice)).toEqual(snapshot[0])
    expect(await resources()).toBe(0)
  })
})
