/**
 * HNSW search settings against recall, on a database loaded by `bench/pg-scale.ts`
 * (KNOWHUB_BENCH_PG_URL, e.g. after `pg-scale.ts --reuse`). For each setting of pgvector's
 * `hnsw.ef_search` (set on the database, so every pooled
 * connection of a fresh store has it): hybrid search p50/p95 through `KnowledgeService.search`
 * (the pg-scale queries, one client, top_k 5); recall of the vector statement (its 50
 * candidates, as a search asks for them: the 10 nearest and all 50) and of a hybrid search's
 * final top 10, against the same with the HNSW index off (`enable_indexscan = off`: exact).
 *
 *   KNOWHUB_BENCH_PG_URL=postgres://… npx tsx bench/pg-hnsw-tune.ts [--queries 200] [--sample 50] [--ef 40,64,100]
 */
import os from 'node:os'
import { parseArgs } from 'node:util'
import { Principal, visibleScopes } from '../src/core/principal.js'
import { createHashedEmbedder } from '../src/embed/hashed.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { sql } from '../src/store/sql.js'
import { openStore } from '../src/store/store.js'
import { percentile, printTable, round, writeResults, type BenchResult } from './lib.js'
import { scaleQueries } from './pg-scale.js'

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

const { values } = parseArgs({ options: { queries: { type: 'string' }, sample: { type: 'string' }, ef: { type: 'string' } } })
const url = process.env.KNOWHUB_BENCH_PG_URL
if (!url) throw new Error('KNOWHUB_BENCH_PG_URL: a database loaded by bench/pg-scale.ts')
const queries = scaleQueries(Number(values.queries ?? 200))
const sample = queries.slice(0, Number(values.sample ?? 50))
const efs = (values.ef ?? '40,64,100').split(',').map(Number)
const principal = Principal.parse({ user: 'bench', project: 'p0', org: 'acme', permissions: ['admin'] })
const embedder = createHashedEmbedder({ dimension: 512 })

type Db = Awaited<ReturnType<typeof openStore>>['db']
const databaseName = async (db: Db): Promise<string> =>
  `"${String((await db.query<{ d: string }>(sql`SELECT current_database() AS d`))[0]!.d).replace(/"/g, '""')}"`
const resetDatabase = async (db: Db): Promise<void> => void (await db.query(sql.raw(`ALTER DATABASE ${await databaseName(db)} RESET ALL`)))

/** Runs `fn` on a fresh store whose connections have the given database settings. */
async function withSettings<T>(
  settings: Record<string, string>,
  fn: (run: { search: (q: string, topK: number) => Promise<string[]>; vector: (q: string) => Promise<string[]> }) => Promise<T>,
): Promise<T> {
  const admin = await openStore({ databaseUrl: url! })
  await resetDatabase(admin.db)
  // Names and values are this file's constants.
  for (const [name, value] of Object.entries(settings)) await admin.db.query(sql.raw(`ALTER DATABASE ${await databaseName(admin.db)} SET ${name} = '${value}'`))
  await admin.close()
  const store = await openStore({ databaseUrl: url! })
  try {
    const knowledge = await createKnowledgeService({ store, embedder, searchCacheSize: 0 })
    const filter = { visible: visibleScopes(principal), minScore: 0, nonNegativeQuality: true }
    return await fn({
      search: async (q, topK) => (await knowledge.search({ q, top_k: topK, min_score: 0 }, principal)).results.map((r) => r.id),
      // The vector statement of a search as the service issues it (50 candidates), nearest first.
      vector: async (q) => (await store.knowledge.searchVector((await embedder.embed([q], { kind: 'query' }))[0]!, filter, 50)).map((hit) => hit.id),
    })
  } finally {
    await store.close()
  }
}

const results: BenchResult[] = []
const recall = (got: string[][], exact: string[][]) => {
  let hit = 0
  let total = 0
  got.forEach((ids, i) => {
    const truth = new Set(exact[i])
    total += truth.size
    hit += ids.filter((id) => truth.has(id)).length
  })
  return total === 0 ? 1 : hit / total
}
const exact = await withSettings({ enable_indexscan: 'off' }, async (run) => {
  const vector: string[][] = []
  const hybrid: string[][] = []
  for (const q of sample) vector.push(await run.vector(q))
  for (const q of sample) hybrid.push(await run.search(q, 10))
  return { vector, hybrid }
})
console.error(`pg-hnsw-tune: exact top 10 of ${sample.length} queries (${load()})`)
for (const ef of efs) {
  // hnsw.iterative_scan stays the store's own (relaxed_order, set on every connection).
  const label = `ef_search ${ef}`
  await withSettings({ 'hnsw.ef_search': String(ef) }, async (run) => {
    for (const q of queries.slice(0, 20)) await run.search(q, 5)
    const times: number[] = []
    for (const q of queries) {
      const start = performance.now()
      await run.search(q, 5)
      times.push(performance.now() - start)
    }
    times.sort((a, b) => a - b)
    const vector: string[][] = []
    const hybrid: string[][] = []
    for (const q of sample) vector.push(await run.vector(q))
    for (const q of sample) hybrid.push(await run.search(q, 10))
    // Vector: the 10 nearest of the index's candidates against the exact 10 nearest (and all 50 against 50).
    const rv = recall(
      vector.map((ids) => ids.slice(0, 10)),
      exact.vector.map((ids) => ids.slice(0, 10)),
    )
    const rv50 = recall(vector, exact.vector)
    const rh = recall(hybrid, exact.hybrid)
    results.push({
      name: `hybrid p50 / p95, ${label}`,
      value: round(percentile(times, 50)),
      unit: 'ms',
      note: `p95 ${round(percentile(times, 95))} ms, ${queries.length} queries, ${load()}`,
    })
    results.push({
      name: `recall@10 vs exact, ${label}`,
      value: round(rv, 3),
      unit: 'vector',
      note: `vector recall@50 ${round(rv50, 3)}; the search's final top 10 (hybrid) ${round(rh, 3)} (${sample.length} queries)`,
    })
    console.error(
      `pg-hnsw-tune: ${label}: hybrid p50 ${round(percentile(times, 50))} p95 ${round(percentile(times, 95))} ms, recall@10 vector ${round(rv, 3)} (@50 ${round(rv50, 3)}) hybrid top 10 ${round(rh, 3)} (${load()})`,
    )
  })
}
// Leave the database as it was.
const admin = await openStore({ databaseUrl: url })
await resetDatabase(admin.db)
await admin.close()
printTable('pgvector HNSW settings against recall', results)
console.log(`\nwrote ${writeResults('pg-hnsw-tune', results)}`)
