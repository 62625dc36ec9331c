/**
 * Scale-out benchmark: nginx (Debian package) running deploy/nginx/knowhub.conf in front of 1,
 * 2 and 3 `knowhub start` processes on one PostgreSQL (a throwaway server from the installed
 * binaries, with pgvector when .ci/pgvector built it). Load: `GET /api/knowledge/search` with
 * varied queries (hybrid search, hashed embedder; the response cache stays off on a shared
 * PostgreSQL, so every request searches), token auth, autocannon through nginx. Reports
 * throughput, p50 and p99 per number of servers.
 *
 *   npx tsx bench/scale.ts [--servers 1,2,3] [--seconds 20] [--entries 5000] [--connections 32]
 *
 * On a 2-core machine the servers, PostgreSQL, nginx and the load generator share two cores:
 * more servers cannot add CPU there. The numbers show the overhead and the shape; run it on
 * a bigger machine (or with KNOWHUB_BENCH_PG_URL pointing at a separate database host) to see
 * the scale-out.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { startTempPostgres } from '../test/helpers/pg-server.js'
import { startKnowHubProcess, type KnowHubProcess } from '../test/helpers/knowhub-process.js'
import { corpus, exportLine } from './http.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((path) => existsSync(path))
const SECRET_KEY = Buffer.alloc(32, 4).toString('base64')

export interface ScaleBenchOptions {
  /** Numbers of servers to measure (default 1, 2, 3). */
  servers?: number[]
  /** Load duration per step in seconds (default 20). */
  seconds?: number
  /** Entries seeded (default 5000). */
  entries?: number
  /** Concurrent connections to nginx (default 32). */
  connections?: number
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** nginx with deploy/nginx/knowhub.conf (its port changed to a free one) in front of `servers`. */
async function startNginx(servers: KnowHubProcess[]): Promise<{ url: string; stop: () => Promise<void> }> {
  if (!NGINX) throw new Error('nginx is not installed: apt-get install nginx (the Debian package; deploy/nginx holds the configuration)')
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-nginx-'))
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub))
  chmodSync(dir, 0o777)
  const port = await freePort()
  const site = readFileSync(join(ROOT, 'deploy/nginx/knowhub.conf'), 'utf8').replace(/listen 8420;/, `listen 127.0.0.1:${port};`)
  writeFileSync(join(dir, 'knowhub.conf'), site)
  writeFileSync(
    join(dir, 'upstream.conf'),
    `upstream knowhub {\n    least_conn;\n${servers.map((s) => `    server ${new URL(s.url).host} max_fails=3 fail_timeout=5s;`).join('\n')}\n    keepalive 64;\n}\n`,
  )
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nevents { worker_connections 1024; }\nhttp {\n` +
      `  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n` +
      `  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;\n  include ${dir}/upstream.conf;\n  include ${dir}/knowhub.conf;\n}\n`,
  )
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with code ${child.exitCode} (${dir}/error.log)`)
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break
    if (Date.now() > deadline) throw new Error('nginx did not answer within 10 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    url,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGQUIT')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A database with `entries` synthetic entries and a read token. */
export async function seed(serverUrl: string, entries: number): Promise<{ databaseUrl: string; token: string; drop: () => Promise<void> }> {
  const name = `knowhub_scale_${process.pid}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const { openKnowHub } = await import('../src/app/open.js')
  const hub = await openKnowHub({ databaseUrl: url.toString(), embedder: { provider: 'hashed' }, secrets: { key: SECRET_KEY } })
  try {
    const principal = { user: 'bench', project: 'p0', org: 'acme', team: 'other', permissions: ['admin' as const] }
    const lines = corpus(entries, 42).docs.map((doc, i) => exportLine(i, doc))
    const report = await hub.knowledge.importJsonl(lines, principal, { mode: 'partial', batchSize: 500 })
    if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
    const { token } = await hub.tokens.create({ user: 'bench', project: 'p0', org: 'acme', permissions: ['read'], name: 'bench' })
    return {
      databaseUrl: url.toString(),
      token,
      drop: async () => {
        const client = new pg.Client({ connectionString: serverUrl })
        await client.connect()
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await client.end()
      },
    }
  } finally {
    await hub.close()
  }
}

async function load(url: string, token: string, queries: string[], seconds: number, connections: number) {
  let next = 0
  const path = () => `/api/knowledge/search?q=${encodeURIComponent(queries[next++ % queries.length]!)}&top_k=5&min_score=3`
  const options = { url, connections, headers: { authorization: `Bearer ${token}` }, requests: [{ setupRequest: (req: object) => ({ ...req, path: path() }) }] }
  await autocannon({ ...options, duration: Math.min(3, seconds) })
  return autocannon({ ...options, duration: seconds })
}

/** Seeds one database, then measures nginx + 1, 2, 3 servers on it. */
export async function runScaleBench(options: ScaleBenchOptions = {}): Promise<BenchResult[]> {
  const counts = options.servers ?? [1, 2, 3]
  const seconds = options.seconds ?? 20
  const entries = options.entries ?? 5000
  const connections = options.connections ?? 32
  const given = process.env.KNOWHUB_BENCH_PG_URL
  const pgServer = given ? undefined : await startTempPostgres()
  const serverUrl = given ?? pgServer!.url
  const entry = existsSync(join(ROOT, 'dist/cli/main.js')) ? 'dist' : 'source'
  const results: BenchResult[] = []
  try {
    const started = performance.now()
    const db = await seed(serverUrl, entries)
    console.error(`seeded ${entries} entries in ${round((performance.now() - started) / 1000, 1)} s`)
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
        const servers = await Promise.all(Array.from({ length: n }, () => startKnowHubProcess({ env, entry })))
        try {
          const nginx = await startNginx(servers)
          try {
            const result = await load(nginx.url, db.token, queries, seconds, connections)
            const errors = result.errors + result.timeouts + result.non2xx
            const note = `${entries} entries, ${connections} connections, ${seconds} s, errors ${errors}, load ${os
              .loadavg()
              .map((l) => l.toFixed(1))
              .join(' ')}`
            console.error(`${n} server(s): ${round(result.requests.average, 0)} req/s, p99 ${result.latency.p99} ms (${note})`)
            results.push(
              { name: `nginx + ${n} server(s): throughput`, value: round(result.requests.average, 0), unit: 'req/s', note },
              { name: `nginx + ${n} server(s): p50`, value: round(result.latency.p50, 1), unit: 'ms' },
              { name: `nginx + ${n} server(s): p99`, value: round(result.latency.p99, 1), unit: 'ms' },
            )
          } finally {
            await nginx.stop()
          }
        } finally {
          await Promise.all(servers.map((s) => s.stop()))
        }
      }
    } finally {
      await db.drop()
    }
  } finally {
    await pgServer?.stop()
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { servers: { type: 'string' }, seconds: { type: 'string' }, entries: { type: 'string' }, connections: { type: 'string' } },
  })
  const results = await runScaleBench({
    ...(values.servers ? { servers: values.servers.split(',').map(Number) } : {}),
    ...(values.seconds ? { seconds: Number(values.seconds) } : {}),
    ...(values.entries ? { entries: Number(values.entries) } : {}),
    ...(values.connections ? { connections: Number(values.connections) } : {}),
  })
  printTable('scale (nginx + N servers, one PostgreSQL)', results)
  console.log(`\nwrote ${writeResults('scale', results)}`)
}
