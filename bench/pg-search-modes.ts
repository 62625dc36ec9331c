/**
 * Where the full-text half of a search runs on PostgreSQL, compared on one loaded database
 * (issue 32): `search.fulltext` `sql` and `memory`, one after the other, each in a fresh store
 * on a database loaded by `bench/pg-scale.ts` (KNOWHUB_BENCH_PG_URL, e.g. after
 * `pg-scale.ts --reuse`). For each: the in-memory index's build (memory only), then two rounds
 * of the pg-scale queries through `KnowledgeService.search`, one client, in each mode (vector
 * only, full text only, hybrid): p50 / p95 / mean and KnowHub's CPU a search. The second round
 * is the warm figure.
 *
 *   KNOWHUB_BENCH_PG_URL=postgres://… npx tsx bench/pg-search-modes.ts [--queries 200]
 */
import os from 'node:os'
import { parseArgs } from 'node:util'
import { Principal } from '../src/core/principal.js'
import { createHashedEmbedder } from '../src/embed/hashed.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { openStore } from '../src/store/store.js'
import { percentile, printTable, round, writeResults, type BenchResult } from './lib.js'
import { scaleQueries } from './pg-scale.js'

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

const { values } = parseArgs({ options: { queries: { type: 'string' } } })
const url = process.env.KNOWHUB_BENCH_PG_URL
if (!url) throw new Error('KNOWHUB_BENCH_PG_URL: a database loaded by bench/pg-scale.ts')
const queries = scaleQueries(Number(values.queries ?? 200))
const principal = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', permissions: ['admin'] })
const results: BenchResult[] = []

for (const fulltext of ['sql', 'memory'] as const) {
  const store = await openStore({ databaseUrl: url, fulltext })
  try {
    const knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 512 }), searchCacheSize: 0 })
    if (fulltext === 'memory') {
      const started = performance.now()
      await store.refreshCaches([])
      results.push({ name: 'in-memory index build', value: round((performance.now() - started) / 1000, 1), unit: 's', note: load() })
    }
    for (const q of queries.slice(0, 30)) await knowledge.search({ q, top_k: 5, min_score: 0 }, principal)
    for (const round_ of [1, 2]) {
      for (const mode of ['vector', 'fulltext', 'hybrid'] as const) {
        const times: number[] = []
        const cpu = process.cpuUsage()
        for (const q of queries) {
          const started = performance.now()
          await knowledge.search({ q, top_k: 5, min_score: 0, mode }, principal)
          times.push(performance.now() - started)
        }
        const used = process.cpuUsage(cpu)
        times.sort((a, b) => a - b)
        const mean = times.reduce((a, b) => a + b, 0) / times.length
        results.push({
          name: `full text in ${fulltext}: ${mode} p50 / p95, round ${round_}`,
          value: round(percentile(times, 95)),
          unit: 'ms (p95)',
          note: `p50 ${round(percentile(times, 50))} ms, mean ${round(mean)} ms; KnowHub CPU ${round((used.user + used.system) / 1000 / times.length)} ms a search; ${load()}`,
        })
        console.error(`${fulltext} ${mode} round ${round_}: p50 ${round(percentile(times, 50))} p95 ${round(percentile(times, 95))} (${load()})`)
      }
    }
    results.push({ name: `KnowHub RSS, full text in ${fulltext}`, value: round(process.memoryUsage().rss / 2 ** 20, 0), unit: 'MB', note: load() })
  } finally {
    await store.close()
  }
}
printTable('Full text in SQL or in memory on PostgreSQL', results)
console.log(`\nwrote ${writeResults('pg-search-modes', results)}`)
