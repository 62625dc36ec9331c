/**
 * `npm run bench`: runs every benchmark (or those named with --only), prints one
 * table per benchmark and writes bench/results/<name>.json plus bench/results/all.json.
 *
 *   npm run bench                          # everything (takes a while: 100k entries on two backends)
 *   npm run bench -- --only store,embed    # a subset
 *   npm run bench -- --quick               # smaller sizes and shorter runs
 *   npm run bench -- --only pg-scale --size 1000000   # PostgreSQL + pgvector at 1M (about an hour)
 */
import { parseArgs } from 'node:util'
import { printTable, writeResults, type BenchResult } from './lib.js'

/** `size`: `--size N`, for the benchmarks that load a store of one size (pg-scale). */
type Runner = (quick: boolean, size?: number) => Promise<BenchResult[]>

const BENCHES: Record<string, Runner> = {
  embed: async () => (await import('./embed.js')).runEmbedBench(),
  'embed-threads': async (quick) => (await import('./embed-threads.js')).runEmbedThreadsBench(quick ? { texts: 100 } : {}),
  store: async (quick) => (await import('./store.js')).runStoreBench(quick ? { sizes: [1_000, 10_000], queries: 100 } : {}),
  packs: async () => (await import('./packs.js')).runPacksBench(),
  'packs-qa': async () => (await import('./packs-qa.js')).runPacksQaBench(),
  http: async (quick) => (await import('./http.js')).runHttpBench(quick ? { seconds: 10 } : {}),
  // The per-core goals of issue 32: never-seen searches (no cache can answer) and the mixed workload, hashed, with CPU per request.
  'http-fresh': async (quick) => (await import('./http.js')).runHttpBench({ embedder: 'hashed', queries: 'fresh', seconds: quick ? 10 : 30 }),
  'http-mixed': async (quick) => (await import('./http.js')).runHttpBench({ embedder: 'hashed', workload: 'mixed', seconds: quick ? 10 : 30 }),
  eval: async () => (await import('./eval.js')).runEvalBench(),
  dashboard: async (quick) => (await import('./dashboard.js')).runDashboardBench(quick ? { entries: 2_000 } : {}),
  // The learning loop against a real model on the labelled extraction set (issue 43): KNOWHUB_LLM_URL, else Gemma 3 270M from .cache/venv.
  llm: async (quick) => (await import('./llm.js')).runLlmBench(quick ? { perLanguage: 6 } : {}),
  'llm-stub': async (quick) => (await import('./llm-stub.js')).runLlmStubBench(quick ? { entries: 200, queries: 15 } : {}),
  scale: async (quick) => (await import('./scale.js')).runScaleBench(quick ? { seconds: 5, entries: 1000 } : {}),
  workers: async (quick) => (await import('./workers.js')).runWorkersBench(quick ? { seconds: 5, entries: 1000 } : {}),
  agent: async (quick) => (await import('./agent.js')).runAgentBench(quick ? { iterations: 20 } : {}),
  startup: async (quick) => (await import('./startup.js')).runStartupBench(quick ? { runs: 1 } : {}),
  cli: async (quick) => (await import('./startup.js')).runCliBench(quick ? { runs: 3 } : {}),
  oneshot: async (quick) => (await import('./startup.js')).runOneShotBench(quick ? { runs: 3 } : {}),
  'pg-scale': async (quick, size) => (await import('./pg-scale.js')).runPgScaleBench(size ? { sizes: [size] } : quick ? { sizes: [10_000], queries: 50 } : {}),
  memory: async (quick) => (await import('./memory.js')).runMemoryBench(quick ? { sizes: [10_000] } : {}),
  import: async (quick) => (await import('./import.js')).runImportBench(quick ? { hashed: 2_000, sentence: 100 } : {}),
  folder: async (quick) => (await import('./folder.js')).runFolderBench(quick ? { entries: 2_000 } : {}),
  forget: async (quick) => {
    const { runForgetBench } = await import('./forget.js')
    const sizes = quick ? { entries: 200, others: 2_000 } : {}
    return [...(await runForgetBench(sizes)), ...(await runForgetBench({ ...sizes, postgres: true }))]
  },
  // Side by side with Mem0, LangGraph's store and Mastra Memory on multilingual-e5-small (issue 44; setup: bash scripts/peers-setup.sh).
  peers: async (quick) => (await import('./peers/index.js')).runPeersBench(quick ? { sets: ['zh-agent', 'small-stores'], absent: 10 } : {}),
  // The in-process libraries of issue 18: MiniSearch (+ hnswlib-node when installed), hashed embedder.
  'peers-libs': async (quick) => (await import('./peers.js')).runPeersBench(quick ? { sets: ['zh-agent'] } : {}),
  contradictions: async (quick) => (await import('./contradictions.js')).runContradictionsBench(quick ? { embedders: ['hashed'] } : {}),
}

const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean', default: false }, size: { type: 'string' } } })
const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(BENCHES)
const size = values.size === undefined ? undefined : Number(values.size.replace(/_/g, ''))
if (size !== undefined && !(Number.isInteger(size) && size > 0)) {
  console.error(`--size: a whole number of entries, e.g. --size 1000000 (got ${values.size})`)
  process.exit(2)
}
const unknown = names.filter((n) => !(n in BENCHES))
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`)
  process.exit(2)
}
const all: Record<string, BenchResult[]> = {}
let failed = false
for (const name of names) {
  console.error(`\n== ${name} ==`)
  try {
    const results = await BENCHES[name]!(values.quick ?? false, size)
    all[name] = results
    printTable(name, results)
    writeResults(name, results)
  } catch (error) {
    failed = true
    console.error(`${name} failed: ${(error as Error).stack ?? String(error)}`)
  }
}
console.log(`\nwrote ${writeResults('all', Object.values(all).flat(), { benches: all })}`)
if (failed) process.exitCode = 1
