/**
 * Extraction's SUPERSEDE decision (issue 31) on every backend, with a real OpenAI-compatible
 * HTTP server answering scripted decisions: a statement that a fact changed closes the old
 * entry (valid_to = when it was said, superseded_by) and adds the new one (valid_from = the
 * message's time, supersedes) in one transaction; search then answers with the new fact, and
 * `as_of` with the old one. A decision naming an entry that is unknown, not visible or not the
 * caller's to edit is refused and reported, and the proposal is added: nothing is lost. A
 * malformed answer (after its repair request) drops the proposal it was about, says why, and
 * changes nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { Principal } from '../../src/core/principal.js'
import { sql } from '../../src/store/sql.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type ChatRequest, type OpenAIStub } from '../helpers/openai-stub.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', agent: 'coder', project: 'app', org: 'acme' })
const bob = Principal.parse({ user: 'bob', project: 'other', org: 'acme' })
const carol = Principal.parse({ user: 'carol', project: 'app', org: 'acme' })

type Reply = Record<string, unknown>
/** A scripted model: proposals for the proposal request, decisions (from the request's data) for the decision request. */
function model(stub: OpenAIStub, proposals: Reply[], decide: (asked: DecisionCase[]) => Reply[] = () => []): void {
  stub.setChat((request: ChatRequest) => {
    const system = String(request.messages[0]?.content)
    if (system.includes('You extract reusable knowledge')) return JSON.stringify({ entries: proposals })
    const text = String(request.messages[1]?.content)
    return JSON.stringify({ decisions: decide(JSON.parse(text.slice(text.indexOf('\n') + 1)) as DecisionCase[]) })
  })
}
interface DecisionCase {
  proposal: number
  stated_at?: string
  candidates: Array<{ id: string; content: string }>
}

const jenkins = {
  types: ['tool'],
  task: 'Continuous integration system of the team',
  content: 'The team runs CI on Jenkins: every merge to main triggers the Jenkins pipeline.',
  tags: { domain: 'ci' },
  message_ids: ['c1'],
}
const actions = {
  types: ['tool'],
  task: 'Continuous integration system of the team',
  content: 'The team runs CI on GitHub Actions; the workflows are in .github/workflows.',
  tags: { domain: 'ci' },
  message_ids: ['c2'],
}
const jenkinsTalk = [{ id: 'c1', role: 'user', content: 'Our CI runs on Jenkins, every merge triggers the pipeline.', timestamp: '2025-01-14T09:10:00Z' }]
const movedTalk = [
  {
    id: 'c2',
    role: 'user',
    content: 'We moved CI from Jenkins to GitHub Actions last week: the workflows are in .github/workflows, on self-hosted runners.',
    timestamp: '2025-05-20T14:02:00Z',
  },
]

/** Supersede the candidate whose content is `content`. */
const supersedeWhere =
  (content: string) =>
  (asked: DecisionCase[]): Reply[] =>
    asked.map((a) => ({ proposal: a.proposal, action: 'supersede', existing_id: a.candidates.find((c) => c.content === content)?.id ?? null }))

describe.each(BACKENDS)('extraction SUPERSEDE on %s', (backend) => {
  let stub: OpenAIStub
  let hub: KnowHub
  let database: TestDatabase

  beforeAll(async () => {
    stub = await startOpenAIStub()
    database = await createTestDatabase(backend)
    hub = await openKnowHub(
      {
        ...database.options,
        embedder: { provider: 'hashed', dimension: 128 },
        search: { cacheSize: 0 },
        llm: { url: stub.url, model: 'extractor', timeoutMs: 30_000, retries: 0 },
      },
      { llmRetryBaseDelayMs: 1 },
    )
  })
  afterAll(async () => {
    await hub.close()
    await database.drop()
    await stub.close()
  })
  beforeEach(async () => {
    await hub.store.db.query(sql`TRUNCATE knowledge, knowledge_feedback, knowledge_version, resources CASCADE`)
  })

  const rows = async () =>
    hub.store.db.query<{ id: string; valid_from: Date; valid_to: Date | null; superseded_by: string | null; supersedes: string | null }>(
      sql`SELECT id, valid_from, valid_to, superseded_by, supersedes FROM knowledge ORDER BY created_at, id`,
    )
  const saveJenkins = async (principal = alice) => {
    model(stub, [jenkins])
    const added = await hub.extraction.extract({ messages: jenkinsTalk, mode: 'save' }, principal)
    expect(added.items[0]).toMatchObject({ action: 'add' })
    return added.items[0]!.id!
  }

  it('"we moved from Jenkins to GitHub Actions": closes the old entry and adds the new one, valid from the message time', async () => {
    const old = await saveJenkins()
    expect((await hub.knowledge.get(old, alice)).valid_from).toBe('2025-01-14T09:10:00.000Z')
    let asked: DecisionCase[] = []
    model(stub, [actions], (cases) => {
      asked = cases
      return supersedeWhere(jenkins.content)(cases)
    })
    const before = stub.requests.length
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save', context: { trace_id: 'trace-9' } }, alice)
    expect(result.llm_calls).toBe(2)
    expect(result.refused).toEqual([])
    expect(asked).toEqual([expect.objectContaining({ proposal: 0, stated_at: '2025-05-20T14:02:00.000Z' })])
    expect(asked[0]!.candidates.map((c) => c.id)).toContain(old)
    const decideRequest = stub.requests[before + 1]!.body as ChatRequest
    expect(String(decideRequest.messages[0]!.content)).toContain('"supersede"')
    const item = result.items[0]!
    expect(item).toMatchObject({ action: 'supersede', existing_id: old, content: actions.content, reason: `supersedes ${old}` })
    expect(item.id).not.toBe(old)
    const closed = await hub.knowledge.get(old, alice)
    const current = await hub.knowledge.get(item.id!, alice)
    expect(closed).toMatchObject({ content: jenkins.content, valid_to: '2025-05-20T14:02:00.000Z', superseded_by: item.id, version: 1 })
    expect(current).toMatchObject({ valid_from: '2025-05-20T14:02:00.000Z', valid_to: null, supersedes: old, superseded_by: null, owner: 'agent:coder' })
    expect(current.source).toMatchObject({ trace_id: 'trace-9', message_id: 'c2', timestamp: '2025-05-20T14:02:00.000Z' })
    expect(current.eval.helpful_history[0]).toMatchObject({ outcome: 'superseded an entry from a conversation', message_ids: ['c2'] })
    // Search answers with the current fact; as of March it answers with the old one.
    const now = await hub.knowledge.search({ q: 'What does the team run CI on?', top_k: 5 }, alice)
    expect(now.results.map((r) => r.id)).toEqual([item.id])
    const then = await hub.knowledge.search({ q: 'What did the team run CI on?', top_k: 5, as_of: '2025-03-01' }, alice)
    expect(then.results.map((r) => r.id)).toEqual([old])
    expect(await rows()).toHaveLength(2)
  })

  it('"用户现在改用 Python 了": a user profile is superseded in Chinese; the old one stays, closed', async () => {
    const r = {
      types: ['user_profile'],
      task: '用户做数据分析用的编程语言',
      content: '用户做数据分析用 R 语言。',
      tags: { category: 'preference', domain: '编程语言' },
      message_ids: ['z1'],
    }
    const python = { ...r, content: '用户现在改用 Python 了,分析代码用 pandas 写。', message_ids: ['z2'] }
    model(stub, [r])
    const first = await hub.extraction.extract(
      { messages: [{ id: 'z1', role: 'user', content: '我做数据分析一直用 R 语言。', timestamp: '2024-05-13T12:00:00+08:00' }], mode: 'save' },
      alice,
    )
    const old = first.items[0]!.id!
    model(stub, [python], supersedeWhere(r.content))
    const second = await hub.extraction.extract(
      { messages: [{ id: 'z2', role: 'user', content: '我现在改用 Python 了,以后分析代码都用 pandas 写。', timestamp: '2024-11-25' }], mode: 'save' },
      alice,
    )
    expect(second.items[0]).toMatchObject({ action: 'supersede', existing_id: old, scopes: ['user:alice'], owner: 'user:alice', confidence: 0.5 })
    expect(await hub.knowledge.get(old, alice)).toMatchObject({
      valid_from: '2024-05-13T04:00:00.000Z',
      valid_to: '2024-11-25T00:00:00.000Z',
      superseded_by: second.items[0]!.id,
    })
    const found = await hub.knowledge.search({ q: '用户用什么语言做数据分析?', top_k: 5 }, alice)
    expect(found.results.map((x) => x.content)).toEqual([python.content])
  })

  it('proposes without writing: the supersede is reported, nothing is closed', async () => {
    const old = await saveJenkins()
    model(stub, [actions], supersedeWhere(jenkins.content))
    const result = await hub.extraction.extract({ messages: movedTalk }, alice)
    expect(result.items).toEqual([expect.objectContaining({ action: 'supersede', id: null, existing_id: old })])
    expect(await rows()).toEqual([expect.objectContaining({ id: old, valid_to: null, superseded_by: null })])
  })

  it('refuses an unknown target id: the proposal is added, the refusal reported, nothing closed', async () => {
    const old = await saveJenkins()
    model(stub, [actions], () => [{ proposal: 0, action: 'supersede', existing_id: 'knowledge-20200101000000-zzzz' }])
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save' }, alice)
    expect(result.items[0]).toMatchObject({ action: 'add', existing_id: null, content: actions.content })
    expect(result.refused).toEqual([
      {
        task: actions.task,
        action: 'supersede',
        existing_id: 'knowledge-20200101000000-zzzz',
        reason: expect.stringContaining('not among the similar entries'),
      },
    ])
    expect((await rows()).map((r) => [r.id === old, r.valid_to, r.superseded_by])).toEqual([
      [true, null, null],
      [false, null, null],
    ])
  })

  it("refuses a target the caller cannot see: bob's entry and alice's own stay current and unchanged", async () => {
    const bobs = await saveJenkins(bob)
    const mine = await saveJenkins(alice)
    const [bobsBefore, mineBefore] = [await hub.knowledge.get(bobs, bob), await hub.knowledge.get(mine, alice)]
    let shown: string[] = []
    model(stub, [actions], (asked) => {
      shown = asked.flatMap((a) => a.candidates.map((c) => c.id))
      return [{ proposal: 0, action: 'supersede', existing_id: bobs }]
    })
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save' }, alice)
    expect(shown).toEqual([mine])
    expect(result.items[0]).toMatchObject({ action: 'add', owner: 'agent:coder' })
    expect(result.refused).toEqual([expect.objectContaining({ action: 'supersede', existing_id: bobs })])
    expect(await hub.knowledge.get(bobs, bob)).toEqual(bobsBefore)
    expect(await hub.knowledge.get(mine, alice)).toEqual(mineBefore)
  })

  it('refuses a target the caller may not edit: carol sees the project entry, adds her own, and the old one stays current', async () => {
    const old = await saveJenkins()
    const before = await hub.knowledge.get(old, alice)
    model(stub, [actions], supersedeWhere(jenkins.content))
    const proposed = await hub.extraction.extract({ messages: movedTalk }, carol)
    expect(proposed.items[0]).toMatchObject({ action: 'add', reason: `new entry: ${old} is owned by agent:coder, and you may not edit it` })
    expect(proposed.refused).toHaveLength(1)
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save' }, carol)
    expect(result.items[0]).toMatchObject({ action: 'add', existing_id: null, owner: 'user:carol', scopes: ['project:app'] })
    expect(result.refused).toEqual([{ task: actions.task, action: 'supersede', existing_id: old, reason: expect.stringContaining('may not edit it') }])
    expect(await hub.knowledge.get(old, alice)).toEqual(before)
    expect(await rows()).toHaveLength(2)
  })

  it('supersedes an entry once: a second proposal naming the same one in the same extraction is refused and added', async () => {
    const old = await saveJenkins()
    const also = { ...actions, content: 'The team runs CI on GitHub Actions with self-hosted runners.' }
    model(stub, [actions, also], (asked) => asked.map((a) => ({ proposal: a.proposal, action: 'supersede', existing_id: old })))
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save' }, alice)
    expect(result.items.map((i) => i.action)).toEqual(['supersede', 'add'])
    expect(result.refused).toEqual([expect.objectContaining({ existing_id: old, reason: expect.stringContaining('already superseded') })])
    expect((await hub.knowledge.get(old, alice)).superseded_by).toBe(result.items[0]!.id)
  })

  const malformed: Array<[string, Reply[]]> = [
    ['a supersede without existing_id', [{ proposal: 0, action: 'supersede', existing_id: null }]],
    ['an unknown action', [{ proposal: 0, action: 'replace', existing_id: 'x' }]],
  ]
  it.each(malformed)('drops the proposal for %s (after the repair request), says why, and changes nothing', async (_name, decisions) => {
    await saveJenkins()
    const snapshot = await rows()
    model(stub, [actions], () => decisions)
    const result = await hub.extraction.extract({ messages: movedTalk, mode: 'save' }, alice)
    expect(result.items).toEqual([])
    expect(result.problems).toEqual([{ stage: 'decide', reason: 'schema', detail: expect.stringContaining('could not be used') }])
    expect(result.dropped).toEqual([{ task: actions.task, reason: expect.stringMatching(/^undecided/) }])
    expect(await rows()).toEqual(snapshot)
  })

  it('refuses a message timestamp that is not a date before calling the model; entries without one are valid from their save', async () => {
    const before = stub.requests.length
    const error = await rejection(hub.extraction.extract({ messages: [{ role: 'user', content: 'x', timestamp: 'last Tuesday' }], mode: 'save' }, alice))
    expect(error.code).toBe('validation_error')
    expect(error.message).toContain('timestamp')
    expect(stub.requests.length).toBe(before)
    model(stub, [{ ...jenkins, message_ids: [] }])
    const result = await hub.extraction.extract({ messages: [{ role: 'user', content: jenkinsTalk[0]!.content }], mode: 'save' }, alice)
    const entry = await hub.knowledge.get(result.items[0]!.id!, alice)
    expect(entry.valid_from).toBe(entry.created_at)
  })
})
