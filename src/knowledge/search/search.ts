/**
 * Hybrid search (seed 003, DESIGN.md): full-text (BM25 over stemmed words and CJK
 * words/bigrams) and vector candidates over visible entries, fused (by normalised score by
 * default); candidates not relevant on their own merits are dropped (the relevance gate);
 * the best 2×top_k are reranked by relevance plus a bounded quality boost, then scope
 * priority (relevance.ts). Query vectors and whole responses are cached (responses only
 * while the knowledge table is unchanged).
 */
import { isKnowHubError, KnowHubError } from '../../core/errors.js'
import { visibilityOf } from '../../core/visibility.js'
import { SearchInput, type SearchOrder, type SearchResponse, type SearchResult } from '../../core/knowledge.js'
import { createLru } from '../../core/lru.js'
import type { SearchObserver, SearchStage } from '../../core/observe.js'
import { requirePermission, visibleScopes, type Principal } from '../../core/principal.js'
import { isLargelyCjk } from '../../core/text/index.js'
import { parseWith } from '../../core/validate.js'
import { DEFAULT_TEXT_RANKING, type KnowledgeRecord, type KnowledgeStore, type TextRanking, type ValidityFilter } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { boostByTime, timeQuery } from './dates.js'
import { includeValidity } from '../entries/entries.js'
import { searchDocument, textQuery } from './document.js'
import { calibrationFor, PROBE_BELOW, PROBE_PASSAGES, type Calibration, type QueryCalibration } from './calibration.js'
import { fusionFor, LEARNED_FUSION_WEIGHTS, type FusionOptions, type LearnedWeights } from './fusion-weights.js'
import {
  answerModelFor,
  injectionModelFor,
  injectionReplacesAnswer,
  LEARNED_RELEVANCE,
  MIN_LEARNED_LIST,
  queryFigures,
  relevanceFeatures,
  relevanceModelFor,
  relevanceProbability,
  type LearnedRelevance,
  type RelevanceFeatures,
  type RelevanceModel,
} from './gate-weights.js'
import { liftNeighbours, topByFused, type NeighbourLift } from './neighbours.js'
import { fuse, fuseScores, type Fused } from './rank.js'
import {
  backgroundSimilarity,
  contentTerms,
  DEFAULT_RELEVANCE_GATE,
  gateCandidates,
  ownEvidence,
  QUALITY_BOOST,
  queryGate,
  relevanceRerank,
  textStrength,
  type Evidence,
  type QueryGate,
  type RelevanceGate,
  type Reranked,
} from './relevance.js'
import { createRouter, DEFAULT_ROUTING, type Router, type RoutingOptions } from './routing.js'

export { DEFAULT_FUSION, type FusionOptions } from './fusion-weights.js'
export { DEFAULT_NEIGHBOUR_LIFT, type NeighbourLift } from './neighbours.js'

/** Candidate list depths of a hybrid search. */
export interface SearchDepth {
  fulltext: number
  vector: number
}

/**
 * The largest `top_k` that gets the precision gate (relevance.ts, `ownEvidence`): what agents put
 * in front of a model (seed 003's default 5, goal focus 3). A larger `top_k`, like `mode: recall`,
 * asks for recall: candidates follow the anchor (docs/retrieval.md, "Precision and recall").
 */
export const PRECISION_TOP_K = 5

/** Candidate list depths: see docs/retrieval.md for the measurements behind them. */
export const DEFAULT_SEARCH_DEPTH: SearchDepth = { fulltext: 50, vector: 50 }

/** Tuning of the search (all optional; the defaults are measured in docs/retrieval.md). */
export interface SearchOptions {
  /**
   * How the full-text and vector lists are fused, for every query. Default: the embedder's
   * learned weights for the query's script ({@link fusionFor}), else {@link DEFAULT_FUSION}.
   */
  fusion?: FusionOptions
  /** BM25 parameters of the full-text list (default `DEFAULT_TEXT_RANKING`). */
  textRanking?: TextRanking
  /** How deep each candidate list of a search is, at least (default {@link DEFAULT_SEARCH_DEPTH}); at least 4 × top_k. */
  searchDepth?: SearchDepth
  /**
   * Candidates found only by vector similarity (no shared search term) are dropped below this
   * cosine similarity. Default: the embedder's `similarityFloor` (none when it has none).
   */
  minSimilarity?: number
  /**
   * The relevance gate (default {@link DEFAULT_RELEVANCE_GATE}): a candidate needs this
   * full-text strength or vector similarity on its own. `false` turns it off (experiments).
   */
  gate?: RelevanceGate | false
  /**
   * The learned relevance checks of the precision gate per embedder (default
   * `LEARNED_RELEVANCE`, gate-weights.ts): the check of each kept candidate and the answer check.
   */
  relevance?: readonly LearnedRelevance[]
  /** How far feedback moves a candidate, in relative relevance (default {@link QUALITY_BOOST}). */
  qualityBoost?: number
  /**
   * Dialogue neighbours (default off; {@link DEFAULT_NEIGHBOUR_LIFT} for stores of raw dialogue
   * turns, config `search.neighbours`): after the gate, the best candidates lift the entries
   * before and after them in their trace (`source.trace_id`, creation order).
   */
  neighbours?: NeighbourLift | false
  /**
   * How many query embeddings are kept, most recently used first (default 1,000; 0 turns the
   * cache off). Embedders are deterministic, so a repeated query skips the embedder.
   */
  queryCacheSize?: number
  /**
   * How many search responses are kept (default 1,000; 0 turns the cache off). A response is
   * reused only while the knowledge table is unchanged since it was computed (the store's
   * search generation: any write, by any path, ends its life) and only for the same
   * visible scopes and parameters. Stores without a generation (SQL full-text on a
   * PostgreSQL server) are never cached.
   */
  searchCacheSize?: number
  /** Semantic routing (default off; see routing.ts). */
  routing?: RoutingOptions
  /**
   * A hybrid search while the embedder's model is still loading (`embedder.ready()` false):
   * `wait` (default) waits for it; `full-text` answers from the full-text list alone at once,
   * says so in the response (`vectors: { status: 'skipped', reason: 'embedder_loading' }`),
   * keeps no cached copy, and has the model loaded in the background.
   */
  whileModelLoads?: 'full-text' | 'wait'
  /**
   * How long a search waits for its query's embedding (ms, default 5000), for an embedder without
   * threads of its own (a model server, a local ONNX model; the offline embedders never wait on one).
   */
  queryEmbedTimeoutMs?: number
  /**
   * A search whose query embedding failed or timed out: `full-text` (default) answers from the
   * full-text list alone, says so (`vectors: { status: 'skipped', reason: 'embedder_unavailable' }`)
   * and keeps no cached copy; `error` throws the `embedder_failed` error.
   */
  whenEmbedderFails?: 'full-text' | 'error'
  /** Told each search's stage timings and response-cache use (metrics; default none). */
  observer?: SearchObserver
  /**
   * How the embedder's similarities are read (calibration.ts): `auto` (default) — its table entry
   * (with its fusion weights and learned checks), its own floors, or the self-calibration rule for
   * a model KnowHub has no table for; `self` — the rule whatever the model (to measure it on a model
   * that has a table: `knowhub eval --self-calibrate`).
   */
  calibration?: 'auto' | 'self'
}

/**
 * What a search is for, beside its request (not a request field: set by the services that call
 * search themselves). Default: a search the caller asked for.
 */
export interface SearchUse {
  /**
   * The results go into an agent's context without the agent asking (the assembled context's
   * related knowledge, goal focus): a precision search in a small store then carries only the
   * results that clear the embedder's injection bar (gate-weights.ts; docs/retrieval.md, "The
   * injection bar"). A recall search (`top_k` above 5, `mode: recall`) is carried as it is.
   */
  injection?: boolean
}

/** The search part of the knowledge service. */
export interface KnowledgeSearch {
  search(raw: unknown, principal: Principal, use?: SearchUse): Promise<SearchResponse>
  /**
   * Prepares search ahead of the first request: builds the embedded store's in-memory
   * full-text index (a no-op when search runs in SQL). Long-running entry points call it at start.
   */
  warmUp(): Promise<void>
  /** Empties the caches of this process (search responses, routing decisions, query vectors): after a forget, nothing of it stays in memory. */
  clearCaches(): string[]
  /** How the embedder's similarities are read (calibration.ts): its source and name, for status and the evaluation. */
  calibration(): { source: Calibration['source']; name: string }
}

/** Responses larger than this (content characters) are not cached. */
const MAX_CACHED_RESPONSE_CHARS = 256 * 1024

/**
 * A parsed search with the validity it asks for (issue 31): current entries at the search's
 * time by default; `as_of` what was valid then; `include` the superseded and/or expired ones.
 */
type ParsedSearch = ReturnType<typeof SearchInput.parse> & { validity: ValidityFilter; now: Date; injection: boolean }

/** The validity filter of a search at `now`: applied in the store's queries like visibility. */
function searchValidity(input: ReturnType<typeof SearchInput.parse>, now: Date): ValidityFilter {
  return { ...includeValidity(input.include, now), ...(input.as_of !== undefined ? { asOf: new Date(input.as_of) } : {}) }
}
/** Why the gate kept a candidate (`explain.evidence`): its own evidence, or the anchor's. */
type KeptBy = Evidence | 'anchor' | 'follows' | 'ungated'
type Candidate = Fused & {
  strength: number | null
  evidence?: KeptBy
  background?: number
  relevance_probability?: number
  answer_probability?: number
  time_boost?: number
  neighbour_of?: string
  neighbour_lift?: number
}
/** A shortlisted record with its candidate's figures, before the rerank. */
type RankItem = KnowledgeRecord &
  Pick<
    Candidate,
    | 'fused'
    | 'positions'
    | 'strength'
    | 'evidence'
    | 'background'
    | 'relevance_probability'
    | 'answer_probability'
    | 'time_boost'
    | 'neighbour_of'
    | 'neighbour_lift'
  >
type Ranked = Reranked<RankItem>

/**
 * A shortlisted record with its candidate's figures and room for the rerank's, written out
 * property by property: every item has one hidden class. A spread followed by new properties
 * (`{ ...r, fused }`) gave each item a hidden class of its own on Node 20 (V8 11.3: the copy's
 * class is detached from V8's transition tree, so every added property makes a new one), and
 * everything that read the items afterwards went megamorphic: +0.1-0.2 ms CPU a search on
 * LoCoMo turns-dev (docs/performance.md, "One hidden class a shortlisted item").
 * Every property of {@link Ranked} must be listed: the type makes a missing one an error.
 * Exported for its test (test/knowledge/rank-items.test.ts).
 */
export function rankItem(r: KnowledgeRecord, c: Candidate): Ranked {
  const item: { [K in keyof Required<Ranked>]: Ranked[K] } = {
    id: r.id,
    message_id: r.message_id,
    types: r.types,
    task: r.task,
    tags: r.tags,
    scopes: r.scopes,
    owner: r.owner,
    content: r.content,
    resource_ids: r.resource_ids,
    resource_owners: r.resource_owners,
    source: r.source,
    score: r.score,
    helpful: r.helpful,
    harmful: r.harmful,
    harmful_weight: r.harmful_weight,
    confidence: r.confidence,
    status: r.status,
    merged_into: r.merged_into,
    version: r.version,
    created_at: r.created_at,
    updated_at: r.updated_at,
    valid_from: r.valid_from,
    valid_to: r.valid_to,
    superseded_by: r.superseded_by,
    supersedes: r.supersedes,
    expires_at: r.expires_at,
    fused: c.fused,
    positions: c.positions,
    strength: c.strength,
    evidence: c.evidence,
    background: c.background,
    relevance_probability: c.relevance_probability,
    answer_probability: c.answer_probability,
    time_boost: c.time_boost,
    neighbour_of: c.neighbour_of,
    neighbour_lift: c.neighbour_lift,
    // The rerank's figures, written in place by `relevanceRerank` (NaN until then: a fraction's field from the start).
    quality_score: NaN,
    scope_priority: 0,
    relevance: NaN,
    quality_boost: NaN,
  }
  return item as Ranked
}

/** Whether a record passes a search's own filters (types, visibility, tags), for candidates no list filtered (dialogue neighbours). */
function passesFilters(r: KnowledgeRecord, input: ParsedSearch): boolean {
  if (input.types && input.types.length > 0 && !r.types.some((t) => input.types!.includes(t))) return false
  if (input.visibility && !input.visibility.includes(visibilityOf(r.scopes, r.owner))) return false
  for (const [key, value] of Object.entries(input.tags ?? {})) {
    const tag = r.tags[key]
    if (!(Array.isArray(tag) ? tag.includes(value) : tag !== undefined && String(tag) === value)) return false
  }
  return true
}

/**
 * The results in the order asked for (`order`, seed 002 and 003): `relevance` keeps the rerank's
 * order; `scope` sorts by scope priority (user > project > agent > team > org > public) and
 * `quality` by quality score, each keeping the rerank's order among equals (a stable sort).
 */
function inOrder(ranked: Ranked[], order: SearchOrder): Ranked[] {
  if (order === 'scope') return ranked.sort((a, b) => a.scope_priority - b.scope_priority)
  if (order === 'quality') return ranked.sort((a, b) => b.quality_score - a.quality_score)
  return ranked
}

/** A search result as the API returns it, with the per-stage figures when asked for. */
function toResult(r: Ranked, explain: boolean, now: Date): SearchResult {
  const result: SearchResult = {
    id: r.id,
    task: r.task,
    content: r.content,
    types: r.types,
    tags: r.tags,
    scopes: r.scopes,
    resource_ids: r.resource_ids,
    eval: { score: r.score, helpful: r.helpful, harmful: r.harmful, confidence: r.confidence },
    quality_score: r.quality_score,
  }
  // Not current (asked for with `include` or `as_of`): marked, beside seed 003's fields.
  if (r.valid_to !== null) {
    result.superseded = true
    result.valid_to = r.valid_to.toISOString()
    if (r.superseded_by !== null) result.superseded_by = r.superseded_by
  }
  if (r.expires_at !== null && r.expires_at.getTime() <= now.getTime()) {
    result.expired = true
    result.expires_at = r.expires_at.toISOString()
  }
  if (explain) {
    const [text, vector] = r.positions
    result.explain = {
      fulltext_rank: text?.rank ?? null,
      fulltext_score: text?.score ?? null,
      vector_rank: vector?.rank ?? null,
      vector_similarity: vector?.score ?? null,
      fused: r.fused,
      scope_priority: r.scope_priority,
      fulltext_strength: r.strength,
      relevance: r.relevance,
      quality_boost: r.quality_boost,
    }
    if (r.evidence !== undefined) result.explain.evidence = r.neighbour_lift !== undefined && r.positions.every((p) => p === null) ? 'neighbour' : r.evidence
    else if (r.neighbour_lift !== undefined) result.explain.evidence = 'neighbour'
    if (r.background !== undefined) result.explain.background_similarity = r.background
    if (r.relevance_probability !== undefined) result.explain.relevance_probability = r.relevance_probability
    if (r.answer_probability !== undefined) result.explain.answer_probability = r.answer_probability
    if (r.time_boost !== undefined) result.explain.time_boost = r.time_boost
    if (r.neighbour_of !== undefined) result.explain.neighbour_of = r.neighbour_of
    if (r.neighbour_lift !== undefined) result.explain.neighbour_lift = r.neighbour_lift
    result.explain.valid_from = r.valid_from.toISOString()
    if (r.valid_to !== null) result.explain.valid_to = r.valid_to.toISOString()
    if (r.superseded_by !== null) result.explain.superseded_by = r.superseded_by
    if (r.supersedes !== null) result.explain.supersedes = r.supersedes
    if (r.expires_at !== null) result.explain.expires_at = r.expires_at.toISOString()
  }
  return result
}

/** What one search needs: the context, the tuning, and the query embedder. */
interface SearchRun {
  ctx: KnowledgeContext
  /** Fixed fusion (an option), or undefined: per query, {@link fusionFor}. */
  fusion: FusionOptions | undefined
  textRanking: TextRanking
  searchDepth: SearchDepth
  minSimilarity: number | undefined
  gate: RelevanceGate | false
  relevance: readonly LearnedRelevance[]
  qualityBoost: number
  neighbours: NeighbourLift | false
  embedQuery: (q: string) => Promise<Float32Array>
  router: Router
  observer: SearchObserver | undefined
  calibration: Calibration
  /** The learned fusion weights (none under `calibration: self`). */
  fusionTable: readonly LearnedWeights[]
  /** The query's similarities to the probe passages (self-calibration), embedded once per process. */
  probeSimilarities: (query: Float32Array) => Promise<number[]>
}

type SearchFilter = Parameters<KnowledgeStore['searchTextWithBound']>[1]

/**
 * The probe passages' vectors, embedded as documents on first use (one request, beside the first
 * query's), then each query's similarity to them; a failed request is asked again next time.
 */
function probeSimilarities(ctx: KnowledgeContext): (query: Float32Array) => Promise<number[]> {
  let probes: Promise<Float32Array[]> | undefined
  return async (query) => {
    probes ??= ctx.embedder.embed(PROBE_PASSAGES, { kind: 'document' }).catch((error: unknown) => {
      probes = undefined
      throw error
    })
    return (await probes).map((p) => {
      let dot = 0
      for (let i = 0; i < p.length; i++) dot += p[i]! * query[i]!
      return dot
    })
  }
}

/** `work`, its duration in seconds told to the observer as `stage` (nothing without an observer). */
function timed<T>(observer: SearchObserver | undefined, stage: SearchStage, work: () => Promise<T>): Promise<T> {
  if (!observer) return work()
  const started = performance.now()
  return work().finally(() => observer.stage(stage, (performance.now() - started) / 1000))
}

/**
 * A query's vector within `timeoutMs` (none: as long as the embedder takes); a failure or a
 * timeout is an `embedder_failed` error that says so, with `stage: 'query_embedding'`.
 */
async function queryEmbedding(ctx: KnowledgeContext, q: string, timeoutMs: number | undefined): Promise<Float32Array> {
  try {
    return await ctx.embedOne(q, 'query', timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs))
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError'
    const why = timedOut ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error)
    throw new KnowHubError(
      'embedder_failed',
      `The embedding model could not embed the query (${why})`,
      { stage: 'query_embedding', timed_out: timedOut },
      { cause: error },
    )
  }
}

/** Whether an error is a query embedding that failed (see {@link queryEmbedding}). */
function queryEmbeddingFailed(error: unknown): boolean {
  return isKnowHubError(error, 'embedder_failed') && (error.details as { stage?: unknown } | undefined)?.stage === 'query_embedding'
}

/**
 * Query vectors by query text, least recently used dropped first (`size` 0: no cache).
 * Pending embeddings are shared, so concurrent identical queries embed once.
 */
function cachedQueryEmbedder(ctx: KnowledgeContext, size: number, timeoutMs: number | undefined): ((q: string) => Promise<Float32Array>) & { clear(): void } {
  const embedOne = (q: string) => queryEmbedding(ctx, q, timeoutMs)
  if (size <= 0) return Object.assign(embedOne, { clear: () => {} })
  const queryVectors = createLru<string, Promise<Float32Array>>(size)
  const embed = (q: string) => {
    let vector = queryVectors.get(q)
    if (!vector) {
      vector = embedOne(q)
      vector.catch(() => queryVectors.delete(q))
      queryVectors.set(q, vector)
    }
    return vector
  }
  return Object.assign(embed, { clear: () => queryVectors.clear() })
}

/** The two candidate lists of a search, the query's vector (when embedded) and the list depths. */
interface Lists {
  text: { hits: Array<{ id: string; score: number }>; bound: number }
  vectorHits: Array<{ id: string; score: number }>
  vector: Float32Array | undefined
  textDepth: number
  vectorDepth: number
}

/** The full-text and vector lists of a search, at their depths (the query embedded once: one round trip to the model). */
async function searchLists(run: SearchRun, input: ParsedSearch, lists: string, filter: SearchFilter): Promise<Lists> {
  const { store } = run.ctx
  const textDepth = Math.max(run.searchDepth.fulltext, input.top_k * 4)
  const vectorDepth = Math.max(run.searchDepth.vector, input.top_k * 4)
  let vector: Float32Array | undefined
  const [text, vectorHits] = await Promise.all([
    lists !== 'vector'
      ? timed(run.observer, 'fulltext', () => store.knowledge.searchTextWithBound(textQuery(input.q), filter, textDepth, run.textRanking))
      : Promise.resolve({ hits: [], bound: 0 }),
    lists !== 'fulltext'
      ? timed(run.observer, 'embed', () => run.embedQuery(input.q)).then((v) => {
          vector = v
          return timed(run.observer, 'vector', () => store.knowledge.searchVector(v, filter, vectorDepth))
        })
      : Promise.resolve([]),
  ])
  return { text, vectorHits, vector, textDepth, vectorDepth }
}

/**
 * The query's thresholds from the embedder's calibration (calibration.ts): its background list is
 * the vector list's similarities, with the probe passages' under the self-calibration rule.
 */
async function calibrate(run: SearchRun, q: string, cjk: boolean, found: Lists): Promise<QueryCalibration> {
  const similarities = found.vectorHits.map((h) => h.score)
  if (run.calibration.probes && found.vector && similarities.length < PROBE_BELOW) similarities.push(...(await run.probeSimilarities(found.vector)))
  return run.calibration.forQuery(q, cjk, similarities)
}

/**
 * The fused candidate list (full-text and vector), each with its full-text strength, and
 * only the candidates that pass the relevance gate (without a gate: vector-only candidates
 * below the similarity floor dropped, as before the gate).
 */
async function candidates(run: SearchRun, input: ParsedSearch, visible: string[]): Promise<Candidate[]> {
  // `recall` (or a top_k above PRECISION_TOP_K): the recall gate (candidates follow the anchor).
  const lists = input.mode === 'recall' ? 'hybrid' : input.mode
  const cjk = isLargelyCjk(input.q)
  const fusion = run.fusion ?? fusionFor(run.ctx.embedder.model, cjk, run.fusionTable)
  const filter: SearchFilter = {
    visible,
    types: input.types,
    visibility: input.visibility,
    tags: input.tags,
    minScore: input.min_score,
    nonNegativeQuality: true,
    validity: input.validity,
  }
  const found = await searchLists(run, input, lists, filter)
  const { text, vectorHits } = found
  const textHits = text.hits
  const calibration = await calibrate(run, input.q, cjk, found)
  const floor = run.minSimilarity ?? calibration.floor
  // A list shorter than its depth holds every match: anything else scores at most its floor
  // (full-text 0; vector the similarity floor), so a short list's last hit is not levelled to 0.
  const ranked = [
    { ids: textHits, weight: fusion.fulltext, ...(textHits.length < found.textDepth ? { floor: 0 } : {}) },
    { ids: vectorHits, weight: fusion.vector, ...(vectorHits.length < found.vectorDepth && floor !== undefined ? { floor } : {}) },
  ]
  // The fused entries are this search's own: each gets its strength in place (no copy of a hundred candidates a search).
  const fused = (fusion.method === 'rrf' ? fuse(ranked, fusion.k ?? 60) : fuseScores(ranked)) as Candidate[]
  for (const c of fused) c.strength = c.positions[0] ? textStrength(c, text.bound) : null
  if (run.gate === false) {
    // A candidate that shares no search term with the query must be similar enough on its own.
    return fused
      .filter((c) => c.positions[0] !== null || (c.positions[1]?.score ?? -Infinity) >= (floor ?? -Infinity))
      .map((c) => ({ ...c, evidence: 'ungated' as const }))
  }
  return gateFused(run, input, { lists, cjk, filter, visible, found, fused, floor, calibration, gate: run.gate })
}

/** What the gate of one search reads. */
interface GateInput {
  lists: string
  cjk: boolean
  filter: SearchFilter
  visible: string[]
  found: Lists
  fused: Candidate[]
  floor: number | undefined
  calibration: QueryCalibration
  gate: RelevanceGate
}

/** The relevance gate over the fused list: the rules, the learned checks, the answer check and the injection bar. */
async function gateFused(run: SearchRun, input: ParsedSearch, g: GateInput): Promise<Candidate[]> {
  const { embedder } = run.ctx
  const { cjk, fused, floor, found, lists } = g
  const { text, vectorHits } = found
  const recall = input.mode === 'recall' || input.top_k > PRECISION_TOP_K
  // Only a search with a full-text list can tell a lone vector hit from a corroborated one.
  const anchorFloor = lists === 'hybrid' ? g.calibration.anchorFloor : undefined
  const background = g.calibration.background ?? backgroundSimilarity(vectorHits.map((h) => h.score))
  const margins = g.calibration.margins
  const strict = g.calibration.strictAnchor ? { strictAnchor: 1 } : {}
  const rules = margins ? { ...g.gate, own: { ...g.gate.own, agreementMargin: margins.agreement, meaningMargin: margins.meaning, ...strict } } : g.gate
  // Every search reads each candidate's own evidence (for `explain`); only a precision search keeps by it.
  const { corroboratedFloor } = g.calibration
  // Every anchor's similarity floor applies only where there are similarities (not in full-text mode).
  const anchorSimilarity = lists === 'fulltext' ? undefined : g.calibration.anchorSimilarity
  const precision = queryGate(rules, { cjk, fulltextOnly: lists === 'fulltext', floor, anchorFloor, corroboratedFloor, anchorSimilarity, background })
  const gate = recall ? { ...precision, own: undefined } : precision
  const shared = cjk ? await sharedContent(run, input.q, g.filter, found.textDepth, fused, gate, g.visible) : undefined
  // The learned relevance checks (gate-weights.ts): precision searches in hybrid mode, for embedders that have a model, over 8 entries or more.
  const learned = !recall && Boolean(g.gate.own.learned) && lists === 'hybrid' && vectorHits.length >= MIN_LEARNED_LIST
  const model = learned ? relevanceModelFor(embedder.model, cjk, run.relevance) : undefined
  // The answer check: only when the vector list holds the whole visible store (shorter than its depth), the background its figures are learned against.
  const wholeStore = learned && vectorHits.length < found.vectorDepth
  // The injection bar, on the same ground: only for an injection (the agent did not ask), never for a search.
  const injection = wholeStore && input.injection ? injectionModelFor(embedder.model, cjk, run.relevance) : undefined
  // A bar fitted on the rules' results (e5) judges an injection in place of the answer check.
  const answer =
    wholeStore && !(injection && injectionReplacesAnswer(embedder.model, run.relevance)) ? answerModelFor(embedder.model, cjk, run.relevance) : undefined
  const features = model || answer || injection ? eligibleFeatures(fused, vectorHits, floor) : undefined
  const probability = model && features ? new Map([...features].map(([id, f]) => [id, relevanceProbability(model, f)])) : undefined
  const related = model && probability ? (c: Candidate) => (probability.get(c.id) ?? 0) >= model.threshold : undefined
  const kept = gateCandidates(fused, text.bound, gate, shared, related)
  // The answer check asks whether the result the answer rests on (the first kept) is likely related; if not, the query has no answer here.
  const first = kept[0]
  const firstFeatures = first && features?.get(first.id)
  const answered = answer && firstFeatures ? relevanceProbability(answer, firstFeatures) : undefined
  if (answer && answered !== undefined && answered < answer.threshold) return []
  // An injection carries only the kept candidates, the first included, whose own probability clears the bar.
  const carried = injection && features ? kept.filter((c) => clears(injection, features.get(c.id))) : kept
  // What kept each: its own evidence; else the anchor (or the best); in a recall search only the
  // first kept is the anchor, every other one without evidence of its own followed it (issue 42:
  // an unrelated candidate strong enough to anchor was labelled the strongest).
  // In place, as the strength above: the kept candidates are the fused ones.
  for (const c of carried) {
    const own = precision.own ? ownEvidence(c, text.bound, precision, precision.own) : undefined
    c.evidence = own ?? (!recall || c === first ? 'anchor' : 'follows')
    if (vectorHits.length > 0) c.background = background
    const p = probability?.get(c.id)
    if (p !== undefined) c.relevance_probability = p
    if (c === first && answered !== undefined) c.answer_probability = answered
  }
  return carried
}

/** Whether a candidate's figures (none: not eligible) clear a model's threshold. */
function clears(model: RelevanceModel, features: RelevanceFeatures | undefined): boolean {
  return features !== undefined && relevanceProbability(model, features) >= model.threshold
}

/**
 * Each eligible candidate's figures for the learned models (gate-weights.ts), by id: its figures
 * against the query's (the vector list's similarities, the best strength) and its place among
 * the eligible candidates — those the full-text list found, or at least at the similarity floor
 * (no other can be kept).
 */
function eligibleFeatures(
  fused: readonly Candidate[],
  vectorHits: ReadonlyArray<{ score: number }>,
  floor: number | undefined,
): Map<string, RelevanceFeatures> {
  let bestStrength = 0
  for (const c of fused) if ((c.strength ?? 0) > bestStrength) bestStrength = c.strength ?? 0
  const figures = queryFigures(
    vectorHits.map((h) => h.score),
    bestStrength,
  )
  const out = new Map<string, RelevanceFeatures>()
  let place = 0
  for (const c of fused) {
    const similarity = c.positions[1]?.score ?? null
    if (c.positions[0] === null && floor !== undefined && (similarity ?? -Infinity) < floor) continue
    out.set(c.id, relevanceFeatures({ strength: c.strength, similarity, place }, figures))
    place++
  }
  return out
}

/**
 * For a Chinese query: how many of its content terms (relevance.ts, `contentTerms`) each
 * candidate shares, as far as the gate needs to know (`anchorStrength`). Which candidates share
 * one: every full-text hit when all the query's terms are content terms, else the hits of a
 * second full-text search over the content terms alone. How many: counted, from the entries'
 * full-text documents, only for the candidates whose strength lies between the two anchor
 * thresholds, and only when no candidate that shares a content term clears the higher one.
 */
async function sharedContent(
  run: SearchRun,
  q: string,
  filter: Parameters<KnowledgeStore['searchTextWithBound']>[1],
  depth: number,
  fused: Candidate[],
  gate: QueryGate,
  visible: string[],
): Promise<(c: Candidate) => number> {
  const { terms } = textQuery(q)
  const content = contentTerms(terms)
  if (content.length === 0) return () => 0
  const sharing =
    content.length === terms.length
      ? (c: Candidate) => c.positions[0] !== null
      : await (async () => {
          const hits = await run.ctx.store.knowledge.searchTextWithBound({ terms: content }, filter, depth * 2, run.textRanking)
          const ids = new Set(hits.hits.map((h) => h.id))
          return (c: Candidate) => ids.has(c.id)
        })()
  const oneTerm = gate.oneTermTextStrength ?? gate.minTextStrength
  const between = (c: Candidate) => sharing(c) && (c.strength ?? 0) >= gate.minTextStrength && (c.strength ?? 0) < oneTerm
  const counts = new Map<string, number>()
  if (!fused.some((c) => sharing(c) && (c.strength ?? 0) >= oneTerm) && fused.some(between)) {
    const wanted = new Set(content)
    const records = await run.ctx.store.knowledge.getMany(
      fused.filter(between).map((c) => c.id),
      visible,
    )
    for (const r of records) {
      const doc = searchDocument(r.task, r.content, r.tags)
      counts.set(r.id, new Set([...doc.title, ...doc.body].filter((t) => wanted.has(t))).size)
    }
  }
  return (c) => (sharing(c) ? (counts.get(c.id) ?? 1) : 0)
}

/**
 * When the query names a day or a month, or asks when, candidates dated then or saying when
 * gain a share of the best fused score and the list is sorted again (dates.ts); otherwise it is
 * returned as is, without reading a record.
 */
async function timeFirst(run: SearchRun, q: string, fused: Candidate[], visible: string[]): Promise<Candidate[]> {
  const time = timeQuery(q)
  if (!time || fused.length === 0) return fused
  const records = new Map(
    (
      await run.ctx.store.knowledge.getMany(
        fused.map((c) => c.id),
        visible,
      )
    ).map((r) => [r.id, r]),
  )
  return boostByTime(fused, time, (id) => records.get(id)).sort((a, b) => b.fused - a.fused)
}

/**
 * Dialogue neighbours (neighbours.ts): the best candidates lift the visible entries before and
 * after them in their trace, found in one store query; the list is sorted again.
 */
async function withNeighbours(run: SearchRun, fused: Candidate[], visible: string[], validity: ValidityFilter): Promise<Candidate[]> {
  if (run.neighbours === false || fused.length === 0) return fused
  const top = topByFused(fused, run.neighbours.depth).map((c) => c.id)
  const around = await run.ctx.store.knowledge.traceNeighbours(top, visible, validity)
  if (around.length === 0) return fused
  return liftNeighbours(fused, around, run.neighbours, (id): Candidate => ({ id, fused: 0, positions: [null, null], strength: null }))
}

/**
 * One search, uncached: candidates, routing (when on), the shortlist's records, the rerank
 * (quality within relevance). Timed: the candidate lists by {@link candidates}, everything
 * after them as `rank`, the whole as `total`.
 */
function runSearch(run: SearchRun, input: ParsedSearch, visible: string[], generation?: number): Promise<SearchResponse> {
  return timed(run.observer, 'total', async () => {
    const found = await candidates(run, input, visible)
    return timed(run.observer, 'rank', () => rankCandidates(run, input, visible, found, generation))
  })
}

/** The stages after the candidate lists: time and neighbour lifts, routing, records, rerank. */
async function rankCandidates(run: SearchRun, input: ParsedSearch, visible: string[], found: Candidate[], generation?: number): Promise<SearchResponse> {
  const fused = await withNeighbours(run, await timeFirst(run, input.q, found, visible), visible, input.validity)
  const getRecords = (ids: string[]): Promise<KnowledgeRecord[]> => run.ctx.store.knowledge.getMany(ids, visible)
  const size = input.rerank ? input.top_k * 2 : input.top_k
  const { shortlist, routing } = await run.router.route(input.q, input.top_k, fused, size, input.routing, getRecords, generation)
  const records = new Map(
    (
      await run.ctx.store.knowledge.getMany(
        shortlist.map((c) => c.id),
        visible,
      )
    ).map((r) => [r.id, r]),
  )
  const items: Ranked[] = []
  for (const c of shortlist) {
    const r = records.get(c.id)
    // A neighbour the lists did not find has not been through the search's filters (types, visibility, tags).
    if (!r || (c.neighbour_lift !== undefined && !passesFilters(r, input))) continue
    items.push(rankItem(r, c))
  }
  const reranked = relevanceRerank(items, visible, input.min_score, run.qualityBoost)
  const ranked = inOrder(input.rerank ? reranked : reranked.sort((a, b) => b.fused - a.fused), input.order)
  const results = ranked.slice(0, input.top_k).map((r) => toResult(r, input.explain, input.now))
  return routing.mode === 'off' ? { results, count: results.length } : { results, count: results.length, routing }
}

/**
 * A deep copy of a response (plain objects, arrays and primitives, as `toResult` builds them and
 * JSON carries them), for the response cache: what a caller changes in its answer never reaches
 * the cache, nor the reverse. What `structuredClone` gave, in about an eighth of its time; anything
 * else (a class instance) is still copied by `structuredClone`.
 */
function copyResponse<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length)
    for (let i = 0; i < value.length; i++) out[i] = copyResponse(value[i] as unknown)
    return out as T
  }
  const prototype = Object.getPrototypeOf(value) as unknown
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = copyResponse((value as Record<string, unknown>)[key])
  return out as T
}

/** The cache key of a search: the caller's visible scopes and every parameter. */
function responseKey(input: ParsedSearch, visible: readonly string[]): string {
  return JSON.stringify([
    [...visible].sort(),
    input.q,
    input.top_k,
    input.min_score,
    [...(input.types ?? [])].sort(),
    input.mode,
    input.rerank,
    input.explain,
    input.routing,
    input.as_of ?? null,
    [...(input.include ?? [])].sort(),
    input.injection,
    [...(input.visibility ?? [])].sort(),
    Object.entries(input.tags ?? {}).sort(),
    input.order,
  ])
}

/**
 * Builds the search over the shared context.
 * @example
 * const { search } = createKnowledgeSearch(ctx, { searchCacheSize: 0 })
 * const { results } = await search({ q: 'selenium login', top_k: 5 }, principal)
 */
export function createKnowledgeSearch(ctx: KnowledgeContext, options: SearchOptions = {}): KnowledgeSearch {
  const { store, logger } = ctx
  // The offline sentence embedder (threads of its own, `ready`) is never cut short: it may be loading its model.
  const queryTimeout = ctx.embedder.ready ? undefined : (options.queryEmbedTimeoutMs ?? 5000)
  const embedQuery = cachedQueryEmbedder(ctx, options.queryCacheSize ?? 1000, queryTimeout)
  const self = options.calibration === 'self'
  const run: SearchRun = {
    ctx,
    fusion: options.fusion,
    textRanking: options.textRanking ?? DEFAULT_TEXT_RANKING,
    searchDepth: options.searchDepth ?? DEFAULT_SEARCH_DEPTH,
    minSimilarity: options.minSimilarity,
    gate: options.gate ?? DEFAULT_RELEVANCE_GATE,
    relevance: options.relevance ?? (self ? [] : LEARNED_RELEVANCE),
    qualityBoost: options.qualityBoost ?? QUALITY_BOOST,
    neighbours: options.neighbours ?? false,
    embedQuery,
    router: createRouter(ctx.llm, options.routing ?? DEFAULT_ROUTING, logger),
    observer: options.observer,
    calibration: calibrationFor(ctx.embedder, options.calibration),
    fusionTable: self ? [] : LEARNED_FUSION_WEIGHTS,
    probeSimilarities: probeSimilarities(ctx),
  }
  // Search responses by caller and parameters, least recently used first, each valid for one
  // generation of the table.
  const searchCacheSize = options.searchCacheSize ?? 1000
  const searchCache = createLru<string, { generation: number; response: SearchResponse }>(searchCacheSize)

  /** A hybrid search answered full-text-only while the model loads (never cached: the next one may be hybrid). */
  let loading: Promise<void> | undefined
  const whileLoading = async (input: ParsedSearch, visible: string[]): Promise<SearchResponse> => {
    // Nothing may have started the load (a server warms the embedder up; a library caller may not).
    loading ??= ctx.embedder.warmUp?.().catch((error: Error) => {
      loading = undefined
      logger.warn('knowledge.search.model_load_failed', { message: error.message })
    })
    const response = await runSearch(run, { ...input, mode: 'fulltext' }, visible)
    return { ...response, vectors: { status: 'skipped', reason: 'embedder_loading' } }
  }

  /** A search; when its query embedding fails and `whenEmbedderFails` is `full-text`, the full-text answer, flagged. */
  const answer = async (input: ParsedSearch, visible: string[], generation?: number): Promise<SearchResponse> => {
    try {
      return await runSearch(run, input, visible, generation)
    } catch (error) {
      if (!queryEmbeddingFailed(error) || options.whenEmbedderFails === 'error' || input.mode === 'fulltext') throw error
      logger.warn('knowledge.search.embedder_unavailable', { message: (error as Error).message })
      const response = await runSearch(run, { ...input, mode: 'fulltext' }, visible, generation)
      return { ...response, vectors: { status: 'skipped', reason: 'embedder_unavailable' } }
    }
  }

  return {
    calibration: () => ({ source: run.calibration.source, name: run.calibration.name }),

    clearCaches() {
      searchCache.clear()
      run.router.clear()
      embedQuery.clear()
      return ['search_responses', 'routing_decisions', 'query_vectors']
    },

    async warmUp() {
      const started = performance.now()
      await store.knowledge.searchGeneration()
      await store.knowledge.warmRecords()
      // The self-calibration rule's probe passages, so that the first search makes one request to the model.
      if (run.calibration.probes)
        await run
          .probeSimilarities(new Float32Array(ctx.embedder.dimension))
          .catch((error: Error) => logger.warn('knowledge.search.probes_failed', { message: error.message }))
      logger.info('knowledge.search.ready', { ms: Math.round(performance.now() - started) })
    },

    async search(raw, principal, use = {}) {
      requirePermission(principal, 'read')
      const parsed = parseWith(SearchInput, raw, 'search')
      const now = ctx.clock.now()
      const input: ParsedSearch = { ...parsed, validity: searchValidity(parsed, now), now, injection: use.injection === true }
      const visible = visibleScopes(principal)
      if (input.mode !== 'fulltext') ctx.requireVectors()
      if ((input.mode === 'hybrid' || input.mode === 'recall') && options.whileModelLoads === 'full-text' && ctx.embedder.ready?.() === false)
        return whileLoading(input, visible)
      // The table's generation also keys routing decisions (routing.ts).
      const routingCache = (options.routing?.cacheSize ?? 0) > 0 && ctx.llm !== undefined
      // With `now`: a response lives only while no more entries have expired (issue 31).
      const generation = searchCacheSize > 0 || routingCache ? await store.knowledge.searchGeneration(now) : undefined
      if (generation === undefined || searchCacheSize === 0) {
        options.observer?.cache('bypass')
        return answer(input, visible, generation)
      }
      const key = responseKey(input, visible)
      const cached = searchCache.get(key)
      if (cached?.generation === generation) {
        options.observer?.cache('hit')
        return copyResponse(cached.response)
      }
      options.observer?.cache('miss')
      if (cached) searchCache.delete(key)
      const response = await answer(input, visible, generation)
      // A fallback (a slow or failing model) is not remembered: the next search asks again.
      if (response.routing?.status === 'fallback' || response.vectors) return response
      const size = response.results.reduce((sum, r) => sum + r.content.length + r.task.length, 0)
      if (size <= MAX_CACHED_RESPONSE_CHARS) searchCache.set(key, { generation, response: copyResponse(response) })
      return response
    },
  }
}
