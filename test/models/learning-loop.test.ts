/**
 * The learning loop against a real model (issue 43): extraction, evolve, slim, routing and
 * compaction through KnowHub's `openai` provider on Gemma 3 270M (llama_cpp.server on loopback,
 * test/helpers/models.ts), in English and in Chinese, the storage parts on every database
 * backend. A tiny model makes every mistake a real endpoint makes (prose, invented facts, the
 * wrong language, rambling to the token cap, slowness), so the tests assert what must hold for
 * ANY model, never its words:
 *
 * - nothing ungrounded is saved `active` (each saved text passes the grounding rule again, here);
 * - no secret of the conversation is saved, answered or summarised;
 * - every failure is a KnowHub error with an `llm_*` code and a counted reason, never a crash or
 *   an internal error;
 * - every call ends within its deadline, and a search or a save does not wait for the model.
 *
 * Kept light for CI (a few short conversations; the model is ~30-70 tokens/s on one thread):
 * one extraction per server backend, both languages on PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { isKnowHubError } from '../../src/core/errors.js'
import type { ExtractResult } from '../../src/core/extract.js'
import { Principal } from '../../src/core/principal.js'
import { checkGrounding } from '../../src/knowledge/grounding.js'
import { useModel, type ModelServer } from '../helpers/models.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const gemma = useModel('chat')
const alice = Principal.parse({ user: 'alice', agent: 'book_agent', project: 'app', org: 'acme' })

/** Reasons the provider counts failures under (src/core/llm.ts LlmHealth). */
const KNOWN_REASONS = /^(timeout|cancelled|network|http_\d{3}|not_chat_completion|format_refused|not_json|schema|truncated)$/u
const SECRET = 'Hunter2Secret99'

const english = [
  { id: 'e1', role: 'user', content: `I always use pnpm, never npm. Our CI runs on GitHub Actions. The staging password is ${SECRET}.` },
  { id: 'e2', role: 'assistant', content: 'Noted: pnpm for packages, GitHub Actions for CI.' },
  { id: 'e3', role: 'user', content: 'Thanks! Nice weather today. Maybe we will move to GitLab next year, not sure.' },
]
const chinese = [
  { id: 'z1', role: 'user', content: `我做数据分析一直用 Python，画图用 matplotlib。数据库密码: ${SECRET}` },
  { id: 'z2', role: 'assistant', content: '好的，以后分析代码都用 Python 和 matplotlib。' },
  { id: 'z3', role: 'user', content: '谢谢！今天天气不错。' },
]

const SEEDED: ReadonlyArray<readonly [string, string]> = [
  ['Install dependencies with pnpm', 'Run corepack enable before pnpm install.'],
  ['Deploy the app to staging', 'Push to the staging branch; GitHub Actions deploys it.'],
  ['用 Python 画图', '画图用 matplotlib，保存为 PNG。'],
]

/** A hub on the model: the per-request timeout generous (llama_cpp.server keeps working on an abandoned request), every call within its deadline. */
async function openHub(server: ModelServer, options: { dataDir?: string; databaseUrl?: string }): Promise<KnowHub> {
  return openKnowHub({
    ...options,
    embedder: { provider: 'hashed', dimension: 128 },
    search: { cacheSize: 0, routingCacheSize: 0, routingTimeoutMs: 120_000 },
    llm: { url: server.url, model: server.model, timeoutMs: 120_000, callTimeoutMs: 180_000, retries: 0, maxTokens: 512 },
  })
}

/** Runs a model call: its result, or the KnowHub error it failed with (anything else fails the test). */
async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; code: string; details: Record<string, unknown> }> {
  try {
    return { ok: true, value: await promise }
  } catch (error) {
    if (!isKnowHubError(error)) throw error
    return { ok: false, code: error.code, details: (error.details ?? {}) as Record<string, unknown> }
  }
}

/** What must hold of any model's failures: an llm_* code with its reason, and counted reasons the provider knows. */
function expectHandled(hub: KnowHub, outcome: { ok: boolean; code?: string; details?: Record<string, unknown> }): void {
  if (!outcome.ok) {
    expect(outcome.code).toMatch(/^llm_(failed|timeout|invalid_output)$/u)
    expect(outcome.details).toMatchObject({ task: expect.any(String) })
  }
  for (const reason of Object.keys(hub.llm!.health().failures)) expect(reason).toMatch(KNOWN_REASONS)
}

/** Every entry the caller sees: active, grounded in `sources` by the rule, with the turns it rests on, and no secret. */
async function expectGroundedEntries(hub: KnowHub, sources: readonly string[]): Promise<void> {
  const { items } = await hub.knowledge.list({ limit: 100 }, alice)
  expect(JSON.stringify(items)).not.toContain(SECRET)
  for (const entry of items) {
    expect(entry.status).toBe('active')
    const verdict = await checkGrounding(
      entry.content,
      sources.map((text, index) => ({ index, text })),
    )
    expect({ content: entry.content, supported: verdict.supported }).toEqual({ content: entry.content, supported: true })
  }
}

async function extract(hub: KnowHub, messages: typeof english): Promise<ExtractResult | undefined> {
  const started = performance.now()
  const outcome = await settle(hub.extraction.extract({ messages, mode: 'save', context: { trace_id: 'real-model' } }, alice))
  // Two requests at most, each within the call deadline (a cut answer adds at most two smaller ones).
  expect(performance.now() - started).toBeLessThan(4 * 180_000)
  expectHandled(hub, outcome)
  if (!outcome.ok) return undefined
  const result = outcome.value
  expect(JSON.stringify(result)).not.toContain(SECRET)
  expect(result.secrets_found).toBeGreaterThanOrEqual(1)
  for (const item of result.items) {
    expect(item.turns.length).toBeGreaterThan(0)
    expect(item.grounding).not.toBeNull()
  }
  for (const dropped of result.dropped) expect(dropped.reason).toMatch(/^(ungrounded|invalid|duplicate|a user profile)/u)
  return result
}

describe.skipIf(!gemma.available)('the learning loop on Gemma 3 270M', () => {
  let server: ModelServer
  beforeAll(async () => {
    server = await gemma.server()
  }, 120_000)

  describe.each(BACKENDS)('storage on %s', (backend) => {
    let hub: KnowHub
    let database: TestDatabase
    beforeAll(async () => {
      database = await createTestDatabase(backend)
      hub = await openHub(server, database.options)
    }, 120_000)
    afterAll(async () => {
      await hub.close()
      await database.drop()
    })

    it('extracts only what the conversation says, no secret, while searches and saves go on', { timeout: 900_000 }, async () => {
      const conversations = backend === 'pglite' ? [english, chinese] : backend === 'postgres' ? [english] : [chinese]
      for (const messages of conversations) {
        const running = extract(hub, messages)
        // The model's work is not on the path of a save or a search.
        const started = performance.now()
        const saved = await hub.knowledge.save({ task: 'Check the build', content: 'Run pnpm install before the build.', types: ['strategy'] }, alice)
        await hub.knowledge.search({ q: 'pnpm build' }, alice)
        expect(performance.now() - started).toBeLessThan(5_000)
        await hub.knowledge.delete(saved.id, alice)
        await running
      }
      await expectGroundedEntries(
        hub,
        conversations.flatMap((c) => c.map((m) => m.content)),
      )
      // llama.cpp's server refuses json_schema (HTTP 500 naming response_format): JSON mode with the schema from then on.
      expect(hub.llm!.health().structured_output).toMatchObject({ current: 'json_object_schema', refused: ['json_schema'] })
      expect(hub.llm!.usage().find((u) => u.task === 'extract')!.calls).toBeGreaterThanOrEqual(conversations.length)
    })

    it('evolves an entry only into what the entry and the feedback say', { timeout: 600_000 }, async () => {
      const content = backend === 'pgvector' ? '部署前先运行 pnpm install，再运行 pnpm build。' : 'Run pnpm install before pnpm build in the Docker image.'
      const entry = await hub.knowledge.save({ task: 'Build the image', content, types: ['strategy'], scopes: ['project:app'] }, alice)
      const feedback = backend === 'pgvector' ? '先运行 corepack enable' : 'mention corepack enable first'
      const outcome = await settle(hub.knowledge.feedback(entry.id, { evolve_feedback: feedback, add_helpful_case: { task: 'build' } }, alice))
      expectHandled(hub, outcome)
      const now = await hub.knowledge.get(entry.id, alice)
      if (outcome.ok && outcome.value.evolve?.status === 'applied') {
        const verdict = await checkGrounding(
          now.content,
          [
            { index: 0, text: `Build the image\n${content}` },
            { index: 1, text: feedback },
          ],
          { conversational: false },
        )
        expect(verdict.supported).toBe(true)
      } else {
        expect(now.content).toBe(content)
      }
      expect(JSON.stringify(now)).not.toContain(SECRET)
    })

    it('slims near-duplicates into a text they support, or leaves them with a reason', { timeout: 600_000 }, async () => {
      const task = 'Log in to site A with selenium'
      const a = 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent.'
      await hub.knowledge.save({ task, content: a, types: ['tool'], scopes: ['org:acme'] }, alice)
      await hub.knowledge.save({ task, content: `${a} Add random delays.`, types: ['tool'], scopes: ['org:acme'] }, alice)
      const outcome = await settle(hub.slim.slim({ threshold: 0.8 }, alice))
      expect(outcome.ok).toBe(true)
      if (!outcome.ok) return
      for (const group of outcome.value.groups.filter((g) => g.merge === 'llm')) {
        const verdict = await checkGrounding(group.merged_content ?? '', [{ index: 0, text: `${task}\n${a} Add random delays.` }], { conversational: false })
        expect(verdict.supported).toBe(true)
      }
      for (const skipped of outcome.value.skipped) expect(skipped.reason).toMatch(/^(llm_failed|ungrounded|scopes_differ|owners_differ|not_managed)$/u)
      expect(outcome.value.groups.length + outcome.value.skipped.length).toBeGreaterThan(0)
    })
  })

  describe('routing and compaction (the model, not the storage: PGlite)', () => {
    let hub: KnowHub
    let database: TestDatabase
    beforeAll(async () => {
      database = await createTestDatabase('pglite')
      hub = await openHub(server, database.options)
      for (const [task, content] of SEEDED) await hub.knowledge.save({ task, content, types: ['strategy'], scopes: ['project:app'] }, alice)
    }, 120_000)
    afterAll(async () => {
      await hub.close()
      await database.drop()
    })

    it('routes a search with the model or falls back with a reason; it only ever narrows the hybrid list', { timeout: 600_000 }, async () => {
      for (const q of ['How do I install dependencies with pnpm?', '怎么用 Python 画图？']) {
        const hybrid = await hub.knowledge.search({ q, top_k: 10, routing: 'off' }, alice)
        const routed = await hub.knowledge.search({ q, top_k: 5, routing: 'llm' }, alice)
        expect(routed.routing?.status === 'used' || routed.routing?.status === 'fallback').toBe(true)
        if (routed.routing?.status === 'fallback') expect(routed.routing.reason).toMatch(/^llm_/u)
        const known = new Set(hybrid.results.map((r) => r.id))
        for (const r of routed.results) expect(known.has(r.id)).toBe(true)
      }
      expectHandled(hub, { ok: true })
    })

    it('compacts a history in English and in Chinese without a secret, extraction reported', { timeout: 900_000 }, async () => {
      for (const [language, turns] of [
        ['en', english],
        ['zh', chinese],
      ] as const) {
        // Three times over: past the smallest threshold (100 tokens) in either language.
        const history = [...turns, ...turns, ...turns].map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content }))
        const started = performance.now()
        const outcome = await settle(hub.agent.compactHeld({ agent: 'book_agent', history, threshold: 100, keep_recent: 10, language }, alice))
        expect(performance.now() - started).toBeLessThan(5 * 180_000)
        expectHandled(hub, outcome)
        if (!outcome.ok) continue
        expect(outcome.value.compacted).toBe(true)
        expect(outcome.value.memory ?? '').not.toContain(SECRET)
        expect(['saved', 'failed']).toContain(outcome.value.extraction?.status)
      }
      await expectGroundedEntries(hub, [...[...english, ...chinese].map((m) => m.content), ...SEEDED.map(([, content]) => content)])
    })

    // Last: the model server keeps working on the request the search gave up on.
    it('never makes a search wait past its routing deadline', { timeout: 300_000 }, async () => {
      const quick = await openKnowHub({
        dataDir: 'memory://',
        embedder: { provider: 'hashed', dimension: 128 },
        search: { cacheSize: 0, routingCacheSize: 0, routingTimeoutMs: 1_000 },
        llm: { url: server.url, model: server.model, retries: 0 },
      })
      try {
        for (const [task, content] of SEEDED) await quick.knowledge.save({ task, content, types: ['strategy'], scopes: ['project:app'] }, alice)
        const started = performance.now()
        const routed = await quick.knowledge.search({ q: 'Which branch deploys to staging?', top_k: 5, routing: 'llm' }, alice)
        expect(performance.now() - started).toBeLessThan(6_000)
        // The answer may come in time on a quiet machine; when it does not, the hybrid order stands and says why.
        if (routed.routing?.status === 'fallback') {
          expect(routed.routing.reason).toBe('llm_timeout')
          // Counted: the search stopped waiting for the call.
          expect(quick.llm!.health().failures.cancelled).toBe(1)
        }
      } finally {
        await quick.close()
      }
    })
  })
})
