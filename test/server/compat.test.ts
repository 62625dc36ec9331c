/**
 * Seed 003 compatibility, over real HTTP against a real embedded database: every
 * endpoint driven exactly as the seed's agent tools call it (same query parameters,
 * same bodies and defaults), checking the response shapes of the seed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KnowledgeEntry, SearchResponse } from '../../src/core/knowledge.js'
import { Resource, ResourceSummary } from '../../src/core/resources.js'
import { client, errorOf, openTestHub, type Client, type TestHub } from './helpers.js'

let t: TestHub
let api: Client
let url: string

// The seed's agent: agent research_agent in org cybertogether (its knowledge_save defaults).
beforeAll(async () => {
  t = await openTestHub()
  const { token } = await t.hub.tokens.create({ user: 'alice', agent: 'research_agent', org: 'cybertogether', permissions: ['read', 'write', 'secrets:read'] })
  const server = await t.start()
  url = server.url
  api = client(url, token)
})
afterAll(async () => t?.close())

/** knowledge_save(task, content, types, tags, scopes, owner, source_name, …) as the seed's tool sends it. */
function knowledgeSaveBody(args: { task: string; content: string; types: string[]; tags?: Record<string, string>; score?: number; resource_ids?: string[] }) {
  const agentId = 'research_agent'
  return {
    task: args.task,
    content: args.content,
    types: args.types,
    tags: args.tags ?? {},
    scopes: ['org:cybertogether'],
    owner: `agent:${agentId}`,
    source: { name: '', category: 'exp', urls: [], agent_id: agentId, submitted_by: '', message_id: '' },
    score: args.score ?? 3,
    ...(args.resource_ids ? { resource_ids: args.resource_ids } : {}),
  }
}

const SEED_RESULT_KEYS = ['id', 'task', 'content', 'types', 'tags', 'eval', 'quality_score']
const SEED_EVAL_KEYS = ['score', 'helpful', 'harmful', 'confidence']

describe('seed 003 HTTP API', () => {
  let selenium: string
  let cookie: string

  it('POST /api/resource: the seed’s three resource examples', async () => {
    const code = await api.post('/api/resource', {
      id: 'code/selenium/undetected_login',
      title: 'Selenium 绕过检测登录代码',
      body: 'import undetected_chromedriver as uc\n\ndriver = uc.Chrome()...',
      content_type: 'code',
      metadata: { language: 'python' },
    })
    expect(code.status).toBe(201)
    expect(Resource.strict().parse(code.body).id).toBe('code/selenium/undetected_login')
    expect(code.body).not.toHaveProperty('secure_body')

    const credential = await api.post('/api/resource', {
      id: 'credentials/website_a',
      title: '某网站测试账号',
      body: '使用方法:直接登录即可,每天限额 100 次',
      secure_body: '账号:user@example.com\n密码:SecurePass123',
      content_type: 'credential',
      metadata: { acquired_at: '2026-03-06T10:00:00Z' },
      scopes: ['org:cybertogether'],
    })
    expect(credential.status).toBe(201)
    expect(credential.body.has_secret).toBe(true)
    expect(credential.body).not.toHaveProperty('secure_body')

    const cookies = await api.post('/api/resource', {
      id: 'cookies/website_a',
      title: '某网站 Cookie',
      body: '适用于:已登录状态的 API 调用',
      secure_body: 'session_id=abc123; auth_token=xyz789',
      content_type: 'cookie',
      metadata: { acquired_at: '2026-03-06T10:00:00Z', expires_at: '2026-03-07T10:00:00Z' },
    })
    expect(cookies.status).toBe(201)
    expect(cookies.body.expired).toBe(true)
  })

  it('GET /api/resource/{id}: path-like ids with slashes; secure_body for a caller allowed to read it', async () => {
    const code = await api.get('/api/resource/code/selenium/undetected_login')
    expect(code.status).toBe(200)
    expect(code.body.body).toContain('undetected_chromedriver')
    expect(code.body.metadata).toEqual({ language: 'python' })
    const credential = await api.get('/api/resource/credentials/website_a')
    expect(credential.status).toBe(200)
    expect(credential.body.secure_body).toBe('账号:user@example.com\n密码:SecurePass123')
    const encoded = await api.get('/api/resource/credentials%2Fwebsite_a')
    expect(encoded.status).toBe(200)
    expect(encoded.body.id).toBe('credentials/website_a')
    const without = await api.get('/api/resource/credentials/website_a?include_secret=false')
    expect(without.body).not.toHaveProperty('secure_body')
  })

  it('POST /api/knowledge: knowledge_save’s body and defaults', async () => {
    const saved = await api.post(
      '/api/knowledge',
      knowledgeSaveBody({
        task: '使用 Selenium 登录某网站并绕过反爬检测',
        content: '使用 undetected_chromedriver 可以绕过大部分检测。关键点:1) 设置合适的 user-agent 2) 随机延迟 3) 避免频繁请求',
        types: ['tool', 'strategy'],
        tags: { category: 'preference', domain: 'coding_style' },
        score: 4,
        resource_ids: ['code/selenium/undetected_login', 'credentials/website_a'],
      }),
    )
    expect(saved.status).toBe(201)
    const entry = KnowledgeEntry.parse(saved.body)
    expect(entry.id).toMatch(/^knowledge-\d{14}-[a-z0-9]{4}$/)
    expect(entry.scopes).toEqual(['org:cybertogether'])
    expect(entry.owner).toBe('agent:research_agent')
    expect(entry.source.agent_id).toBe('research_agent')
    expect(entry.source.category).toBe('exp')
    expect(entry.eval).toMatchObject({ score: 4, helpful: 0, harmful: 0, helpful_history: [], harmful_history: [] })
    selenium = entry.id

    // The seed's request-body example, verbatim.
    const seedExample = await api.post('/api/knowledge', {
      task: '在什么场景下要完成什么目标',
      content: '核心知识内容',
      types: ['tool', 'strategy'],
      tags: { category: 'preference', domain: 'coding_style' },
      scopes: ['org:cybertogether'],
      owner: 'agent:research_agent',
      source: {
        name: '资源名称',
        category: 'exp',
        urls: ['https://example.com'],
        agent_id: 'research_agent',
        submitted_by: 'user@example.com',
        message_id: 'msg-xxx',
      },
      score: 4,
    })
    expect(seedExample.status).toBe(201)
    expect(seedExample.body.source).toMatchObject({ name: '资源名称', urls: ['https://example.com'], submitted_by: 'user@example.com', message_id: 'msg-xxx' })

    const cookieEntry = await api.post(
      '/api/knowledge',
      knowledgeSaveBody({
        task: '使用已登录的 Cookie 访问某网站 API',
        content: 'Cookie 获取方法:手动登录后从浏览器导出。使用时直接设置到请求头。',
        types: ['tool'],
        resource_ids: ['cookies/website_a'],
      }),
    )
    expect(cookieEntry.status).toBe(201)
    cookie = cookieEntry.body.id
    // knowledge_save's minimum: task, content, types (everything else defaulted by the tool)
    for (let i = 0; i < 3; i++) {
      const r = await api.post(
        '/api/knowledge',
        knowledgeSaveBody({
          task: `Selenium headless login variant ${i}`,
          content: `Use a random delay of ${i + 1} seconds between selenium actions`,
          types: ['strategy'],
        }),
      )
      expect(r.status).toBe(201)
    }
  })

  it('GET /api/knowledge/search: knowledge_search(query, top_k=5, min_score=3, types)', async () => {
    const q = encodeURIComponent('Selenium 登录')
    const plain = await api.get(`/api/knowledge/search?q=${q}&top_k=5&min_score=3`)
    expect(plain.status).toBe(200)
    const parsed = SearchResponse.parse(plain.body)
    expect(parsed.count).toBe(parsed.results.length)
    expect(parsed.results.length).toBeGreaterThan(0)
    expect(parsed.results.length).toBeLessThanOrEqual(5)
    expect(parsed.results[0]!.id).toBe(selenium)
    for (const result of plain.body.results) {
      for (const key of SEED_RESULT_KEYS) expect(result).toHaveProperty(key)
      for (const key of SEED_EVAL_KEYS) expect(result.eval).toHaveProperty(key)
      expect(result.quality_score).toBe(result.eval.score + result.eval.helpful - 2 * result.eval.harmful)
      expect(result.eval.score).toBeGreaterThanOrEqual(3)
    }
    // types: comma-separated, repeated, or empty (no filter) as an agent may send it
    const csv = await api.get(`/api/knowledge/search?q=${q}&top_k=5&min_score=3&types=tool,usecase`)
    expect(csv.status).toBe(200)
    expect(csv.body.results.every((r: { types: string[] }) => r.types.some((x) => x === 'tool' || x === 'usecase'))).toBe(true)
    const repeated = await api.get(`/api/knowledge/search?q=${q}&types=tool&types=usecase`)
    expect(repeated.body).toEqual(csv.body)
    const empty = await api.get(`/api/knowledge/search?q=${q}&top_k=5&min_score=3&types=`)
    expect(empty.status).toBe(200)
    expect(empty.body.count).toBe(plain.body.count)
    // goal focus: top_k=3, min_score=3
    const focus = await api.get(`/api/knowledge/search?q=${encodeURIComponent('selenium login')}&top_k=3&min_score=3`)
    expect(focus.body.results.length).toBeLessThanOrEqual(3)
    // defaults: top_k 5, min_score 3
    const defaults = await api.get(`/api/knowledge/search?q=selenium`)
    expect(defaults.body.results.length).toBeLessThanOrEqual(5)
    expect(defaults.body.results.every((r: { eval: { score: number } }) => r.eval.score >= 3)).toBe(true)
  })

  it('PUT /api/knowledge/{id}: knowledge_update’s helpful and harmful cases and score', async () => {
    const helpful = await api.put(`/api/knowledge/${selenium}`, { add_helpful_case: { task: '任务描述', outcome: '成功', timestamp: '2026-03-05T12:00:00Z' } })
    expect(helpful.status).toBe(200)
    expect(helpful.body.eval.helpful).toBe(1)
    expect(helpful.body.eval.helpful_history[0]).toMatchObject({ task: '任务描述', outcome: '成功', timestamp: '2026-03-05T12:00:00Z' })
    const all = await api.put(`/api/knowledge/${selenium}`, {
      add_helpful_case: { task: '任务描述', outcome: '成功', timestamp: '2026-03-05T12:00:00Z' },
      add_harmful_case: { task: '任务描述', outcome: '失败', reason: '原因', timestamp: '2026-03-05T12:00:00Z' },
      update_score: 5,
    })
    expect(all.status).toBe(200)
    expect(all.body.eval).toMatchObject({ score: 5, helpful: 2, harmful: 1 })
    expect(all.body.eval.harmful_history[0]).toMatchObject({ reason: '原因' })
    const search = await api.get(`/api/knowledge/search?q=${encodeURIComponent('Selenium 登录')}`)
    const hit = search.body.results.find((r: { id: string }) => r.id === selenium)
    expect(hit.quality_score).toBe(5 + 2 - 2)
  })

  it('PUT /api/knowledge/{id} with evolve_feedback: a clear "no LLM configured" error (501)', async () => {
    const evolve = await api.put(`/api/knowledge/${selenium}`, { evolve_feedback: '改进建议(触发知识进化)' })
    expect(evolve.status).toBe(501)
    const error = errorOf(evolve)
    expect(error.code).toBe('llm_not_configured')
    expect(error.message).toMatch(/LLM/)
  })

  it('POST /api/knowledge/batch_update: knowledge_batch_update(feedback_list)', async () => {
    const response = await api.post('/api/knowledge/batch_update', {
      feedback_list: [
        { knowledge_id: cookie, is_helpful: true, case: { task: '任务描述', outcome: '成功', timestamp: '2026-03-05T12:00:00Z' } },
        { knowledge_id: cookie, is_helpful: false, case: { task: '任务描述', outcome: '失败', timestamp: '2026-03-05T12:00:00Z' } },
        { knowledge_id: 'knowledge-20260305-a1b2', is_helpful: true, case: {} },
      ],
    })
    expect(response.status).toBe(200)
    expect(response.body.updated).toBe(2)
    expect(response.body.results).toEqual([
      { knowledge_id: cookie, ok: true },
      { knowledge_id: cookie, ok: true },
      { knowledge_id: 'knowledge-20260305-a1b2', ok: false, error: { code: 'not_found', message: expect.any(String) } },
    ])
    const entry = await api.get(`/api/knowledge/${cookie}`)
    expect(entry.body.eval).toMatchObject({ helpful: 1, harmful: 1 })
  })

  it('a Python agent’s None: null in optional fields counts as absent (bodies as json.dumps writes them)', async () => {
    // knowledge_save(task, content, types) with every Optional left at None, and urls=None.
    const save = await api.post(
      '/api/knowledge',
      '{"task": "Python agent defaults", "content": "None is sent as null", "types": ["plan"], "tags": null, "scopes": null, "owner": null, ' +
        '"source": {"name": "", "category": "exp", "urls": null, "agent_id": "research_agent", "submitted_by": "", "message_id": null, "trace_id": null, "timestamp": null}, ' +
        '"score": 3, "message_id": null, "resource_ids": null}',
    )
    expect(save.status, save.text).toBe(201)
    expect(save.body).toMatchObject({
      tags: {},
      scopes: ['user:alice'],
      owner: 'agent:research_agent',
      message_id: '',
      resource_ids: [],
      source: { urls: [], message_id: '', agent_id: 'research_agent' },
    })
    const id = save.body.id as string
    // knowledge_update(knowledge_id, add_helpful_case={…}) — the other three None.
    const helpful = await api.put(
      `/api/knowledge/${id}`,
      '{"add_helpful_case": {"task": "t", "outcome": "ok"}, "add_harmful_case": null, "update_score": null, "evolve_feedback": null}',
    )
    expect(helpful.status, helpful.text).toBe(200)
    expect(helpful.body.eval).toMatchObject({ helpful: 1, harmful: 0, score: 3 })
    const scored = await api.put(`/api/knowledge/${id}`, '{"add_helpful_case": null, "add_harmful_case": null, "update_score": 4, "evolve_feedback": null}')
    expect(scored.body.eval).toMatchObject({ helpful: 1, score: 4 })
    // All None: nothing to do — a clear validation error, not a crash.
    const nothing = await api.put(`/api/knowledge/${id}`, '{"add_helpful_case": null, "add_harmful_case": null, "update_score": null, "evolve_feedback": null}')
    expect(nothing.status).toBe(400)
    expect(errorOf(nothing).message).toMatch(/at least one of add_helpful_case/)
    // knowledge_batch_update with a case of None.
    const batch = await api.post('/api/knowledge/batch_update', `{"feedback_list": [{"knowledge_id": "${id}", "is_helpful": false, "case": null}]}`)
    expect(batch.status, batch.text).toBe(200)
    expect(batch.body.updated).toBe(1)
    // resource_save with secure_body=None and metadata=None; PUT keeps null = remove the secret.
    const resource = await api.post(
      '/api/resource',
      '{"id": "notes/python_none", "title": "from python", "body": "b", "secure_body": null, "content_type": null, "metadata": null, "scopes": null, "owner": null}',
    )
    expect(resource.status, resource.text).toBe(201)
    expect(resource.body).toMatchObject({ has_secret: false, content_type: 'text', metadata: {}, scopes: ['user:alice'], owner: 'user:alice' })
    await api.put('/api/resource/notes/python_none', { secure_body: 'now a secret' })
    const removed = await api.put('/api/resource/notes/python_none', '{"title": null, "secure_body": null}')
    expect(removed.body).toMatchObject({ title: 'from python', has_secret: false })
    await api.delete('/api/resource/notes/python_none')
    await api.delete(`/api/knowledge/${id}`)
  })

  it('resource_save on an id the agent saved before refreshes it: 200 with the updated resource', async () => {
    const refreshed = await api.post('/api/resource', {
      id: 'cookies/website_a',
      title: '某网站 Cookie',
      body: '适用于:已登录状态的 API 调用',
      secure_body: 'session_id=refreshed; auth_token=new',
      content_type: 'cookie',
      metadata: { acquired_at: '2026-03-07T10:00:00Z', expires_at: '2026-03-08T10:00:00Z' },
    })
    expect(refreshed.status).toBe(200)
    expect(Resource.strict().parse(refreshed.body)).toMatchObject({
      id: 'cookies/website_a',
      version: 2,
      expired: true,
      has_secret: true,
      metadata: { expires_at: '2026-03-08T10:00:00Z' },
    })
    expect((await api.get('/api/resource/cookies/website_a')).body.secure_body).toBe('session_id=refreshed; auth_token=new')
  })

  it('knowledge_save’s owner "agent:research_agent" from a token without that agent id: a 403 that says how to fix it', async () => {
    const { token } = await t.hub.tokens.create({ user: 'bob', org: 'cybertogether', permissions: ['read', 'write'] })
    const bob = client(url, token)
    const refused = await bob.post(
      '/api/knowledge',
      knowledgeSaveBody({ task: 'Owner default of the seed tool', content: 'owner is agent:research_agent', types: ['plan'] }),
    )
    expect(refused.status).toBe(403)
    const error = errorOf(refused)
    expect(error.code).toBe('forbidden')
    expect(error.message).toContain('agent:research_agent')
    expect(error.message).toContain('knowhub token create --agent research_agent')
    expect(error.details).toMatchObject({
      owner: 'agent:research_agent',
      your_ids: ['user:bob', 'org:cybertogether'],
      fix: 'knowhub token create --agent research_agent',
    })
    // The fix works: a token with the agent id saves it as the seed tool expects.
    const fixed = await t.hub.tokens.create({ user: 'bob', agent: 'research_agent', org: 'cybertogether', permissions: ['read', 'write'] })
    const saved = await client(url, fixed.token).post(
      '/api/knowledge',
      knowledgeSaveBody({ task: 'Owner default of the seed tool', content: 'owner is agent:research_agent', types: ['plan'] }),
    )
    expect(saved.status).toBe(201)
    expect(saved.body.owner).toBe('agent:research_agent')
    await client(url, fixed.token).delete(`/api/knowledge/${saved.body.id}`)
  })

  it('GET /api/knowledge: knowledge_list(limit=10, types, scopes)', async () => {
    const all = await api.get('/api/knowledge?limit=10')
    expect(all.status).toBe(200)
    expect(Object.keys(all.body).sort()).toEqual(['count', 'items', 'next_cursor'])
    expect(all.body.count).toBe(6)
    for (const item of all.body.items) KnowledgeEntry.parse(item)
    const tools = await api.get('/api/knowledge?limit=10&types=tool&scopes=org:cybertogether')
    expect(tools.body.items.length).toBe(3)
    expect(tools.body.items.every((e: { types: string[] }) => e.types.includes('tool'))).toBe(true)
    const repeated = await api.get('/api/knowledge?limit=10&types=tool&types=plan&scopes=org:cybertogether')
    expect(repeated.body.count).toBe(3)
    const none = await api.get('/api/knowledge?limit=10&types=&scopes=')
    expect(none.body.count).toBe(6)
    const page = await api.get('/api/knowledge?limit=4')
    expect(page.body.count).toBe(4)
    const next = await api.get(`/api/knowledge?limit=4&cursor=${page.body.next_cursor}`)
    expect(next.body.count).toBe(2)
    expect(next.body.next_cursor).toBeNull()
  })

  it('GET /api/knowledge/{id}?expand=resources: referenced resources, never their secrets', async () => {
    const plain = await api.get(`/api/knowledge/${selenium}`)
    expect(plain.status).toBe(200)
    expect(plain.body).not.toHaveProperty('resources')
    const expanded = await api.get(`/api/knowledge/${selenium}?expand=resources`)
    expect(expanded.body.resources.map((r: { id: string }) => r.id)).toEqual(['code/selenium/undetected_login', 'credentials/website_a'])
    for (const resource of expanded.body.resources) {
      Resource.parse(resource)
      expect(resource).not.toHaveProperty('secure_body')
    }
    expect(expanded.text).not.toContain('SecurePass123')
    const search = await api.get(`/api/knowledge/search?q=${encodeURIComponent('Selenium 登录')}&expand=resources`)
    expect(search.body.results[0].resources.length).toBe(2)
    expect(search.text).not.toContain('SecurePass123')
  })

  it('GET /api/resource: list with filters, summaries only', async () => {
    const all = await api.get('/api/resource')
    expect(all.status).toBe(200)
    expect(all.body.items.map((r: { id: string }) => r.id)).toEqual(['code/selenium/undetected_login', 'cookies/website_a', 'credentials/website_a'])
    for (const item of all.body.items) {
      ResourceSummary.strict().parse(item)
      expect(item).not.toHaveProperty('secure_body')
    }
    const expired = await api.get('/api/resource?expired=true')
    expect(expired.body.items.map((r: { id: string }) => r.id)).toEqual(['cookies/website_a'])
    const byType = await api.get('/api/resource?content_type=cookie,credential&prefix=c')
    expect(byType.body.count).toBe(2)
    expect(all.text).not.toMatch(/SecurePass123|abc123/)
  })

  it('PUT and DELETE /api/resource/{id}', async () => {
    const updated = await api.put('/api/resource/cookies/website_a', { secure_body: 'session_id=new456', metadata: { expires_at: '2099-01-01T00:00:00Z' } })
    expect(updated.status).toBe(200)
    expect(updated.body.expired).toBe(false)
    expect(updated.body.version).toBe(3)
    expect(updated.body).not.toHaveProperty('secure_body')
    expect((await api.get('/api/resource/cookies/website_a')).body.secure_body).toBe('session_id=new456')
    const deleted = await api.delete('/api/resource/cookies/website_a')
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ id: 'cookies/website_a', owner: 'user:alice', deleted: true })
    expect((await api.get('/api/resource/cookies/website_a')).status).toBe(404)
  })

  it('PATCH, versions, archive, restore and DELETE /api/knowledge/{id}', async () => {
    const edited = await api.patch(`/api/knowledge/${cookie}`, { content: 'Export the cookie from the browser after a manual login.', reason: 'clearer' })
    expect(edited.status).toBe(200)
    expect(edited.body.version).toBe(2)
    const versions = await api.get(`/api/knowledge/${cookie}/versions`)
    expect(versions.body.versions).toHaveLength(1)
    expect((await api.post(`/api/knowledge/${cookie}/archive`)).body.status).toBe('archived')
    expect((await api.get('/api/knowledge?limit=100')).body.items.some((e: { id: string }) => e.id === cookie)).toBe(false)
    expect((await api.get('/api/knowledge?limit=100&status=archived')).body.items.map((e: { id: string }) => e.id)).toEqual([cookie])
    expect((await api.post(`/api/knowledge/${cookie}/restore`)).body.status).toBe('active')
    const deleted = await api.delete(`/api/knowledge/${cookie}`)
    expect(deleted.body).toEqual({ id: cookie, deleted: true })
    expect((await api.get(`/api/knowledge/${cookie}`)).status).toBe(404)
  })

  it('POST /api/knowledge/slim: knowledge_slim(model) body; dry_run plan; unmerge', async () => {
    const a = knowledgeSaveBody({
      task: 'Bake sourdough bread',
      content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam.',
      types: ['usecase'],
    })
    const b = knowledgeSaveBody({
      task: 'Bake sourdough bread',
      content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam for 20 minutes.',
      types: ['usecase'],
    })
    const first = (await api.post('/api/knowledge', a)).body.id
    const second = (await api.post('/api/knowledge', b)).body.id
    const plan = await api.post('/api/knowledge/slim', { model: 'google/gemini-2.0-flash-001', dry_run: true })
    expect(plan.status).toBe(200)
    expect(plan.body).toMatchObject({ dry_run: true, merged: 0 })
    const group = plan.body.groups.find((g: { merged_ids: string[] }) => g.merged_ids.includes(first))
    expect(group.merged_ids.sort()).toEqual([first, second].sort())
    // The seed's call: only { model }.
    const done = await api.post('/api/knowledge/slim', { model: 'google/gemini-2.0-flash-001' })
    expect(done.status).toBe(200)
    const merged = done.body.groups.find((g: { merged_ids: string[] }) => g.merged_ids.includes(first))
    expect(merged.kept_id).toMatch(/^knowledge-/)
    expect((await api.get(`/api/knowledge/${first}`)).body.status).toBe('merged')
    const undone = await api.post(`/api/knowledge/${merged.kept_id}/unmerge`)
    expect(undone.status).toBe(200)
    expect(undone.body.restored_ids.sort()).toEqual([first, second].sort())
    expect((await api.get(`/api/knowledge/${first}`)).body.status).toBe('active')
    // An empty body is the defaults.
    expect((await api.post('/api/knowledge/slim', undefined)).status).toBe(200)
    for (const id of [first, second, merged.kept_id]) await api.delete(`/api/knowledge/${id}`)
  })

  it('GET /healthz and GET /api/openapi.json (no token needed)', async () => {
    const anonymous = client(url)
    const health = await anonymous.get('/healthz')
    // `embedder`: loading until the sentence model has loaded, then ready.
    expect(health.body).toEqual({ status: 'ok', version: expect.any(String), embedder: expect.stringMatching(/^(loading|ready)$/) })
    const doc = await anonymous.get('/api/openapi.json')
    expect(doc.status).toBe(200)
    expect(doc.body.openapi).toBe('3.1.0')
    const paths = Object.keys(doc.body.paths)
    for (const path of [
      '/api/knowledge/search',
      '/api/knowledge',
      '/api/knowledge/{id}',
      '/api/knowledge/batch_update',
      '/api/knowledge/slim',
      '/api/resource',
      '/api/resource/{id}',
      '/healthz',
    ]) {
      expect(paths).toContain(path)
    }
    const search = doc.body.paths['/api/knowledge/search'].get
    expect(search.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['q', 'top_k', 'min_score', 'types']))
    expect(search.parameters.find((p: { name: string }) => p.name === 'top_k').schema.default).toBe(5)
    expect(search.parameters.find((p: { name: string }) => p.name === 'min_score').schema.default).toBe(3)
    const list = doc.body.paths['/api/knowledge'].get
    expect(list.parameters.find((p: { name: string }) => p.name === 'limit').schema.default).toBe(10)
    const save = doc.body.components.schemas.SaveKnowledgeInput
    expect(Object.keys(save.properties)).toEqual(expect.arrayContaining(['task', 'content', 'types', 'tags', 'scopes', 'owner', 'source', 'score']))
    expect(Object.keys(doc.body.components.schemas.FeedbackInput.properties)).toEqual([
      'add_helpful_case',
      'add_harmful_case',
      'update_score',
      'evolve_feedback',
      // Issue 31: supersession by hand (docs/knowledge.md); seed 003's four fields come first, unchanged.
      'supersede_with',
      'valid_to',
    ])
  })
})
