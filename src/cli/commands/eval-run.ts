/**
 * The run of `knowhub eval DIR` (the command itself is in eval.ts, so that `knowhub --help`
 * never loads the harness, the evaluation hub or the embedders): loads a normalised retrieval set (corpus.jsonl, queries.jsonl,
 * qrels.jsonl) into a fresh temporary store, one `project:<conv>` scope per
 * `meta.conv`, runs every judged query through the knowledge service's search and
 * prints recall@5, recall@10, nDCG@10, MRR@10, latency and throughput.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { KnowHubError } from '../../core/errors.js'
import { KnowHubConfig } from '../../core/config.js'
import { convOf, loadRetrievalSet, type RetrievalQuery, type RetrievalSet } from '../../eval/dataset.js'
import { cachedEmbedder } from '../../eval/embed-cache.js'
import {
  EVAL_MODES,
  formatEvalTable,
  loadIntoKnowledge,
  roundMetrics,
  runRetrievalEval,
  type EvalMetrics,
  type EvalMode,
  type LoadedSet,
} from '../../eval/harness.js'
import {
  formatContextPrecisionTable,
  formatPrecisionTable,
  roundPrecision,
  runContextPrecision,
  runPrecisionEval,
  type ContextPrecisionMetrics,
  type PrecisionMetrics,
} from '../../eval/precision.js'
import { readNoAnswerQueries, runFeedbackRobustness, runNoAnswer, type FeedbackMetrics, type NoAnswerMetrics } from '../../eval/robustness.js'
import { evalEmbedder, openEvalHub, type EvalEmbedderName, type EvalHub } from '../../app/eval.js'
import { loadConfig, processEnv } from '../config.js'
import { createCliLogger, type GlobalOptions } from '../context.js'
import { oneLine, printJson, progress, type Io } from '../output.js'

/** The files of a retrieval set folder. */
export const RETRIEVAL_SET_FILES = ['corpus.jsonl', 'queries.jsonl', 'qrels.jsonl'] as const

/** What `knowhub eval --json` prints (and `--out` writes). */
export interface EvalReport {
  set: string
  dir: string
  embedder: string
  /** How search read the embedder's similarities: a learned table, the offline embedders' floors, or the self-calibration rule. */
  calibration?: string
  docs: number
  convs: number
  judged_queries: number
  load_ms: number
  warnings: Array<{ path: string; message: string }>
  runs: EvalMetrics[]
  /** With `--absent FILE…`: per file and mode, the share of searches that returned anything. */
  no_answer?: NoAnswerMetrics[]
  /** With `--feedback`: the feedback robustness figures (hybrid). */
  feedback?: FeedbackMetrics
  /** On a set with completely judged queries: precision at top_k 3 and 5, per run, all and per language. */
  precision?: PrecisionMetrics[]
  /** On a set with completely judged queries: the agent context's and goal focus's precision. */
  context_precision?: ContextPrecisionMetrics[]
}

/** Fails with a clear message when the folder or one of its three files is missing. */
function checkSetFolder(dir: string): void {
  if (!existsSync(dir)) throw new KnowHubError('not_found', `Retrieval set folder ${dir} does not exist`, { dir })
  if (!statSync(dir).isDirectory())
    throw new KnowHubError('validation_error', `${dir} is not a folder: give the folder holding ${RETRIEVAL_SET_FILES.join(', ')}`, { dir })
  const missing = RETRIEVAL_SET_FILES.filter((file) => !existsSync(join(dir, file)))
  if (missing.length > 0) {
    throw new KnowHubError(
      'not_found',
      `Retrieval set ${dir} is missing ${missing.join(', ')} (a set is ${RETRIEVAL_SET_FILES.join(', ')}: see docs/retrieval.md)`,
      { dir, missing },
    )
  }
}

/** The runs a `--mode` asks for: one mode, or every mode plus hybrid without the rerank. */
function plannedRuns(mode: EvalMode | 'all', rerank: boolean): Array<{ mode: EvalMode; rerank: boolean }> {
  if (mode !== 'all') return [{ mode, rerank }]
  const runs = EVAL_MODES.map((m) => ({ mode: m, rerank }))
  return rerank ? [...runs, { mode: 'hybrid', rerank: false }] : runs
}

function convCount(set: RetrievalSet): number {
  return new Set(set.docs.map(convOf)).size
}

/** Lists, per run, the queries whose relevant documents were not all in the first 10. */
function printMisses(io: Io, set: RetrievalSet, runs: readonly EvalMetrics[]): void {
  const text = new Map(set.queries.map((q) => [q.id, q.text]))
  for (const run of runs) {
    const misses = (run.per_query ?? []).filter((q) => q.recall10 < 1)
    io.out(`\n${run.mode}${run.rerank ? '' : ' no-rerank'}: ${misses.length} queries not fully found in the first 10`)
    for (const q of misses) {
      const judged = set.qrels.get(q.id) ?? new Map<string, number>()
      const ranks = [...judged.keys()].map((doc) => `${doc}@${q.ranked.indexOf(doc) < 0 ? '-' : q.ranked.indexOf(doc) + 1}`)
      io.out(`  ${q.id}  recall@10 ${q.recall10.toFixed(2)}  ${ranks.join(' ')}  ${oneLine(text.get(q.id) ?? '', 80)}`)
    }
  }
}

/** The options of `knowhub eval`, as commander gives them. */
export interface EvalOptions {
  mode: EvalMode | 'all'
  rerank: boolean
  topK: number
  limit?: number
  embedder: EvalEmbedderName
  routing?: 'off' | 'llm'
  perQuery?: boolean
  out?: string
  json?: boolean
  absent?: string[]
  feedback?: boolean
  gate: boolean
  /** The self-calibration rule whatever the model (`calibration: 'self'`): what a model KnowHub has no table for gets. */
  selfCalibrate?: boolean
  /** Dialogue neighbours on (`search.neighbours`: for sets of raw dialogue turns, as LoCoMo and LongMemEval). */
  neighbours?: boolean
  /** A file of cached vectors (read, and appended to): see src/eval/embed-cache.ts. */
  embedCache?: string
}

/** What one evaluation measured. */
interface Measured {
  runs: EvalMetrics[]
  loadMs: number
  /** How search read the embedder's similarities (the calibration's name). */
  calibration: string
  noAnswer: NoAnswerMetrics[]
  feedback?: FeedbackMetrics
  precision: PrecisionMetrics[]
  contextPrecision: ContextPrecisionMetrics[]
}

/** Reads a retrieval set folder, printing its first warnings; refuses a set with no judged query. */
async function loadSet(io: Io, dir: string): Promise<RetrievalSet> {
  checkSetFolder(dir)
  const set = await loadRetrievalSet(dir)
  for (const w of set.warnings.slice(0, 20)) io.err(`warning: ${w.path}: ${w.message}`)
  if (set.warnings.length > 20) io.err(`warning: … and ${set.warnings.length - 20} more`)
  if (set.qrels.size === 0)
    throw new KnowHubError('validation_error', `Retrieval set ${dir} has no judged queries (qrels.jsonl names none of the queries)`, { dir })
  return set
}

/** The no-answer runs (every planned mode, every file) and the feedback robustness run (last: it writes). */
async function trustRuns(io: Io, hub: EvalHub, loaded: LoadedSet, options: EvalOptions): Promise<Pick<Measured, 'noAnswer' | 'feedback'>> {
  const noAnswer: NoAnswerMetrics[] = []
  for (const file of options.absent ?? []) {
    const queries = await readNoAnswerQueries(file)
    for (const run of plannedRuns(options.mode, options.rerank)) {
      if (!run.rerank) continue
      noAnswer.push(await runNoAnswer({ knowledge: hub.knowledge, loaded, queries, file, mode: run.mode }))
    }
  }
  if (!options.feedback) return { noAnswer }
  const working = progress(io, 'feedback robustness')
  try {
    const feedback = await runFeedbackRobustness({ knowledge: hub.knowledge, loaded, ...(options.limit !== undefined ? { limit: options.limit } : {}) })
    return { noAnswer, feedback }
  } finally {
    working.stop()
  }
}

/**
 * On a set whose queries are judged completely (`meta.judged: "complete"`): precision at top_k 3
 * and 5 for every planned run, then the agent context's and goal focus's precision (once: they
 * use the default search).
 */
async function precisionRuns(io: Io, hub: EvalHub, loaded: LoadedSet, options: EvalOptions): Promise<Pick<Measured, 'precision' | 'contextPrecision'>> {
  if (loaded.set.complete.size === 0) return { precision: [], contextPrecision: [] }
  const limit = options.limit !== undefined ? { limit: options.limit } : {}
  const precision: PrecisionMetrics[] = []
  for (const run of plannedRuns(options.mode, options.rerank)) {
    const querying = progress(io, `precision ${run.mode}${run.rerank ? '' : ' no-rerank'}`)
    try {
      precision.push(
        ...(await runPrecisionEval({
          knowledge: hub.knowledge,
          loaded,
          mode: run.mode,
          rerank: run.rerank,
          ...(options.routing ? { routing: options.routing } : {}),
          ...limit,
          perQuery: Boolean(options.perQuery),
          onProgress: querying.update,
        })),
      )
    } finally {
      querying.stop()
    }
  }
  const assembling = progress(io, 'context precision')
  try {
    return { precision, contextPrecision: await runContextPrecision({ agent: hub.agent, loaded, ...limit, onProgress: assembling.update }) }
  } finally {
    assembling.stop()
  }
}

/**
 * The queries a run searches, so that only their haystacks are stored — unless `--absent` or
 * `--feedback` asks for every conv. The judged queries (the first `--limit`) and the completely
 * judged ones.
 */
function searchedOnly(set: RetrievalSet, options: EvalOptions): { searched?: RetrievalQuery[] } {
  if ((options.absent ?? []).length > 0 || options.feedback) return {}
  const first = <T>(items: T[]) => (options.limit === undefined ? items : items.slice(0, options.limit))
  const judged = first(set.queries.filter((q) => set.qrels.has(q.id)))
  const complete = first(set.queries.filter((q) => set.complete.has(q.id)))
  return { searched: [...new Set([...judged, ...complete])] }
}

/** Loads the set into the evaluation hub and runs every planned mode over it, with progress on stderr; closes the hub. */
async function evaluate(io: Io, hub: EvalHub, set: RetrievalSet, options: EvalOptions): Promise<Measured> {
  const runs: EvalMetrics[] = []
  try {
    const loading = progress(io, 'loading')
    let loaded: LoadedSet
    try {
      loaded = await loadIntoKnowledge(hub.knowledge, set, { onProgress: loading.update, ...searchedOnly(set, options) })
    } finally {
      loading.stop()
    }
    for (const run of plannedRuns(options.mode, options.rerank)) {
      const querying = progress(io, `querying ${run.mode}${run.rerank ? '' : ' no-rerank'}`)
      try {
        runs.push(
          await runRetrievalEval({
            knowledge: hub.knowledge,
            loaded,
            mode: run.mode,
            rerank: run.rerank,
            topK: options.topK,
            ...(options.routing ? { routing: options.routing } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            perQuery: Boolean(options.perQuery),
            onProgress: querying.update,
          }),
        )
      } finally {
        querying.stop()
      }
    }
    const precision = await precisionRuns(io, hub, loaded, options)
    return { runs, loadMs: loaded.loadMs, calibration: hub.knowledge.calibration().name, ...precision, ...(await trustRuns(io, hub, loaded, options)) }
  } finally {
    await hub.close()
  }
}

/** The JSON report of an evaluation. */
function buildReport(set: RetrievalSet, dir: string, embedder: string, measured: Measured): EvalReport {
  const { runs, loadMs } = measured
  return {
    set: set.name,
    dir,
    embedder,
    docs: set.docs.length,
    convs: convCount(set),
    judged_queries: set.qrels.size,
    load_ms: Math.round(loadMs),
    warnings: set.warnings,
    runs: runs.map((m) =>
      m.per_query ? { ...roundMetrics(m), per_query: m.per_query.map((q) => ({ ...q, ms: Math.round(q.ms * 10) / 10 })) } : roundMetrics(m),
    ),
    ...(measured.noAnswer.length > 0 ? { no_answer: measured.noAnswer } : {}),
    ...(measured.feedback ? { feedback: measured.feedback } : {}),
    ...(measured.precision.length > 0 ? { precision: measured.precision.map(roundPrecision) } : {}),
    ...(measured.contextPrecision.length > 0 ? { context_precision: measured.contextPrecision.map(roundPrecision) } : {}),
  }
}

/** The no-answer and feedback lines of the table output. */
function trustLines(report: EvalReport): string[] {
  const lines = (report.no_answer ?? []).map(
    (m) =>
      `no-answer ${m.file} ${m.mode}: ${m.answered} of ${m.searches} searches (${m.queries} queries × convs) returned something: ${(m.rate * 100).toFixed(1)}%`,
  )
  const f = report.feedback
  if (f) {
    lines.push(
      `feedback (seed ${f.seed}): helpful on ${f.helpful_entries} of ${f.entries} entries (${f.helpful_cases} cases), harmful on ${f.harmful_entries}; ` +
        `recall@10 ${f.recall10_before.toFixed(3)} → ${f.recall10_after.toFixed(3)} (drop ${f.recall10_drop.toFixed(3)}); ` +
        `harmful entries fell in ${f.harmful_fell} of ${f.harmful_seen}; helpful near-duplicate first in ${f.helpful_first} of ${f.pairs} pairs (${(f.helpful_first_share * 100).toFixed(1)}%)`,
    )
  }
  return lines
}

/**
 * Runs `knowhub eval DIR`: loads the set into a fresh temporary store, searches every judged
 * query, prints the table (or the JSON report).
 * @example
 * await runEval(io, 'bench/data/zh-agent', { mode: 'hybrid', rerank: true, gate: true, topK: 10, embedder: 'hashed' }, {})
 */
export async function runEval(io: Io, dirArg: string, options: EvalOptions, globals: GlobalOptions): Promise<void> {
  const dir = resolve(dirArg)
  const set = await loadSet(io, dir)
  if (options.topK < 10) io.err(`warning: --top-k ${options.topK} < 10: recall@10, nDCG@10 and MRR@10 see only ${options.topK} results`)
  const logger = createCliLogger()
  const config =
    options.embedder === 'config' || options.embedder === 'openai' || options.routing === 'llm'
      ? loadConfig(processEnv(), globals.config ? { configFile: globals.config } : {})
      : undefined
  if (options.routing === 'llm' && !config?.llm) {
    throw new KnowHubError(
      'llm_not_configured',
      '--routing llm needs an LLM: set llm.url and llm.model in the config file, or KNOWHUB_LLM_URL and KNOWHUB_LLM_MODEL',
    )
  }
  const configured = options.embedder === 'config' || options.embedder === 'openai'
  const base = await evalEmbedder(options.embedder, (configured ? config?.embedder : undefined) ?? KnowHubConfig.parse({}).embedder, logger)
  const embedder = options.embedCache ? cachedEmbedder(base, resolve(options.embedCache)) : base
  const measured = await evaluate(
    io,
    await openEvalHub({
      embedder,
      logger,
      llm: options.routing === 'llm' ? config?.llm : undefined,
      service: { ...(options.gate ? {} : { gate: false }), ...(options.selfCalibrate ? { calibration: 'self' as const } : {}) },
      neighbours: options.neighbours === true,
    }),
    set,
    options,
  )
  const { runs, loadMs } = measured
  const report = { ...buildReport(set, dir, embedder.model, measured), calibration: measured.calibration }
  if (options.out) writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`)
  if (options.json) return printJson(io, report)
  io.out(
    `${set.name}: ${report.docs} docs in ${report.convs} convs, ${report.judged_queries} judged queries; loaded in ${(loadMs / 1000).toFixed(1)} s with ${report.embedder} (calibration: ${report.calibration ?? 'none'})`,
  )
  for (const line of formatEvalTable(runs)) io.out(line)
  if (measured.precision.length > 0) {
    io.out(`\nprecision (searched at top_k 3, 5 and 10; unrel@k = unrelated results / results returned, over all queries)`)
    for (const line of formatPrecisionTable(measured.precision)) io.out(line)
  }
  if (measured.contextPrecision.length > 0) {
    io.out(`\ncontext precision (related entries / entries put in, over the tasks)`)
    for (const line of formatContextPrecisionTable(measured.contextPrecision)) io.out(line)
  }
  for (const line of trustLines(report)) io.out(line)
  if (options.perQuery) printMisses(io, set, runs)
  if (options.out) io.err(`wrote ${options.out}`)
}
