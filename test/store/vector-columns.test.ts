/** The vector columns across several blocks of slots: the same cosines as a direct computation. */
import { describe, expect, it } from 'vitest'
import { VectorColumns } from '../../src/store/text-index/vectors.js'

describe('VectorColumns over several blocks', () => {
  it('answers each slot the cosine of its own vector, NaN for none, after removals and past the last block', () => {
    let seed = 11
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const dimension = 24
    const vectors = new VectorColumns()
    const stored = new Map<number, Float32Array>()
    const slots = 5_000
    for (let slot = 0; slot < slots; slot++) {
      if (random() < 0.1) continue
      const vector = Float32Array.from({ length: dimension }, () => (random() < 0.5 ? random() * 2 - 1 : 0))
      vectors.set(slot, vector, 8_192)
      stored.set(slot, vector)
    }
    for (const slot of [0, 2047, 2048, 4095, 4999]) {
      vectors.remove(slot)
      stored.delete(slot)
    }
    const query = Float32Array.from({ length: dimension }, () => random() * 2 - 1)
    const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
    // 6000 slots asked for: those past the stored ones have no vector.
    const similarities = vectors.similarities(query, 6_000)!
    for (let slot = 0; slot < 6_000; slot++) {
      const vector = stored.get(slot)
      if (!vector || norm(vector) === 0) {
        expect(similarities[slot]).toBeNaN()
        continue
      }
      const dot = vector.reduce((s, x, i) => s + x * query[i]!, 0)
      expect(similarities[slot]).toBeCloseTo(dot / (norm(vector) * norm(query)), 10)
    }
  })
})
