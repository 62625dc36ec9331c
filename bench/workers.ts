/**
 * `knowhub start --workers N` on one PostgreSQL (issue 32): requests per second and CPU per
 * request at each N, with no proxy in front (the workers share the port through node:cluster).
 * Load: `GET /api/knowledge/search` with varied queries (hybrid, `hashed`, token auth; no
 * response cache on PostgreSQL, so every request searches), autocannon in this process. CPU
 * from /proc: KnowHub (the supervisor and its workers), PostgreSQL (the postmaster and its
 * backends) and the load generator (this process), each per request: figures the machine's
 * other load hardly moves, unlike the requests per second. CPU per request must not grow with N.
 *
 *   npx tsx bench/workers.ts [--workers 1,2] [--seconds 15] [--warmup 3] [--entries 5000] [--connections 16] [--tuned] [--rate R] [--semi-space MB]
 */
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { startTempPostgres } from '../test/helpers/pg-server.js'
import { startKnowHubProcess } from '../test/helpers/knowhub-process.js'
import { corpus } from './http.js'
import { printTable, procStat, round, treeCpu, writeResults, type BenchResult } from './lib.js'
import { seed } from './scale.js'

const SECRET_KEY = Buffer.alloc(32, 4).toString('base64')

const ownCpu = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

/** The process and its children (the supervisor and its workers). */
const processTree = (root: number): number[] => [
  root,
  ...readdirSync('/proc').flatMap((pid) => (/^\d+$/.test(pid) && procStat(pid)?.ppid === root ? [Number(pid)] : [])),
]

/** Context switches of a process so far (voluntary: it waited, e.g. for I/O; involuntary: preempted). */
const switches = (pid: number): { voluntary: number; involuntary: number } => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
    return { voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') }
  } catch {
    return { voluntary: 0, involuntary: 0 }
  }
}

/** CPU seconds and context switches of each process of a tree, by pid. */
const perProcess = (root: number) => new Map(processTree(root).map((pid) => [pid, { cpu: procStat(pid)?.cpu ?? 0, ...switches(pid) }] as const))

const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

export interface WorkersBenchOptions {
  workers?: number[]
  seconds?: number
  /** Load before the measured run (default 3 s): every worker compiles its hot code on its own. */
  warmupSeconds?: number
  entries?: number
  connections?: number
  /** Every process with the memory settings of `npm start` (NODE_OPTIONS=--max-semi-space-size=2, MALLOC_ARENA_MAX=2); the workers of N > 1 always get them. */
  tuned?: boolean
  /**
   * V8's young-generation semi-space in MB for every KnowHub process (`--max-semi-space-size`,
   * handed to the workers too); default: N = 1 runs with V8's default (16 MB) and the workers of
   * N > 1 get `npm start`'s 2 MB from the supervisor (src/cli/workers.ts), unless `tuned`.
   */
  semiSpaceMb?: number
  /** A fixed offered load (requests/s over all connections), so that every N serves the same rate; default: as fast as they answer. */
  rate?: number
}

export async function runWorkersBench(options: WorkersBenchOptions = {}): Promise<BenchResult[]> {
  const counts = options.workers ?? [1, 2]
  const seconds = options.seconds ?? 15
  const entries = options.entries ?? 5000
  const connections = options.connections ?? 16
  const given = process.env.KNOWHUB_BENCH_PG_URL
  const pgServer = given ? undefined : await startTempPostgres()
  const serverUrl = given ?? pgServer!.url
  const results: BenchResult[] = []
  try {
    const db = await seed(serverUrl, entries)
    const probe = new pg.Client({ connectionString: db.databaseUrl })
    await probe.connect()
    const backend = procStat(Number((await probe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid))
    const postmaster = backend?.ppid
    const { queries } = corpus(entries, 42)
    try {
      for (const n of counts) {
        const env = {
          DATABASE_URL: db.databaseUrl,
          KNOWHUB_EMBEDDER: 'hashed',
          KNOWHUB_SECRET_KEY: SECRET_KEY,
          KNOWHUB_RATE_LIMIT: '0',
          KNOWHUB_LOG_LEVEL: 'warn',
        }
        // --tuned: the settings of `npm start` for every N (the workers of N > 1 get the semi-space flag anyway).
        const semiSpace = options.semiSpaceMb ?? (options.tuned ? 2 : undefined)
        const server = await startKnowHubProcess({
          env: { ...env, ...(options.tuned ? { MALLOC_ARENA_MAX: '2' } : {}) },
          entry: 'dist',
          args: n > 1 ? ['--workers', String(n)] : [],
          timeoutMs: 120_000,
          ...(semiSpace ? { nodeFlags: [`--max-semi-space-size=${semiSpace}`] } : {}),
        })
        try {
          // Every worker prints its address once it listens.
          const deadline = Date.now() + 120_000
          while (server.stdout.filter((line) => line.includes('KnowHub listening on')).length < n) {
            if (Date.now() > deadline) throw new Error(`${n} workers did not all listen:\n${server.stderr.join('\n')}`)
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          let next = 0
          const path = () => `/api/knowledge/search?q=${encodeURIComponent(queries[next++ % queries.length]!)}&top_k=5&min_score=3`
          const run = (duration: number) =>
            autocannon({
              url: server.url,
              connections,
              duration,
              headers: { authorization: `Bearer ${db.token}` },
              requests: [{ setupRequest: (req: object) => ({ ...req, path: path() }) }],
              ...(options.rate ? { overallRate: options.rate } : {}),
            })
          await run(options.warmupSeconds ?? 3)
          const processesBefore = perProcess(server.child.pid!)
          const before = {
            supervisor: procStat(server.child.pid!)?.cpu ?? 0,
            knowhub: treeCpu(server.child.pid!),
            postgres: postmaster ? treeCpu(postmaster) : 0,
            load: ownCpu(),
          }
          const result = await run(seconds)
          const after = {
            supervisor: procStat(server.child.pid!)?.cpu ?? 0,
            knowhub: treeCpu(server.child.pid!),
            postgres: postmaster ? treeCpu(postmaster) : 0,
            load: ownCpu(),
          }
          const processesAfter = perProcess(server.child.pid!)
          const requests = Math.max(1, result.requests.total)
          const perRequest = (a: number, b: number) => round(((b - a) * 1000) / requests, 2)
          const errors = result.errors + result.timeouts + result.non2xx
          const label = `--workers ${n}${options.tuned ? ' (tuned)' : ''}${options.semiSpaceMb ? ` (semi-space ${options.semiSpaceMb} MB)` : ''}${options.rate ? ` at ${options.rate} req/s` : ''}`
          const note = `${entries} entries, warm-up ${options.warmupSeconds ?? 3} s, PostgreSQL 15${postmaster ? '' : ' (elsewhere: its CPU not measured)'}, hashed, ${connections} connections, ${seconds} s, errors ${errors}, load ${loadAverage()}`
          console.error(
            `${label}: ${round(result.requests.average, 0)} req/s, p99 ${result.latency.p99} ms, KnowHub CPU ${perRequest(before.knowhub, after.knowhub)} ms/request (${note})`,
          )
          results.push(
            { name: `${label}: throughput`, value: round(result.requests.average, 0), unit: 'req/s', note },
            { name: `${label}: p50`, value: round(result.latency.p50, 1), unit: 'ms' },
            { name: `${label}: p99`, value: round(result.latency.p99, 1), unit: 'ms' },
            { name: `${label}: KnowHub CPU per request`, value: perRequest(before.knowhub, after.knowhub), unit: 'ms', note: 'supervisor + workers, /proc' },
            ...(n > 1 ? [{ name: `${label}: of which the supervisor`, value: perRequest(before.supervisor, after.supervisor), unit: 'ms' }] : []),
            {
              name: `${label}: PostgreSQL CPU per request`,
              value: perRequest(before.postgres, after.postgres),
              unit: 'ms',
              note: 'postmaster + backends, /proc',
            },
            { name: `${label}: load generator CPU per request`, value: perRequest(before.load, after.load), unit: 'ms', note: 'autocannon, this process' },
            // Each KnowHub process on its own: its CPU and context switches per request it served (a
            // worker's share of the requests is not known, so per request of the whole run).
            ...[...processesAfter].flatMap(([pid, end]) => {
              const start = processesBefore.get(pid)
              if (!start) return []
              const role = pid === server.child.pid ? (n > 1 ? 'supervisor' : 'server') : `worker ${pid}`
              return [
                { name: `${label}: ${role} CPU per request`, value: perRequest(start.cpu, end.cpu), unit: 'ms', note: '/proc/PID/stat' },
                {
                  name: `${label}: ${role} context switches per request`,
                  value: round((end.voluntary - start.voluntary + end.involuntary - start.involuntary) / requests, 2),
                  unit: '',
                  note: `voluntary ${round((end.voluntary - start.voluntary) / requests, 2)}, involuntary ${round((end.involuntary - start.involuntary) / requests, 2)}`,
                },
              ]
            }),
          )
        } finally {
          await server.stop()
        }
      }
    } finally {
      await probe.end()
      await db.drop()
    }
  } finally {
    await pgServer?.stop()
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      workers: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      entries: { type: 'string' },
      connections: { type: 'string' },
      tuned: { type: 'boolean' },
      rate: { type: 'string' },
      'semi-space': { type: 'string' },
    },
  })
  const results = await runWorkersBench({
    ...(values.workers ? { workers: values.workers.split(',').map(Number) } : {}),
    ...(values.seconds ? { seconds: Number(values.seconds) } : {}),
    ...(values.warmup ? { warmupSeconds: Number(values.warmup) } : {}),
    ...(values.entries ? { entries: Number(values.entries) } : {}),
    ...(values.connections ? { connections: Number(values.connections) } : {}),
    ...(values.tuned ? { tuned: true } : {}),
    ...(values.rate ? { rate: Number(values.rate) } : {}),
    ...(values['semi-space'] ? { semiSpaceMb: Number(values['semi-space']) } : {}),
  })
  printTable('knowhub start --workers N (one PostgreSQL, no proxy)', results)
  console.log(`\nwrote ${writeResults('workers', results)}`)
}
