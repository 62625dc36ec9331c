/**
 * Agent-context benchmarks (seed 004), on data generated in a temp folder and an embedded
 * database: assembleContext with 1,000 visible user_profile entries, 20 knowledge packs, a
 * knowledge.md with functions and a compact memory, a task and a 16k-token budget
 * (target p50 ≤ 50 ms warm); the first (cold) call reported apart; and a goal focus
 * (search + attach + persist + render).
 * Run alone with `npx tsx bench/agent.ts`: prints a table and writes bench/results/agent.json.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { openKnowHub } from '../src/app/open.js'
import { createAgentService } from '../src/agent/service.js'
import { Principal } from '../src/core/principal.js'
import { createPackService } from '../src/packs/service.js'
import { percentile, printTable, rng, round, writeResults, type BenchResult } from './lib.js'
import { generatePacks } from './packs.js'

const PROFILES = 1000
const PACKS = 20

function knowledgeMd(functions: number): string {
  const parts = ['# Book agent', '']
  for (let i = 0; i < functions; i++) {
    parts.push(`## @function_${i}: step ${i} of the book workflow`, i % 3 === 0 ? 'Contract: do exactly this.' : 'Soft guidance.', 'Details. '.repeat(20), '')
  }
  return parts.join('\n')
}

async function timed(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    await fn()
    times.push(performance.now() - start)
  }
  return times.sort((a, b) => a - b)
}

/** Runs the agent benchmarks; `iterations` warm calls of each. */
export async function runAgentBench(options: { iterations?: number } = {}): Promise<BenchResult[]> {
  const iterations = options.iterations ?? 100
  const root = await mkdtemp(join(tmpdir(), 'knowhub-bench-agent-'))
  const principal = Principal.parse({ user: 'bench', agent: 'book_agent', permissions: ['read', 'write'] })
  const hub = await openKnowHub({
    dataDir: join(root, 'data'),
    embedder: { provider: 'hashed', dimension: 256 },
    secrets: { key: Buffer.alloc(32, 3).toString('base64') },
  })
  try {
    const random = rng(7)
    const lines = Array.from({ length: PROFILES }, (_, i) =>
      JSON.stringify({
        id: `profile-${i}`,
        task: `User preference ${i}: ${['concise answers', 'British spelling', 'dark mode', 'metric units', 'short chapters'][i % 5]}`,
        content: `Observed preference number ${i}. `.repeat(3),
        types: ['user_profile'],
        scopes: ['user:bench'],
        owner: 'user:bench',
        eval: { score: 3, helpful: Math.floor(random() * 10), harmful: 0, confidence: round(random(), 3) },
      }),
    )
    await hub.knowledge.importJsonl(lines, principal)
    for (let i = 0; i < 50; i++)
      await hub.knowledge.save({ task: `Chapter writing technique ${i}`, content: 'Open with a scene. '.repeat(5), types: ['strategy'] }, principal)
    await generatePacks(join(root, 'project'), PACKS)
    const home = join(root, 'agents')
    await mkdir(join(home, 'book_agent'), { recursive: true })
    await writeFile(join(home, 'book_agent', 'knowledge.md'), knowledgeMd(40))
    await writeFile(join(home, 'book_agent', 'compact.md'), 'Decisions: chapter 2 done. '.repeat(100))
    const agent = createAgentService({
      store: hub.store,
      knowledge: hub.knowledge,
      packs: createPackService({ discovery: { projectDir: join(root, 'project') } }),
      config: { home },
    })
    const request = { agent: 'book_agent', task: 'Write chapter 3 with a scene opening', budget: 16_000, principal }
    const coldStart = performance.now()
    const first = await agent.assembleContext(request)
    const cold = performance.now() - coldStart
    const warm = await timed(iterations, () => agent.assembleContext(request))
    await agent.goal({ action: 'create', trace_id: 'bench', description: 'Chapter writing technique with a scene' }, principal)
    const focus = await timed(Math.min(iterations, 50), () => agent.goal({ action: 'focus', trace_id: 'bench', goal_id: '1' }, principal))
    const load = os.loadavg()[0]?.toFixed(2) ?? '?'
    const note = `${PROFILES} profile entries, ${PACKS} packs, ${first.report.used}/${first.report.budget} tokens, load ${load}`
    return [
      { name: 'assembleContext cold (first call)', value: round(cold), unit: 'ms', note },
      { name: 'assembleContext warm p50', value: round(percentile(warm, 50)), unit: 'ms', target: '≤ 50', note },
      { name: 'assembleContext warm p95', value: round(percentile(warm, 95)), unit: 'ms', note },
      { name: 'goal focus p50', value: round(percentile(focus, 50)), unit: 'ms', note: `top_k 3, load ${load}` },
      { name: 'goal focus p95', value: round(percentile(focus, 95)), unit: 'ms', note: `top_k 3, load ${load}` },
    ]
  } finally {
    await hub.close()
    await rm(root, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = await runAgentBench()
  printTable('agent', results)
  console.log(`wrote ${writeResults('agent', results)}`)
}
