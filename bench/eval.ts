/**
 * Retrieval quality benchmark: the two LoCoMo views (../shared/corpus/locomo,
 * read in place — never copied here: CC BY-NC), the LongMemEval_S dev half
 * (../shared/corpus/longmemeval/turns-dev, read in place), KnowHub's own Chinese set
 * (bench/data/zh-agent) and its precision set (bench/data/small-stores), each in a fresh
 * embedded store with the default offline configuration, in every search mode. On a set
 * judged completely (small-stores) it also measures precision at top_k 3 and 5 (hybrid) and
 * the precision of the agent context and goal focus (src/eval/precision.ts).
 *
 *   npx tsx bench/eval.ts [--sets turns-dev,facts-dev,longmemeval-dev,zh-agent,small-stores] [--modes hybrid,fulltext,vector]
 *                         [--limit N] [--embedder config|hashed|sentence] [--embed-cache FILE]
 *
 * Prints a table and writes bench/results/eval.json.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../src/cli/config.js'
import { loadRetrievalSet } from '../src/eval/dataset.js'
import { cachedEmbedder } from '../src/eval/embed-cache.js'
import { EVAL_MODES, formatEvalTable, loadIntoKnowledge, roundMetrics, runRetrievalEval, type EvalMetrics, type EvalMode } from '../src/eval/harness.js'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import type { FusionOptions } from '../src/knowledge/service.js'
import {
  formatContextPrecisionTable,
  formatPrecisionTable,
  roundPrecision,
  runContextPrecision,
  runPrecisionEval,
  type ContextPrecisionMetrics,
  type PrecisionMetrics,
} from '../src/eval/precision.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const ROOT = resolve(import.meta.dirname, '..')
const LOCOMO = resolve(ROOT, '..', 'shared', 'corpus', 'locomo')
const LONGMEMEVAL = resolve(ROOT, '..', 'shared', 'corpus', 'longmemeval')

/** The sets and where they live; targets from issue #5 (recall@10 of the default configuration). */
const SETS: Record<string, { dir: string; target?: number; reference?: string }> = {
  'turns-dev': { dir: join(LOCOMO, 'turns-dev'), target: 0.65, reference: 'BM25 reference 0.572' },
  'facts-dev': { dir: join(LOCOMO, 'facts-dev'), target: 0.72, reference: 'BM25 reference 0.640' },
  'longmemeval-dev': { dir: join(LONGMEMEVAL, 'turns-dev'), target: 0.88, reference: 'BM25 reference 0.815' },
  'zh-agent': { dir: join(ROOT, 'bench', 'data', 'zh-agent') },
  'small-stores': { dir: join(ROOT, 'bench', 'data', 'small-stores') },
}

export interface EvalBenchOptions {
  sets?: string[]
  modes?: EvalMode[]
  /** Also run hybrid without the quality rerank (default true). */
  noRerank?: boolean
  limit?: number
  /** The embedder: the default configuration's (`config`, default), `hashed` or `sentence`. */
  embedder?: EvalEmbedderName
  fusion?: FusionOptions
  /** A file of cached vectors (src/eval/embed-cache.ts): later runs skip the embedding. */
  embedCache?: string
  log?: (line: string) => void
}

/** What one set measured. */
export interface SetRuns {
  load_ms: number
  embedder: string
  runs: EvalMetrics[]
  /** On a set judged completely: precision (hybrid with the rerank, the API's default), all and per language. */
  precision: PrecisionMetrics[]
  context_precision: ContextPrecisionMetrics[]
}

/** Runs the evaluation; returns the runs with the store's load time per set. */
export async function evalRuns(options: EvalBenchOptions = {}): Promise<SetRuns[]> {
  const log = options.log ?? (() => {})
  const out: SetRuns[] = []
  for (const name of options.sets ?? Object.keys(SETS)) {
    const spec = SETS[name]
    if (!spec) throw new Error(`unknown set ${name} (known: ${Object.keys(SETS).join(', ')})`)
    if (!existsSync(join(spec.dir, 'corpus.jsonl'))) {
      throw new Error(
        `retrieval set ${name} is missing: expected ${spec.dir}/corpus.jsonl${name.endsWith('-dev') ? ' (the LoCoMo and LongMemEval views live in ../shared/corpus beside the repository)' : ''}`,
      )
    }
    const set = await loadRetrievalSet(spec.dir)
    for (const w of set.warnings) log(`${name}: ${w.path}: ${w.message}`)
    const config = loadConfig()
    const base = await evalEmbedder(options.embedder ?? 'config', config.embedder)
    const embedder = options.embedCache ? cachedEmbedder(base, options.embedCache) : base
    const hub = await openEvalHub({ embedder, ...(options.fusion ? { service: { fusion: options.fusion } } : {}) })
    try {
      // Only the haystacks of the queries searched (the first --limit): the same results, less to embed.
      const first = <T>(items: T[]) => (options.limit ? items.slice(0, options.limit) : items)
      const searched = [...new Set([...first(set.queries.filter((q) => set.qrels.has(q.id))), ...first(set.queries.filter((q) => set.complete.has(q.id)))])]
      const loaded = await loadIntoKnowledge(hub.knowledge, set, { searched })
      log(`${name}: ${set.docs.length} docs loaded in ${(loaded.loadMs / 1000).toFixed(1)} s with ${hub.embedder.model}`)
      const runs: EvalMetrics[] = []
      for (const mode of options.modes ?? EVAL_MODES) {
        runs.push(await runRetrievalEval({ knowledge: hub.knowledge, loaded, mode, ...(options.limit ? { limit: options.limit } : {}) }))
        log(formatEvalTable([runs[runs.length - 1]!])[2]!)
      }
      if (options.noRerank ?? true) {
        runs.push(
          await runRetrievalEval({ knowledge: hub.knowledge, loaded, mode: 'hybrid', rerank: false, ...(options.limit ? { limit: options.limit } : {}) }),
        )
        log(formatEvalTable([runs[runs.length - 1]!])[2]!)
      }
      const precision: PrecisionMetrics[] = []
      const contextPrecision: ContextPrecisionMetrics[] = []
      if (set.complete.size > 0) {
        const limit = options.limit ? { limit: options.limit } : {}
        precision.push(...(await runPrecisionEval({ knowledge: hub.knowledge, loaded, ...limit })))
        for (const line of formatPrecisionTable(precision).slice(2)) log(line)
        contextPrecision.push(...(await runContextPrecision({ agent: hub.agent, loaded, ...limit })))
        for (const line of formatContextPrecisionTable(contextPrecision).slice(2)) log(line)
      }
      out.push({ load_ms: loaded.loadMs, embedder: hub.embedder.model, runs, precision, context_precision: contextPrecision })
    } finally {
      await hub.close()
    }
  }
  return out
}

/** The precision figures as benchmark results, with the goals of issue 26. */
function precisionResults(set: SetRuns): BenchResult[] {
  const results: BenchResult[] = []
  for (const m of set.precision) {
    const label = `eval ${m.set} ${m.lang}`
    for (const at of m.at) {
      results.push({ name: `${label} precision@${at.k}`, value: round(at.precision, 3), unit: 'ratio', note: `ceiling ${round(at.precision_ceiling, 3)}` })
      results.push({
        name: `${label} unrelated share @${at.k}`,
        value: round(at.unrelated_share, 3),
        unit: 'ratio',
        ...(at.k === 5 ? { target: '<= 0.10' } : {}),
        note: `${at.unrelated} of ${at.returned} returned; ${at.empty_answerable} of ${m.answerable} answerable empty`,
      })
    }
    results.push({ name: `${label} answerable hit rate @5`, value: round(m['hit@5'], 3), unit: 'ratio', target: '>= 0.90' })
    results.push({ name: `${label} nDCG@10`, value: round(m['ndcg@10'], 3), unit: 'ratio' })
    results.push({ name: `${label} recall@10`, value: round(m['recall@10'], 3), unit: 'ratio' })
    results.push({ name: `${label} no-answer rate @5`, value: round(m.no_answer_rate, 3), unit: 'ratio', target: '<= 0.05', note: `${m.no_answer} queries` })
  }
  for (const m of set.context_precision) {
    const label = `eval ${m.set} ${m.lang}`
    const note = (c: ContextPrecisionMetrics['context']) => `${c.related} of ${c.entries} entries, ${c.empty} of ${m.tasks} tasks empty`
    results.push({ name: `${label} agent context precision`, value: round(m.context.precision, 3), unit: 'ratio', target: '>= 0.9', note: note(m.context) })
    results.push({
      name: `${label} agent context related-part precision`,
      value: round(m.context_related.precision, 3),
      unit: 'ratio',
      note: note(m.context_related),
    })
    results.push({ name: `${label} goal focus precision`, value: round(m.goal_focus.precision, 3), unit: 'ratio', target: '>= 0.9', note: note(m.goal_focus) })
  }
  return results
}

function toResults(all: SetRuns[]): BenchResult[] {
  const results: BenchResult[] = []
  for (const set of all) {
    const { load_ms, embedder, runs } = set
    const first = runs[0]
    if (!first) continue
    results.push({ name: `eval ${first.set} load`, value: round(load_ms / 1000, 1), unit: 's', note: `${first.docs} docs, ${embedder}` })
    for (const m of runs) {
      const spec = SETS[m.set]
      const label = `eval ${m.set} ${m.mode}${m.rerank ? '' : ' no-rerank'}`
      const isDefault = m.mode === 'hybrid' && m.rerank
      results.push({
        name: `${label} recall@10`,
        value: round(m['recall@10'], 3),
        unit: 'ratio',
        ...(isDefault && spec?.target !== undefined ? { target: `>= ${spec.target}` } : {}),
        ...(spec?.reference ? { note: spec.reference } : {}),
      })
      results.push({ name: `${label} recall@5`, value: round(m['recall@5'], 3), unit: 'ratio' })
      results.push({ name: `${label} nDCG@10`, value: round(m['ndcg@10'], 3), unit: 'ratio' })
      results.push({ name: `${label} MRR@10`, value: round(m['mrr@10'], 3), unit: 'ratio' })
      results.push({ name: `${label} latency p50`, value: round(m.latency_ms.p50, 1), unit: 'ms' })
      results.push({ name: `${label} latency p95`, value: round(m.latency_ms.p95, 1), unit: 'ms' })
      results.push({ name: `${label} throughput`, value: round(m.queries_per_second, 0), unit: 'queries/s', note: `${m.queries} queries, one client` })
    }
    results.push(...precisionResults(set))
  }
  return results
}

/**
 * The evaluation as benchmark results (for bench/run.ts): every set, every mode.
 * @example
 * const results = await runEvalBench()
 */
export async function runEvalBench(options: EvalBenchOptions = {}): Promise<BenchResult[]> {
  return toResults(await evalRuns(options))
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sets: { type: 'string' },
      modes: { type: 'string' },
      limit: { type: 'string' },
      'skip-no-rerank': { type: 'boolean', default: false },
      embedder: { type: 'string' },
      fusion: { type: 'string' },
      'embed-cache': { type: 'string' },
    },
  })
  const options: EvalBenchOptions = { log: (line) => console.error(line) }
  if (values.sets) options.sets = values.sets.split(',')
  if (values.modes) options.modes = values.modes.split(',') as EvalMode[]
  if (values.limit) options.limit = Number(values.limit)
  if (values['skip-no-rerank']) options.noRerank = false
  if (values.embedder) options.embedder = values.embedder as EvalEmbedderName
  if (values['embed-cache']) options.embedCache = values['embed-cache']
  // --fusion score:1:0.5 or rrf:1:1:60 (method:fulltext:vector[:k]), for experiments
  if (values.fusion) {
    const [method, fulltext, vector, k] = values.fusion.split(':')
    options.fusion = {
      method: method === 'rrf' ? 'rrf' : 'score',
      fulltext: Number(fulltext ?? 1),
      vector: Number(vector ?? 1),
      ...(k ? { k: Number(k) } : {}),
    }
  }
  const all = await evalRuns(options)
  const runs = all.flatMap((a) => a.runs)
  console.log(`\nretrieval eval (${all[0]?.embedder ?? '?'})`)
  for (const line of formatEvalTable(runs)) console.log(line)
  const precision = all.flatMap((a) => a.precision)
  if (precision.length > 0) {
    console.log('\nprecision (searched at top_k 3, 5 and 10; unrel@k = unrelated results / results returned)')
    for (const line of formatPrecisionTable(precision)) console.log(line)
    console.log('\ncontext precision (related entries / entries put in, over the tasks)')
    for (const line of formatContextPrecisionTable(all.flatMap((a) => a.context_precision))) console.log(line)
  }
  const results = toResults(all)
  printTable('eval benchmark', results)
  const file = writeResults('eval', results, {
    runs: runs.map(roundMetrics),
    precision: precision.map(roundPrecision),
    context_precision: all.flatMap((a) => a.context_precision).map(roundPrecision),
    load_ms: all.map((a) => round(a.load_ms, 0)),
  })
  console.log(`\nwrote ${file}`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
