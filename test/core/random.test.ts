import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../src/core/random.js'

describe('seededRandom', () => {
  it('replays a sequence from its seed, differs between seeds, and stays in [0, 1)', () => {
    const take = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed))
    const a = take(20261123)
    expect(take(20261123)).toEqual(a)
    expect(take(20261124)).not.toEqual(a)
    expect(a.every((x) => x >= 0 && x < 1)).toBe(true)
    // Spread over the interval: each tenth gets a fair share of 1,000 draws.
    const tenths = Array.from({ length: 10 }, (_, i) => a.filter((x) => Math.floor(x * 10) === i).length)
    expect(Math.min(...tenths)).toBeGreaterThan(60)
  })
})
