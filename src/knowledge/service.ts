/**
 * The knowledge service: save, get, list, edit, feedback, archive, delete,
 * search, export/import and reindex of knowledge entries. Every operation takes
 * the calling principal; visibility is enforced by the store's queries.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import { newKnowledgeId } from '../core/ids.js'
import {
  BatchFeedbackInput,
  EditKnowledgeInput,
  FeedbackInput,
  KnowledgeId,
  ListInput,
  MAX_CONTENT_BYTES,
  SaveKnowledgeInput,
  SearchInput,
  Source,
  type FeedbackRecord,
  type KnowledgeEntry,
  type KnowledgeVersion,
  type SearchResponse,
  type SearchResult,
} from '../core/knowledge.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { decodeCursor, encodeCursor } from '../core/cursor.js'
import { createLru } from '../core/lru.js'
import {
  assertWritableScopes,
  canManage,
  defaultOwnerOf,
  defaultWriteScopes,
  foreignOwnerError,
  requirePermission,
  visibleScopes,
  type Principal,
} from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { Embedder } from '../embed/embedder.js'
import { DEFAULT_TEXT_RANKING, type KnowledgeRecord, type TextRanking } from '../store/knowledge.js'
import type { Store, VectorState } from '../store/store.js'
import { embeddingText, SEARCH_DOC_VERSION, searchDocument, textQuery } from './document.js'
import { importJsonl } from './jsonl.js'
import { fuse, fuseScores, qualityRerank } from './rank.js'

/** Rewrites an entry's content from feedback (the LLM evolve step); absent until an LLM is configured. */
export type EvolveFn = (entry: KnowledgeEntry, feedback: string) => Promise<string>

export interface KnowledgeServiceDeps {
  store: Store
  embedder: Embedder
  logger?: Logger
  clock?: Clock
  /** Largest content in UTF-8 bytes (default 1 MiB). */
  maxContentBytes?: number
  evolve?: EvolveFn
  /** How the full-text and vector lists are fused (default {@link DEFAULT_FUSION}). */
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
}

/** Responses larger than this (content characters) are not cached. */
const MAX_CACHED_RESPONSE_CHARS = 256 * 1024

/**
 * Fusion of the full-text and vector lists: `score` (min-max normalised scores,
 * weighted and summed) or `rrf` (reciprocal rank, `weight / (k + rank)`).
 */
export interface FusionOptions {
  method: 'score' | 'rrf'
  fulltext: number
  vector: number
  /** The rank offset of `rrf` (default 60). */
  k?: number
}

/**
 * Score fusion with the vector list at half the weight of BM25: see docs/retrieval.md
 * for the measurements behind it (score fusion beat rank fusion on every set).
 */
export const DEFAULT_FUSION: FusionOptions = { method: 'score', fulltext: 1, vector: 0.5 }

/** Candidate list depths of a hybrid search. */
export interface SearchDepth {
  fulltext: number
  vector: number
}

/** Candidate list depths: see docs/retrieval.md for the measurements behind them. */
export const DEFAULT_SEARCH_DEPTH: SearchDepth = { fulltext: 50, vector: 50 }

export interface ListPage {
  items: KnowledgeEntry[]
  next_cursor: string | null
}

export interface BatchFeedbackResult {
  updated: number
  results: Array<{ knowledge_id: string; ok: boolean; error?: { code: string; message: string } }>
}

export interface ImportOptions {
  /** `atomic` (default): any bad line imports nothing. `partial`: good lines are imported, bad ones reported. */
  mode?: 'atomic' | 'partial'
  /** What to do with an id that exists already: `error` (default, counts as a bad line), `skip` or `replace`. */
  onConflict?: 'error' | 'skip' | 'replace'
  onProgress?: (done: number, total: number) => void
  batchSize?: number
}

export interface ImportReport {
  imported: number
  skipped: number
  errors: Array<{ line: number; code: string; message: string }>
}

const NOT_FOUND = (id: string) => new KnowHubError('not_found', `No knowledge entry ${id}`, { id })

function listCursor(record: KnowledgeRecord): string {
  return encodeCursor([record.created_at.toISOString(), record.id])
}

function listPosition(cursor: string): { created_at: Date; id: string } {
  return decodeCursor(cursor, ([at, id]) => {
    const created = new Date(String(at))
    return typeof id !== 'string' || Number.isNaN(created.getTime()) ? undefined : { created_at: created, id }
  })
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * Creates the knowledge service and prepares the vector index for the embedder.
 * @example
 * const knowledge = await createKnowledgeService({ store, embedder })
 * const entry = await knowledge.save({ task: 'Log in to site A', content: 'Use the test account…', types: ['tool'] }, principal)
 */
export async function createKnowledgeService(deps: KnowledgeServiceDeps) {
  const { store, embedder } = deps
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ?? systemClock
  const maxContentBytes = deps.maxContentBytes ?? MAX_CONTENT_BYTES
  const fusion = deps.fusion ?? DEFAULT_FUSION
  const textRanking = deps.textRanking ?? DEFAULT_TEXT_RANKING
  const searchDepth = deps.searchDepth ?? DEFAULT_SEARCH_DEPTH
  let vectorState: VectorState = await store.prepareVectors(embedder)
  if (vectorState.status === 'mismatch') {
    logger.warn('knowledge.embedder.mismatch', { stored: vectorState.stored, wanted: vectorState.wanted })
  }
  await refreshSearchDocs()

  /** Rebuilds stored full-text documents written in an older format (once, at start-up). */
  async function refreshSearchDocs(): Promise<void> {
    const version = await store.knowledge.searchDocVersion()
    if (version === SEARCH_DOC_VERSION) return
    let done = 0
    let after = ''
    for (;;) {
      const rows = await store.knowledge.scan(after, 500)
      if (rows.length === 0) break
      await store.knowledge.setSearchDocs(rows.map((r) => ({ id: r.id, doc: searchDocument(r.task, r.content, r.tags) })))
      done += rows.length
      after = rows[rows.length - 1]!.id
    }
    await store.knowledge.setSearchDocVersion(SEARCH_DOC_VERSION)
    if (done > 0) logger.info('knowledge.fulltext.rebuilt', { count: done, from: version ?? 1, to: SEARCH_DOC_VERSION })
  }

  // PGlite runs no autovacuum: refresh planner statistics after bulk changes, so that
  // the planner keeps choosing the HNSW and GIN indexes as the table grows.
  let writesSinceAnalyze = 0
  async function noteWrites(count: number): Promise<void> {
    writesSinceAnalyze += count
    if (writesSinceAnalyze < 1000 && count < 100) return
    writesSinceAnalyze = 0
    await store.knowledge.analyze()
  }

  function requireVectors(): void {
    if (vectorState.status === 'mismatch') {
      const { stored, wanted } = vectorState
      throw new KnowHubError(
        'embedder_mismatch',
        `The knowledge base was indexed with ${stored.model} (${stored.dimension} dimensions) but the configured embedder is ${wanted.model} (${wanted.dimension}). Run \`knowhub reindex\` to re-embed every entry, or configure the previous embedder.`,
        { stored, wanted },
      )
    }
  }

  // Search responses by caller and parameters, least recently used first, each valid for one
  // generation of the table.
  const searchCacheSize = deps.searchCacheSize ?? 1000
  const searchCache = createLru<string, { generation: number; response: SearchResponse }>(searchCacheSize)

  // Query vectors by query text. Pending embeddings are shared, so concurrent identical
  // queries embed once.
  const queryCacheSize = deps.queryCacheSize ?? 1000
  const queryVectors = createLru<string, Promise<Float32Array>>(queryCacheSize)
  function embedQuery(q: string): Promise<Float32Array> {
    if (queryCacheSize <= 0) return embedOne(q)
    let vector = queryVectors.get(q)
    if (!vector) {
      vector = embedOne(q)
      vector.catch(() => queryVectors.delete(q))
      queryVectors.set(q, vector)
    }
    return vector
  }

  async function embedOne(text: string): Promise<Float32Array> {
    const [vector] = await embedder.embed([text])
    if (!vector || vector.length !== embedder.dimension) {
      throw new KnowHubError('embedder_failed', `The embedder returned ${vector?.length ?? 0} numbers, expected ${embedder.dimension}`)
    }
    return vector
  }

  function checkContentSize(content: string): void {
    const bytes = byteLength(content)
    if (bytes > maxContentBytes) {
      throw new KnowHubError('too_large', `Content is ${bytes} bytes; the limit is ${maxContentBytes}`, { bytes, limit: maxContentBytes })
    }
  }

  async function toEntries(records: KnowledgeRecord[]): Promise<KnowledgeEntry[]> {
    const histories = await store.knowledge.histories(records.map((r) => r.id))
    return records.map((r) => {
      const history = histories.get(r.id) ?? { helpful: [], harmful: [] }
      return {
        id: r.id,
        message_id: r.message_id,
        types: r.types,
        task: r.task,
        tags: r.tags,
        scopes: r.scopes,
        owner: r.owner,
        content: r.content,
        resource_ids: r.resource_ids,
        source: r.source,
        eval: {
          score: r.score,
          helpful: r.helpful,
          harmful: r.harmful,
          confidence: r.confidence,
          helpful_history: history.helpful,
          harmful_history: history.harmful,
        },
        status: r.status,
        merged_into: r.merged_into,
        version: r.version,
        created_at: r.created_at.toISOString(),
        updated_at: r.updated_at.toISOString(),
      }
    })
  }

  async function toEntry(record: KnowledgeRecord): Promise<KnowledgeEntry> {
    const [entry] = await toEntries([record])
    return entry!
  }

  function defaultOwner(principal: Principal, agentId: string | undefined): string {
    if (agentId && principal.agent === agentId) return `agent:${agentId}`
    const owner = defaultOwnerOf(principal)
    if (!owner) throw new KnowHubError('forbidden', 'The caller has no user or agent id to own the entry')
    return owner
  }

  async function requireVisible(id: string, principal: Principal): Promise<KnowledgeRecord> {
    parseWith(KnowledgeId, id, 'knowledge id')
    const record = await store.knowledge.get(id, visibleScopes(principal))
    if (!record) throw NOT_FOUND(id)
    return record
  }

  async function requireManaged(id: string, principal: Principal): Promise<KnowledgeRecord> {
    const record = await requireVisible(id, principal)
    if (!canManage(principal, record.owner)) {
      throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may change entry ${id}`, { id, owner: record.owner })
    }
    return record
  }

  /** One search, uncached (see `search`). */
  async function runSearch(input: ReturnType<typeof SearchInput.parse>, visible: string[]): Promise<SearchResponse> {
    const filter = { visible, types: input.types, minScore: input.min_score, nonNegativeQuality: true }
    const textDepth = Math.max(searchDepth.fulltext, input.top_k * 4)
    const vectorDepth = Math.max(searchDepth.vector, input.top_k * 4)
    const useText = input.mode !== 'vector'
    const useVector = input.mode !== 'fulltext'
    const [textHits, vectorHits] = await Promise.all([
      useText ? store.knowledge.searchText(textQuery(input.q), filter, textDepth, textRanking) : Promise.resolve([]),
      useVector ? embedQuery(input.q).then((v) => store.knowledge.searchVector(v, filter, vectorDepth)) : Promise.resolve([]),
    ])
    // A full-text list shorter than the depth holds every match: anything else scores 0.
    const lists = [
      { ids: textHits, weight: fusion.fulltext, ...(textHits.length < textDepth ? { floor: 0 } : {}) },
      { ids: vectorHits, weight: fusion.vector },
    ]
    // A candidate that shares no search term with the query must be similar enough on its own.
    const minSimilarity = deps.minSimilarity ?? embedder.similarityFloor?.(input.q) ?? -Infinity
    const fused = (fusion.method === 'rrf' ? fuse(lists, fusion.k ?? 60) : fuseScores(lists)).filter(
      (c) => c.positions[0] !== null || (c.positions[1]?.score ?? -Infinity) >= minSimilarity,
    )
    const candidates = fused.slice(0, input.rerank ? input.top_k * 2 : input.top_k)
    const records = new Map(
      (
        await store.knowledge.getMany(
          candidates.map((c) => c.id),
          visible,
        )
      ).map((r) => [r.id, r]),
    )
    const items = candidates.flatMap((c) => {
      const r = records.get(c.id)
      return r ? [{ ...r, fused: c.fused, positions: c.positions }] : []
    })
    const ranked = input.rerank
      ? qualityRerank(items, visible, input.min_score)
      : qualityRerank(items, visible, input.min_score).sort((a, b) => b.fused - a.fused)
    const results: SearchResult[] = ranked.slice(0, input.top_k).map((r) => {
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
      if (input.explain) {
        const [text, vector] = r.positions
        result.explain = {
          fulltext_rank: text?.rank ?? null,
          fulltext_score: text?.score ?? null,
          vector_rank: vector?.rank ?? null,
          vector_similarity: vector?.score ?? null,
          fused: r.fused,
          scope_priority: r.scope_priority,
        }
      }
      return result
    })
    return { results, count: results.length }
  }

  const service = {
    /** The vector index state (ready, or a mismatch that `reindex` fixes). */
    vectorState: () => vectorState,

    /**
     * Prepares search ahead of the first request: builds the embedded store's in-memory
     * full-text index (a no-op when search runs in SQL). Long-running entry points call it at start.
     */
    async warmUp(): Promise<void> {
      const started = performance.now()
      await store.knowledge.searchGeneration()
      logger.info('knowledge.search.ready', { ms: Math.round(performance.now() - started) })
    },

    /** Saves a new entry. Scopes default to the caller's own user (or first) scope; owner to the caller. */
    async save(raw: unknown, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'write')
      const input = parseWith(SaveKnowledgeInput, raw, 'knowledge entry')
      checkContentSize(input.content)
      requireVectors()
      const scopes = input.scopes ?? defaultWriteScopes(principal)
      if (scopes.length === 0) throw new KnowHubError('forbidden', 'The caller belongs to no scope it could write to')
      assertWritableScopes(principal, scopes)
      const owner = input.owner ?? defaultOwner(principal, input.source.agent_id)
      if (!canManage(principal, owner)) {
        throw foreignOwnerError(principal, owner, 'entries')
      }
      const now = clock.now()
      const source = Source.parse({
        ...input.source,
        timestamp: input.source.timestamp ?? now.toISOString(),
        message_id: input.source.message_id ?? input.message_id,
      })
      const base = {
        message_id: input.message_id,
        types: input.types,
        task: input.task,
        tags: input.tags,
        scopes: [...new Set(scopes)],
        owner,
        content: input.content,
        resource_ids: [...new Set(input.resource_ids)],
        source,
        score: input.score,
        helpful: 0,
        harmful: 0,
        confidence: input.confidence,
        status: 'active' as const,
        merged_into: null,
        version: 1,
        created_at: now,
        updated_at: now,
      }
      const doc = searchDocument(base.task, base.content, base.tags)
      const embedding = await embedOne(embeddingText(base.task, base.content))
      for (let attempt = 0; attempt < 8; attempt++) {
        const record: KnowledgeRecord = { id: newKnowledgeId(now), ...base }
        if (await store.knowledge.insert(record, doc, embedding)) {
          logger.info('knowledge.saved', { id: record.id, types: record.types, scopes: record.scopes })
          await noteWrites(1)
          return toEntry(record)
        }
      }
      throw new KnowHubError('conflict', 'Could not allocate a unique knowledge id; try again')
    },

    /** One entry with its feedback histories, if the caller can see it. */
    async get(id: string, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'read')
      return toEntry(await requireVisible(id, principal))
    },

    /** Previous versions of an entry, oldest first. */
    async versions(id: string, principal: Principal): Promise<KnowledgeVersion[]> {
      requirePermission(principal, 'read')
      await requireVisible(id, principal)
      return store.knowledge.versions(id)
    },

    /** Newest first, with cursor pagination. */
    async list(raw: unknown, principal: Principal): Promise<ListPage> {
      requirePermission(principal, 'read')
      const input = parseWith(ListInput, raw ?? {}, 'list options')
      const after = input.cursor ? listPosition(input.cursor) : undefined
      const records = await store.knowledge.list(
        { visible: visibleScopes(principal), types: input.types, scopes: input.scopes, status: input.status },
        input.limit + 1,
        after,
      )
      const page = records.slice(0, input.limit)
      const last = page[page.length - 1]
      return { items: await toEntries(page), next_cursor: records.length > input.limit && last ? listCursor(last) : null }
    },

    /** Edits task, content, types, tags, scopes or resources (owner or admin). The previous version is kept. */
    async edit(id: string, raw: unknown, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'write')
      const input = parseWith(EditKnowledgeInput, raw, 'edit')
      const record = await requireManaged(id, principal)
      if (input.content !== undefined) checkContentSize(input.content)
      if (input.scopes) assertWritableScopes(principal, input.scopes)
      requireVectors()
      const change = {
        task: input.task ?? record.task,
        content: input.content ?? record.content,
        types: input.types ?? record.types,
        tags: input.tags ?? record.tags,
        scopes: input.scopes ? [...new Set(input.scopes)] : record.scopes,
        resource_ids: input.resource_ids ?? record.resource_ids,
      }
      const textChanged = change.task !== record.task || change.content !== record.content
      const embedding = textChanged ? await embedOne(embeddingText(change.task, change.content)) : undefined
      const updated = await store.knowledge.update(
        id,
        visibleScopes(principal),
        record.version,
        change,
        searchDocument(change.task, change.content, change.tags),
        embedding,
        input.reason ?? 'edit',
        clock.now(),
      )
      if (!updated) throw new KnowHubError('conflict', `Entry ${id} changed while it was being edited; read it again and retry`, { id })
      logger.info('knowledge.edited', { id, version: updated.version })
      return toEntry(updated)
    },

    /**
     * Feedback (seed 003 `PUT /api/knowledge/{id}`): a helpful and/or harmful case, a new score,
     * and/or evolve feedback (needs an LLM). Anyone who can see the entry may give feedback.
     */
    async feedback(id: string, raw: unknown, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'read')
      const input = parseWith(FeedbackInput, raw, 'feedback')
      const visible = visibleScopes(principal)
      let record = await requireVisible(id, principal)
      if (input.evolve_feedback !== undefined && !deps.evolve) {
        throw new KnowHubError('llm_not_configured', 'evolve_feedback needs an LLM and none is configured (set KNOWHUB_LLM_URL and KNOWHUB_LLM_MODEL)')
      }
      const now = clock.now()
      const recorded = (c: Record<string, unknown>): FeedbackRecord => ({ ...c, timestamp: typeof c.timestamp === 'string' ? c.timestamp : now.toISOString() })
      if (input.add_helpful_case) record = (await store.knowledge.addFeedback(id, visible, 'helpful', recorded(input.add_helpful_case), now)) ?? record
      if (input.add_harmful_case) record = (await store.knowledge.addFeedback(id, visible, 'harmful', recorded(input.add_harmful_case), now)) ?? record
      if (input.update_score !== undefined) record = (await store.knowledge.setScore(id, visible, input.update_score, now)) ?? record
      if (input.evolve_feedback !== undefined && deps.evolve) {
        const current = await toEntry(record)
        const content = await deps.evolve(current, input.evolve_feedback)
        checkContentSize(content)
        const change = { task: record.task, content, types: record.types, tags: record.tags, scopes: record.scopes, resource_ids: record.resource_ids }
        const updated = await store.knowledge.update(
          id,
          visible,
          record.version,
          change,
          searchDocument(change.task, content, change.tags),
          await embedOne(embeddingText(change.task, content)),
          `evolve: ${input.evolve_feedback.slice(0, 500)}`,
          now,
        )
        if (!updated) throw new KnowHubError('conflict', `Entry ${id} changed while it was being evolved; retry`, { id })
        record = updated
      }
      return toEntry(record)
    },

    /** Seed 003 `POST /api/knowledge/batch_update`: one helpful/harmful case per item. Items fail independently. */
    async batchFeedback(raw: unknown, principal: Principal): Promise<BatchFeedbackResult> {
      requirePermission(principal, 'read')
      const input = parseWith(BatchFeedbackInput, raw, 'batch feedback')
      const results: BatchFeedbackResult['results'] = []
      for (const item of input.feedback_list) {
        try {
          await service.feedback(item.knowledge_id, item.is_helpful ? { add_helpful_case: item.case } : { add_harmful_case: item.case }, principal)
          results.push({ knowledge_id: item.knowledge_id, ok: true })
        } catch (error) {
          const e = error as KnowHubError
          results.push({ knowledge_id: item.knowledge_id, ok: false, error: { code: e.code ?? 'internal_error', message: e.message } })
        }
      }
      return { updated: results.filter((r) => r.ok).length, results }
    },

    /** Archives an entry (owner or admin): hidden from search and list, kept in full. */
    async archive(id: string, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'write')
      await requireManaged(id, principal)
      const record = await store.knowledge.setStatus(id, visibleScopes(principal), 'archived', null, clock.now())
      if (!record) throw NOT_FOUND(id)
      return toEntry(record)
    },

    /** Makes an archived or merged entry active again (owner or admin). */
    async restore(id: string, principal: Principal): Promise<KnowledgeEntry> {
      requirePermission(principal, 'write')
      await requireManaged(id, principal)
      const record = await store.knowledge.setStatus(id, visibleScopes(principal), 'active', null, clock.now())
      if (!record) throw NOT_FOUND(id)
      return toEntry(record)
    },

    /** Deletes an entry and its history for good (owner or admin). */
    async delete(id: string, principal: Principal): Promise<void> {
      requirePermission(principal, 'write')
      await requireManaged(id, principal)
      if (!(await store.knowledge.delete(id, visibleScopes(principal)))) throw NOT_FOUND(id)
      logger.info('knowledge.deleted', { id })
    },

    /**
     * Hybrid search (seed 003, DESIGN.md): full-text (BM25 over stemmed words and CJK
     * words/bigrams) and vector candidates over visible entries, fused (by normalised
     * score by default); the best 2×top_k are reranked by quality score, then scope
     * priority, then relevance. Responses are cached while the table is unchanged
     * (see `searchCacheSize`).
     */
    async search(raw: unknown, principal: Principal): Promise<SearchResponse> {
      requirePermission(principal, 'read')
      const input = parseWith(SearchInput, raw, 'search')
      const visible = visibleScopes(principal)
      if (input.mode !== 'fulltext') requireVectors()
      const generation = searchCacheSize > 0 ? await store.knowledge.searchGeneration() : undefined
      if (generation === undefined) return runSearch(input, visible)
      const key = JSON.stringify([
        [...visible].sort(),
        input.q,
        input.top_k,
        input.min_score,
        [...(input.types ?? [])].sort(),
        input.mode,
        input.rerank,
        input.explain,
      ])
      const cached = searchCache.get(key)
      if (cached?.generation === generation) return structuredClone(cached.response)
      if (cached) searchCache.delete(key)
      const response = await runSearch(input, visible)
      const size = response.results.reduce((sum, r) => sum + r.content.length + r.task.length, 0)
      if (size <= MAX_CACHED_RESPONSE_CHARS) searchCache.set(key, { generation, response: structuredClone(response) })
      return response
    },

    /** Every visible entry (any status) with histories and versions, one JSON object per line. */
    async *exportJsonl(principal: Principal, options: { batchSize?: number } = {}): AsyncGenerator<string> {
      requirePermission(principal, 'read')
      const visible = visibleScopes(principal)
      const batchSize = options.batchSize ?? 500
      let after: { created_at: Date; id: string } | undefined
      for (;;) {
        const records = await store.knowledge.list({ visible, status: ['active', 'merged', 'archived'] }, batchSize, after)
        if (records.length === 0) return
        for (const entry of await toEntries(records)) {
          yield JSON.stringify({ ...entry, versions: await store.knowledge.versions(entry.id) })
        }
        const last = records[records.length - 1]!
        after = { created_at: last.created_at, id: last.id }
      }
    },

    /**
     * Imports JSONL written by `exportJsonl` (lossless round trip). Every line is checked
     * first; in `atomic` mode (default) one bad line imports nothing, in `partial` mode the
     * good lines are imported. Bad lines are reported by line number.
     */
    async importJsonl(lines: AsyncIterable<string> | Iterable<string>, principal: Principal, options: ImportOptions = {}): Promise<ImportReport> {
      requireVectors()
      const report = await importJsonl({ store, embedder, principal, maxContentBytes, logger }, lines, options)
      await noteWrites(report.imported)
      return report
    },

    /**
     * Re-embeds every entry with the configured embedder (after changing it), in batches.
     * @returns the number of entries re-embedded.
     */
    async reindex(options: { onProgress?: (done: number, total: number) => void; batchSize?: number } = {}): Promise<number> {
      vectorState = await store.prepareVectors(embedder, { rebuild: true })
      const total = await store.knowledge.count()
      const batchSize = options.batchSize ?? 64
      let done = 0
      let after = ''
      options.onProgress?.(0, total)
      await store.bulkLoad(async () => {
        for (;;) {
          const rows = await store.knowledge.scan(after, batchSize)
          if (rows.length === 0) break
          const vectors = await embedder.embed(rows.map((r) => embeddingText(r.task, r.content)))
          await store.knowledge.setEmbeddings(rows.map((r, i) => ({ id: r.id, embedding: vectors[i]! })))
          done += rows.length
          after = rows[rows.length - 1]!.id
          options.onProgress?.(done, total)
        }
      })
      await store.knowledge.analyze()
      logger.info('knowledge.reindexed', { count: done, model: embedder.model })
      return done
    },
  }
  return service
}

export type KnowledgeService = Awaited<ReturnType<typeof createKnowledgeService>>
