import type { EmbedConvention, EmbedKind } from '../core/embed-convention.js'
import type { EmbedPoolStats } from './use-pool.js'

/** How {@link Embedder.embed} is asked: what the texts are (a query or documents), and an abort signal. */
export interface EmbedOptions {
  /**
   * `query` for a search's text (one a search, goal focus, the agent context's task), `document`
   * for what is stored and searched (entries, pack sections). Asymmetric models embed them by
   * their own convention ({@link Embedder.convention}); the offline embedders alike.
   */
  kind: EmbedKind
  signal?: AbortSignal | undefined
}

/**
 * Turns texts into vectors. Every provider returns L2-normalised vectors of
 * exactly `dimension` numbers, so cosine similarity is a dot product.
 * Queries and documents are told apart ({@link EmbedOptions.kind}): most open retrieval models
 * embed them differently (docs/embeddings.md, "Queries and documents").
 * @example
 * const [v] = await embedder.embed(['how to log in with selenium'], { kind: 'query' })
 */
export interface Embedder {
  /**
   * Stable name stored with the vectors, e.g. `hashed-ngram-v1` or `openai:text-embedding-3-small`;
   * with the query/document convention after a `#` when it has one (`openai:multilingual-e5-small-q4#e5-input-type`),
   * so that the store's `embedder_mismatch` check and the vector caches include it.
   */
  readonly model: string
  readonly dimension: number
  /**
   * How the model tells a query from a document (src/core/embed-convention.ts), and where that came
   * from: the config, the table of known models, or neither (an unknown model, embedded alike).
   * Absent: an offline embedder, which embeds both alike by design.
   */
  readonly convention?: { readonly applied: EmbedConvention; readonly source: 'config' | 'table' | 'unknown' }
  /**
   * The cosine similarity to `query` below which an entry is unrelated to it, as measured
   * for the offline embedders (docs/embeddings.md). Search drops candidates that only the
   * vectors found (no shared search term) when they are less similar than this, so that a
   * query about nothing stored finds nothing. Undefined: no floor (an uncalibrated model,
   * or text the vectors cannot judge alone, such as Chinese for n-gram vectors).
   */
  similarityFloor?(query: string): number | undefined
  /**
   * The cosine similarity at which an entry that shares **no search term** with `query` can on
   * its own show that the query has an answer (the relevance gate's anchor, in hybrid search);
   * an entry the full-text list also found needs only the {@link similarityFloor}. Semantic
   * models give unrelated questions a similarity above their floor to some short entries of a
   * large store: this floor sits above what questions about absent topics reach
   * (docs/retrieval-log.md, "A lone vector anchor"). Undefined: the similarity floor.
   */
  anchorFloor?(query: string): number | undefined
  embed(texts: readonly string[], options: EmbedOptions): Promise<Float32Array[]>
  /**
   * Loads what the first `embed` would (a model), ahead of it; absent when there is nothing to
   * load. `texts`: what is about to be embedded, when known: a model none of them needs is not
   * loaded (the sentence embedder compares Chinese text by its hashed part alone).
   */
  warmUp?(texts?: readonly string[]): Promise<void>
  /**
   * False while `embed` would wait for a model that has not finished loading (the sentence
   * embedder's USE lite, in its thread); true once it would not. Absent: never waits for a
   * model (nothing to load, or a remote service). A server may answer searches full-text-only
   * meanwhile (`search.whileModelLoads`).
   */
  ready?(): boolean
  /**
   * The model threads' state (the sentence embedder's pool: threads, texts each embedded, batches
   * waiting); undefined before its threads start. Absent: no threads of its own.
   */
  poolStats?(): EmbedPoolStats | undefined
  close?(): Promise<void>
}
