/**
 * Precision where agents live (issue 26, docs/retrieval.md "Precision on small stores"): on a
 * set whose queries are judged completely (`meta.judged: "complete"`: every entry of the
 * query's store was judged, the unlisted ones are unrelated, and a query with no related entry
 * is about nothing stored), what search returns at the top_k agents use, and what goes into
 * an assembled agent context and a goal-focus injection.
 *
 * - **precision@k** (k = 3, 5): searched with `top_k` k, the related results divided by k,
 *   averaged over the answerable queries (its ceiling, `min(k, related) / k`, is reported beside);
 * - **unrelated share@k**: of everything those searches returned, for every query (answerable
 *   or not), the share that is unrelated to its query — pooled, as "14 of 22 results returned
 *   were unrelated" counts; **empty answers** are counted apart (answerable queries that got
 *   nothing; no-answer queries that got something);
 * - **hit@5**: the answerable queries with a related entry among the results of `top_k` 5;
 * - **nDCG@10** and **recall@10** of the answerable queries, searched with `top_k` 10;
 * - **no-answer rate**: the share of the queries about nothing stored that returned anything
 *   at `top_k` 5.
 *
 * Each figure is reported over all queries and per `meta.lang`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentService } from '../agent/service.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { RetrievalQuery } from './dataset.js'
import type { EvalMode, LoadedSet } from './harness.js'
import { hitAtK, mean, ndcgAtK, precisionAtK, precisionCeiling, recallAtK, returnedCounts, type Judgements } from './metrics.js'

/** The top_k values precision is measured at: knowledge_search's default (5) and goal focus's (3). */
export const PRECISION_KS = [3, 5] as const

/** The figures of one `top_k`. */
export interface PrecisionAt {
  k: number
  /** Mean precision@k over the answerable queries. */
  precision: number
  /** Mean of `min(k, related) / k` over the answerable queries: the best precision@k can be. */
  precision_ceiling: number
  /** Results returned, over every query. */
  returned: number
  /** Of those, unrelated to their query. */
  unrelated: number
  /** `unrelated / returned` (0 when nothing was returned). */
  unrelated_share: number
  /** Answerable queries that got nothing. */
  empty_answerable: number
  /** Queries about nothing stored that got something. */
  answered_no_answer: number
}

/** One query's results (with `perQuery`), as document ids. */
export interface PrecisionOutcome {
  id: string
  lang: string
  kind: string
  related: string[]
  /** Results of `top_k` 3, 5 and 10. */
  top3: string[]
  top5: string[]
  top10: string[]
}

/** The precision figures of one run, for all queries (`lang` "all") or one language. */
export interface PrecisionMetrics {
  set: string
  mode: EvalMode
  rerank: boolean
  lang: string
  queries: number
  answerable: number
  no_answer: number
  at: PrecisionAt[]
  /** Answerable queries with a related result at `top_k` 5. */
  'hit@5': number
  'ndcg@10': number
  'recall@10': number
  /** Share of the queries about nothing stored that returned anything at `top_k` 5. */
  no_answer_rate: number
  per_query?: PrecisionOutcome[]
}

const EMPTY: Judgements = new Map()

/** The queries of a set judged completely, in file order (the first `limit`). */
export function completeQueries(loaded: LoadedSet, limit?: number): RetrievalQuery[] {
  const queries = loaded.set.queries.filter((q) => loaded.set.complete.has(q.id))
  return limit === undefined ? queries : queries.slice(0, limit)
}

const langOf = (q: RetrievalQuery) => q.meta.lang ?? 'all'

/** Groups outcomes as "all" plus one group per language (sorted), when the set names languages. */
function byLanguage<T extends { lang: string }>(items: readonly T[]): Array<[string, T[]]> {
  const langs = [...new Set(items.map((i) => i.lang))].filter((l) => l !== 'all').sort()
  return [['all', [...items]], ...langs.map((lang): [string, T[]] => [lang, items.filter((i) => i.lang === lang)])]
}

function score(outcomes: readonly PrecisionOutcome[], judgedOf: (id: string) => Judgements): Omit<PrecisionMetrics, 'set' | 'mode' | 'rerank' | 'lang'> {
  const answerable = outcomes.filter((o) => o.related.length > 0)
  const none = outcomes.filter((o) => o.related.length === 0)
  const list = (o: PrecisionOutcome, k: number) => (k === 3 ? o.top3 : o.top5)
  const at = PRECISION_KS.map((k): PrecisionAt => {
    const counts = returnedCounts(
      outcomes.map((o) => ({ ranked: list(o, k), judged: judgedOf(o.id) })),
      k,
    )
    return {
      k,
      precision: mean(answerable.map((o) => precisionAtK(list(o, k), judgedOf(o.id), k))),
      precision_ceiling: mean(answerable.map((o) => precisionCeiling(judgedOf(o.id), k))),
      returned: counts.returned,
      unrelated: counts.unrelated,
      unrelated_share: counts.unrelatedShare,
      empty_answerable: answerable.filter((o) => list(o, k).length === 0).length,
      answered_no_answer: none.filter((o) => list(o, k).length > 0).length,
    }
  })
  return {
    queries: outcomes.length,
    answerable: answerable.length,
    no_answer: none.length,
    at,
    'hit@5': mean(answerable.map((o) => hitAtK(o.top5, judgedOf(o.id), 5))),
    'ndcg@10': mean(answerable.map((o) => ndcgAtK(o.top10, judgedOf(o.id), 10))),
    'recall@10': mean(answerable.map((o) => recallAtK(o.top10, judgedOf(o.id), 10))),
    no_answer_rate: none.length === 0 ? 0 : none.filter((o) => o.top5.length > 0).length / none.length,
  }
}

/**
 * Searches every completely judged query of a loaded set at `top_k` 3, 5 and 10 (each query as
 * its conv's principal, through `knowledge.search`) and scores precision, the unrelated share,
 * the hit rate, nDCG@10 and recall@10, and the no-answer rate: for all queries and per language.
 * @example
 * const [all, en, zh] = await runPrecisionEval({ knowledge: hub.knowledge, loaded })
 * all.at[1].unrelated_share // the unrelated share at top_k 5
 */
export async function runPrecisionEval(options: {
  knowledge: KnowledgeService
  loaded: LoadedSet
  mode?: EvalMode
  rerank?: boolean
  routing?: 'off' | 'llm'
  limit?: number
  perQuery?: boolean
  onProgress?: (done: number, total: number) => void
}): Promise<PrecisionMetrics[]> {
  const { knowledge, loaded } = options
  const mode = options.mode ?? 'hybrid'
  const rerank = options.rerank ?? true
  const queries = completeQueries(loaded, options.limit)
  const judgedOf = (id: string) => loaded.set.qrels.get(id) ?? EMPTY
  const search = async (q: RetrievalQuery, topK: number) => {
    const routing = options.routing ? { routing: options.routing } : {}
    const response = await knowledge.search({ q: q.text, top_k: topK, mode, rerank, ...routing }, loaded.principalOf(q))
    return response.results.map((r) => loaded.docOf.get(r.id) ?? r.id)
  }
  const outcomes: PrecisionOutcome[] = []
  for (const [index, q] of queries.entries()) {
    const related = [...judgedOf(q.id)].filter(([, grade]) => grade > 0).map(([id]) => id)
    outcomes.push({
      id: q.id,
      lang: langOf(q),
      kind: q.meta.kind ?? '',
      related,
      top3: await search(q, 3),
      top5: await search(q, 5),
      top10: await search(q, 10),
    })
    options.onProgress?.(index + 1, queries.length)
  }
  return byLanguage(outcomes).map(([lang, group]) => ({
    set: loaded.set.name,
    mode,
    rerank,
    lang,
    ...score(group, judgedOf),
    ...(options.perQuery && lang === 'all' ? { per_query: group } : {}),
  }))
}

/** What went into agents' contexts: entries put in, how many of them related to the task. */
export interface InjectedCounts {
  /** Entries put in, over every task. */
  entries: number
  /** Of those, related to their task. */
  related: number
  /** `related / entries` (1 when nothing was put in: nothing unrelated was). */
  precision: number
  /** Tasks that got no entry. */
  empty: number
  /** Answerable tasks with at least one related entry put in, divided by the answerable tasks. */
  hit: number
}

/** Context precision of one language (or "all"). */
export interface ContextPrecisionMetrics {
  set: string
  lang: string
  tasks: number
  /** The assembled agent context's knowledge: the user profile part and the related-knowledge part. */
  context: InjectedCounts
  /** Its related-knowledge part alone (the task's search, `top_k` = the agent's relatedLimit). */
  context_related: InjectedCounts
  /** Goal focus on the task as the goal's description (`top_k` 3, `min_score` 3: the defaults). */
  goal_focus: InjectedCounts
}

/** The entries one task got: in its context (profile part, related part) and from goal focus. */
interface Injected {
  lang: string
  related: ReadonlySet<string>
  profile: string[]
  contextRelated: string[]
  focus: string[]
}

function injected(tasks: readonly Injected[], pick: (t: Injected) => string[]): InjectedCounts {
  let entries = 0
  let related = 0
  let empty = 0
  let hits = 0
  let answerable = 0
  for (const task of tasks) {
    const ids = [...new Set(pick(task))]
    const found = ids.filter((id) => task.related.has(id)).length
    entries += ids.length
    related += found
    if (ids.length === 0) empty++
    if (task.related.size > 0) {
      answerable++
      if (found > 0) hits++
    }
  }
  return { entries, related, precision: entries === 0 ? 1 : related / entries, empty, hit: answerable === 0 ? 0 : hits / answerable }
}

/**
 * Context precision: for each task of a completely judged set (its queries of `meta.kind`
 * "task", or every completely judged query when none is), assembles an agent's starting context
 * with the task (agent `eval` in a temporary agent home) and focuses a goal whose description is
 * the task, each as the task's conv principal, and counts the knowledge entries each put in that
 * are related to the task.
 * @example
 * const [all] = await runContextPrecision({ agent: hub.agent, loaded })
 * all.goal_focus.precision // ≥ 0.9 is the goal
 */
export async function runContextPrecision(options: {
  agent: Pick<AgentService, 'assembleContext' | 'goal'>
  loaded: LoadedSet
  /** Only the tasks among the first `limit` completely judged queries (as the precision run). */
  limit?: number
  onProgress?: (done: number, total: number) => void
}): Promise<ContextPrecisionMetrics[]> {
  const { agent, loaded } = options
  const all = completeQueries(loaded, options.limit)
  const chosen = all.some((q) => q.meta.kind === 'task') ? all.filter((q) => q.meta.kind === 'task') : all
  const home = await mkdtemp(join(tmpdir(), 'knowhub-eval-agents-'))
  const docOf = (id: string) => loaded.docOf.get(id) ?? id
  const outcomes: Injected[] = []
  try {
    for (const [index, q] of chosen.entries()) {
      const principal = loaded.principalOf(q)
      const { report } = await agent.assembleContext({ agent: 'eval', home, task: q.text, principal })
      const idsOf = (part: string) => (report.parts.find((p) => p.name === part)?.ids ?? []).map(docOf)
      const trace = `eval-context-${index + 1}`
      await agent.goal({ action: 'create', trace_id: trace, description: q.text }, principal)
      const tree = await agent.goal({ action: 'focus', trace_id: trace, goal_id: '1' }, principal)
      const related = new Set([...(loaded.set.qrels.get(q.id) ?? EMPTY)].filter(([, grade]) => grade > 0).map(([id]) => id))
      outcomes.push({
        lang: langOf(q),
        related,
        profile: idsOf('user_profile'),
        contextRelated: idsOf('related_knowledge'),
        focus: tree.knowledge.map((k) => docOf(k.id)),
      })
      options.onProgress?.(index + 1, chosen.length)
    }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
  return byLanguage(outcomes).map(([lang, group]) => ({
    set: loaded.set.name,
    lang,
    tasks: group.length,
    context: injected(group, (t) => [...t.profile, ...t.contextRelated]),
    context_related: injected(group, (t) => t.contextRelated),
    goal_focus: injected(group, (t) => t.focus),
  }))
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const pct = (value: number) => `${(value * 100).toFixed(1)}%`

function table(head: string[], rows: string[][], left: number): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

/**
 * The precision runs as an aligned table: one line per run and language.
 * @example
 * for (const line of formatPrecisionTable(metrics)) console.log(line)
 */
export function formatPrecisionTable(runs: readonly PrecisionMetrics[]): string[] {
  const head = ['set', 'mode', 'lang', 'queries', 'answerable', 'none', 'P@3', 'P@5', 'unrel@3', 'unrel@5', 'empty@5', 'hit@5', 'nDCG@10', 'R@10', 'no-ans@5']
  const rows = runs.map((m) => {
    const [at3, at5] = [m.at.find((a) => a.k === 3)!, m.at.find((a) => a.k === 5)!]
    return [
      m.set,
      `${m.mode}${m.rerank ? '' : ' no-rerank'}`,
      m.lang,
      String(m.queries),
      String(m.answerable),
      String(m.no_answer),
      fixed(at3.precision, 3),
      fixed(at5.precision, 3),
      pct(at3.unrelated_share),
      pct(at5.unrelated_share),
      String(at5.empty_answerable),
      fixed(m['hit@5'], 3),
      fixed(m['ndcg@10'], 3),
      fixed(m['recall@10'], 3),
      pct(m.no_answer_rate),
    ]
  })
  return table(head, rows, 3)
}

/**
 * The context precision runs as an aligned table: one line per language.
 * @example
 * for (const line of formatContextPrecisionTable(metrics)) console.log(line)
 */
export function formatContextPrecisionTable(runs: readonly ContextPrecisionMetrics[]): string[] {
  const head = ['set', 'lang', 'tasks', 'context', 'precision', 'related part', 'precision', 'empty', 'goal focus', 'precision', 'empty']
  const rows = runs.map((m) => [
    m.set,
    m.lang,
    String(m.tasks),
    `${m.context.related}/${m.context.entries}`,
    fixed(m.context.precision, 3),
    `${m.context_related.related}/${m.context_related.entries}`,
    fixed(m.context_related.precision, 3),
    String(m.context_related.empty),
    `${m.goal_focus.related}/${m.goal_focus.entries}`,
    fixed(m.goal_focus.precision, 3),
    String(m.goal_focus.empty),
  ])
  return table(head, rows, 2)
}

/** Rounds the figures for JSON output (4 decimals). */
export function roundPrecision<T extends PrecisionMetrics | ContextPrecisionMetrics>(m: T): T {
  const r = (v: number) => Math.round(v * 1e4) / 1e4
  const walk = (value: unknown): unknown => {
    if (typeof value === 'number') return Number.isInteger(value) ? value : r(value)
    if (Array.isArray(value)) return value.map(walk)
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    return value
  }
  return walk(m) as T
}
