/**
 * The evaluation's trust measures (issue 17, docs/retrieval-log.md "No answer and feedback"):
 *
 * - **no-answer rate**: queries about topics absent from the store, each searched in every
 *   conv of the set; the share of searches that return anything (goal ≤ 5%).
 * - **feedback robustness**: helpful cases on a seeded random 20% of the entries (1-5 each)
 *   and a harmful case on 5%, then every judged query again: the recall@10 drop (goal
 *   ≤ 0.01) and whether entries with harmful feedback fell; then near-duplicate pairs of
 *   relevant entries, one of each with helpful feedback: how often the helpful one ranks
 *   first (goal ≥ 95%).
 */
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { KnowHubError } from '../core/errors.js'
import { qualityScore } from '../core/knowledge.js'
import type { KnowledgeService } from '../knowledge/service.js'
import { convOf, RetrievalQuery } from './dataset.js'
import type { EvalMode, LoadedSet } from './harness.js'
import { runRetrievalEval } from './harness.js'
import { seededRandom } from '../core/random.js'

/** A no-answer run: how many of the searches of absent topics returned something. */
export interface NoAnswerMetrics {
  file: string
  mode: EvalMode
  queries: number
  searches: number
  answered: number
  rate: number
}

/**
 * Reads a no-answer query file (`queries.jsonl` lines: `{"id","text"}`; blank lines and blank
 * texts skipped), or the `queries.jsonl` of a folder (`bench/data/no-answer-en`).
 * @example
 * const queries = await readNoAnswerQueries('bench/data/no-answer-en/queries.jsonl')
 */
export async function readNoAnswerQueries(path: string): Promise<RetrievalQuery[]> {
  let text: string
  let file = path
  try {
    if ((await stat(path)).isDirectory()) file = join(path, 'queries.jsonl')
    text = await readFile(file, 'utf8')
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such file' : (error as Error).message
    throw new KnowHubError('not_found', `Cannot read the no-answer queries ${file}: ${reason}`, { file })
  }
  const out: RetrievalQuery[] = []
  for (const [index, raw] of text.split('\n').entries()) {
    if (raw.trim() === '') continue
    let parsed
    try {
      parsed = RetrievalQuery.safeParse(JSON.parse(raw))
    } catch (error) {
      throw new KnowHubError('validation_error', `${file}:${index + 1}: not valid JSON (${(error as Error).message})`, { file })
    }
    if (!parsed.success) throw new KnowHubError('validation_error', `${file}:${index + 1}: not a query line {"id","text"}`, { file })
    if (parsed.data.text !== '') out.push(parsed.data)
  }
  return out
}

/**
 * Searches every no-answer query in every conv of the loaded set (top 10, default filters)
 * and counts the searches that returned anything.
 * @example
 * const m = await runNoAnswer({ knowledge, loaded, queries, file: 'no-answer-en' })
 * m.rate // ≤ 0.05 is the goal
 */
export async function runNoAnswer(options: {
  knowledge: KnowledgeService
  loaded: LoadedSet
  queries: readonly RetrievalQuery[]
  file: string
  mode?: EvalMode
}): Promise<NoAnswerMetrics> {
  const mode = options.mode ?? 'hybrid'
  const convs = [...new Set(options.loaded.set.docs.map(convOf))]
  let searches = 0
  let answered = 0
  for (const query of options.queries) {
    for (const conv of convs) {
      const response = await options.knowledge.search({ q: query.text, top_k: 10, mode }, options.loaded.principal(conv))
      searches++
      if (response.results.length > 0) answered++
    }
  }
  return { file: options.file, mode, queries: options.queries.length, searches, answered, rate: searches > 0 ? answered / searches : 0 }
}

/** The feedback robustness figures. */
export interface FeedbackMetrics {
  seed: number
  entries: number
  helpful_entries: number
  helpful_cases: number
  harmful_entries: number
  recall10_before: number
  recall10_after: number
  recall10_drop: number
  /** (query, harmful entry) pairs with the entry in the first 10 before the feedback. */
  harmful_seen: number
  /** …of which the entry ranked lower (or left the first 10) after it. */
  harmful_fell: number
  pairs: number
  helpful_first: number
  helpful_first_share: number
}

/** Gives feedback through the service's batch update, 500 items per call, as each entry's conv principal. */
async function giveFeedback(knowledge: KnowledgeService, loaded: LoadedSet, items: Array<{ id: string; conv: string; helpful: boolean }>): Promise<void> {
  const byConv = new Map<string, typeof items>()
  for (const item of items) byConv.set(item.conv, [...(byConv.get(item.conv) ?? []), item])
  for (const [conv, list] of byConv) {
    for (let i = 0; i < list.length; i += 500) {
      const feedback_list = list.slice(i, i + 500).map((item) => ({ knowledge_id: item.id, is_helpful: item.helpful, case: { task: 'eval' } }))
      const result = await knowledge.batchFeedback({ feedback_list }, loaded.principal(conv))
      const failed = result.results.find((r) => !r.ok)
      if (failed) throw new KnowHubError('validation_error', `feedback on ${failed.knowledge_id} failed: ${failed.error?.message ?? '?'}`)
    }
  }
}

/**
 * Measures feedback robustness on a loaded set (hybrid search, with the rerank). Writes to
 * the store: run it last.
 * @example
 * const m = await runFeedbackRobustness({ knowledge: hub.knowledge, loaded })
 * m.recall10_drop // ≤ 0.01 is the goal
 */
export async function runFeedbackRobustness(options: {
  knowledge: KnowledgeService
  loaded: LoadedSet
  seed?: number
  pairs?: number
  limit?: number
}): Promise<FeedbackMetrics> {
  const { knowledge, loaded } = options
  const seed = options.seed ?? 17
  const rand = seededRandom(seed)
  const limit = options.limit !== undefined ? { limit: options.limit } : {}
  const run = () => runRetrievalEval({ knowledge, loaded, mode: 'hybrid', rerank: true, perQuery: true, warmup: 0, ...limit })
  const before = await run()
  // Entries as stored (conv copies only: scope-group copies are left alone).
  const docConv = new Map(loaded.set.docs.map((d) => [d.id, convOf(d)]))
  const entries = [...loaded.docOf.entries()].filter(([id, doc]) => !/-g\d+$/.test(id) && docConv.has(doc))
  const helpful: Array<{ id: string; conv: string; helpful: boolean }> = []
  const harmful = new Set<string>()
  let helpfulEntries = 0
  for (const [id, doc] of entries) {
    const conv = docConv.get(doc)!
    const r = rand()
    if (r < 0.2) {
      helpfulEntries++
      const votes = 1 + Math.floor(rand() * 5)
      for (let v = 0; v < votes; v++) helpful.push({ id, conv, helpful: true })
    } else if (r < 0.25) {
      harmful.add(doc)
      helpful.push({ id, conv, helpful: false })
    }
  }
  await giveFeedback(knowledge, loaded, helpful)
  const after = await run()
  let seen = 0
  let fell = 0
  const afterRanks = new Map((after.per_query ?? []).map((q) => [q.id, q.ranked]))
  for (const q of before.per_query ?? []) {
    q.ranked.slice(0, 10).forEach((doc, rank) => {
      if (!harmful.has(doc)) return
      seen++
      const now = afterRanks.get(q.id)?.slice(0, 10).indexOf(doc) ?? -1
      if (now < 0 || now > rank) fell++
    })
  }
  const pairs = await nearDuplicatePairs(knowledge, loaded, rand, options.pairs ?? 200)
  return {
    seed,
    entries: entries.length,
    helpful_entries: helpfulEntries,
    helpful_cases: helpful.filter((h) => h.helpful).length,
    harmful_entries: harmful.size,
    recall10_before: before['recall@10'],
    recall10_after: after['recall@10'],
    recall10_drop: before['recall@10'] - after['recall@10'],
    harmful_seen: seen,
    harmful_fell: fell,
    ...pairs,
  }
}

/**
 * The task and content of a near-duplicate of an entry: its content plus " (copy)". An entry
 * whose task is its whole content (a plain document) is indexed once, as body; its copy keeps
 * that shape (task and content both the copied text), or its task would be indexed again as a
 * weighted title field and the copy would be far more relevant than the original, not near-equally.
 * @example
 * nearDuplicate({ task: 'Use pnpm', content: 'Use pnpm' }) // { task: 'Use pnpm (copy)', content: 'Use pnpm (copy)' }
 */
export function nearDuplicate(entry: { task: string; content: string }): { task: string; content: string } {
  const content = `${entry.content} (copy)`
  return entry.task.trim() === entry.content.trim() ? { task: `${entry.content.trim()} (copy)`, content } : { task: entry.task, content }
}

/**
 * Near-duplicate pairs: for up to `max` judged queries, a copy of the query's first relevant
 * document ({@link nearDuplicate}: its text plus " (copy)") is saved beside it, and 1-5 helpful cases go to one of the
 * two, chosen at random; the one of higher quality score is the helpful one (the original may
 * carry earlier feedback; pairs of equal quality are skipped). A pair counts for the helpful
 * one when it ranks above the other in the query's results (the other absent counts too; the
 * helpful one absent counts against).
 */
async function nearDuplicatePairs(
  knowledge: KnowledgeService,
  loaded: LoadedSet,
  rand: () => number,
  max: number,
): Promise<{ pairs: number; helpful_first: number; helpful_first_share: number }> {
  const idOf = new Map([...loaded.docOf.entries()].filter(([id]) => !/-g\d+$/.test(id)).map(([id, doc]) => [doc, id]))
  const docs = new Map(loaded.set.docs.map((d) => [d.id, d]))
  let pairs = 0
  let won = 0
  let copies = 0
  for (const query of loaded.set.queries) {
    if (pairs >= max) break
    const judged = loaded.set.qrels.get(query.id)
    const docId = judged ? [...judged.keys()].find((d) => idOf.has(d) && docs.has(d)) : undefined
    if (!docId || loaded.set.scopeGroups.has(query.id)) continue
    const conv = convOf(query)
    const principal = loaded.principal(conv)
    const original = await knowledge.get(idOf.get(docId)!, principal)
    // The same experience, saved at the same moment of the same conversation: the copy keeps the
    // original's source (its date, which search prefers for questions naming it, and its trace)
    // and its creation time, so that it holds the original's place among its dialogue neighbours
    // (imported, as only an import keeps a creation time), with no feedback of its own.
    // A document can be the first relevant one of several queries: one copy for each.
    const copyId = `${original.id}-copy${++copies}`
    const line = JSON.stringify({
      ...original,
      ...nearDuplicate(original),
      id: copyId,
      eval: { score: original.eval.score, helpful: 0, harmful: 0, confidence: 0.5, helpful_history: [], harmful_history: [] },
      updated_at: original.created_at,
      version: 1,
      versions: [],
    })
    const imported = await knowledge.importJsonl([line], principal)
    if (imported.imported !== 1) throw new KnowHubError('internal_error', `Cannot save a near-duplicate of ${original.id}: ${JSON.stringify(imported)}`)
    const copy = await knowledge.get(copyId, principal)
    const votes = 1 + Math.floor(rand() * 5)
    const chosen = rand() < 0.5 ? original.id : copy.id
    await giveFeedback(
      knowledge,
      loaded,
      Array.from({ length: votes }, () => ({ id: chosen, conv, helpful: true })),
    )
    // The helpful one: the higher quality score (the original may carry earlier feedback).
    const [q1, q2] = await Promise.all([original.id, copy.id].map(async (id) => qualityScore((await knowledge.get(id, principal)).eval)))
    if (q1 === q2) continue
    const [favoured, other] = q1! > q2! ? [original.id, copy.id] : [copy.id, original.id]
    const ranked = (await knowledge.search({ q: query.text, top_k: 10 }, principal)).results.map((r) => r.id)
    const a = ranked.indexOf(favoured)
    const b = ranked.indexOf(other)
    if (a < 0 && b < 0) continue
    pairs++
    if (a >= 0 && (b < 0 || a < b)) won++
  }
  return { pairs, helpful_first: won, helpful_first_share: pairs > 0 ? won / pairs : 0 }
}
