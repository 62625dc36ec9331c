/**
 * Slimming with an LLM against a real OpenAI-compatible HTTP server: the merged text is the
 * model's (with the request's `model`), a dry run shows it, counters are summed, un-merge
 * restores the originals, different scope sets are never joined, and a failing model (or a merged
 * text the entries do not support) leaves the group as it was.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { KnowledgeEntry } from '../../src/core/knowledge.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { slimKnowledge, unmergeKnowledge, type SlimDeps } from '../../src/knowledge/slim/slim.js'
import { createOpenAIChat } from '../../src/llm/openai.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestStore } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1', org: 'acme' })
const LOGIN = {
  task: 'Log in to site A with selenium',
  content: 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent. Add random delays.',
}
const LOGIN_DUP = {
  task: 'Log in to site A with selenium',
  content: 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent. Add random delays. Sessions last 2 hours.',
}
const MERGED = 'Use undetected_chromedriver with a realistic user agent and random delays; sessions last 2 hours.'

describe('slim with an LLM', () => {
  let stub: OpenAIStub
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let deps: SlimDeps
  let impatient: SlimDeps

  beforeAll(async () => {
    stub = await startOpenAIStub()
    const opened = await openTestStore('pglite')
    store = opened.store
    cleanup = opened.cleanup
    const embedder = createHashedEmbedder({ dimension: 256 })
    knowledge = await createKnowledgeService({ store, embedder })
    // A timeout sized for a loaded two-core machine: the stub in this process may answer late under load (issue 42).
    const llm = createOpenAIChat({ url: stub.url, model: 'default', models: { slim: 'slim-model' }, retries: 0, timeoutMs: 30_000 })
    deps = { store, embedder, llm }
    // Only the timeout case waits for a timeout: a short one, on its own provider.
    impatient = { ...deps, llm: createOpenAIChat({ url: stub.url, model: 'default', models: { slim: 'slim-model' }, retries: 0, timeoutMs: 300 }) }
  })
  afterAll(async () => {
    await cleanup()
    await stub.close()
  })
  beforeEach(async () => void (await store.db.query(sql`DELETE FROM knowledge`)))

  const save = (text: { task: string; content: string }, extra: Record<string, unknown> = {}): Promise<KnowledgeEntry> =>
    knowledge.save({ ...text, types: ['tool'], scopes: ['org:acme'], ...extra }, alice)
  const snapshot = () => store.db.query(sql`SELECT id, status, merged_into, content, helpful, version FROM knowledge ORDER BY id`)

  it('shows the model-written text in a dry run and writes it on the run; counters summed; un-merge restores', async () => {
    const a = await save(LOGIN)
    const b = await save(LOGIN_DUP)
    await knowledge.feedback(a.id, { add_helpful_case: { task: 't1' } }, alice)
    await knowledge.feedback(b.id, { add_helpful_case: { task: 't2' } }, alice)
    stub.setChat(() => JSON.stringify({ content: MERGED }))
    const before = await snapshot()
    const sentBefore = stub.requests.length
    const plan = await slimKnowledge(deps, { dry_run: true, model: 'google/gemini-2.0-flash-001' }, alice)
    expect(plan.groups).toEqual([expect.objectContaining({ kept_id: null, merged_content: MERGED, merge: 'llm' })])
    expect(await snapshot()).toEqual(before)
    const request = stub.requests[sentBefore]!.body as ChatRequest
    expect(request.model).toBe('google/gemini-2.0-flash-001')
    expect(String(request.messages[1]!.content)).toContain(JSON.stringify(LOGIN_DUP.content))

    const done = await slimKnowledge(deps, {}, alice)
    expect((stub.requests.at(-1)!.body as ChatRequest).model).toBe('slim-model')
    const kept = await knowledge.get(done.groups[0]!.kept_id!, alice)
    expect(kept).toMatchObject({ content: MERGED, scopes: ['org:acme'], eval: expect.objectContaining({ helpful: 2 }) })
    expect((await knowledge.get(a.id, alice)).status).toBe('merged')
    await unmergeKnowledge(deps, kept.id, alice)
    expect((await knowledge.get(a.id, alice)).content).toBe(LOGIN.content)
    expect((await knowledge.get(b.id, alice)).status).toBe('active')
  })

  it('never joins entries whose scope sets differ, and asks the model nothing for them', async () => {
    await save(LOGIN)
    await save(LOGIN_DUP, { scopes: ['project:p1'] })
    const sentBefore = stub.requests.length
    const plan = await slimKnowledge(deps, { dry_run: true }, alice)
    expect(plan.groups).toEqual([])
    expect(plan.skipped.map((s) => s.reason)).toEqual(['scopes_differ'])
    expect(stub.requests.length).toBe(sentBefore)
  })

  it.each([
    ['garbage', () => stub.setChat(() => 'merged! looks good'), false],
    ['schema-violating JSON', () => stub.setChat(() => JSON.stringify({ text: MERGED })), false],
    ['HTTP 500', () => stub.failNext(1, 500), false],
    ['a timeout', () => stub.hangNext(1), true],
  ])('leaves the group as it was on %s, reported as llm_failed', async (_name, arrange, short) => {
    await save(LOGIN)
    await save(LOGIN_DUP)
    const before = await snapshot()
    arrange()
    const result = await slimKnowledge(short ? impatient : deps, {}, alice)
    expect(result).toMatchObject({ merged: 0, groups: [] })
    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'llm_failed', message: expect.stringMatching(/llm_(invalid_output|failed|timeout)/) })])
    expect(await snapshot()).toEqual(before)
  })

  it('leaves the group as it was when the merged text says what neither entry does (issue 43), reported as ungrounded', async () => {
    await save(LOGIN)
    await save(LOGIN_DUP)
    const before = await snapshot()
    stub.setChat(() => JSON.stringify({ content: 'Use Playwright with a residential proxy in Frankfurt; sessions last 6 hours.' }))
    const result = await slimKnowledge(deps, {}, alice)
    expect(result).toMatchObject({ merged: 0, groups: [] })
    expect(result.skipped).toEqual([expect.objectContaining({ reason: 'ungrounded', message: expect.stringContaining('not in the entries') })])
    expect(await snapshot()).toEqual(before)
  })
})
