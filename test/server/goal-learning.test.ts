/**
 * Seed 002's trigger "任务完成:任务完成后的反思总结" (issue 41): completing a goal over real HTTP with
 * an LLM configured (the scripted stub) extracts knowledge from the goal, its summary and the trace the
 * request carries, saved with the goal's trace id; abandoning learns nothing; without an LLM the tree
 * says `not_configured` and `status` says when the hub learns by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { client, openTestHub, type Client, type TestHub } from './helpers.js'

const SUMMARY = 'Logged in to site A: undetected_chromedriver with random delays got past the bot check.'

describe('learning when a goal completes', () => {
  let stub: OpenAIStub
  let t: TestHub
  let bare: TestHub
  let api: Client
  let bareApi: Client
  const asked: ChatRequest[] = []

  beforeAll(async () => {
    stub = await startOpenAIStub({
      chat: (request) => {
        asked.push(request)
        if (String(request.messages[0]?.content).includes('free of duplicates')) return JSON.stringify({ decisions: [] })
        return JSON.stringify({
          entries: [{ types: ['tool'], task: 'Log in to site A', content: 'undetected_chromedriver with random delays got past the bot check.', tags: {} }],
        })
      },
    })
    t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 }, llm: { url: stub.url, model: 'm', retries: 0, timeoutMs: 10_000 } })
    bare = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
    api = client((await t.start()).url)
    bareApi = client((await bare.start()).url)
  })
  afterAll(async () => {
    await t?.close()
    await bare?.close()
    await stub?.close()
  })

  it('complete with a summary extracts from the goal, the summary and the given trace, saved under the goal`s trace', async () => {
    expect((await api.post('/api/goals', { action: 'create', trace_id: 'run-9', description: 'Log in to site A' })).status).toBe(200)
    const before = asked.length
    const done = await api.post('/api/goals', {
      action: 'complete',
      trace_id: 'run-9',
      goal_id: '1',
      summary: SUMMARY,
      messages: [{ role: 'user', content: 'Log in to site A; it blocks bots.' }],
    })
    expect(done.status, done.text).toBe(200)
    expect(done.body.extraction).toMatchObject({ status: 'saved' })
    const ids = done.body.extraction.ids as string[]
    expect(ids).toHaveLength(1)
    // The model saw the trace, the goal and its summary (as data).
    const sent = JSON.stringify(asked.slice(before).map((r) => r.messages))
    expect(sent).toContain('it blocks bots')
    expect(sent).toContain('random delays got past the bot check')
    const entry = await api.get(`/api/knowledge/${ids[0]}`)
    expect(entry.body).toMatchObject({ task: 'Log in to site A', source: { trace_id: 'run-9' } })
  })

  it('abandon learns nothing; complete without a summary or a trace skips; without an LLM: not_configured, and status says so', async () => {
    await api.post('/api/goals', { action: 'create', trace_id: 'run-10', description: 'Scrape site B' })
    await api.post('/api/goals', { action: 'create', trace_id: 'run-10', description: 'Scrape site C' })
    const calls = asked.length
    const abandoned = await api.post('/api/goals', { action: 'abandon', trace_id: 'run-10', goal_id: '1', summary: 'site B is gone' })
    expect(abandoned.body.extraction).toBeUndefined()
    const bare = await api.post('/api/goals', { action: 'complete', trace_id: 'run-10', goal_id: '2' })
    expect(bare.body.extraction).toEqual({ status: 'skipped', ids: [] })
    expect(asked.length).toBe(calls)
    await bareApi.post('/api/goals', { action: 'create', trace_id: 'run-11', description: 'Log in to site A' })
    const off = await bareApi.post('/api/goals', { action: 'complete', trace_id: 'run-11', goal_id: '1', summary: SUMMARY })
    expect(off.body.extraction).toEqual({ status: 'not_configured', ids: [] })
    expect((await api.get('/api/status')).body.llm.learning).toEqual({ on_compaction: true, on_goal_complete: true })
  })
})
