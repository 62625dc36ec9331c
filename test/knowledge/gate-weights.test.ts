/**
 * The learned relevance check of the precision gate (issue 26, gate-weights.ts): the figures a
 * candidate is judged by, the model's probability, the table per embedder and script, and the
 * gate dropping a candidate its rules keep when the check says it is unlikely to be related.
 */
import { describe, expect, it } from 'vitest'
import {
  answerModelFor,
  injectionModelFor,
  LEARNED_RELEVANCE,
  queryFigures,
  relevanceFeatures,
  relevanceModelFor,
  relevanceProbability,
  type RelevanceModel,
} from '../../src/knowledge/search/gate-weights.js'
import { DEFAULT_RELEVANCE_GATE, gateCandidates, queryGate } from '../../src/knowledge/search/relevance.js'

describe('the learned relevance check', () => {
  it('measures a candidate against the other candidates of its query', () => {
    const figures = queryFigures([0.6, 0.4, 0.2], 0.5)
    expect(figures.mean).toBeCloseTo(0.4)
    expect(figures.sd).toBeCloseTo(Math.sqrt(0.08 / 3))
    expect(figures.min).toBe(0.2)
    expect([figures.best, figures.second]).toEqual([0.6, 0.4])
    const f = relevanceFeatures({ strength: 0.25, similarity: 0.6, place: 1 }, figures)
    expect(f.strength).toBe(0.25)
    expect(f.relativeStrength).toBeCloseTo(0.5)
    expect(f.z).toBeCloseTo(0.2 / figures.sd)
    expect(f.rank).toBeCloseTo(Math.log(2))
    // The most similar entry leads the runner-up by 0.2; another is behind the most similar.
    expect(f.lead).toBeCloseTo(0.2)
    expect(relevanceFeatures({ strength: 0, similarity: 0.4, place: 2 }, figures).lead).toBeCloseTo(-0.2)
    // Two equally similar entries: neither leads.
    expect(relevanceFeatures({ strength: 0, similarity: 0.5, place: 0 }, queryFigures([0.5, 0.5, 0.1], 0)).lead).toBe(0)
    // Not in the full-text list: no strength; not in the vector list: the list's least similarity.
    const lone = relevanceFeatures({ strength: null, similarity: null, place: 0 }, figures)
    expect([lone.strength, lone.relativeStrength, lone.rank]).toEqual([0, 0, 0])
    expect(lone.z).toBeCloseTo(-0.2 / figures.sd)
    expect(lone.lead).toBeCloseTo(-0.4)
    // No vector list, no shared word: nothing to divide by, no one leads.
    expect(queryFigures([], 0)).toEqual({ bestStrength: 0, mean: 0, sd: 1, min: 0, best: -Infinity, second: -Infinity })
    expect(relevanceFeatures({ strength: 0.3, similarity: null, place: 0 }, queryFigures([], 0.3)).lead).toBe(0)
    expect(relevanceFeatures({ strength: 0.3, similarity: 0.5, place: 0 }, queryFigures([0.5], 0.3)).lead).toBe(0)
  })

  it('is a logistic model: more words and more similarity make a candidate likelier related', () => {
    const model: RelevanceModel = { bias: -3, strength: 8, relativeStrength: 1, z: 1, rank: -1, threshold: 0.5 }
    const figures = queryFigures([0.7, 0.3, 0.2, 0.2], 0.4)
    const strong = relevanceProbability(model, relevanceFeatures({ strength: 0.4, similarity: 0.7, place: 0 }, figures))
    const weak = relevanceProbability(model, relevanceFeatures({ strength: 0.05, similarity: 0.3, place: 3 }, figures))
    expect(strong).toBeGreaterThan(0.9)
    expect(weak).toBeLessThan(0.1)
    expect(
      relevanceProbability(
        { ...model, strength: 0, relativeStrength: 0, z: 0, rank: 0, bias: 0 },
        relevanceFeatures({ strength: 0, similarity: 0, place: 0 }, figures),
      ),
    ).toBe(0.5)
  })

  it('has a model per embedder family and query script, and none for an unknown embedder', () => {
    expect(relevanceModelFor('hashed-ngram-v2-512', false)).toBe(LEARNED_RELEVANCE[0]!.latin)
    expect(relevanceModelFor('use-lite+hashed-v2-512', false)).toBe(LEARNED_RELEVANCE[1]!.latin)
    // Both read Chinese as the same hashed n-grams: one model.
    expect(relevanceModelFor('hashed-ngram-v2-512', true)).toBe(relevanceModelFor('use-lite+hashed-v2-512', true))
    expect(relevanceModelFor('text-embedding-3-small', false)).toBeUndefined()
    // The answer check: learned for USE lite on English only (elsewhere it lowered nothing held out).
    expect(answerModelFor('use-lite+hashed-v2-512', false)).toBe(LEARNED_RELEVANCE[1]!.answer!.latin)
    expect(answerModelFor('use-lite+hashed-v2-512', true)).toBeUndefined()
    expect(answerModelFor('hashed-ngram-v2-512', false)).toBeUndefined()
    expect(answerModelFor('text-embedding-3-small', false)).toBeUndefined()
    const answer = answerModelFor('use-lite+hashed-v2-512', false)!
    // words and a lead over the runner-up make a first result likelier right
    expect(answer.strength).toBeGreaterThan(0)
    expect(answer.lead).toBeGreaterThan(0)
    expect(answer.threshold).toBeGreaterThan(0)
    expect(answer.threshold).toBeLessThan(1)
    // The injection bar: learned for both embedders on English; on Chinese its best bar was none.
    expect(injectionModelFor('hashed-ngram-v2-512', false)).toBe(LEARNED_RELEVANCE[0]!.injection!.latin)
    expect(injectionModelFor('use-lite+hashed-v2-512', false)).toBe(LEARNED_RELEVANCE[1]!.injection!.latin)
    expect(injectionModelFor('use-lite+hashed-v2-512', true)).toBeUndefined()
    expect(injectionModelFor('hashed-ngram-v2-512', true)).toBeUndefined()
    expect(injectionModelFor('text-embedding-3-small', false)).toBeUndefined()
    for (const entry of LEARNED_RELEVANCE) {
      const bar = entry.injection!.latin!
      // words count for an injected entry
      expect(bar.strength).toBeGreaterThan(0)
      expect(bar.threshold).toBeGreaterThan(0)
      expect(bar.threshold).toBeLessThan(1)
    }
    for (const entry of LEARNED_RELEVANCE)
      for (const model of [entry.latin, entry.cjk]) {
        // words (relative to the best candidate's) count for, a later place against
        expect(model.relativeStrength).toBeGreaterThan(0)
        expect(model.rank).toBeLessThan(0)
        expect(model.threshold).toBeGreaterThan(0)
        expect(model.threshold).toBeLessThan(1)
      }
  })

  it('drops, under the precision gate, a candidate the rules keep when the check rejects it; the recall gate ignores it', () => {
    const text = (id: string, score: number, similarity?: number) => ({
      id,
      positions: [{ rank: 1, score }, similarity === undefined ? null : { rank: 1, score: similarity }],
    })
    // All three have words of their own (strength 0.5, 0.2 and 0.3 over a bound of 10).
    const candidates = [text('right', 5, 0.6), text('neighbour', 2, 0.35), text('also', 3, 0.5)]
    const precision = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45, background: 0.3 })
    expect(gateCandidates(candidates, 10, precision).map((c) => c.id)).toEqual(['right', 'neighbour', 'also'])
    const related = (c: { id: string }) => c.id !== 'neighbour'
    expect(gateCandidates(candidates, 10, precision, undefined, related).map((c) => c.id)).toEqual(['right', 'also'])
    // Not the anchor (the best candidate here): whether the query has an answer stays the anchor rule's call.
    expect(gateCandidates(candidates, 10, precision, undefined, () => false).map((c) => c.id)).toEqual(['right'])
    const recall = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45 })
    expect(gateCandidates(candidates, 10, recall, undefined, related).map((c) => c.id)).toEqual(['right', 'neighbour', 'also'])
  })
})
