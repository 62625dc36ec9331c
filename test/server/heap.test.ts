/** compactHeap: one compacting collection, without --expose-gc, that frees the pages garbage grew. */
import { describe, expect, it } from 'vitest'
import { compactHeap } from '../../src/server/heap.js'

describe('compactHeap', () => {
  it('gives back the heap that dropped garbage held, and leaves gc() unexposed', () => {
    let garbage: unknown[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({ i, text: `entry ${i}` }))
    expect(garbage.length).toBe(300_000)
    garbage = undefined
    const { before, after, ms } = compactHeap()
    expect(after).toBeLessThan(before)
    expect(ms).toBeGreaterThanOrEqual(0)
    // A second call reuses the collector it fetched.
    expect(compactHeap().after).toBeGreaterThan(0)
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
  })
})
