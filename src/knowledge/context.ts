/**
 * What every part of the knowledge service shares: its dependencies, the vector-index
 * gate (an embedder change blocks vector work until `reindex`), embedding one text, the
 * content-size limit, and the periodic planner-statistics refresh after writes.
 */
import type { Clock } from '../core/clock.js'
import type { EmbedKind } from '../core/embed-convention.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import type { LlmProvider } from '../llm/index.js'
import type { GroundingOptions } from './grounding.js'
import type { Store, VectorState } from '../store/store.js'

/** The dependencies and shared helpers the parts of the knowledge service are built on. */
export interface KnowledgeContext {
  readonly store: Store
  readonly embedder: Embedder
  readonly logger: Logger
  readonly clock: Clock
  /** Largest content in UTF-8 bytes. */
  readonly maxContentBytes: number
  /** The chat model of evolve and extraction; undefined until one is configured (`llm_not_configured`). */
  readonly llm: LlmProvider | undefined
  /** How an evolved content is judged against the old content and the feedback (src/knowledge/grounding.ts). */
  readonly grounding: GroundingOptions
  /** The vector index state against the embedder (a mismatch until `reindex`). */
  vectorState(): VectorState
  /** Re-reads (or, with `rebuild`, recreates) the vector index for the embedder. */
  prepareVectors(rebuild: boolean): Promise<VectorState>
  /** Throws `embedder_mismatch` while the stored vectors belong to another embedder. */
  requireVectors(): void
  /** One text's vector as a query or a document (the model's convention), checked against the embedder's dimension. */
  embedOne(text: string, kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array>
  /** Throws `too_large` beyond `maxContentBytes`. */
  checkContentSize(content: string): void
  /** Counts writes and refreshes planner statistics after enough of them (PGlite runs no autovacuum). */
  noteWrites(count: number): Promise<void>
}

/**
 * Builds the shared context and prepares the vector index for the embedder.
 * @example
 * const ctx = await createKnowledgeContext({ store, embedder, logger, clock, maxContentBytes: 1_048_576 })
 */
export async function createKnowledgeContext(deps: {
  store: Store
  embedder: Embedder
  logger: Logger
  clock: Clock
  maxContentBytes: number
  llm?: LlmProvider | undefined
  grounding?: GroundingOptions | undefined
}): Promise<KnowledgeContext> {
  const { store, embedder, logger } = deps
  let state: VectorState = await store.prepareVectors(embedder)
  if (state.status === 'mismatch') logger.warn('knowledge.embedder.mismatch', { stored: state.stored, wanted: state.wanted })
  let writesSinceAnalyze = 0

  return {
    store,
    embedder,
    logger,
    clock: deps.clock,
    maxContentBytes: deps.maxContentBytes,
    llm: deps.llm,
    grounding: deps.grounding ?? {},
    vectorState: () => state,
    async prepareVectors(rebuild) {
      state = await store.prepareVectors(embedder, { rebuild })
      return state
    },
    requireVectors() {
      if (state.status !== 'mismatch') return
      const { stored, wanted } = state
      throw new KnowHubError(
        'embedder_mismatch',
        `The knowledge base was indexed with ${stored.model} (${stored.dimension} dimensions) but the configured embedder is ${wanted.model} (${wanted.dimension}). Run \`knowhub reindex\` to re-embed every entry, or configure the previous embedder.`,
        { stored, wanted },
      )
    },
    async embedOne(text, kind, signal) {
      const [vector] = await embedder.embed([text], { kind, signal })
      if (!vector || vector.length !== embedder.dimension) {
        throw new KnowHubError('embedder_failed', `The embedder returned ${vector?.length ?? 0} numbers, expected ${embedder.dimension}`)
      }
      return vector
    },
    checkContentSize(content) {
      const bytes = Buffer.byteLength(content, 'utf8')
      if (bytes > deps.maxContentBytes) {
        throw new KnowHubError('too_large', `Content is ${bytes} bytes; the limit is ${deps.maxContentBytes}`, { bytes, limit: deps.maxContentBytes })
      }
    },
    // PGlite runs no autovacuum: refresh planner statistics after bulk changes, so that
    // the planner keeps choosing the HNSW and GIN indexes as the table grows.
    async noteWrites(count) {
      writesSinceAnalyze += count
      if (writesSinceAnalyze < 1000 && count < 100) return
      writesSinceAnalyze = 0
      await store.knowledge.analyze()
    },
  }
}
