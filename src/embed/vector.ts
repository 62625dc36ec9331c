/**
 * Small vector helpers shared by the embedding providers.
 */
import { KnowHubError } from '../core/errors.js'

/**
 * Cosine similarity of two vectors of the same length; 0 when either is the zero vector.
 * For the L2-normalised vectors every embedder returns, this is their dot product.
 * @example
 * const [a, b] = await embedder.embed(['running shoes', 'shoes for running'])
 * cosine(a!, b!) // close to 1 for similar texts
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new KnowHubError('validation_error', `Cannot compare vectors of ${a.length} and ${b.length} dimensions`, {
      dimensions: [a.length, b.length],
    })
  }
  let dot = 0
  let normA = 0
  let normB = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    dot += x * y
    normA += x * x
    normB += y * y
  }
  if (normA === 0 || normB === 0) return 0
  return dot / Math.sqrt(normA * normB)
}

/**
 * Copies `values` into a new L2-normalised Float32Array. The zero vector stays
 * zero (never NaN).
 * @example
 * l2normalize([3, 4]) // Float32Array [0.6, 0.8]
 */
export function l2normalize(values: ArrayLike<number>): Float32Array {
  let norm = 0
  for (let i = 0; i < values.length; i++) norm += values[i]! * values[i]!
  const vector = new Float32Array(values.length)
  if (norm === 0) return vector
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < values.length; i++) vector[i] = values[i]! * scale
  return vector
}
