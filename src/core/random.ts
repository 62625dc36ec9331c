/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence,
 * so evaluations, benchmarks and randomised tests can be replayed from the seed they print.
 * Not for anything secret (ids and keys use node:crypto).
 */

/**
 * Numbers in [0, 1) from a 32-bit seed.
 * @example
 * const random = seededRandom(20261123)
 * const pick = items[Math.floor(random() * items.length)]
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
