import { describe, expect, it } from 'vitest'
import { hitAtK, mean, mrrAtK, ndcgAtK, percentile, precisionAtK, precisionCeiling, recallAtK, returnedCounts } from '../../src/eval/metrics.js'

const rel = (...ids: string[]) => new Map(ids.map((id) => [id, 1]))

describe('retrieval metrics (hand-computed)', () => {
  it('recall@k counts relevant documents in the first k, once each', () => {
    expect(recallAtK(['a', 'x', 'b'], rel('a', 'b', 'c'), 2)).toBeCloseTo(1 / 3)
    expect(recallAtK(['a', 'x', 'b'], rel('a', 'b', 'c'), 3)).toBeCloseTo(2 / 3)
    expect(recallAtK(['a', 'a', 'x'], rel('a', 'b'), 3)).toBeCloseTo(1 / 2)
    expect(recallAtK(['x'], rel(), 10)).toBe(0)
    expect(recallAtK([], rel('a'), 10)).toBe(0)
    expect(recallAtK(['a'], new Map([['a', 0]]), 10)).toBe(0)
  })

  it('nDCG@k uses gain 2^rel - 1 and a log2(rank + 1) discount', () => {
    expect(ndcgAtK(['a'], rel('a'), 10)).toBe(1)
    expect(ndcgAtK(['x', 'a'], rel('a'), 10)).toBeCloseTo(1 / Math.log2(3))
    // relevant at ranks 1 and 3 of two relevant: (1 + 1/2) / (1 + 1/log2 3)
    expect(ndcgAtK(['a', 'x', 'b'], rel('a', 'b'), 10)).toBeCloseTo(1.5 / (1 + 1 / Math.log2(3)))
    // graded: b (rel 2, gain 3) first is ideal; a first is not
    const graded = new Map([
      ['a', 1],
      ['b', 2],
    ])
    expect(ndcgAtK(['b', 'a'], graded, 10)).toBe(1)
    expect(ndcgAtK(['a', 'b'], graded, 10)).toBeCloseTo((1 + 3 / Math.log2(3)) / (3 + 1 / Math.log2(3)))
    // cut at k
    expect(ndcgAtK(['x', 'a'], rel('a'), 1)).toBe(0)
    expect(ndcgAtK(['a'], rel(), 10)).toBe(0)
  })

  it('MRR@k is the reciprocal rank of the first relevant result within k', () => {
    expect(mrrAtK(['x', 'y', 'a', 'b'], rel('a', 'b'), 10)).toBeCloseTo(1 / 3)
    expect(mrrAtK(['a'], rel('a'), 10)).toBe(1)
    expect(mrrAtK(['x', 'y', 'a'], rel('a'), 2)).toBe(0)
  })

  it('percentile is nearest-rank; mean of nothing is 0', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2)
    expect(percentile([1, 2, 3, 4], 95)).toBe(4)
    expect(percentile([5], 95)).toBe(5)
    expect(percentile([], 50)).toBeNaN()
    expect(mean([1, 2, 3])).toBe(2)
    expect(mean([])).toBe(0)
  })

  it('precision@k divides the relevant documents in the first k by k, even when fewer came back', () => {
    expect(precisionAtK(['a', 'x', 'b'], rel('a', 'b'), 3)).toBeCloseTo(2 / 3)
    expect(precisionAtK(['a', 'x', 'b'], rel('a', 'b'), 5)).toBeCloseTo(2 / 5)
    expect(precisionAtK(['a', 'x', 'b'], rel('a', 'b'), 1)).toBe(1)
    expect(precisionAtK(['x', 'a'], rel('a'), 1)).toBe(0)
    // a document counts once; nothing returned is 0; a grade of 0 is not relevant
    expect(precisionAtK(['a', 'a', 'a'], rel('a'), 3)).toBeCloseTo(1 / 3)
    expect(precisionAtK([], rel('a'), 5)).toBe(0)
    expect(precisionAtK(['a'], new Map([['a', 0]]), 1)).toBe(0)
  })

  it('the precision ceiling is min(k, relevant) / k', () => {
    expect(precisionCeiling(rel('a'), 3)).toBeCloseTo(1 / 3)
    expect(precisionCeiling(rel('a', 'b'), 5)).toBeCloseTo(2 / 5)
    expect(precisionCeiling(rel('a', 'b', 'c', 'd'), 3)).toBe(1)
    expect(precisionCeiling(rel(), 3)).toBe(0)
  })

  it('hit@k is 1 when a relevant document is in the first k', () => {
    expect(hitAtK(['x', 'y', 'a'], rel('a', 'b'), 5)).toBe(1)
    expect(hitAtK(['x', 'y', 'a'], rel('a', 'b'), 2)).toBe(0)
    expect(hitAtK([], rel('a'), 5)).toBe(0)
    expect(hitAtK(['a'], rel(), 5)).toBe(0)
  })

  it('returned counts pool every list: unrelated share = unrelated returned / returned, empty lists counted apart', () => {
    // The store in small: q1 finds its entry and two others, q2 its entry only,
    // q3 (answerable) nothing, q4 (about nothing stored) one entry.
    const lists = [
      { ranked: ['sel', 'pg', 'cdn'], judged: rel('sel') },
      { ranked: ['pnpm'], judged: rel('pnpm', 'plan') },
      { ranked: [], judged: rel('pg') },
      { ranked: ['keys'], judged: rel() },
    ]
    const at5 = returnedCounts(lists, 5)
    expect(at5).toEqual({ returned: 5, related: 2, unrelated: 3, unrelatedShare: 3 / 5, empty: 1 })
    // at k = 1 only the first result of each list counts
    expect(returnedCounts(lists, 1)).toEqual({ returned: 3, related: 2, unrelated: 1, unrelatedShare: 1 / 3, empty: 1 })
    // a repeated id counts once; nothing returned anywhere is a share of 0
    expect(returnedCounts([{ ranked: ['x', 'x'], judged: rel('a') }], 5)).toEqual({ returned: 1, related: 0, unrelated: 1, unrelatedShare: 1, empty: 0 })
    expect(returnedCounts([{ ranked: [], judged: rel('a') }], 5)).toEqual({ returned: 0, related: 0, unrelated: 0, unrelatedShare: 0, empty: 1 })
  })
})
