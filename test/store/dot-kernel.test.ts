/**
 * The vector scan's WebAssembly SIMD kernel: its bytes are `dots.wat` assembled, it runs on this
 * runtime, and the similarities it gives are bitwise those of the same sums in JavaScript, and
 * within rounding of a plain cosine.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import wabtInit from 'wabt'
import { describe, expect, it } from 'vitest'
import { DOT_KERNEL_BYTES } from '../../src/store/text-index/dot-kernel.js'
import { VectorColumns } from '../../src/store/text-index/vectors.js'

/** A seeded generator (mulberry32), so that a failure repeats. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A vector with `nonZero` of its numbers set (a hashed query is sparse; an entry's is denser). */
function sparse(next: () => number, dimension: number, nonZero: number): Float32Array {
  const v = new Float32Array(dimension)
  for (let i = 0; i < nonZero; i++) v[Math.floor(next() * dimension)] = next() * 2 - 1
  return v
}

const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? NaN : Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)))
}

describe('the dot-product kernel', () => {
  it('is dots.wat assembled', async () => {
    const wabt = await wabtInit()
    const source = fileURLToPath(new URL('../../src/store/text-index/dots.wat', import.meta.url))
    const module = wabt.parseWat('dots.wat', readFileSync(source, 'utf8'), { simd: true })
    module.validate()
    expect(Buffer.from(module.toBinary({}).buffer).equals(Buffer.from(DOT_KERNEL_BYTES))).toBe(true)
    module.destroy()
  })

  it('runs here, and gives bitwise the similarities of the JavaScript sums, across blocks, odd counts, removals and a new dimension', () => {
    const next = random(7)
    const simd = new VectorColumns()
    const plain = new VectorColumns({ simd: false })
    expect(simd.usesSimd).toBe(true)
    expect(plain.usesSimd).toBe(false)
    for (const dimension of [96, 24]) {
      // 4,501 slots: three blocks of 2,048, the last one partly used, an odd number of slots in it.
      const slots = 4501
      const stored: Array<Float32Array | undefined> = []
      for (let slot = 0; slot < slots; slot++) {
        const vector = slot % 97 === 5 ? undefined : sparse(next, dimension, dimension / 2)
        stored.push(vector)
        simd.set(slot, vector, slots)
        plain.set(slot, vector, slots)
      }
      for (const slot of [0, 2047, 2048, 4500]) {
        simd.remove(slot)
        plain.remove(slot)
        stored[slot] = undefined
      }
      // 1 to 9 non-zero numbers: every remainder of the groups of four, and none at all.
      for (const nonZero of [1, 2, 3, 4, 5, 6, 7, 9, 40]) {
        const query = sparse(next, dimension, nonZero)
        for (const count of [slots, 2049, 7]) {
          const a = Float64Array.from(simd.similarities(query, count)!)
          const b = Float64Array.from(plain.similarities(query, count)!)
          expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true)
          for (const slot of [0, 1, 6, 2047, 2048, 2049, 4499, 4500].filter((s) => s < count)) {
            const want = stored[slot] ? cosine(stored[slot], query) : NaN
            if (Number.isNaN(want)) expect(a[slot]).toBeNaN()
            else expect(Math.abs(a[slot]! - want)).toBeLessThan(1e-12)
          }
        }
      }
    }
  })
})
