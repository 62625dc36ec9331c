/**
 * The retrieval evaluation harness: loads a retrieval set into a knowledge
 * service (one `project:<conv>` scope per conversation), runs every judged
 * query through the service's real `search` — the path the API uses — and
 * scores the ranked lists.
 */
import { KnowHubError } from '../core/errors.js'
import { KNOWLEDGE_ID } from '../core/ids.js'
import { absoluteDate } from '../core/text/dates.js'
import { Principal } from '../core/principal.js'
import type { KnowledgeService } from '../knowledge/service.js'
import { convOf, inScopeGroup, type RetrievalQuery, type RetrievalSet } from './dataset.js'
import { mean, mrrAtK, ndcgAtK, percentile, recallAtK } from './metrics.js'

/** Search modes of the knowledge service. */
export const EVAL_MODES = ['hybrid', 'fulltext', 'vector'] as const
export type EvalMode = (typeof EVAL_MODES)[number]

/** A retrieval set loaded into a knowledge service. */
export interface LoadedSet {
  set: RetrievalSet
  /** The principal that sees one conversation. */
  principal(conv: string): Principal
  /** The principal a query searches as: its scope group's (`meta.scope`) or its conversation's. */
  principalOf(query: RetrievalQuery): Principal
  /** knowledge id → document id. */
  docOf: Map<string, string>
  /** Wall time of the import (embedding included), in ms. */
  loadMs: number
}

/** The principal of the evaluation for one conversation: user `eval`, project `<conv>`. */
export function evalPrincipal(conv: string): Principal {
  return Principal.parse({ user: 'eval', project: conv, permissions: ['read', 'write'] })
}

/** The principal of a scope group's queries: user `eval`, team `scope-<group>`. */
function groupPrincipal(group: string): Principal {
  return Principal.parse({ user: 'eval', team: `scope-${group}`, permissions: ['read', 'write'] })
}

/** Longest task of a plain document; a longer text is stored whole as the content under a short task. */
const MAX_PLAIN_TASK = 10_000
/** The short task of a long plain document: its first characters, cut at a space. */
const SHORT_TASK = 200

/** An entry's task and content for a document (see docs/retrieval.md, "The format"). */
function taskAndContent(doc: RetrievalSet['docs'][number]): { task: string; content: string } {
  if (doc.meta.task !== undefined) return { task: doc.meta.task, content: doc.text }
  const text = doc.text.trim()
  if (text.length <= MAX_PLAIN_TASK) return { task: text, content: doc.text }
  const head = text.slice(0, SHORT_TASK)
  const cut = head.lastIndexOf(' ')
  return { task: `${(cut > SHORT_TASK / 2 ? head.slice(0, cut) : head).trim()} …`, content: doc.text }
}

/** A document's `meta.date` as the entry's source timestamp, when it names a day ("1:56 pm on 8 May, 2023"). */
function documentTimestamp(doc: RetrievalSet['docs'][number]): { timestamp?: string } {
  const date = typeof doc.meta.date === 'string' ? absoluteDate(doc.meta.date) : undefined
  return date ? { timestamp: date.toISOString() } : {}
}

/**
 * When a document's fact became true (issue 31): its message date, as `valid_from`, when it
 * names a day; else the import's default (the entry's `created_at`).
 */
function documentValidFrom(doc: RetrievalSet['docs'][number]): { valid_from?: string } {
  const { timestamp } = documentTimestamp(doc)
  return timestamp ? { valid_from: timestamp } : {}
}

/**
 * A document's conversation, as the entry's source trace: `<conv>:<meta.session>` when the
 * document names a session (LoCoMo's turns and facts), else none — documents without one are
 * not a dialogue. Their order within the trace is the file order (each entry's `created_at`).
 */
function documentTrace(doc: RetrievalSet['docs'][number]): string {
  const session = doc.meta.session
  return typeof session === 'string' || typeof session === 'number' ? `${convOf(doc)}:${session}`.slice(0, 200) : ''
}

function exportLine(id: string, doc: RetrievalSet['docs'][number], scope: string, at: string): string {
  const { task, content } = taskAndContent(doc)
  return JSON.stringify({
    id,
    message_id: '',
    types: doc.meta.types ?? ['usecase'],
    task,
    tags: doc.meta.tags ?? {},
    scopes: [scope],
    owner: 'user:eval',
    content,
    resource_ids: [],
    source: {
      name: '',
      category: 'exp',
      urls: [],
      agent_id: '',
      submitted_by: 'eval',
      message_id: doc.id.slice(0, 200),
      trace_id: documentTrace(doc),
      ...documentTimestamp(doc),
    },
    eval: { score: 3, helpful: 0, harmful: 0, confidence: 0.5, helpful_history: [], harmful_history: [] },
    status: 'active',
    merged_into: null,
    version: 1,
    created_at: at,
    updated_at: at,
    ...documentValidFrom(doc),
    versions: [],
  })
}

/**
 * Imports every document as a knowledge entry, one conversation at a time, with
 * the service's JSONL import (batched embedding and inserts). Document ids become
 * entry ids when they are valid ones; otherwise `doc-<n>`.
 * @example
 * const loaded = await loadIntoKnowledge(hub.knowledge, await loadRetrievalSet(dir))
 */
export async function loadIntoKnowledge(
  knowledge: KnowledgeService,
  set: RetrievalSet,
  options: {
    batchSize?: number
    onProgress?: (done: number, total: number) => void
    /**
     * The queries that will be searched: when given, only their haystacks are stored — the
     * documents of the convs they search (those without a `meta.scope`) and the copies of their
     * scope groups. Each haystack is its own scope (search's statistics are over the caller's
     * visible scopes), so the results are the same; a `--limit`ed run of a set with
     * `meta.scope` haystacks (LongMemEval) embeds only what it searches.
     */
    searched?: readonly RetrievalQuery[]
  } = {},
): Promise<LoadedSet> {
  const started = performance.now()
  // One batch per principal: each conv's documents under project:<conv>, and each scope
  // group's (meta.scope) documents again, as copies, under team:scope-<group>.
  const batches = new Map<string, { principal: Principal; lines: string[] }>()
  const docOf = new Map<string, string>()
  const base = Date.UTC(2026, 0, 1)
  const add = (key: string, principal: Principal, scope: string, id: string, doc: RetrievalSet['docs'][number], at: string) => {
    let batch = batches.get(key)
    if (!batch) batches.set(key, (batch = { principal, lines: [] }))
    batch.lines.push(exportLine(id, doc, scope, at))
  }
  const searched = options.searched
  const usedGroups = searched ? new Set(searched.flatMap((q) => set.scopeGroups.get(q.id)?.name ?? [])) : undefined
  const usedConvs = searched ? new Set(searched.filter((q) => !set.scopeGroups.has(q.id)).map(convOf)) : undefined
  const groups = [...new Map([...set.scopeGroups.values()].map((g) => [g.name, g])).values()].filter((g) => !usedGroups || usedGroups.has(g.name))
  set.docs.forEach((doc, index) => {
    const id = KNOWLEDGE_ID.test(doc.id) && !docOf.has(doc.id) ? doc.id : `doc-${index}`
    docOf.set(id, doc.id)
    const conv = convOf(doc)
    const at = new Date(base + index * 1000).toISOString()
    if (!usedConvs || usedConvs.has(conv)) add(`conv:${conv}`, evalPrincipal(conv), `project:${conv}`, id, doc, at)
    for (const group of groups) {
      if (!inScopeGroup(doc, group)) continue
      const copy = `doc-${index}-${group.name}`
      docOf.set(copy, doc.id)
      add(`group:${group.name}`, groupPrincipal(group.name), `team:scope-${group.name}`, copy, doc, at)
    }
  })
  const total = [...batches.values()].reduce((sum, b) => sum + b.lines.length, 0)
  let done = 0
  options.onProgress?.(0, total)
  for (const [key, { principal, lines }] of batches) {
    const report = await knowledge.importJsonl(lines, principal, {
      mode: 'atomic',
      on_conflict: 'error',
      batchSize: options.batchSize ?? 200,
      onProgress: (n) => options.onProgress?.(done + n, total),
    })
    if (report.errors.length > 0) {
      const first = report.errors[0]!
      throw new KnowHubError('invalid_import', `Cannot load ${set.name} (${key}): line ${first.line}: ${first.message}`, {
        errors: report.errors.slice(0, 20),
      })
    }
    done += lines.length
  }
  const principalOf = (query: RetrievalQuery) => {
    const group = set.scopeGroups.get(query.id)
    return group ? groupPrincipal(group.name) : evalPrincipal(convOf(query))
  }
  return { set, principal: evalPrincipal, principalOf, docOf, loadMs: performance.now() - started }
}

/** Options of one evaluation run. */
export interface EvalRunOptions {
  knowledge: KnowledgeService
  loaded: LoadedSet
  mode?: EvalMode
  /** The seed-003 quality rerank (default on, as in the API). */
  rerank?: boolean
  /** Semantic routing by the hub's LLM for every query (`llm`), or none (default). */
  routing?: 'off' | 'llm'
  /** How many results each search returns (default 10); metrics @5 use its first five. */
  topK?: number
  /** Evaluate only the first `limit` judged queries. */
  limit?: number
  /** Untimed searches before the timed run (default 5). */
  warmup?: number
  /** Keep each query's ranked document ids in the result. */
  perQuery?: boolean
  onProgress?: (done: number, total: number) => void
}

/** One query's outcome (with `perQuery`). */
export interface QueryOutcome {
  id: string
  ranked: string[]
  recall10: number
  ms: number
}

/** Scores of one run. Metrics are means over the judged queries. */
export interface EvalMetrics {
  set: string
  mode: EvalMode
  rerank: boolean
  top_k: number
  docs: number
  queries: number
  'recall@5': number
  'recall@10': number
  'ndcg@10': number
  'mrr@10': number
  latency_ms: { p50: number; p95: number; mean: number }
  queries_per_second: number
  per_query?: QueryOutcome[]
}

/**
 * Runs every judged query of a loaded set through `knowledge.search` as the
 * principal of its conversation and scores the results.
 * @example
 * const metrics = await runRetrievalEval({ knowledge: hub.knowledge, loaded, mode: 'fulltext' })
 * metrics['recall@10']
 */
export async function runRetrievalEval(options: EvalRunOptions): Promise<EvalMetrics> {
  const { knowledge, loaded } = options
  const mode = options.mode ?? 'hybrid'
  const rerank = options.rerank ?? true
  const topK = options.topK ?? 10
  const set = loaded.set
  let queries = set.queries.filter((q) => set.qrels.has(q.id))
  if (options.limit !== undefined) queries = queries.slice(0, options.limit)
  const search = async (q: (typeof queries)[number]) => {
    const routing = options.routing ? { routing: options.routing } : {}
    const response = await knowledge.search({ q: q.text, top_k: topK, mode, rerank, ...routing }, loaded.principalOf(q))
    return response.results.map((r) => loaded.docOf.get(r.id) ?? r.id)
  }
  for (const q of queries.slice(0, options.warmup ?? 5)) await search(q)
  const scores = { r5: [] as number[], r10: [] as number[], ndcg: [] as number[], mrr: [] as number[] }
  const times: number[] = []
  const perQuery: QueryOutcome[] = []
  const started = performance.now()
  let done = 0
  for (const q of queries) {
    const t0 = performance.now()
    const ranked = await search(q)
    const ms = performance.now() - t0
    times.push(ms)
    const judged = set.qrels.get(q.id)!
    scores.r5.push(recallAtK(ranked, judged, 5))
    scores.r10.push(recallAtK(ranked, judged, 10))
    scores.ndcg.push(ndcgAtK(ranked, judged, 10))
    scores.mrr.push(mrrAtK(ranked, judged, 10))
    if (options.perQuery) perQuery.push({ id: q.id, ranked, recall10: scores.r10[scores.r10.length - 1]!, ms })
    options.onProgress?.(++done, queries.length)
  }
  const elapsed = (performance.now() - started) / 1000
  times.sort((a, b) => a - b)
  const metrics: EvalMetrics = {
    set: set.name,
    mode,
    rerank,
    top_k: topK,
    docs: set.docs.length,
    queries: queries.length,
    'recall@5': mean(scores.r5),
    'recall@10': mean(scores.r10),
    'ndcg@10': mean(scores.ndcg),
    'mrr@10': mean(scores.mrr),
    latency_ms: { p50: percentile(times, 50), p95: percentile(times, 95), mean: mean(times) },
    queries_per_second: elapsed > 0 ? queries.length / elapsed : 0,
  }
  if (options.perQuery) metrics.per_query = perQuery
  return metrics
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-')

/**
 * Formats runs as an aligned text table (one line per run).
 * @example
 * for (const line of formatEvalTable([metrics])) console.log(line)
 */
export function formatEvalTable(runs: readonly EvalMetrics[]): string[] {
  const head = ['set', 'mode', 'rerank', 'queries', 'R@5', 'R@10', 'nDCG@10', 'MRR@10', 'p50 ms', 'p95 ms', 'q/s']
  const rows = runs.map((m) => [
    m.set,
    m.mode,
    m.rerank ? 'yes' : 'no',
    String(m.queries),
    fixed(m['recall@5'], 3),
    fixed(m['recall@10'], 3),
    fixed(m['ndcg@10'], 3),
    fixed(m['mrr@10'], 3),
    fixed(m.latency_ms.p50, 1),
    fixed(m.latency_ms.p95, 1),
    fixed(m.queries_per_second, 0),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

/** Rounds the metrics for JSON output (4 decimals, latency 0.1 ms). */
export function roundMetrics(m: EvalMetrics): EvalMetrics {
  const r = (v: number, d = 4) => Math.round(v * 10 ** d) / 10 ** d
  const { per_query: _omit, ...rest } = m
  return {
    ...rest,
    'recall@5': r(m['recall@5']),
    'recall@10': r(m['recall@10']),
    'ndcg@10': r(m['ndcg@10']),
    'mrr@10': r(m['mrr@10']),
    latency_ms: { p50: r(m.latency_ms.p50, 1), p95: r(m.latency_ms.p95, 1), mean: r(m.latency_ms.mean, 1) },
    queries_per_second: r(m.queries_per_second, 1),
  }
}
