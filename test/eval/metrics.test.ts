import { describe, expect, it } from 'vitest'
import { mean, mrrAtK, ndcgAtK, percentile, recallAtK } from '../../src/eval/metrics.js'

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
})
