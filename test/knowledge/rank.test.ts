/** Score fusion (rank.ts): min-max normalised, weighted sums; ties by id; each entry's place and score in each list. */
import { describe, expect, it } from 'vitest'
import { fuseScores } from '../../src/knowledge/search/rank.js'

describe('fuseScores', () => {
  it('sums each list’s normalised scores by weight, best first, ties by id, with each entry’s positions', () => {
    const fused = fuseScores([
      // Floor 0: a 4/4 = 1, b 2/4 = 0.5, c 1/4 = 0.25.
      {
        ids: [
          { id: 'b2', score: 4 },
          { id: 'a1', score: 2 },
          { id: 'c3', score: 1 },
        ],
        weight: 1,
        floor: 0,
      },
      // Its own lowest score is 0: a1 (0.9 - 0.5) / 0.4 = 1 at weight 0.5; d4 0.
      {
        ids: [
          { id: 'a1', score: 0.9 },
          { id: 'd4', score: 0.5 },
        ],
        weight: 0.5,
      },
    ])
    // b2 (1) and a1 (0.5 + 0.5) tie: by id.
    expect(fused).toEqual([
      {
        id: 'a1',
        fused: 1,
        positions: [
          { rank: 2, score: 2 },
          { rank: 1, score: 0.9 },
        ],
      },
      { id: 'b2', fused: 1, positions: [{ rank: 1, score: 4 }, null] },
      { id: 'c3', fused: 0.25, positions: [{ rank: 3, score: 1 }, null] },
      { id: 'd4', fused: 0, positions: [null, { rank: 2, score: 0.5 }] },
    ])
  })

  it('gives 1 to every entry of a list whose scores are all equal, and nothing for an empty list', () => {
    const fused = fuseScores([
      { ids: [], weight: 1 },
      {
        ids: [
          { id: 'y', score: 0.3 },
          { id: 'x', score: 0.3 },
        ],
        weight: 2,
      },
    ])
    expect(fused).toEqual([
      { id: 'x', fused: 2, positions: [null, { rank: 2, score: 0.3 }] },
      { id: 'y', fused: 2, positions: [null, { rank: 1, score: 0.3 }] },
    ])
    expect(fuseScores([])).toEqual([])
  })
})
