/**
 * Checks a normalised retrieval set (corpus.jsonl, queries.jsonl, qrels.jsonl) and
 * reports how hard its queries are lexically: for each judged query, the longest run
 * of CJK characters it shares verbatim with any of its relevant documents (task and
 * content). A paraphrase set wants most queries below 4 shared characters: they can
 * be found through shared words, not through a copied phrase.
 *
 *   npx tsx bench/check-set.ts [DIR] [--min-docs 150] [--min-queries 100] [--json]
 *
 * DIR defaults to bench/data/zh-agent. Exits 1 when the set is malformed, a judgement
 * names an unknown query or document or one in another conv, or a size is too small.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { convOf, loadRetrievalSet, type RetrievalDoc, type RetrievalSet } from '../src/eval/dataset.js'

const CJK_RUN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+/gu

/**
 * Length of the longest run of CJK characters found verbatim in both texts.
 * @example
 * longestCommonCjk('用户喜欢什么样的编码风格', '用户编码风格偏好') // 4
 */
export function longestCommonCjk(a: string, b: string): number {
  let best = 0
  for (const run of a.normalize('NFKC').match(CJK_RUN) ?? []) {
    const chars = [...run]
    for (let i = 0; i + best < chars.length; i++) {
      let j = i + best + 1
      while (j <= chars.length && b.includes(chars.slice(i, j).join(''))) j++
      best = Math.max(best, j - 1 - i)
    }
  }
  return best
}

/** The searchable text of a document: its task (when given) and its content. */
export function docText(doc: RetrievalDoc): string {
  return doc.meta.task ? `${doc.meta.task}\n${doc.text}` : doc.text
}

/** What {@link checkSet} finds. */
export interface SetReport {
  name: string
  docs: number
  queries: number
  judged_queries: number
  judgements: number
  convs: Record<string, { docs: number; queries: number }>
  /** Judged queries whose relevant documents share no run of ≥ `phrase` CJK characters with them. */
  no_phrase: { phrase: number; count: number; share: number }
  /** Judged queries by the longest CJK run they share with a relevant document. */
  longest_shared: Record<string, number>
  problems: string[]
}

/**
 * Checks sizes and judgements of a loaded set and measures its lexical overlap.
 * @example
 * const report = checkSet(await loadRetrievalSet('bench/data/zh-agent'), { minDocs: 150, minQueries: 100 })
 * report.problems // []
 */
export function checkSet(set: RetrievalSet, options: { minDocs?: number; minQueries?: number; phrase?: number } = {}): SetReport {
  const phrase = options.phrase ?? 4
  const problems = set.warnings.map((w) => `${w.path}: ${w.message}`)
  const docs = new Map(set.docs.map((d) => [d.id, d]))
  const convs: SetReport['convs'] = {}
  for (const d of set.docs) (convs[convOf(d)] ??= { docs: 0, queries: 0 }).docs++
  for (const q of set.queries) (convs[convOf(q)] ??= { docs: 0, queries: 0 }).queries++
  for (const q of set.queries) if (!set.qrels.has(q.id) && !set.complete.has(q.id)) problems.push(`queries.jsonl: ${q.id}: no judgement`)
  let judgements = 0
  let noPhrase = 0
  const longest: Record<string, number> = {}
  for (const q of set.queries) {
    const judged = set.qrels.get(q.id)
    if (!judged) continue
    let best = 0
    for (const [docId, grade] of judged) {
      if (grade <= 0) continue
      judgements++
      const doc = docs.get(docId)
      if (doc) best = Math.max(best, longestCommonCjk(q.text, docText(doc)))
    }
    if (best < phrase) noPhrase++
    const key = best >= 8 ? '8+' : String(best)
    longest[key] = (longest[key] ?? 0) + 1
  }
  if (options.minDocs !== undefined && set.docs.length < options.minDocs) problems.push(`${set.docs.length} documents, fewer than ${options.minDocs}`)
  if (options.minQueries !== undefined && set.qrels.size < options.minQueries)
    problems.push(`${set.qrels.size} judged queries, fewer than ${options.minQueries}`)
  return {
    name: set.name,
    docs: set.docs.length,
    queries: set.queries.length,
    judged_queries: set.qrels.size,
    judgements,
    convs,
    no_phrase: { phrase, count: noPhrase, share: set.qrels.size === 0 ? 0 : noPhrase / set.qrels.size },
    longest_shared: Object.fromEntries(Object.entries(longest).sort(([a], [b]) => a.localeCompare(b))),
    problems,
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'min-docs': { type: 'string', default: '150' }, 'min-queries': { type: 'string', default: '100' }, json: { type: 'boolean', default: false } },
  })
  const dir = resolve(positionals[0] ?? resolve(import.meta.dirname, 'data', 'zh-agent'))
  const report = checkSet(await loadRetrievalSet(dir), { minDocs: Number(values['min-docs']), minQueries: Number(values['min-queries']) })
  if (values.json) console.log(JSON.stringify(report, null, 2))
  else {
    console.log(`${report.name}: ${report.docs} documents, ${report.queries} queries (${report.judged_queries} judged, ${report.judgements} judgements)`)
    for (const [conv, n] of Object.entries(report.convs)) console.log(`  conv ${conv}: ${n.docs} documents, ${n.queries} queries`)
    console.log(
      `queries sharing no run of >= ${report.no_phrase.phrase} CJK characters with their relevant documents: ${report.no_phrase.count}/${report.judged_queries} (${(report.no_phrase.share * 100).toFixed(1)}%)`,
    )
    console.log(
      `longest shared CJK run per query: ${Object.entries(report.longest_shared)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    )
    for (const p of report.problems) console.log(`problem: ${p}`)
    console.log(report.problems.length === 0 ? 'ok' : `${report.problems.length} problems`)
  }
  if (report.problems.length > 0) process.exitCode = 1
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  })
}
