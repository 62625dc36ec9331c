/**
 * Memory of the built CLI (issue 18; `npm run build` first): RSS of `knowhub start` idle on an
 * empty store (first start, then a restart) with the `hashed` and the `sentence` embedder, then (hashed) at 10k and 100k
 * entries, idle and after a first search, and the peak of a `knowhub eval` of the LoCoMo turns
 * (../shared/corpus/locomo/turns-dev, read in place). Each process runs with
 * bench/memory-probe.mjs preloaded, which reports what holds the memory: V8's heap, external
 * memory and array buffers (process.memoryUsage()), each WebAssembly memory (PGlite's
 * Postgres; the sentence model's TensorFlow.js backend), and anonymous vs file-backed RSS.
 * Goals: idle ≤ 200 MB, 10k entries ≤ 350 MB, 100k ≤ 1 GB.
 *
 *   npx tsx bench/memory.ts [--sizes 10000,100000] [--eval hashed,sentence] [--skip-empty] [--settings]
 *
 * `--settings` measures only the empty store (hashed) under the launch settings of issue 32 one
 * by one (MALLOC_ARENA_MAX, V8's semi-space, the embedded database's shared_buffers).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openKnowHub } from '../src/app/open.js'
import { Principal } from '../src/core/principal.js'
import { printTable, rng, round, writeResults, type BenchResult } from './lib.js'
import { exportLine, vocabulary, zipfSampler } from './store.js'

const BIN = process.env.KNOWHUB_BENCH_BIN ?? fileURLToPath(new URL('../bin/knowhub.js', import.meta.url))
const PROBE = fileURLToPath(new URL('./memory-probe.mjs', import.meta.url))
const TURNS = resolve(import.meta.dirname, '..', '..', 'shared', 'corpus', 'locomo', 'turns-dev')
const MB = 2 ** 20

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

interface Snapshot {
  seq: number
  usage: NodeJS.MemoryUsage
  status: { VmRSS?: number; VmHWM?: number; RssAnon?: number; RssFile?: number }
  wasm: Array<{ origin: string; bytes: number }>
}

/** A KnowHub process with the probe preloaded. */
interface Probed {
  child: ChildProcess
  probeFile: string
  output(): string
  exited: Promise<number | null>
}

/** How a measured server is launched: extra environment and Node flags (`--settings`). */
interface Launch {
  env?: NodeJS.ProcessEnv
  nodeFlags?: string[]
}

function launch(args: string[], env: NodeJS.ProcessEnv, probeFile: string, how: Launch = {}): Probed {
  const child = spawn(process.execPath, [...(how.nodeFlags ?? []), '--import', PROBE, BIN, ...args], {
    env: { ...env, KNOWHUB_MEMORY_PROBE: probeFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  return { child, probeFile, output: () => out, exited }
}

function readSnapshot(file: string): Snapshot | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  } catch {
    return undefined
  }
}

/** Asks the probe for a snapshot (SIGUSR2) and waits for it. */
async function snapshot(p: Probed): Promise<Snapshot> {
  const before = readSnapshot(p.probeFile)?.seq ?? 0
  p.child.kill('SIGUSR2')
  // A busy process (building its indexes at start, on a loaded machine) answers late.
  const deadline = Date.now() + 180_000
  while (Date.now() < deadline) {
    const s = readSnapshot(p.probeFile)
    if (s && s.seq > before) return s
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`no memory snapshot from the probe:\n${p.output()}`)
}

/** The figures of a snapshot: RSS and what holds it. */
function describe(s: Snapshot): { rss: number; note: string } {
  const wasm = new Map<string, number>()
  for (const m of s.wasm) wasm.set(m.origin, (wasm.get(m.origin) ?? 0) + m.bytes)
  const mb = (n: number | undefined) => `${round((n ?? 0) / MB, 0)}`
  const parts = [
    `V8 heap ${mb(s.usage.heapUsed)}/${mb(s.usage.heapTotal)} MB used/total`,
    `external ${mb(s.usage.external)} MB (array buffers ${mb(s.usage.arrayBuffers)} MB)`,
    ...[...wasm.entries()].map(([origin, bytes]) => `WASM ${origin} ${mb(bytes)} MB`),
    `RSS anon ${mb(s.status.RssAnon)} MB + file ${mb(s.status.RssFile)} MB`,
  ]
  return { rss: (s.status.VmRSS ?? s.usage.rss) / MB, note: parts.join(', ') }
}

async function withServer<T>(home: string, embedder: string, fn: (p: Probed, url: string) => Promise<T>, how: Launch = {}): Promise<T> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, KNOWHUB_DATA_DIR: join(home, 'data'), KNOWHUB_EMBEDDER: embedder, ...how.env }
  const p = launch(['start', '--port', '0', '--no-packs'], env, join(home, `probe-${Date.now()}.json`), how)
  try {
    const url = await new Promise<string>((done, fail) => {
      const timer = setInterval(() => {
        const match = /listening on (http:\/\/\S+?)[ ,;)]/.exec(p.output())
        if (match) {
          clearInterval(timer)
          done(match[1]!)
        }
      }, 50)
      void p.exited.then((code) => {
        clearInterval(timer)
        fail(new Error(`knowhub start exited (${code}):\n${p.output()}`))
      })
    })
    // `knowhub start` answers full-text-only until the embedder's model has loaded: the figures are taken with it loaded.
    await embedderReady(url)
    return await fn(p, url)
  } finally {
    p.child.kill('SIGTERM')
    await p.exited
  }
}

/** Waits until `/healthz` no longer reports the embedder `loading` (60 s at most). */
async function embedderReady(url: string): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const health = (await (await fetch(`${url}/healthz`)).json()) as { embedder?: string }
    if (health.embedder !== 'loading') return
    if (Date.now() > deadline) throw new Error(`the embedder of ${url} was still loading after 60 s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function search(url: string, q: string): Promise<void> {
  const response = await fetch(`${url}/api/knowledge/search?q=${encodeURIComponent(q)}`)
  if (!response.ok) throw new Error(`search answered ${response.status}: ${await response.text()}`)
  await response.text()
}

/** Idle RSS after start, then after a few searches (lazy parts loaded, indexes built). */
async function measureServer(results: BenchResult[], label: string, home: string, embedder: string, target: string, how: Launch = {}): Promise<void> {
  await withServer(
    home,
    embedder,
    async (p, url) => {
      await new Promise((r) => setTimeout(r, 3_000))
      const idle = describe(await snapshot(p))
      results.push({ name: `${label} idle`, value: round(idle.rss, 0), unit: 'MB RSS', target, note: `${idle.note}; ${load()}` })
      for (const q of ['selenium login blocked', 'retry with backoff', 'deploy staging cluster']) await search(url, q)
      await new Promise((r) => setTimeout(r, 1_000))
      const after = describe(await snapshot(p))
      results.push({ name: `${label} after 3 searches`, value: round(after.rss, 0), unit: 'MB RSS', note: after.note })
      console.error(`memory ${label}: idle ${round(idle.rss, 0)} MB (${idle.note}); after searches ${round(after.rss, 0)} MB (${after.note})`)
    },
    how,
  )
}

/**
 * The launch settings of `knowhub start`, one at a time on top of the previous (issue 32): glibc's
 * malloc arenas, V8's young generation, the embedded database's buffer pool. Each: a first start
 * and a restart on an empty store, `hashed`, idle and after three searches.
 */
const SETTINGS: Array<{ label: string; how: Launch }> = [
  { label: 'shared_buffers 32MB (the default before issue 32), no flags', how: { env: { KNOWHUB_SHARED_BUFFERS: '32MB' } } },
  { label: 'shared_buffers 16MB (the default now), no flags', how: {} },
  { label: 'shared_buffers 16MB, MALLOC_ARENA_MAX=2', how: { env: { MALLOC_ARENA_MAX: '2' } } },
  {
    label: 'shared_buffers 16MB, MALLOC_ARENA_MAX=2, --max-semi-space-size=2 (npm start, deploy/)',
    how: { env: { MALLOC_ARENA_MAX: '2' }, nodeFlags: ['--max-semi-space-size=2'] },
  },
  // Between the two: how much idle memory a larger young generation costs (it saves CPU a request under load; docs/scale.md).
  {
    label: 'shared_buffers 16MB, MALLOC_ARENA_MAX=2, --max-semi-space-size=4',
    how: { env: { MALLOC_ARENA_MAX: '2' }, nodeFlags: ['--max-semi-space-size=4'] },
  },
  {
    label: 'shared_buffers 16MB, MALLOC_ARENA_MAX=2, --max-semi-space-size=8',
    how: { env: { MALLOC_ARENA_MAX: '2' }, nodeFlags: ['--max-semi-space-size=8'] },
  },
]

async function measureSettings(results: BenchResult[]): Promise<void> {
  for (const { label, how } of SETTINGS) {
    const home = mkdtempSync(join(tmpdir(), 'knowhub-bench-memory-'))
    try {
      await measureServer(results, `knowhub start, empty store, hashed, ${label}`, home, 'hashed', '≤ 200 MB', how)
      await measureServer(results, `knowhub start again, empty store, hashed, ${label}`, home, 'hashed', '≤ 200 MB', how)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  }
}

/**
 * Adds synthetic entries (bench/store.ts's generator), `hashed`, through the knowledge
 * service's import in this process (the same code as `knowhub import`, without a process per
 * chunk), into the data folder the measured server then opens.
 */
async function importEntries(home: string, from: number, to: number): Promise<number> {
  const random = rng(42)
  const sample = zipfSampler(vocabulary(20_000, random), random)
  const sentence = (n: number) => Array.from({ length: n }, sample).join(' ')
  const types = ['strategy', 'tool', 'usecase', 'definition', 'plan']
  const loader = Principal.parse({ user: 'bench', permissions: ['admin'] })
  const started = performance.now()
  const hub = await openKnowHub({ dataDir: join(home, 'data'), embedder: { provider: 'hashed', hashedDimension: 512 } })
  try {
    for (let start = from; start < to; start += 25_000) {
      const end = Math.min(to, start + 25_000)
      const lines: string[] = []
      for (let i = start; i < end; i++) lines.push(exportLine(i, sentence(6 + (i % 6)), sentence(30 + (i % 40)), types[i % types.length]!, 'user:bench'))
      const report = await hub.knowledge.importJsonl(lines, loader, { mode: 'partial', batchSize: 1000 })
      if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
      console.error(`memory: ${end} entries imported (${round((end - from) / ((performance.now() - started) / 1000), 0)} entries/s; ${load()})`)
    }
  } finally {
    await hub.close()
  }
  return (to - from) / ((performance.now() - started) / 1000)
}

/** Peak RSS of `knowhub eval` on the LoCoMo turns, sampled every 100 ms, with the probe's breakdown at exit. */
async function measureEval(results: BenchResult[], embedder: string): Promise<void> {
  if (!existsSync(join(TURNS, 'corpus.jsonl'))) throw new Error(`LoCoMo turns are missing: expected ${TURNS}/corpus.jsonl`)
  const home = mkdtempSync(join(tmpdir(), 'knowhub-bench-memory-'))
  try {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, KNOWHUB_DATA_DIR: join(home, 'data') }
    const p = launch(['eval', TURNS, '--embedder', embedder, '--json'], env, join(home, 'probe-eval.json'))
    let peak = 0
    const timer = setInterval(() => {
      try {
        const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.child.pid}/status`, 'utf8'))
        if (match) peak = Math.max(peak, Number(match[1]) * 1024)
      } catch {
        // exited
      }
    }, 100)
    const code = await p.exited
    clearInterval(timer)
    if (code !== 0) throw new Error(`knowhub eval failed (${code}):\n${p.output().slice(-2000)}`)
    const last = readSnapshot(p.probeFile)
    const hwm = last?.status.VmHWM ?? peak
    const at = last ? describe(last) : undefined
    const recall = /"recall@10":\s*([\d.]+)/.exec(p.output())?.[1]
    results.push({
      name: `knowhub eval turns-dev (${embedder}) peak`,
      value: round(Math.max(hwm, peak) / MB, 0),
      unit: 'MB RSS',
      note: `2,760 turns loaded and 760 queries searched (recall@10 ${recall}); at exit: ${at?.note ?? '?'}; ${load()}`,
    })
    console.error(`memory eval ${embedder}: peak ${round(Math.max(hwm, peak) / MB, 0)} MB; at exit ${at?.note}`)
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

export async function runMemoryBench(options: { sizes?: number[]; evals?: string[]; skipEmpty?: boolean; settings?: boolean } = {}): Promise<BenchResult[]> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`)
  if (options.settings) {
    const results: BenchResult[] = []
    await measureSettings(results)
    return results
  }
  const sizes = options.sizes ?? [10_000, 100_000]
  const evals = options.evals ?? ['hashed']
  const results: BenchResult[] = []
  for (const embedder of options.skipEmpty ? [] : ['hashed', 'sentence']) {
    const home = mkdtempSync(join(tmpdir(), 'knowhub-bench-memory-'))
    try {
      await measureServer(results, `knowhub start, empty store, ${embedder}`, home, embedder, '≤ 200 MB')
      // A restart on the same folder: without the first start's template unpacking and migrations.
      await measureServer(results, `knowhub start again, empty store, ${embedder}`, home, embedder, '≤ 200 MB')
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  }
  const home = mkdtempSync(join(tmpdir(), 'knowhub-bench-memory-'))
  try {
    let loaded = 0
    for (const size of sizes) {
      const rate = await importEntries(home, loaded, size)
      loaded = size
      await measureServer(results, `knowhub start, ${size} entries, hashed`, home, 'hashed', size <= 10_000 ? '≤ 350 MB' : '≤ 1 GB')
      results[results.length - 2]!.note += `; entries imported in-process at ${round(rate, 0)} entries/s`
    }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
  for (const embedder of evals) await measureEval(results, embedder)
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { sizes: { type: 'string' }, eval: { type: 'string' }, 'skip-empty': { type: 'boolean' }, settings: { type: 'boolean' } },
  })
  const results = await runMemoryBench({
    ...(values.settings ? { settings: true } : {}),
    ...(values.sizes ? { sizes: values.sizes.split(',').map(Number) } : {}),
    ...(values.eval ? { evals: values.eval.split(',') } : {}),
    ...(values['skip-empty'] ? { skipEmpty: true } : {}),
  })
  printTable('Memory of knowhub start and knowhub eval', results)
  console.log(`\nwrote ${writeResults('memory', results)}`)
}
