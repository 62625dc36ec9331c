/**
 * Store benchmark: search latency (p50/p95, full service path: hybrid full-text +
 * vector + rerank, and full-text only) at 1k, 10k and 100k entries on embedded PGlite and on a
 * PostgreSQL server, and insert throughput (single saves and bulk import).
 *
 * At 100k entries and above it first times the in-memory full-text index alone, with MaxScore
 * pruning and with the exhaustive scan (`--index-only`: only that; `--skip-index`: not that).
 *
 *   npx tsx bench/store.ts [--sizes 1000,10000,100000] [--backends pglite,postgres] [--queries 200] [--index-only] [--skip-index] [--dimension 384]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Principal } from '../src/core/principal.js'
import { createHashedEmbedder } from '../src/embed/hashed.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { DEFAULT_SEARCH_DEPTH } from '../src/knowledge/search/search.js'
import { searchDocument, textQuery } from '../src/knowledge/search/document.js'
import { termFrequencies } from '../src/store/knowledge/rows.js'
import { sql } from '../src/store/sql.js'
import { createTextIndex } from '../src/store/text-index/text-index.js'
import { DEFAULT_TEXT_RANKING } from '../src/store/text-index/query.js'
import { openStore } from '../src/store/store.js'
import { startTempPostgres } from '../test/helpers/pg-server.js'
import { percentile, printTable, rng, round, writeResults, type BenchResult } from './lib.js'

const TYPES = ['strategy', 'tool', 'usecase', 'definition', 'plan', 'user_profile'] as const

/** A Zipf-distributed synthetic vocabulary of pronounceable words. */
export function vocabulary(size: number, random: () => number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'sto', 'pa', 'dex', 'vin', 'tor', 'qu', 'ash', 'bel', 'cor', 'fy', 'gun', 'hal', 'jet', 'mur', 'nix', 'ost']
  const words = new Set<string>()
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3)
    let w = ''
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)]
    words.add(w)
  }
  return [...words]
}

export function zipfSampler(words: string[], random: () => number): () => string {
  const weights = words.map((_, i) => 1 / (i + 1))
  const total = weights.reduce((a, b) => a + b, 0)
  const cumulative: number[] = []
  let acc = 0
  for (const w of weights) cumulative.push((acc += w / total))
  return () => {
    const r = random()
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < r) lo = mid + 1
      else hi = mid
    }
    return words[lo]!
  }
}

export function exportLine(
  i: number,
  task: string,
  content: string,
  type: string,
  scope: string,
  feedback: { score: number; helpful: number; harmful: number } = { score: 3, helpful: 0, harmful: 0 },
): string {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
  return JSON.stringify({
    id: `knowledge-bench-${String(i).padStart(7, '0')}`,
    message_id: '',
    types: [type],
    task,
    tags: {},
    scopes: [scope],
    owner: 'user:bench',
    content,
    resource_ids: [],
    source: { name: '', category: 'exp', urls: [], agent_id: '', submitted_by: '', message_id: '', trace_id: '' },
    eval: { ...feedback, confidence: 0.5, helpful_history: [], harmful_history: [] },
    status: 'active',
    merged_into: null,
    version: 1,
    created_at: at,
    updated_at: at,
    versions: [],
  })
}

/**
 * The in-memory full-text index alone at `size` entries: the same queries with MaxScore pruning
 * and with the exhaustive scan (`createTextIndex({ prune: false })`), back to back in one process,
 * so that both see the same load. Depth as the service asks (`DEFAULT_SEARCH_DEPTH.fulltext`, 50),
 * as `principal` sees the store (three quarters of it). Each result list is checked equal.
 */
function indexRows(
  corpus: ReadonlyArray<{ task: string; content: string; type: string; scope: string }>,
  queries: readonly string[],
  size: number,
): BenchResult[] {
  const pruned = createTextIndex()
  const exhaustive = createTextIndex({ prune: false })
  for (let i = 0; i < size; i++) {
    const c = corpus[i]!
    const doc = searchDocument(c.task, c.content, {})
    const entry = {
      id: `knowledge-bench-${String(i).padStart(7, '0')}`,
      scopes: [c.scope],
      types: [c.type],
      status: 'active',
      score: 3,
      helpful: 0,
      harmful: 0,
      tf: Object.fromEntries(termFrequencies(doc)),
      length: doc.title.length + doc.body.length,
    }
    pruned.upsert(entry)
    exhaustive.upsert(entry)
  }
  const filter = { visible: ['user:bench', 'project:p0', 'org:acme', 'public'], nonNegativeQuality: true }
  const terms = queries.map((q) => textQuery(q))
  const run = (index: typeof pruned) => {
    for (const q of terms.slice(0, 20)) index.searchWithBound(q.terms, filter, DEFAULT_SEARCH_DEPTH.fulltext, DEFAULT_TEXT_RANKING, q.boundTerms)
    const times: number[] = []
    const hits: string[] = []
    const read = index.work.postings + index.work.lookups
    const cpu = process.cpuUsage()
    for (const q of terms) {
      const start = performance.now()
      const found = index.searchWithBound(q.terms, filter, DEFAULT_SEARCH_DEPTH.fulltext, DEFAULT_TEXT_RANKING, q.boundTerms)
      times.push(performance.now() - start)
      hits.push(JSON.stringify(found))
    }
    const used = process.cpuUsage(cpu)
    times.sort((a, b) => a - b)
    return { times, hits, cpuMs: (used.user + used.system) / 1000 / terms.length, read: (index.work.postings + index.work.lookups - read) / terms.length }
  }
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')
  const before = load()
  // Twice each, alternating, the second pair kept: the garbage of the build is collected during the first.
  run(exhaustive)
  run(pruned)
  const slow = run(exhaustive)
  const fast = run(pruned)
  const same = slow.hits.every((hit, i) => hit === fast.hits[i])
  if (!same) throw new Error('MaxScore pruning returned other hits than the exhaustive scan')
  const note = `${terms.length} queries, top ${DEFAULT_SEARCH_DEPTH.fulltext}, the index alone (no service, no database); same hits both ways; load ${before} -> ${load()}`
  const rows: BenchResult[] = []
  for (const [label, r] of [
    ['exhaustive scan', slow],
    ['MaxScore', fast],
  ] as const) {
    rows.push(
      { name: `full-text index ${label} p50 @${size}`, value: round(percentile(r.times, 50), 3), unit: 'ms', note },
      { name: `full-text index ${label} p95 @${size}`, value: round(percentile(r.times, 95), 3), unit: 'ms' },
      { name: `full-text index ${label} CPU a query @${size}`, value: round(r.cpuMs, 3), unit: 'ms' },
      {
        name: `full-text index ${label} postings read a query @${size}`,
        value: Math.round(r.read),
        unit: 'postings',
        note: 'postings scanned + terms looked up in a candidate',
      },
    )
  }
  console.error(`index @${size}: exhaustive p50 ${round(percentile(slow.times, 50), 3)} ms, MaxScore ${round(percentile(fast.times, 50), 3)} ms (${note})`)
  return rows
}

export async function runStoreBench(
  options: {
    sizes?: number[]
    backends?: Array<'pglite' | 'postgres'>
    queries?: number
    indexOnly?: boolean
    skipIndex?: boolean
    /** Vector dimensions (default 512; 384: a multilingual-e5-small store's size, issue 40). */
    dimension?: number
  } = {},
): Promise<BenchResult[]> {
  const dimension = options.dimension ?? 512
  const sizes = options.sizes ?? [1_000, 10_000, 100_000]
  const backends = options.backends ?? ['pglite', 'postgres']
  const queryCount = options.queries ?? 200
  const results: BenchResult[] = []
  // Searches run as `principal`; a quarter of the entries sit in a team it is not in (written by `loader`).
  const principal = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', permissions: ['admin'] })
  const loader = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', team: 'other', permissions: ['admin'] })
  const random = rng(42)
  const sample = zipfSampler(vocabulary(5_000, random), random)
  const sentence = (n: number) => Array.from({ length: n }, sample).join(' ')
  const max = Math.max(...sizes)
  const corpus = Array.from({ length: max }, (_, i) => ({
    task: sentence(6 + Math.floor(random() * 6)),
    content: sentence(30 + Math.floor(random() * 40)),
    type: TYPES[i % TYPES.length]!,
    scope: ['user:bench', 'project:p0', 'org:acme', 'team:other'][i % 4]!,
  }))
  const queries = Array.from({ length: queryCount }, () => {
    const doc = corpus[Math.floor(random() * max)]!
    const words = `${doc.task} ${doc.content}`.split(' ')
    const start = Math.floor(random() * Math.max(1, words.length - 4))
    return words.slice(start, start + 2 + Math.floor(random() * 3)).join(' ')
  })

  // Sizes at 100k and above: the index alone, pruned against exhaustive (cheap: no database).
  if (!options.skipIndex) for (const size of sizes.filter((n) => n >= 100_000)) results.push(...indexRows(corpus, queries, size))
  if (options.indexOnly) return results

  for (const backend of backends) {
    const pgServer = backend === 'postgres' && !process.env.KNOWHUB_BENCH_PG_URL ? await startTempPostgres() : undefined
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-bench-'))
    const store = await openStore(backend === 'pglite' ? { dataDir: dir } : { databaseUrl: process.env.KNOWHUB_BENCH_PG_URL ?? pgServer!.url })
    try {
      // No response cache: every timed search runs (the HTTP benchmark measures the cache).
      const knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension }), searchCacheSize: 0 })
      // single saves
      const saves = 200
      let t = performance.now()
      for (let i = 0; i < saves; i++)
        await knowledge.save({ task: corpus[i]!.task, content: corpus[i]!.content, types: [corpus[i]!.type], scopes: [corpus[i]!.scope] }, loader)
      results.push({ name: `${backend} save (one by one)`, value: round(saves / ((performance.now() - t) / 1000), 0), unit: 'entries/s' })
      await store.db.query(sql`TRUNCATE knowledge CASCADE`)
      let loaded = 0
      for (const size of sizes) {
        const lines = corpus.slice(loaded, size).map((c, j) => exportLine(loaded + j, c.task, c.content, c.type, c.scope))
        t = performance.now()
        const report = await knowledge.importJsonl(lines, loader, { mode: 'partial', batchSize: 500 })
        if (report.errors.length > 0) throw new Error(`import failed: ${JSON.stringify(report.errors.slice(0, 3))}`)
        const seconds = (performance.now() - t) / 1000
        results.push({
          name: `${backend} bulk import ${loaded}→${size}`,
          value: round(lines.length / seconds, 0),
          unit: 'entries/s',
          note: `${round(seconds, 1)} s`,
        })
        loaded = size
        if (backend === 'pglite') {
          // The in-memory full-text index reads the whole table once (at server start, or the first search).
          t = performance.now()
          await store.knowledge.searchGeneration()
          results.push({
            name: `${backend} full-text index build @${size}`,
            value: round(performance.now() - t, 0),
            unit: 'ms',
            note: 'after the import: every entry read again',
          })
          // Then what a server's warm-up does before its searches run in the steady state: the
          // record cache is filled (10,000 records), so the timed searches do not share the
          // thread with that fill.
          t = performance.now()
          await knowledge.warmUp()
          results.push({ name: `${backend} warm-up (record cache fill) @${size}`, value: round(performance.now() - t, 0), unit: 'ms' })
        }
        // warm up, then measure each mode: hybrid (the default) and full-text only
        for (const q of queries.slice(0, 10)) await knowledge.search({ q, top_k: 5, min_score: 0 }, principal)
        const n = backend === 'postgres' && size >= 100_000 ? Math.min(queries.length, 30) : queries.length
        const vectorNote = `hashed ${dimension}-d vectors, ${backend === 'pglite' ? 'exact scan in memory' : store.pgvector ? 'pgvector HNSW' : 'exact real[] (no pgvector)'}, full-text ${backend === 'pglite' ? 'in memory' : 'in SQL'}`
        for (const mode of ['hybrid', 'fulltext'] as const) {
          const times: number[] = []
          const cpu = process.cpuUsage()
          for (const q of queries.slice(0, n)) {
            const start = performance.now()
            await knowledge.search({ q, top_k: 5, min_score: 0, mode }, principal)
            times.push(performance.now() - start)
          }
          const used = process.cpuUsage(cpu)
          times.sort((a, b) => a - b)
          const label = mode === 'hybrid' ? 'search' : 'search fulltext'
          const load = `load ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}`
          results.push({
            name: `${backend} ${label} p50 @${size}`,
            value: round(percentile(times, 50)),
            unit: 'ms',
            note: `${n} queries, ${mode === 'hybrid' ? vectorNote : `BM25 only, ${backend === 'pglite' ? 'in memory' : 'in SQL'}`}, ${load}`,
          })
          results.push({
            name: `${backend} ${label} p95 @${size}`,
            value: round(percentile(times, 95)),
            unit: 'ms',
            ...(backend === 'pglite' && size === 100_000 && mode === 'hybrid' ? { target: '≤ 25 ms' } : {}),
          })
          results.push({
            name: `${backend} ${label} CPU a query @${size}`,
            value: round((used.user + used.system) / 1000 / n, 3),
            unit: 'ms',
            note: `this process (all threads; ${backend === 'pglite' ? 'the embedded database included' : 'not the PostgreSQL server'})`,
          })
          console.error(`${backend} ${mode} @${size}: p50 ${round(percentile(times, 50))} ms, p95 ${round(percentile(times, 95))} ms (${load})`)
        }
      }
    } finally {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
      await pgServer?.stop()
    }
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string' },
      backends: { type: 'string' },
      queries: { type: 'string' },
      'index-only': { type: 'boolean' },
      'skip-index': { type: 'boolean' },
      dimension: { type: 'string' },
    },
  })
  const results = await runStoreBench({
    ...(values.sizes ? { sizes: values.sizes.split(',').map(Number) } : {}),
    ...(values.backends ? { backends: values.backends.split(',') as Array<'pglite' | 'postgres'> } : {}),
    ...(values.queries ? { queries: Number(values.queries) } : {}),
    ...(values['index-only'] ? { indexOnly: true } : {}),
    ...(values['skip-index'] ? { skipIndex: true } : {}),
    ...(values.dimension ? { dimension: Number(values.dimension) } : {}),
  })
  printTable('Store', results)
  console.log(`\nwrote ${writeResults('store', results)}`)
}
