/**
 * `npm run bench -- --only llm-stub`: the learning loop's own costs against the stub model (a real
 * OpenAI-compatible HTTP server on loopback answering after a fixed delay, default 200 ms):
 * search p50/p95 with routing off and on, extraction wall time and LLM calls for a 50-turn
 * conversation, evolve latency. The load average is noted beside each figure.
 */
import { loadavg } from 'node:os'
import { openKnowHub } from '../src/app/open.js'
import { Principal } from '../src/core/principal.js'
import { startOpenAIStub, type ChatRequest } from '../test/helpers/openai-stub.js'
import { percentile, rng, round, type BenchResult } from './lib.js'

export interface LlmBenchOptions {
  /** Delay of every model answer, ms (default 200). */
  delayMs?: number
  entries?: number
  queries?: number
}

const TOPICS = ['pnpm', 'docker', 'selenium', 'postgres', 'kubernetes', 'redis', 'nginx', 'typescript', 'pytest', 'terraform']
const VERBS = ['deploy', 'debug', 'cache', 'migrate', 'log in with', 'scale', 'test', 'configure', 'monitor', 'upgrade']

/** The stub model's scripted answers, by the request's system prompt. */
function answer(request: ChatRequest): string {
  const system = String(request.messages[0]?.content)
  const user = String(request.messages[1]?.content ?? '')
  if (system.includes('You route a search')) {
    const ids = [...user.matchAll(/"id":"([^"]+)"/g)].map((m) => m[1]!)
    return JSON.stringify({ ids: ids.slice(0, 10).reverse() })
  }
  if (system.includes('You extract reusable knowledge')) {
    return JSON.stringify({
      entries: [
        {
          types: ['user_profile'],
          task: 'Package manager preference',
          content: 'The user prefers pnpm over npm.',
          tags: { category: 'preference' },
          message_ids: ['t0'],
        },
        {
          types: ['strategy'],
          task: 'Deploy with pnpm in Docker',
          content: 'Run corepack enable before pnpm install in the image.',
          message_ids: ['t3', 't4'],
        },
      ],
    })
  }
  if (system.includes('free of duplicates')) return JSON.stringify({ decisions: [{ proposal: 0, action: 'noop', existing_id: null }] })
  return JSON.stringify({ content: 'Rewritten: run corepack enable first, then pnpm install --frozen-lockfile.', change: 'bench' })
}

const load = (): string => `load ${loadavg()[0]!.toFixed(1)}`

export async function runLlmStubBench(options: LlmBenchOptions = {}): Promise<BenchResult[]> {
  const delayMs = options.delayMs ?? 200
  const entries = options.entries ?? 500
  const queries = options.queries ?? 30
  await using stub = await startOpenAIStub({
    chat: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      return answer(request)
    },
  })
  const principal = Principal.parse({ user: 'bench', agent: 'coder', project: 'app', permissions: ['read', 'write', 'admin'] })
  const hub = await openKnowHub({
    dataDir: 'memory://',
    embedder: { provider: 'hashed', dimension: 256 },
    principal,
    search: { cacheSize: 0, routingCacheSize: 0, routingTimeoutMs: 3000 },
    llm: { url: stub.url, model: 'stub-chat', timeoutMs: 10_000 },
  })
  const results: BenchResult[] = []
  try {
    const random = rng(7)
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
    for (let i = 0; i < entries; i++) {
      const task = `${pick(VERBS)} ${pick(TOPICS)} ${pick(TOPICS)} #${i}`
      await hub.knowledge.save(
        { task, content: `${task}: notes on ${pick(TOPICS)} and ${pick(TOPICS)}`, types: ['strategy'], scopes: ['project:app'] },
        principal,
      )
    }
    for (const routing of ['off', 'llm'] as const) {
      const times: number[] = []
      for (let i = 0; i < queries; i++) {
        const started = performance.now()
        await hub.knowledge.search({ q: `${pick(VERBS)} ${pick(TOPICS)}`, top_k: 5, routing }, principal)
        times.push(performance.now() - started)
      }
      times.sort((a, b) => a - b)
      const note = `${entries} entries, ${queries} queries, model delay ${delayMs} ms, ${load()}`
      results.push({ name: `search p50, routing ${routing}`, value: round(percentile(times, 50), 1), unit: 'ms', note })
      results.push({ name: `search p95, routing ${routing}`, value: round(percentile(times, 95), 1), unit: 'ms', note })
    }
    const turns = Array.from({ length: 50 }, (_, i) => ({
      id: `t${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `turn ${i}: we deploy with pnpm in docker, step ${i}`,
    }))
    const walls: number[] = []
    let calls = 0
    for (let run = 0; run < 3; run++) {
      const before = stub.requests.length
      const started = performance.now()
      await hub.extraction.extract({ messages: turns, mode: 'save', context: { trace_id: `bench-${run}` } }, principal)
      walls.push(performance.now() - started)
      calls = Math.max(calls, stub.requests.length - before)
    }
    walls.sort((a, b) => a - b)
    results.push({ name: 'extraction wall time, 50 turns (median of 3)', value: round(percentile(walls, 50), 0), unit: 'ms', note: `save mode, ${load()}` })
    results.push({ name: 'LLM calls per 50-turn extraction (most of 3)', value: calls, unit: 'calls', target: '≤ 2' })
    const target = (await hub.knowledge.list({ limit: 1 }, principal)).items[0]!
    const evolves: number[] = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      await hub.knowledge.feedback(target.id, { evolve_feedback: `bench ${i}: mention frozen lockfiles` }, principal)
      evolves.push(performance.now() - started)
    }
    evolves.sort((a, b) => a - b)
    results.push({ name: 'evolve latency p50', value: round(percentile(evolves, 50), 0), unit: 'ms', note: `5 evolves, model delay ${delayMs} ms, ${load()}` })
  } finally {
    await hub.close()
  }
  return results
}
