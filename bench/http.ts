/**
 * HTTP load benchmark: `GET /api/knowledge/search` with varied queries against a
 * real server (embedded PGlite, 10k entries, token auth) driven by autocannon for
 * 60 s. The server runs in a child process so the load generator does not share
 * its event loop. Reports req/s, p50/p90/p99 latency, errors and non-2xx answers.
 *
 *   npx tsx bench/http.ts [--seconds 60] [--entries 10000] [--connections 16] [--embedder default|sentence|hashed]
 *                         [--cache-size 1000] [--queries repeat|fresh] [--workload search|mixed] [--data DIR] [--profile DIR] [--tuned]
 *
 * `--cache-size 0` turns the server's search response cache off, so that every request
 * runs a search; `--queries fresh` sends every query once only (none repeats, so neither the
 * response cache nor the query-vector cache ever hits; `repeat`, the default, rotates 1,000);
 * `--workload mixed` sends 50% searches, 15% gets, 10% lists, 15% saves and 10% feedback
 * (`POST /api/knowledge/batch_update`, one item); `--profile DIR` writes a CPU profile of the
 * server process; `--tuned` runs the server with the memory settings of `npm start` (issue 32).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { printTable, rng, round, writeResults, type BenchResult } from './lib.js'
import { exportLine as storeExportLine } from './store.js'

const TYPES = ['strategy', 'tool', 'usecase', 'definition', 'plan', 'user_profile'] as const
const SCOPES = ['user:bench', 'project:p0', 'org:acme', 'team:other'] as const

/** A synthetic corpus: pronounceable words with a Zipf distribution (like bench/store.ts). */
export function corpus(size: number, seed: number): { docs: Array<{ task: string; content: string; type: string; scope: string }>; queries: string[] } {
  const random = rng(seed)
  const syllables = ['ka', 'lo', 'mi', 'ren', 'sto', 'pa', 'dex', 'vin', 'tor', 'qu', 'ash', 'bel', 'cor', 'fy', 'gun', 'hal', 'jet', 'mur', 'nix', 'ost']
  const words = new Set<string>()
  while (words.size < 5000) {
    let w = ''
    for (let i = 0, n = 2 + Math.floor(random() * 3); i < n; i++) w += syllables[Math.floor(random() * syllables.length)]
    words.add(w)
  }
  const vocabulary = [...words]
  const cumulative: number[] = []
  let acc = 0
  const total = vocabulary.reduce((sum, _, i) => sum + 1 / (i + 1), 0)
  for (let i = 0; i < vocabulary.length; i++) cumulative.push((acc += 1 / (i + 1) / total))
  const word = () => {
    const r = random()
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < r) lo = mid + 1
      else hi = mid
    }
    return vocabulary[lo]!
  }
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ')
  const docs = Array.from({ length: size }, (_, i) => ({
    task: sentence(6 + Math.floor(random() * 6)),
    content: sentence(30 + Math.floor(random() * 40)),
    type: TYPES[i % TYPES.length]!,
    scope: SCOPES[i % SCOPES.length]!,
  }))
  const queries = Array.from({ length: 1000 }, () => {
    const doc = docs[Math.floor(random() * size)]!
    const all = `${doc.task} ${doc.content}`.split(' ')
    const start = Math.floor(random() * Math.max(1, all.length - 4))
    return all.slice(start, start + 2 + Math.floor(random() * 3)).join(' ')
  })
  return { docs, queries }
}

export function exportLine(i: number, doc: { task: string; content: string; type: string; scope: string }): string {
  return storeExportLine(i, doc.task, doc.content, doc.type, doc.scope, { score: 3 + (i % 3), helpful: i % 5, harmful: i % 7 === 0 ? 1 : 0 })
}

type ToChild = { type: 'stop' } | { type: 'cpu' }
type FromChild =
  | { type: 'ready'; url: string; token: string; seedSeconds: number; entries: number }
  | { type: 'error'; message: string }
  | { type: 'cpu'; micros: number; rss: number }

/** The child: seeds the database, starts the server, reports its URL and a token, waits for `stop`. */
async function serveChild(dataDir: string, entries: number, embedder: string, cacheSize: number, sharedBuffers: string): Promise<void> {
  const { openKnowHub } = await import('../src/app/open.js')
  const { startServer } = await import('../src/server/serve.js')
  const hub = await openKnowHub({
    // The per-token rate limit (50/s by default) is off: one client is the whole load here.
    dataDir,
    secrets: { key: Buffer.alloc(32, 3).toString('base64') },
    server: { rateLimit: 0 },
    search: { cacheSize },
    ...(sharedBuffers ? { embedded: { sharedBuffers } } : {}),
    ...(embedder === 'default' ? {} : { embedder: { provider: embedder } }),
  })
  // The token's principal (user bench, project p0, org acme) cannot see the team:other quarter.
  const principal = { user: 'bench', project: 'p0', org: 'acme', team: 'other', permissions: ['admin' as const] }
  const started = performance.now()
  // A kept data folder (--data) is seeded once.
  if ((await hub.store.knowledge.count()) === 0) {
    const lines = corpus(entries, 42).docs.map((doc, i) => exportLine(i, doc))
    const report = await hub.knowledge.importJsonl(lines, principal, { mode: 'partial', batchSize: 500 })
    if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
  }
  await hub.knowledge.warmUp()
  const seedSeconds = (performance.now() - started) / 1000
  const { token } = await hub.tokens.create({ user: 'bench', project: 'p0', org: 'acme', permissions: ['read', 'write'], name: 'bench' })
  const server = await startServer({ hub, host: '127.0.0.1', port: 0 })
  process.send!({ type: 'ready', url: server.url, token, seedSeconds, entries } satisfies FromChild)
  await new Promise<void>((resolve) =>
    process.on('message', (message: ToChild) => {
      if (message.type === 'stop') resolve()
      // The server's CPU time so far (all threads): per request, a figure other load on the machine hardly moves.
      else if (message.type === 'cpu')
        process.send!({ type: 'cpu', micros: process.cpuUsage().user + process.cpuUsage().system, rss: process.memoryUsage().rss } satisfies FromChild)
    }),
  )
  await server.close()
  await hub.close()
  // The IPC channel keeps a child alive: let go of it so the process can exit.
  process.disconnect?.()
}

/** The server settings of `npm start` and deploy/ (issue 32, docs/scale.md): smaller idle memory. */
const TUNED = { env: { MALLOC_ARENA_MAX: '2' }, nodeFlags: ['--max-semi-space-size=2'], sharedBuffers: '16MB' }

function startChild(
  dataDir: string,
  entries: number,
  embedder: string,
  cacheSize: number,
  profileDir?: string,
  tuned = false,
): Promise<{ child: ChildProcess; ready: Extract<FromChild, { type: 'ready' }> }> {
  const execArgv = [...process.execArgv, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...(tuned ? TUNED.nodeFlags : [])]
  const child = fork(fileURLToPath(import.meta.url), ['--child', dataDir, String(entries), embedder, String(cacheSize), tuned ? TUNED.sharedBuffers : ''], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
    env: { ...process.env, ...(tuned ? TUNED.env : {}) },
  })
  return new Promise((resolve, reject) => {
    child.once('message', (message: FromChild) =>
      message.type === 'ready' ? resolve({ child, ready: message }) : reject(new Error(message.type === 'error' ? message.message : 'unexpected message')),
    )
    child.once('exit', (code) => reject(new Error(`the server process exited with code ${code}`)))
  })
}

export interface HttpBenchOptions {
  /** Load duration in seconds (default 60). */
  seconds?: number
  /** Entries seeded (default 10000). */
  entries?: number
  /** Concurrent connections (default 16). */
  connections?: number
  /** The server's embedder: `default` (the configured default, `sentence`), `sentence` or `hashed`. */
  embedder?: string
  /** A data folder kept between runs (`--data DIR`): seeded when empty, not removed. Default: a new temporary one. */
  dataDir?: string
  /** Write a CPU profile of the server process to this folder (`--profile DIR`). */
  profileDir?: string
  /** The server's search response cache (default 1000, as configured by default; 0: every search runs). */
  cacheSize?: number
  /** `repeat` (default): 1,000 queries in rotation; `fresh`: no query is ever sent twice. */
  queries?: 'repeat' | 'fresh'
  /** `search` (default): searches only; `mixed`: 50% search, 15% get, 10% list, 15% save, 10% feedback. */
  workload?: 'search' | 'mixed'
  /** The server with the memory settings of `npm start` (MALLOC_ARENA_MAX=2, --max-semi-space-size=2, shared_buffers 16MB). */
  tuned?: boolean
}

/**
 * Queries never sent before: 2-4 consecutive words of a random entry, each window once
 * (about 2 million distinct windows at 10k entries).
 */
export function freshQueries(docs: ReadonlyArray<{ task: string; content: string }>, seed: number): () => string {
  const random = rng(seed)
  const seen = new Set<string>()
  return () => {
    for (;;) {
      const doc = docs[Math.floor(random() * docs.length)]!
      const all = `${doc.task} ${doc.content}`.split(' ')
      const start = Math.floor(random() * Math.max(1, all.length - 4))
      const q = all.slice(start, start + 2 + Math.floor(random() * 3)).join(' ')
      if (!seen.has(q)) {
        seen.add(q)
        return q
      }
    }
  }
}

/** One request of the mixed workload: 50% search, 15% get, 10% list, 15% save, 10% feedback. */
function mixedRequest(
  random: () => number,
  search: () => string,
  entries: number,
  sentence: (n: number) => string,
): { kind: string; method: 'GET' | 'POST'; path: string; body?: string } {
  // An entry the token sees: the bench user's, project's and org's quarters (not team:other's).
  const visibleId = () => {
    let i = Math.floor(random() * entries)
    if (i % 4 === 3) i = i - 1
    return `knowledge-bench-${String(i).padStart(7, '0')}`
  }
  const r = random()
  if (r < 0.5) return { kind: 'search', method: 'GET', path: search() }
  if (r < 0.65) return { kind: 'get', method: 'GET', path: `/api/knowledge/${visibleId()}` }
  if (r < 0.75) return { kind: 'list', method: 'GET', path: `/api/knowledge?limit=20${random() < 0.5 ? '&types=tool' : ''}` }
  if (r < 0.9) {
    const body = { task: sentence(8), content: sentence(40), types: [TYPES[Math.floor(random() * TYPES.length)]], scopes: ['project:p0'] }
    return { kind: 'save', method: 'POST', path: '/api/knowledge', body: JSON.stringify(body) }
  }
  const feedback = { feedback_list: [{ knowledge_id: visibleId(), is_helpful: random() < 0.8, case: { task: sentence(4), outcome: 'ok' } }] }
  return { kind: 'feedback', method: 'POST', path: '/api/knowledge/batch_update', body: JSON.stringify(feedback) }
}

/** Seeds, serves, loads `GET /api/knowledge/search` and reports throughput and latency. */
export async function runHttpBench(options: HttpBenchOptions = {}): Promise<BenchResult[]> {
  const seconds = options.seconds ?? 60
  const entries = options.entries ?? 10_000
  const connections = options.connections ?? 16
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'knowhub-http-bench-'))
  const { docs, queries } = corpus(entries, 42)
  const embedder = options.embedder ?? 'default'
  const cacheSize = options.cacheSize ?? 1000
  const fresh = options.queries === 'fresh'
  const workload = options.workload ?? 'search'
  const { child, ready } = await startChild(dataDir, entries, embedder, cacheSize, options.profileDir, options.tuned)
  console.error(`seeded ${ready.entries} entries in ${round(ready.seedSeconds, 1)} s; server at ${ready.url}`)
  try {
    const types = ['', '&types=tool', '&types=strategy,plan', '']
    let next = 0
    const nextQuery = fresh ? freshQueries(docs, 7) : () => queries[next % queries.length]!
    const path = () => {
      const i = next
      const q = nextQuery()
      next++
      return `/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=5&min_score=3${types[i % types.length]}`
    }
    const random = rng(11)
    const words = docs.slice(0, 200).flatMap((doc) => doc.content.split(' '))
    const sentence = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]!).join(' ')
    const kinds = new Map<string, number>()
    const setupRequest = (req: autocannon.Request): autocannon.Request => {
      if (workload === 'search') return { ...req, method: 'GET', path: path() }
      const request = mixedRequest(random, path, entries, sentence)
      kinds.set(request.kind, (kinds.get(request.kind) ?? 0) + 1)
      return {
        ...req,
        method: request.method,
        path: request.path,
        ...(request.body ? { body: request.body, headers: { ...req.headers, 'content-type': 'application/json' } } : { body: undefined }),
      }
    }
    // Warm up (JIT, PGlite caches), then measure.
    await autocannon({
      url: ready.url,
      connections,
      duration: Math.min(5, seconds),
      headers: { authorization: `Bearer ${ready.token}` },
      requests: [{ setupRequest }],
    })
    kinds.clear()
    let rss = 0
    const cpu = () =>
      new Promise<number>((resolve) => {
        const onMessage = (message: FromChild) => {
          if (message.type !== 'cpu') return
          child.off('message', onMessage)
          rss = message.rss
          resolve(message.micros)
        }
        child.on('message', onMessage)
        child.send({ type: 'cpu' } satisfies ToChild)
      })
    const cpuBefore = await cpu()
    const result = await autocannon({
      url: ready.url,
      connections,
      duration: seconds,
      headers: { authorization: `Bearer ${ready.token}` },
      requests: [{ setupRequest }],
    })
    const cpuMs = (await cpu()) / 1000 - cpuBefore / 1000
    const errors = result.errors + result.timeouts + result.non2xx
    const cache = cacheSize > 0 ? `response cache ${cacheSize}` : 'no response cache'
    const queryNote = fresh ? 'every query new' : '1000 distinct queries repeat'
    const mix = workload === 'mixed' ? `mixed workload (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}), ` : ''
    const settings = options.tuned ? ', server with MALLOC_ARENA_MAX=2 --max-semi-space-size=2 shared_buffers 16MB' : ''
    const note = `${mix}${entries} entries, PGlite, ${embedder} embedder, ${cache}, ${queryNote}, ${connections} connections, ${seconds} s, token auth, rate limit off${settings}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`
    const name = workload === 'mixed' ? 'http mixed' : 'http search'
    return [
      { name: `${name} throughput`, value: round(result.requests.average, 0), unit: 'req/s', target: workload === 'mixed' ? '≥ 300' : '≥ 1000', note },
      { name: `${name} p50`, value: round(result.latency.p50, 1), unit: 'ms' },
      { name: `${name} p90`, value: round(result.latency.p90, 1), unit: 'ms' },
      { name: `${name} p99`, value: round(result.latency.p99, 1), unit: 'ms', target: workload === 'mixed' ? '≤ 150 ms' : '≤ 50 ms' },
      { name: `${name} requests`, value: result.requests.total, unit: 'requests', note: `${result['2xx']} 2xx` },
      {
        name: `${name} server CPU per request`,
        value: round(cpuMs / Math.max(1, result.requests.total), 2),
        unit: 'ms',
        note: 'server process user + system time over the run / requests (all threads): hardly moved by other load on the machine',
      },
      { name: `${name} server RSS after the run`, value: round(rss / 2 ** 20, 0), unit: 'MB' },
      {
        name: `${name} errors`,
        value: errors,
        unit: 'requests',
        target: '0',
        note: `${result.errors} socket errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx`,
      },
      {
        name: 'http seed (bulk import)',
        value: round(ready.seedSeconds, 1),
        unit: 's',
        note: `${entries} entries (none when a kept --data folder had them), and the in-memory index build`,
      },
    ]
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.send({ type: 'stop' } satisfies ToChild)
    const timer = setTimeout(() => child.kill(), 60_000)
    await exited
    clearTimeout(timer)
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--child') {
  serveChild(process.argv[3]!, Number(process.argv[4]), process.argv[5] ?? 'default', Number(process.argv[6] ?? 1000), process.argv[7] ?? '').catch(
    (error: Error) => {
      process.send?.({ type: 'error', message: error.stack ?? error.message } satisfies FromChild)
      process.exitCode = 1
    },
  )
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      entries: { type: 'string' },
      connections: { type: 'string' },
      embedder: { type: 'string' },
      profile: { type: 'string' },
      'cache-size': { type: 'string' },
      queries: { type: 'string' },
      workload: { type: 'string' },
      data: { type: 'string' },
      tuned: { type: 'boolean' },
    },
  })
  const results = await runHttpBench({
    ...(values.seconds ? { seconds: Number(values.seconds) } : {}),
    ...(values.entries ? { entries: Number(values.entries) } : {}),
    ...(values.connections ? { connections: Number(values.connections) } : {}),
    ...(values.embedder ? { embedder: values.embedder } : {}),
    ...(values.profile ? { profileDir: values.profile } : {}),
    ...(values['cache-size'] !== undefined ? { cacheSize: Number(values['cache-size']) } : {}),
    ...(values.queries === 'fresh' ? { queries: 'fresh' as const } : {}),
    ...(values.workload === 'mixed' ? { workload: 'mixed' as const } : {}),
    ...(values.data ? { dataDir: values.data } : {}),
    ...(values.tuned ? { tuned: true } : {}),
  })
  printTable('HTTP', results)
  console.log(`\nwrote ${writeResults('http', results)}`)
}
