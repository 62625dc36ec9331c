/**
 * Turns texts into vectors. Every provider returns L2-normalised vectors of
 * exactly `dimension` numbers, so cosine similarity is a dot product.
 * @example
 * const [v] = await embedder.embed(['how to log in with selenium'])
 */
export interface Embedder {
  /** Stable name stored with the vectors, e.g. `hashed-ngram-v1` or `openai:text-embedding-3-small`. */
  readonly model: string
  readonly dimension: number
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>
  close?(): Promise<void>
}
