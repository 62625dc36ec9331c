/**
 * PostgreSQL + pgvector at scale (issue 18): a throwaway PostgreSQL 15 server with pgvector
 * (`.ci/pgvector`; or KNOWHUB_BENCH_PG_URL), loaded to 100k (and with --sizes 1000000, 1M)
 * synthetic entries with `hashed` 512-d vectors through the real import path
 * (`KnowledgeService.importJsonl`: checks, embedding, batched inserts). Reports per size:
 * bulk import rate, HNSW build time (the index is dropped before a load and built after it,
 * as an administrator would for a big import), ANALYZE time, database and relation sizes,
 * hybrid and full-text-only search p50/p95 through `KnowledgeService.search` (one client, no
 * response cache), where a search's time goes (every SQL statement it issues, timed), and
 * EXPLAIN (ANALYZE, BUFFERS) of each statement of one hybrid search.
 *
 * `--fulltext memory` (issue 32) searches with the in-memory full-text index on the server
 * (`search.fulltext: memory`; vectors stay in pgvector): it also reports the index's build
 * (the first sync, reading every entry) and the process's RSS before and after it.
 *
 *   npx tsx bench/pg-scale.ts [--sizes 100000,1000000] [--queries 200] [--batch 1000] [--reuse] [--fulltext memory]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Principal } from '../src/core/principal.js'
import { createHashedEmbedder } from '../src/embed/hashed.js'
import type { EmbedOptions } from '../src/embed/embedder.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { Sql, sql } from '../src/store/sql.js'
import { openStore } from '../src/store/store.js'
import { startTempPostgres } from '../test/helpers/pg-server.js'
import { percentile, printTable, rng, round, writeResults, type BenchResult } from './lib.js'
import { exportLine, vocabulary, zipfSampler } from './store.js'

const TYPES = ['strategy', 'tool', 'usecase', 'definition', 'plan', 'user_profile'] as const
/** Concurrent search clients; they share the store's pool of 10 connections, as a server's requests do. */
const CLIENTS = 16
const POOL = 10
const CREATE_HNSW = 'CREATE INDEX IF NOT EXISTS knowledge_embedding_hnsw ON knowledge USING hnsw (embedding vector_cosine_ops)'

export interface PgScaleOptions {
  sizes?: number[]
  queries?: number
  /** Rows per import batch (one transaction each). */
  batch?: number
  /** Lines handed to one importJsonl call (the import keeps its lines in memory). */
  chunk?: number
  /**
   * With KNOWHUB_BENCH_PG_URL: a database that already holds at least a size's entries (from
   * an earlier run) is searched as it is, not loaded again (for iterating on search SQL); one
   * that holds fewer is loaded on from its count (an interrupted load).
   */
  reuse?: boolean
  /** Where full-text search runs (`search.fulltext`): `sql` (default on a server) or `memory`. */
  fulltext?: 'sql' | 'memory'
}

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

/** A statement's kind, for the time breakdown: its first words, placeholders and all. */
function kind(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim()
  if (/<=>/.test(t)) return 'vector candidates (HNSW)'
  if (/pg_current_snapshot/.test(t)) return 'in-memory index: change log read'
  if (/FROM knowledge_scope_term/.test(t)) return 'full-text: term statistics'
  if (/FROM knowledge_scope_stats/.test(t)) return 'full-text: collection statistics'
  if (/search_tf->>/.test(t)) return 'full-text: BM25 candidates'
  return t.slice(0, 60)
}

/** CPU seconds (utime, stime, cutime, cstime), parent and process group of a process, from /proc (Linux). */
function procStat(pid: number | string): { cpu: number; pgrp: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    return { cpu: ticks / 100, ppid: Number(fields[1]), pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

/**
 * CPU seconds used so far by the local PostgreSQL server (the postmaster and its children,
 * exited children included): with this process's own CPU time, a load-
 * independent cost per entry. Undefined for a server elsewhere.
 */
async function serverCpu(db: { query: (q: Sql) => Promise<Array<Record<string, unknown>>> }): Promise<number | undefined> {
  const [row] = await db.query(sql`SELECT pg_backend_pid() AS pid, inet_server_addr()::text AS addr`)
  const backend = procStat(Number(row?.pid))
  const postmaster = backend && procStat(backend.ppid)
  if (!postmaster) return undefined
  let total = postmaster.cpu
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const stat = procStat(pid)
    if (stat?.ppid === backend.ppid) total += stat.cpu
  }
  return total
}

const ownCpu = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

/** The benchmark's queries: 2-4 words drawn from the same Zipf vocabulary as the entries (the same list every run). */
export function scaleQueries(count: number): string[] {
  const queryRandom = rng(7)
  const querySample = zipfSampler(vocabulary(20_000, rng(42)), queryRandom)
  return Array.from({ length: count }, () => Array.from({ length: 2 + Math.floor(queryRandom() * 3) }, querySample).join(' '))
}

export async function runPgScaleBench(options: PgScaleOptions = {}): Promise<BenchResult[]> {
  const sizes = options.sizes ?? [100_000]
  const queryCount = options.queries ?? 200
  const batchSize = options.batch ?? 1000
  const chunk = options.chunk ?? 50_000
  const results: BenchResult[] = []
  const explains: Record<string, string[]> = {}
  const principal = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', permissions: ['admin'] })
  const loader = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', team: 'other', permissions: ['admin'] })
  const random = rng(42)
  const sample = zipfSampler(vocabulary(20_000, random), random)
  const sentence = (n: number) => Array.from({ length: n }, sample).join(' ')
  // Entries are generated on the fly, chunk by chunk (1M lines at once would be ~1 GB of strings).
  const entry = (i: number) => ({
    task: sentence(6 + Math.floor(random() * 6)),
    content: sentence(30 + Math.floor(random() * 40)),
    type: TYPES[i % TYPES.length]!,
    scope: ['user:bench', 'project:p0', 'org:acme', 'team:other'][i % 4]!,
  })
  const queries = scaleQueries(queryCount)

  const pgServer = process.env.KNOWHUB_BENCH_PG_URL ? undefined : await startTempPostgres()
  const url = process.env.KNOWHUB_BENCH_PG_URL ?? pgServer!.url
  const fulltext = options.fulltext ?? 'sql'
  const store = await openStore({ databaseUrl: url, fulltext })
  try {
    if (!store.pgvector) throw new Error('pgvector is not installed on this server: run with KNOWHUB_PG_BIN="$(bash .ci/pgvector)"')
    const embedder = createHashedEmbedder({ dimension: 512 })
    const knowledge = await createKnowledgeService({ store, embedder, searchCacheSize: 0 })
    const [version] = await store.db.query<{ v: string }>(
      sql`SELECT version() AS v, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector`,
    )
    console.error(`pg-scale: ${String(version?.v).slice(0, 40)}, pgvector ${String((version as Record<string, unknown>).pgvector)}`)
    // Search: one client, no response cache, every statement timed.
    const searchBench = async (size: number): Promise<void> => {
      if (fulltext === 'memory') {
        // The first sync builds the index from every entry: its time, CPU and the memory it keeps.
        const rss0 = process.memoryUsage().rss
        const cpu0 = { node: ownCpu(), server: await serverCpu(store.db) }
        const t0 = performance.now()
        await store.refreshCaches([])
        const seconds = (performance.now() - t0) / 1000
        const serverEnd = await serverCpu(store.db)
        const cpuNode = ownCpu() - cpu0.node
        ;(globalThis as { gc?: () => void }).gc?.()
        const memory = process.memoryUsage()
        results.push({
          name: `in-memory full-text index build @${size}`,
          value: round(seconds, 1),
          unit: 's',
          note: `CPU KnowHub ${round(cpuNode, 1)} s + PostgreSQL ${serverEnd !== undefined && cpu0.server !== undefined ? round(serverEnd - cpu0.server, 1) : '?'} s; ${load()}`,
        })
        results.push({
          name: `KnowHub RSS with the in-memory index @${size}`,
          value: round(memory.rss / 2 ** 20, 0),
          unit: 'MB',
          note: `${round((memory.rss - rss0) / 2 ** 20, 0)} MB more than before the build; V8 heap ${round(memory.heapUsed / 2 ** 20, 0)} MB, array buffers ${round(memory.arrayBuffers / 2 ** 20, 0)} MB`,
        })
        console.error(`pg-scale: in-memory index built in ${round(seconds, 1)} s, RSS ${round(memory.rss / 2 ** 20, 0)} MB (${load()})`)
      }
      const timings = new Map<string, number[]>()
      const captured: Sql[] = []
      let capture = false
      const db = store.db as { query: typeof store.db.query }
      const query = db.query.bind(store.db)
      db.query = (async (q: Sql) => {
        const start = performance.now()
        try {
          return await query(q)
        } finally {
          const k = kind(q.build().text)
          const list = timings.get(k) ?? []
          list.push(performance.now() - start)
          timings.set(k, list)
          if (capture) captured.push(q)
        }
      }) as typeof store.db.query
      try {
        for (const q of queries.slice(0, 20)) await knowledge.search({ q, top_k: 5, min_score: 0 }, principal)
        for (const mode of ['hybrid', 'fulltext'] as const) {
          timings.clear()
          const times: number[] = []
          for (const q of queries) {
            const start = performance.now()
            await knowledge.search({ q, top_k: 5, min_score: 0, mode }, principal)
            times.push(performance.now() - start)
          }
          times.sort((a, b) => a - b)
          const label = (mode === 'hybrid' ? 'hybrid search' : 'full-text search') + (fulltext === 'memory' ? ' (memory)' : '')
          const total = times.reduce((a, b) => a + b, 0)
          const parts = [...timings.entries()].map(([k, list]) => ({ k, ms: list.reduce((a, b) => a + b, 0), n: list.length })).sort((a, b) => b.ms - a.ms)
          const breakdown = parts.map((p) => `${p.k} ${round((100 * p.ms) / total, 0)}% (${round(p.ms / p.n, 2)} ms × ${round(p.n / times.length, 1)})`)
          const sqlShare = round((100 * parts.reduce((a, p) => a + p.ms, 0)) / total, 0)
          results.push({
            name: `pgvector ${label} p50 @${size}`,
            value: round(percentile(times, 50)),
            unit: 'ms',
            note: `${queries.length} queries, one client, ${load()}`,
          })
          results.push({
            name: `pgvector ${label} p95 @${size}`,
            value: round(percentile(times, 95)),
            unit: 'ms',
            note: `SQL ${sqlShare}% of the time: ${breakdown.join('; ')}`,
          })
          console.error(
            `pg-scale ${mode} @${size}: p50 ${round(percentile(times, 50))} ms, p95 ${round(percentile(times, 95))} ms; SQL ${sqlShare}%: ${breakdown.join('; ')} (${load()})`,
          )
        }
        // 16 concurrent clients (the load): each takes the next query until all are done.
        for (const mode of ['hybrid', 'fulltext'] as const) {
          const times: number[] = []
          let next = 0
          const cpuStart = { node: ownCpu(), server: await serverCpu(store.db) }
          const wallStart = performance.now()
          const client = async (): Promise<void> => {
            while (next < queries.length) {
              const q = queries[next++]!
              const start = performance.now()
              await knowledge.search({ q, top_k: 5, min_score: 0, mode }, principal)
              times.push(performance.now() - start)
            }
          }
          await Promise.all(Array.from({ length: CLIENTS }, client))
          const wall = (performance.now() - wallStart) / 1000
          const serverEnd = await serverCpu(store.db)
          const nodeMs = ((ownCpu() - cpuStart.node) * 1000) / queries.length
          const serverMs = serverEnd !== undefined && cpuStart.server !== undefined ? ((serverEnd - cpuStart.server) * 1000) / queries.length : 0
          const cpuMs = nodeMs + serverMs
          times.sort((a, b) => a - b)
          const label = (mode === 'hybrid' ? 'hybrid search' : 'full-text search') + (fulltext === 'memory' ? ' (memory)' : '')
          results.push({
            name: `pgvector ${label} p50 / p95 @${size}, ${CLIENTS} clients`,
            value: round(percentile(times, 95)),
            unit: 'ms (p95)',
            ...(mode === 'hybrid' && size >= 1_000_000 ? { target: '≤ 25 ms' } : {}),
            note: `p50 ${round(percentile(times, 50))} ms; ${round(queries.length / wall, 0)} searches/s; CPU ${round(cpuMs, 2)} ms a search (KnowHub ${round(nodeMs, 2)} + PostgreSQL ${round(serverMs, 2)}); pool ${POOL} connections; KnowHub RSS ${round(process.memoryUsage().rss / 2 ** 20, 0)} MB; ${load()}`,
          })
          console.error(
            `pg-scale ${mode} @${size}, ${CLIENTS} clients: p50 ${round(percentile(times, 50))} ms, p95 ${round(percentile(times, 95))} ms, ${round(queries.length / wall, 0)}/s, CPU ${round(cpuMs, 2)} ms (KnowHub ${round(nodeMs, 2)} + PostgreSQL ${round(serverMs, 2)}) (${load()})`,
          )
        }
        // EXPLAIN ANALYZE of the statements of one hybrid search (a typical query).
        capture = true
        await knowledge.search({ q: queries[1]!, top_k: 5, min_score: 0 }, principal)
        capture = false
      } finally {
        db.query = query
      }
      explains[`@${size} "${queries[1]}"`] = []
      for (const q of captured) {
        const explained = new Sql([`EXPLAIN (ANALYZE, BUFFERS) ${q.strings[0] ?? ''}`, ...q.strings.slice(1)], q.values)
        const rows = await store.db.query<{ 'QUERY PLAN': string }>(explained)
        const plan = rows
          .map((r) => r['QUERY PLAN'])
          .join('\n')
          .replace(/'\[[-\d.,e]+\]'::vector/g, "'[…]'::vector")
        explains[`@${size} "${queries[1]}"`]!.push(`-- ${kind(q.build().text)}\n${plan}`)
        const exec = /Execution Time: ([\d.]+) ms/.exec(plan)?.[1]
        results.push({
          name: `EXPLAIN ${kind(q.build().text)} @${size}`,
          value: Number(exec),
          unit: 'ms',
          note: plan
            .split('\n')
            .slice(0, 2)
            .map((l) => l.trim().replace(/\s+/g, ' '))
            .join(' | ')
            .slice(0, 200),
        })
      }
    }
    let loaded = 0
    for (const size of sizes) {
      if (options.reuse) {
        const [row] = await store.db.query<{ n: string }>(sql`SELECT count(*) AS n FROM knowledge`)
        if (Number(row?.n) >= size) {
          console.error(`pg-scale: reusing the ${row?.n} entries already loaded (--reuse)`)
          await store.db.query(sql`${new Sql([CREATE_HNSW], [])}`)
          loaded = size
          await searchBench(size)
          continue
        }
        // Fewer: the load goes on after them (an interrupted load; the texts of the rest come
        // from a fresh random sequence, the same distributions).
        loaded = Math.max(loaded, Number(row?.n))
        if (loaded > 0) console.error(`pg-scale: continuing after the ${loaded} entries already loaded (--reuse)`)
      }
      // Load: without the HNSW index, then build it once.
      await store.db.query(sql`DROP INDEX IF EXISTS knowledge_embedding_hnsw`)
      const t0 = performance.now()
      const cpu0 = { node: ownCpu(), server: await serverCpu(store.db) }
      let embedMs = 0
      const timedEmbedder = {
        ...embedder,
        embed: async (texts: readonly string[], options: EmbedOptions) => {
          const s = performance.now()
          const v = await embedder.embed(texts, options)
          embedMs += performance.now() - s
          return v
        },
      }
      const importer = await createKnowledgeService({ store, embedder: timedEmbedder, searchCacheSize: 0 })
      for (let from = loaded; from < size; from += chunk) {
        const to = Math.min(size, from + chunk)
        const lines: string[] = []
        for (let i = from; i < to; i++) {
          const e = entry(i)
          lines.push(exportLine(i, e.task, e.content, e.type, e.scope))
        }
        const report = await importer.importJsonl(lines, loader, { mode: 'partial', batchSize })
        if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
        const seconds = (performance.now() - t0) / 1000
        console.error(`pg-scale: ${to} entries, ${round((to - loaded) / seconds, 0)} entries/s so far (${load()})`)
      }
      const importSeconds = (performance.now() - t0) / 1000
      const serverEnd = await serverCpu(store.db)
      const nodeMs = ((ownCpu() - cpu0.node) * 1000) / (size - loaded)
      const serverMs = serverEnd !== undefined && cpu0.server !== undefined ? ((serverEnd - cpu0.server) * 1000) / (size - loaded) : NaN
      results.push({
        name: `pgvector bulk import ${loaded}→${size}`,
        value: round((size - loaded) / importSeconds, 0),
        unit: 'entries/s',
        target: size >= 1_000_000 ? '≥ 5,000' : '',
        note: `${round(importSeconds, 1)} s (embedding ${round(embedMs / 1000, 1)} s), batches of ${batchSize}, no HNSW index during the load, ${load()}`,
      })
      results.push({
        name: `import CPU per entry @${size}`,
        value: round(nodeMs + serverMs, 3),
        unit: 'ms',
        note: `KnowHub process ${round(nodeMs, 3)} ms + PostgreSQL ${round(serverMs, 3)} ms (load-independent; the two overlap, so an idle machine imports at most ~${round(1000 / Math.max(nodeMs, serverMs), 0)} entries/s)`,
      })
      loaded = size

      let t = performance.now()
      const buildMemory = size >= 1_000_000 ? '4GB' : '1GB'
      await store.db.withLock('bench:hnsw', async (conn) => {
        await conn.exec(`SET maintenance_work_mem = '${buildMemory}'`)
        await conn.exec(CREATE_HNSW)
        await conn.exec('RESET maintenance_work_mem')
      })
      const [workers] = await store.db.query<{ w: string }>(sql`SELECT current_setting('max_parallel_maintenance_workers') AS w`)
      results.push({
        name: `pgvector HNSW build @${size}`,
        value: round((performance.now() - t) / 1000, 1),
        unit: 's',
        note: `m 16, ef_construction 64, maintenance_work_mem ${buildMemory}, ${workers?.w} parallel workers, ${load()}`,
      })
      console.error(`pg-scale: HNSW build ${round((performance.now() - t) / 1000, 1)} s (${load()})`)
      t = performance.now()
      await store.knowledge.analyze()
      await store.db.query(sql`VACUUM ANALYZE knowledge`)
      results.push({ name: `VACUUM + ANALYZE @${size}`, value: round((performance.now() - t) / 1000, 1), unit: 's', note: load() })

      const sizesRows = await store.db.query<{ db: string; heap: string; toast: string; hnsw: string; gin: string; terms: string }>(sql`SELECT
        pg_database_size(current_database()) AS db,
        pg_relation_size('knowledge') AS heap,
        coalesce(pg_total_relation_size(reltoastrelid), 0) AS toast,
        pg_relation_size('knowledge_embedding_hnsw') AS hnsw,
        pg_relation_size('knowledge_search_idx') + pg_relation_size('knowledge_scopes_idx') + pg_relation_size('knowledge_types_idx') AS gin,
        pg_total_relation_size('knowledge_scope_term') AS terms
        FROM pg_class WHERE relname = 'knowledge'`)
      const mb = (v: string | undefined) => round(Number(v) / 2 ** 20, 0)
      const s = sizesRows[0]!
      results.push({
        name: `database size @${size}`,
        value: mb(s.db),
        unit: 'MB',
        note: `table ${mb(s.heap)} MB + toast ${mb(s.toast)} MB, HNSW ${mb(s.hnsw)} MB, GIN ${mb(s.gin)} MB, term stats ${mb(s.terms)} MB`,
      })

      await searchBench(size)
    }
  } finally {
    await store.close()
    await pgServer?.stop()
  }
  const dir = join(import.meta.dirname, 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'pg-scale-explain.txt'),
    Object.entries(explains)
      .map(([k, v]) => `== ${k}\n${v.join('\n\n')}`)
      .join('\n\n'),
  )
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { sizes: { type: 'string' }, queries: { type: 'string' }, batch: { type: 'string' }, reuse: { type: 'boolean' }, fulltext: { type: 'string' } },
  })
  if (values.fulltext !== undefined && values.fulltext !== 'sql' && values.fulltext !== 'memory') throw new Error('--fulltext is sql or memory')
  const results = await runPgScaleBench({
    ...(values.sizes ? { sizes: values.sizes.split(',').map(Number) } : {}),
    ...(values.queries ? { queries: Number(values.queries) } : {}),
    ...(values.batch ? { batch: Number(values.batch) } : {}),
    reuse: values.reuse === true,
    ...(values.fulltext ? { fulltext: values.fulltext as 'sql' | 'memory' } : {}),
  })
  printTable('PostgreSQL + pgvector at scale', results)
  console.log(`\nwrote ${writeResults('pg-scale', results)}`)
}
