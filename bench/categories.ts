/**
 * Recall@10 per query category of a `knowhub eval --per-query --json` report, for sets whose
 * queries carry `meta.category` (LoCoMo: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).
 * `knowhub eval` reports the whole set; this splits it (issue 31 reports the temporal category).
 *
 *   npx tsx src/cli/main.ts eval ../shared/corpus/locomo/turns-dev --embedder hashed --per-query --json --out /tmp/turns.json
 *   npx tsx bench/categories.ts /tmp/turns.json ../shared/corpus/locomo/turns-dev
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** LoCoMo's QA categories (the adversarial category 5 is not in the normalised set). */
export const LOCOMO_CATEGORIES: Record<string, string> = { '1': 'multi-hop', '2': 'temporal', '3': 'open-domain', '4': 'single-hop' }

interface Report {
  runs: Array<{ mode: string; rerank: boolean; per_query?: Array<{ id: string; recall10: number }> }>
}

/**
 * Mean recall@10 per category of each run of a report.
 * @example
 * recallByCategory(report, new Map([['c26:Q1', '2']])) // [{ mode: 'hybrid', rerank: true, categories: { '2': { queries: 1, recall10: 1 } } }]
 */
export function recallByCategory(report: Report, categoryOf: ReadonlyMap<string, string>) {
  return report.runs.map((run) => {
    const sums = new Map<string, { n: number; sum: number }>()
    for (const q of run.per_query ?? []) {
      const category = categoryOf.get(q.id) ?? '?'
      const s = sums.get(category) ?? { n: 0, sum: 0 }
      sums.set(category, { n: s.n + 1, sum: s.sum + q.recall10 })
    }
    const categories = Object.fromEntries([...sums].sort().map(([c, s]) => [c, { queries: s.n, recall10: s.sum / s.n }]))
    return { mode: run.mode, rerank: run.rerank, categories }
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [reportFile, setDir] = process.argv.slice(2)
  if (!reportFile || !setDir) {
    console.error('usage: npx tsx bench/categories.ts REPORT.json SET_DIR')
    process.exit(2)
  }
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report
  if (report.runs.every((run) => !run.per_query)) {
    console.error(`${reportFile} has no per-query results: run knowhub eval with --per-query --json`)
    process.exit(2)
  }
  const categoryOf = new Map<string, string>()
  for (const line of readFileSync(join(setDir, 'queries.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const q = JSON.parse(line) as { id: string; meta?: { category?: unknown } }
    if (q.meta?.category !== undefined) categoryOf.set(q.id, String(q.meta.category))
  }
  for (const run of recallByCategory(report, categoryOf)) {
    for (const [category, { queries, recall10 }] of Object.entries(run.categories)) {
      console.log(
        `${run.mode}${run.rerank ? '' : ' (no rerank)'}  category ${category} ${LOCOMO_CATEGORIES[category] ?? ''}  queries ${queries}  R@10 ${recall10.toFixed(4)}`,
      )
    }
  }
}
