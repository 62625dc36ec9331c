/**
 * The typed client over real HTTP against a real server on embedded PGlite: every
 * method round-trips, and failures are `KnowHubClientError`s carrying the server's
 * code, status, message, details and request id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, isKnowHubClientError, KnowHubClientError, resourcePath, type KnowHubClient } from '../../src/client/index.js'
import type { SaveKnowledgeInput } from '../../src/core/knowledge.js'
import { openTestHub, type TestHub } from '../server/helpers.js'

let t: TestHub
let url: string
let kh: KnowHubClient
let reader: KnowHubClient

beforeAll(async () => {
  t = await openTestHub()
  const alice = await t.hub.tokens.create({ user: 'alice', agent: 'research_agent', org: 'cybertogether', permissions: ['read', 'write', 'secrets:read'] })
  const readOnly = await t.hub.tokens.create({ user: 'rita', org: 'cybertogether', permissions: ['read'] })
  const server = await t.start()
  url = server.url
  kh = createClient({ baseUrl: url, token: alice.token, retry: { baseDelayMs: 1 } })
  reader = createClient({ baseUrl: url, token: readOnly.token })
})
afterAll(async () => t?.close())

/** The rejection of `promise`, which must be a client error. */
async function failure(promise: Promise<unknown>): Promise<KnowHubClientError> {
  try {
    await promise
  } catch (error) {
    if (isKnowHubClientError(error)) return error
    throw error
  }
  throw new Error('expected the call to fail')
}

const seleniumEntry: SaveKnowledgeInput = {
  task: 'Log in to site A with Selenium',
  content: 'undetected_chromedriver avoids most bot checks; add random delays between actions',
  types: ['tool', 'strategy'],
  tags: { domain: 'scraping' },
  scopes: ['org:cybertogether'],
  owner: 'agent:research_agent',
  source: { name: 'run 17', category: 'exp', urls: ['https://example.com'], agent_id: 'research_agent' },
  score: 4,
  resource_ids: ['code/selenium/undetected_login'],
}

describe('meta', () => {
  it('healthz and openapi', async () => {
    expect(await kh.healthz()).toEqual({ status: 'ok', version: expect.any(String), embedder: expect.stringMatching(/^(loading|ready)$/) })
    const doc = await createClient({ baseUrl: url }).openapi()
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/knowledge/search', '/api/knowledge/{id}', '/api/resource/{id}']))
  })
})

describe('resources', () => {
  it('save, get (with and without the secret), update, list, delete; path-like ids encoded per segment', async () => {
    const code = await kh.resources.save({
      id: 'code/selenium/undetected_login',
      title: 'Selenium login that avoids bot checks',
      body: 'import undetected_chromedriver as uc',
      content_type: 'code',
      metadata: { language: 'python' },
      scopes: ['org:cybertogether'],
    })
    expect(code).toMatchObject({ id: 'code/selenium/undetected_login', content_type: 'code', has_secret: false, version: 1 })

    const credential = await kh.resources.save({
      id: 'credentials/site+a/user@example.com~1',
      title: 'Site A test account',
      body: 'limit 100 logins a day',
      secure_body: 'user@example.com / SecurePass123',
      content_type: 'credential',
      scopes: ['org:cybertogether'],
    })
    expect(credential.has_secret).toBe(true)
    expect(credential).not.toHaveProperty('secure_body')

    const withSecret = await kh.resources.get('credentials/site+a/user@example.com~1')
    expect(withSecret.secure_body).toBe('user@example.com / SecurePass123')
    const withoutSecret = await kh.resources.get('credentials/site+a/user@example.com~1', { includeSecret: false })
    expect(withoutSecret).not.toHaveProperty('secure_body')
    // The reader sees the resource (same org) but may not read its secret.
    expect(await reader.resources.get('credentials/site+a/user@example.com~1')).not.toHaveProperty('secure_body')

    const updated = await kh.resources.update('credentials/site+a/user@example.com~1', { body: 'limit 50 logins a day', secure_body: null })
    expect(updated).toMatchObject({ body: 'limit 50 logins a day', has_secret: false, version: 2 })

    const page = await kh.resources.list({ prefix: 'credentials/', content_type: ['credential'], limit: 10 })
    expect(page.items.map((r) => r.id)).toEqual(['credentials/site+a/user@example.com~1'])
    expect(page.count).toBe(1)
    expect((await kh.resources.list({ scopes: 'org:cybertogether', expired: false })).items).toHaveLength(2)

    expect(await kh.resources.delete('credentials/site+a/user@example.com~1')).toEqual({ id: 'credentials/site+a/user@example.com~1', deleted: true })
    expect((await failure(kh.resources.get('credentials/site+a/user@example.com~1'))).code).toBe('not_found')
  })

  it('refuses ids that URL parsing would rewrite, before sending anything', async () => {
    expect(resourcePath('a b/c'.replace(' ', '_'))).toBe('a_b/c')
    for (const id of ['../credentials/x', 'code/./x', 'code//x', '/abs', 'code/%2e%2e']) {
      const error = await failure(kh.resources.get(id))
      expect(error.code, id).toBe('validation_error')
      expect(error.status, id).toBeUndefined()
      expect(error.issues[0]?.path).toBe('id')
    }
  })

  it('saving an id you own again updates it (ids are namespaced by owner: no 409)', async () => {
    expect(await kh.resources.save({ id: 'code/selenium/undetected_login', title: 'again' })).toMatchObject({
      title: 'again',
      content_type: 'code',
      version: 2,
    })
  })
})

describe('knowledge', () => {
  let id: string

  it('save → get (expand resources) → search (filters, explain, expand) → list', async () => {
    const entry = await kh.knowledge.save(seleniumEntry)
    id = entry.id
    expect(entry).toMatchObject({
      task: seleniumEntry.task,
      types: ['tool', 'strategy'],
      scopes: ['org:cybertogether'],
      owner: 'agent:research_agent',
      status: 'active',
      version: 1,
    })
    expect(entry.eval).toMatchObject({ score: 4, helpful: 0, harmful: 0 })

    const got = await kh.knowledge.get(id)
    expect(got.id).toBe(id)
    expect(got.resources).toBeUndefined()
    const expanded = await kh.knowledge.get(id, { expand: 'resources' })
    expect(expanded.resources?.map((r) => r.id)).toEqual(['code/selenium/undetected_login'])

    const found = await kh.knowledge.search({ q: 'selenium login blocked as a bot' })
    expect(found.count).toBe(found.results.length)
    expect(found.results[0]).toMatchObject({ id, quality_score: 4, eval: { score: 4, helpful: 0, harmful: 0 } })
    const explained = await kh.knowledge.search({ q: 'selenium login', top_k: 1, min_score: 1, types: ['tool'], explain: true, expand: 'resources' })
    expect(explained.results[0]?.explain?.fused).toEqual(expect.any(Number))
    expect(explained.results[0]?.resources?.[0]?.id).toBe('code/selenium/undetected_login')
    expect((await kh.knowledge.search({ q: 'selenium login', types: 'plan' })).count).toBe(0)
    expect((await kh.knowledge.search({ q: 'selenium login', min_score: 5 })).count).toBe(0)

    const page = await kh.knowledge.list({ types: ['tool'], scopes: ['org:cybertogether'] })
    expect(page.items.map((e) => e.id)).toContain(id)
    expect(page.next_cursor).toBeNull()
  })

  it('update: add_helpful_case, add_harmful_case, update_score; evolve_feedback without an LLM is 501', async () => {
    const helpful = await kh.knowledge.update(id, { add_helpful_case: { task: 'scrape site A', outcome: 'worked', timestamp: '2026-03-05T12:00:00Z' } })
    expect(helpful.eval).toMatchObject({ helpful: 1, harmful: 0 })
    expect(helpful.eval.helpful_history[0]).toMatchObject({ task: 'scrape site A', outcome: 'worked' })
    const harmful = await kh.knowledge.update(id, { add_harmful_case: { task: 'scrape site B', outcome: 'blocked', reason: 'captcha' } })
    expect(harmful.eval).toMatchObject({ helpful: 1, harmful: 1 })
    expect((await kh.knowledge.update(id, { update_score: 5 })).eval.score).toBe(5)
    const evolve = await failure(kh.knowledge.update(id, { evolve_feedback: 'mention proxies' }))
    expect(evolve).toMatchObject({ code: 'llm_not_configured', status: 501 })
  })

  it('batchUpdate reports each item', async () => {
    const result = await kh.knowledge.batchUpdate({
      feedback_list: [
        { knowledge_id: id, is_helpful: true, case: { task: 'scrape site C', outcome: 'worked' } },
        { knowledge_id: 'knowledge-20990101000000-none', is_helpful: false },
      ],
    })
    expect(result.updated).toBe(1)
    expect(result.results).toEqual([
      { knowledge_id: id, ok: true },
      { knowledge_id: 'knowledge-20990101000000-none', ok: false, error: { code: 'not_found', message: expect.any(String) } },
    ])
    expect((await kh.knowledge.get(id)).eval.helpful).toBe(2)
  })

  it('edit → versions → archive → restore', async () => {
    const edited = await kh.knowledge.edit(id, { content: 'undetected_chromedriver plus residential proxies', reason: 'proxies matter' })
    expect(edited).toMatchObject({ version: 2, content: 'undetected_chromedriver plus residential proxies' })
    const { versions } = await kh.knowledge.versions(id)
    expect(versions).toHaveLength(1)
    expect(versions[0]).toMatchObject({ version: 1, content: seleniumEntry.content })
    expect((await kh.knowledge.archive(id)).status).toBe('archived')
    expect((await kh.knowledge.list({ status: ['archived'] })).items.map((e) => e.id)).toEqual([id])
    expect((await kh.knowledge.restore(id)).status).toBe('active')
  })

  it('slim (dry run, then merge) → unmerge', async () => {
    const base = { task: 'Bake sourdough bread', types: ['usecase'] as const, scopes: ['org:cybertogether'] }
    const a = await kh.knowledge.save({
      ...base,
      types: [...base.types],
      content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam.',
    })
    const b = await kh.knowledge.save({
      ...base,
      types: [...base.types],
      content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam for 20 minutes.',
    })
    const plan = await kh.knowledge.slim({ model: 'google/gemini-2.0-flash-001', dry_run: true })
    expect(plan).toMatchObject({ dry_run: true, merged: 0 })
    expect(plan.groups.find((g) => g.merged_ids.includes(a.id))?.merged_ids.sort()).toEqual([a.id, b.id].sort())
    const done = await kh.knowledge.slim()
    const group = done.groups.find((g) => g.merged_ids.includes(a.id))
    expect(group?.kept_id).toMatch(/^knowledge-/)
    expect((await kh.knowledge.get(a.id)).status).toBe('merged')
    const undone = await kh.knowledge.unmerge(group!.kept_id!)
    expect(undone).toMatchObject({ id: group!.kept_id, status: 'archived' })
    expect(undone.restored_ids.sort()).toEqual([a.id, b.id].sort())
    for (const entry of [a.id, b.id, group!.kept_id!]) await kh.knowledge.delete(entry)
  })

  it('list pages with cursors; listAll walks every page', async () => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await kh.knowledge.save({ task: `Plan step ${i}`, content: `Step ${i} of the plan`, types: ['plan'] })).id)
    const first = await kh.knowledge.list({ types: ['plan'], limit: 2 })
    expect(first.items).toHaveLength(2)
    expect(first.next_cursor).toEqual(expect.any(String))
    const second = await kh.knowledge.list({ types: ['plan'], limit: 2, cursor: first.next_cursor! })
    expect(second.items.map((e) => e.id)).toEqual([ids[0]])
    const all: string[] = []
    for await (const entry of kh.knowledge.listAll({ types: ['plan'], limit: 1 })) all.push(entry.id)
    expect(all).toEqual([...ids].reverse())
  })

  it('delete, then 404 not_found with the request id', async () => {
    expect(await kh.knowledge.delete(id)).toEqual({ id, deleted: true })
    const error = await failure(kh.knowledge.get(id, { requestId: 'client-test-404' }))
    expect(error).toBeInstanceOf(KnowHubClientError)
    expect(error).toMatchObject({ code: 'not_found', status: 404, requestId: 'client-test-404', method: 'GET', path: `/api/knowledge/${id}`, attempts: 1 })
    expect(error.message).toContain(id)
    expect(error.details).toEqual({ id })
  })
})

describe('typed errors', () => {
  it('400 validation_error lists every issue with its field path', async () => {
    const error = await failure(kh.knowledge.save({ task: 'x', content: 'y', types: ['tool'], score: 9, source: { urls: ['u'.repeat(2001)] } }))
    expect(error).toMatchObject({ code: 'validation_error', status: 400 })
    expect(error.issues.map((i) => i.path).sort()).toEqual(['score', 'source.urls.0'])
    expect(error.requestId).toMatch(/^req_/)
    // A body the types forbid still gets the server's answer, with its path.
    const unknownField = await failure(kh.knowledge.save({ task: 'x', content: 'y', types: ['tool'], colour: 'red' } as unknown as SaveKnowledgeInput))
    expect(unknownField.issues).toEqual([{ path: 'colour', message: expect.stringContaining('colour') }])
    const query = await failure(kh.knowledge.search({ q: 'x', top_k: 0 }))
    expect(query.issues[0]?.path).toBe('top_k')
  })

  it('401 unauthenticated without a token or with a bad one', async () => {
    const none = await failure(createClient({ baseUrl: url }).knowledge.list())
    expect(none).toMatchObject({ code: 'unauthenticated', status: 401 })
    const bad = await failure(createClient({ baseUrl: url, token: 'kh_not_a_real_token' }).knowledge.search({ q: 'x' }))
    expect(bad).toMatchObject({ code: 'unauthenticated', status: 401 })
  })

  it('403 forbidden: a read-only token cannot save', async () => {
    const error = await failure(reader.knowledge.save({ task: 't', content: 'c', types: ['tool'] }))
    expect(error).toMatchObject({ code: 'forbidden', status: 403, details: { permission: 'write' } })
  })

  it('toJSON carries code, status, details and request id', async () => {
    const error = await failure(kh.knowledge.get('knowledge-20990101000000-none'))
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: 'not_found',
      message: expect.any(String),
      status: 404,
      details: { id: 'knowledge-20990101000000-none' },
      request_id: expect.any(String),
    })
  })
})

describe('validity in time (issue 31)', () => {
  it('supersedes with a new entry, then searches now, as of before and with the history; a reader is refused', async () => {
    const old = await kh.knowledge.save({
      task: 'artifact registry of the ci',
      content: 'artifacts go to nexus',
      types: ['tool'],
      scopes: ['org:cybertogether'],
      valid_from: '2025-01-01',
    })
    const { superseded, current } = await kh.knowledge.supersede(old.id, {
      by: {
        task: 'artifact registry of the ci',
        content: 'artifacts go to the github package registry',
        types: ['tool'],
        scopes: ['org:cybertogether'],
        valid_from: '2026-02-01',
      },
    })
    expect(superseded).toMatchObject({ id: old.id, superseded_by: current.id, valid_to: '2026-02-01T00:00:00.000Z' })
    expect(current).toMatchObject({ supersedes: old.id, valid_from: '2026-02-01T00:00:00.000Z' })
    const q = 'artifact registry ci'
    expect((await kh.knowledge.search({ q })).results.map((r) => r.id)).toEqual([current.id])
    expect((await kh.knowledge.search({ q, as_of: '2026-01-15' })).results.map((r) => r.id)).toEqual([old.id])
    const history = await kh.knowledge.search({ q, include: ['superseded'], explain: true })
    expect(history.results.find((r) => r.id === old.id)).toMatchObject({ superseded: true, superseded_by: current.id, explain: { superseded_by: current.id } })
    const suggested = await kh.knowledge.update(current.id, { add_harmful_case: { reason: 'outdated' } })
    expect(suggested.suggest).toMatchObject({ action: 'supersede', allowed: true })
    await expect(reader.knowledge.supersede(current.id, { by: old.id })).rejects.toMatchObject({ code: 'forbidden' })
    await expect(kh.knowledge.supersede(old.id, { by: current.id })).rejects.toMatchObject({ code: 'conflict' })
  })
})

describe('users and erasure (#31)', () => {
  it('users.profile, admin.forget (dry run, then for good) and admin.purge round-trip with their schemas', async () => {
    const ops = await t.hub.tokens.create({ user: 'ops', permissions: ['read', 'write', 'admin', 'hub:admin'] })
    const admin = createClient({ baseUrl: url, token: ops.token })
    const saved = await kh.knowledge.save({ task: 'Editor', content: 'Alice uses vim', types: ['user_profile'], tags: { category: 'habit' } })
    const profile = await kh.users.profile('alice')
    expect(profile.categories.habit.map((e) => e.id)).toContain(saved.id)
    expect((await failure(reader.users.profile('alice'))).code).toBe('not_found')

    expect((await failure(kh.admin.forget('user:rita', { dryRun: true }))).code).toBe('forbidden')
    expect((await failure(admin.admin.forget('rita'))).code).toBe('validation_error')
    const dry = await admin.admin.forget('user:rita', { dryRun: true })
    expect(dry).toMatchObject({ subject: 'user:rita', dry_run: true, erased: { tokens: 1 } })
    const done = await admin.admin.forget('user:rita')
    expect(done).toMatchObject({ dry_run: false, erased: { tokens: 1 }, cleanup: { mode: 'full' } })
    expect((await failure(reader.knowledge.list())).code).toBe('unauthenticated')

    const purge = await admin.admin.purge({ archived_older_than: '3650d', dry_run: true })
    expect(purge).toMatchObject({ dry_run: true, reach: 'hub', erased: { archived: 0, merged: 0 } })
  })
})
