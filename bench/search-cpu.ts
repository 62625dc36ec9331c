/**
 * The CPU of one in-process search over a retrieval set, pass after pass: the set is loaded
 * once into a fresh evaluation hub (as `knowhub eval` does), then every judged query is searched
 * `--passes` times through the knowledge service. Per pass: the process's CPU time (all threads,
 * `process.cpuUsage()`) divided by the queries, and the wall p50 / p95 / queries a second. The
 * first pass carries the JIT's warm-up (what `knowhub eval` reports); the later ones show the
 * steady cost. CPU time moves far less with the machine's load than the wall figures, so two
 * commits compare by it, run back to back (docs/performance.md, "One hidden class a
 * shortlisted item").
 *
 *   npx tsx bench/search-cpu.ts [--set ../shared/corpus/locomo/turns-dev] [--passes 3]
 *                               [--embedder hashed|sentence|config] [--embed-cache FILE]
 *
 * Prints a table and writes bench/results/search-cpu.json.
 */
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { KnowHubConfig } from '../src/core/config.js'
import { loadRetrievalSet } from '../src/eval/dataset.js'
import { cachedEmbedder } from '../src/eval/embed-cache.js'
import { loadIntoKnowledge, runRetrievalEval } from '../src/eval/harness.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const { values } = parseArgs({
  options: {
    set: { type: 'string', default: resolve(import.meta.dirname, '..', '..', 'shared', 'corpus', 'locomo', 'turns-dev') },
    passes: { type: 'string', default: '3' },
    embedder: { type: 'string', default: 'hashed' },
    'embed-cache': { type: 'string' },
  },
})
const passes = Number(values.passes)
const set = await loadRetrievalSet(resolve(values.set))
const base = await evalEmbedder(values.embedder as EvalEmbedderName, KnowHubConfig.parse({}).embedder)
const embedder = values['embed-cache'] ? cachedEmbedder(base, resolve(values['embed-cache'])) : base
const hub = await openEvalHub({ embedder, neighbours: false })
const results: BenchResult[] = []
try {
  const loaded = await loadIntoKnowledge(hub.knowledge, set, { searched: set.queries.filter((q) => set.qrels.has(q.id)) })
  for (let pass = 1; pass <= passes; pass++) {
    const before = process.cpuUsage()
    const m = await runRetrievalEval({ knowledge: hub.knowledge, loaded, mode: 'hybrid', rerank: true, topK: 10 })
    const cpu = process.cpuUsage(before)
    const note = `${m.queries} queries, ${embedder.model}, R@10 ${round(m['recall@10'], 4)}, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`
    results.push(
      { name: `pass ${pass} CPU a search`, value: round((cpu.user + cpu.system) / 1000 / m.queries, 3), unit: 'ms', note },
      { name: `pass ${pass} p50 / p95`, value: round(m.latency_ms.p50, 2), unit: 'ms', note: `p95 ${round(m.latency_ms.p95, 2)} ms` },
      { name: `pass ${pass} throughput`, value: round(m.queries_per_second, 0), unit: 'queries/s' },
    )
  }
} finally {
  await hub.close()
}
printTable(`In-process search CPU: ${set.name}`, results)
console.log(`\nwrote ${writeResults('search-cpu', results, { set: set.name, passes })}`)
