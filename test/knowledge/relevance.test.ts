/**
 * The relevance gate and the bounded quality rerank (issue 17), as pure functions.
 */
import { describe, expect, it } from 'vitest'
import {
  anchorStrength,
  backgroundSimilarity,
  contentTerms,
  DEFAULT_RELEVANCE_GATE,
  FULLTEXT_ONLY_FACTOR,
  gateCandidates,
  HARMFUL_PENALTY,
  ownEvidence,
  passesGate,
  QUALITY_BOOST,
  qualityBoost,
  queryGate,
  relevanceRerank,
  textStrength,
} from '../../src/knowledge/search/relevance.js'

const item = (id: string, fused: number, eval_: { score?: number; helpful?: number; harmful?: number } = {}, scopes = ['user:u']) => ({
  id,
  fused,
  score: eval_.score ?? 3,
  helpful: eval_.helpful ?? 0,
  harmful: eval_.harmful ?? 0,
  scopes,
})
const visible = ['user:u', 'project:p', 'public']

describe('relevance gate', () => {
  const gate = { minTextStrength: 0.2, minSimilarity: 0.3 }

  it('measures full-text strength against the query bound', () => {
    expect(textStrength({ positions: [{ rank: 1, score: 3 }, null] }, 10)).toBeCloseTo(0.3)
    expect(textStrength({ positions: [null, { rank: 1, score: 0.9 }] }, 10)).toBe(0)
    expect(textStrength({ positions: [{ rank: 1, score: 3 }, null] }, 0)).toBe(0)
  })

  it('passes a candidate strong in either list, and drops one weak in both', () => {
    expect(passesGate({ positions: [{ rank: 1, score: 2.5 }, null] }, 10, gate)).toBe(true)
    expect(
      passesGate(
        {
          positions: [
            { rank: 1, score: 1 },
            { rank: 3, score: 0.35 },
          ],
        },
        10,
        gate,
      ),
    ).toBe(true)
    expect(passesGate({ positions: [null, { rank: 1, score: 0.31 }] }, 10, gate)).toBe(true)
    expect(
      passesGate(
        {
          positions: [
            { rank: 1, score: 1.9 },
            { rank: 2, score: 0.29 },
          ],
        },
        10,
        gate,
      ),
    ).toBe(false)
    expect(passesGate({ positions: [{ rank: 1, score: 1.9 }, null] }, 10, gate)).toBe(false)
    expect(passesGate({ positions: [null, { rank: 1, score: -0.2 }] }, 10, gate)).toBe(false)
  })
})

describe('the gate over a query', () => {
  const text = (id: string, score: number, similarity?: number) => ({
    id,
    positions: [{ rank: 1, score }, similarity === undefined ? null : { rank: 1, score: similarity }],
  })
  const gate = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3 })

  it('returns nothing unless one candidate passes on its own merits', () => {
    expect(gateCandidates([text('a', 1.9, 0.29), text('b', 1.5)], 10, gate)).toEqual([])
  })

  it('lets the others follow a passing candidate down to the followers’ strength, and no further', () => {
    const kept = gateCandidates([text('anchor', 3), text('weak', 0.6), text('weaker', 0.4), text('similar', 0.1, 0.35)], 10, gate)
    expect(gate.followTextStrength).toBeCloseTo(DEFAULT_RELEVANCE_GATE.minTextStrength * DEFAULT_RELEVANCE_GATE.followStrength)
    expect(kept.map((c) => c.id)).toEqual(['anchor', 'weak', 'similar'])
  })

  it('lets a Chinese answer be anchored by full-text strength only by a candidate that shares a content term', () => {
    const cjk = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: true, fulltextOnly: false, floor: undefined })
    const candidates = [text('single-chars', 3), text('follower', 0.5)]
    expect(gateCandidates(candidates, 10, cjk).map((c) => c.id)).toEqual(['single-chars', 'follower'])
    expect(gateCandidates(candidates, 10, cjk, () => 0)).toEqual([])
    expect(gateCandidates(candidates, 10, cjk, (c) => (c.id === 'single-chars' ? 1 : 0)).map((c) => c.id)).toEqual(['single-chars', 'follower'])
    // Similarity still anchors on its own.
    expect(gateCandidates([text('similar', 0.1, 0.35)], 10, cjk, () => 0).map((c) => c.id)).toEqual(['similar'])
    expect(contentTerms(['饺子馅', '怎么', '调', '才', '多汁', '么调', 'npm', '是什', '导火索'])).toEqual(['饺子馅', '多汁', '么调', 'npm', '导火索'])
  })

  it('asks more strength of a Chinese anchor that shares one content term than of one that shares two', () => {
    const cjk = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: true, fulltextOnly: false, floor: undefined })
    expect(cjk.oneTermTextStrength).toBe(DEFAULT_RELEVANCE_GATE.minTextStrengthCjkOneTerm)
    expect(anchorStrength(cjk, 1)).toBeGreaterThan(anchorStrength(cjk, 2))
    expect(anchorStrength(cjk, 0)).toBe(Infinity)
    // Strength 0.09 over a bound of 10: between the two thresholds (0.08 and 0.1).
    const candidates = [text('between', 0.9), text('follower', 0.3)]
    expect(gateCandidates(candidates, 10, cjk, () => 1)).toEqual([])
    expect(gateCandidates(candidates, 10, cjk, (c) => (c.id === 'between' ? 2 : 1)).map((c) => c.id)).toEqual(['between', 'follower'])
    // A Latin-script query counts no content terms: its one threshold.
    const latin = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3 })
    expect(latin.oneTermTextStrength).toBeUndefined()
    expect(anchorStrength(latin, undefined)).toBe(DEFAULT_RELEVANCE_GATE.minTextStrength)
  })

  it('lets a candidate that shares no search term anchor by similarity only at the embedder’s anchor floor', () => {
    const vectorOnly = (id: string, similarity: number) => ({ id, positions: [null, { rank: 1, score: similarity }] })
    const anchored = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45 })
    expect(anchored.loneSimilarity).toBe(0.45)
    // An absent topic: the nearest turn is above the floor but shares no word, and no candidate is strong.
    expect(gateCandidates([vectorOnly('near', 0.4), text('word', 0.5, 0.2)], 10, anchored)).toEqual([])
    // Corroborated: the full-text list found it too (any shared term), so the floor is enough.
    expect(gateCandidates([vectorOnly('near', 0.4), text('word', 0.1, 0.31)], 10, anchored).map((c) => c.id)).toEqual(['near', 'word'])
    // Similar enough on its own, and once anchored the others follow at the plain floor.
    expect(gateCandidates([vectorOnly('close', 0.5), vectorOnly('near', 0.35)], 10, anchored).map((c) => c.id)).toEqual(['close', 'near'])
    // Without an anchor floor (or one under the floor), nothing changes.
    expect(gateCandidates([vectorOnly('near', 0.4)], 10, gate).map((c) => c.id)).toEqual(['near'])
    expect(queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.2 }).loneSimilarity).toBeUndefined()
  })

  it('keeps, under the precision gate, only candidates with evidence of their own, never followers of a strong anchor', () => {
    const vectorOnly = (id: string, similarity: number) => ({ id, positions: [null, { rank: 1, score: similarity }] })
    // The store: a strong Selenium match; three entries share no word and are 0.31-0.37 similar to the query.
    const candidates = [text('selenium', 5, 0.6), vectorOnly('postgres', 0.37), vectorOnly('pnpm', 0.33), vectorOnly('cdn', 0.31), vectorOnly('pdf', 0.2)]
    const background = backgroundSimilarity([0.6, 0.37, 0.33, 0.31, 0.2])
    expect(background).toBeCloseTo(0.33)
    const recall = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45 })
    expect(recall.own).toBeUndefined()
    expect(gateCandidates(candidates, 10, recall).map((c) => c.id)).toEqual(['selenium', 'postgres', 'pnpm', 'cdn'])
    const precision = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45, background })
    expect(precision.own).toMatchObject({ textStrength: DEFAULT_RELEVANCE_GATE.own.textStrength, background })
    expect(gateCandidates(candidates, 10, precision).map((c) => c.id)).toEqual(['selenium'])
    // No anchor: nothing, as before (the no-answer rates do not move).
    expect(gateCandidates(candidates.slice(1), 10, precision)).toEqual([])
    // The anchor's twin (the same text saved twice: the same scores) is as related as the anchor, whatever the tie order.
    const anchoredByMeaning = [vectorOnly('first', 0.5), vectorOnly('twin', 0.5), vectorOnly('near', 0.49), vectorOnly('pdf', 0.2)]
    const twinGate = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45, background: 0.45 })
    expect(gateCandidates(anchoredByMeaning, 10, twinGate).map((c) => c.id)).toEqual(['first', 'twin'])
  })

  it('names the evidence of a kept candidate: its words, both lists agreeing, or its meaning', () => {
    const gate = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3, anchorFloor: 0.45, background: 0.3 })
    const own = gate.own!
    expect(ownEvidence(text('strong', 2.5), 10, gate, own)).toBe('words')
    // A shared word (strength 0.06) and a similarity 0.17 over the background: both lists agree.
    expect(ownEvidence(text('agree', 0.6, 0.47), 10, gate, own)).toBe('agreement')
    expect(ownEvidence(text('weak', 0.6, 0.35), 10, gate, own)).toBeUndefined()
    // No shared word: well above the background and at the anchor floor.
    expect(ownEvidence({ positions: [null, { rank: 1, score: 0.5 }] }, 10, gate, own)).toBe('meaning')
    expect(ownEvidence({ positions: [null, { rank: 1, score: 0.44 }] }, 10, gate, own)).toBeUndefined()
    expect(backgroundSimilarity([])).toBe(0)
    expect(backgroundSimilarity([0.1, 0.4, 0.2, 0.3])).toBeCloseTo(0.25)
  })

  it('halves the Latin threshold in full-text-only mode, never the CJK one', () => {
    const latin = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: true, floor: undefined })
    expect(latin.minTextStrength).toBeCloseTo(DEFAULT_RELEVANCE_GATE.minTextStrength * FULLTEXT_ONLY_FACTOR)
    expect(latin.minSimilarity).toBe(DEFAULT_RELEVANCE_GATE.fallbackSimilarity)
    for (const fulltextOnly of [true, false]) {
      expect(queryGate(DEFAULT_RELEVANCE_GATE, { cjk: true, fulltextOnly, floor: undefined }).minTextStrength).toBe(DEFAULT_RELEVANCE_GATE.minTextStrengthCjk)
    }
  })
})

describe('quality within relevance', () => {
  it('bounds the boost: +QUALITY_BOOST and −HARMFUL_PENALTY at most, 0 for a new entry, monotone in quality', () => {
    expect(qualityBoost(3)).toBe(0)
    expect(qualityBoost(4)).toBeGreaterThan(0)
    expect(qualityBoost(8)).toBeGreaterThan(qualityBoost(4))
    expect(qualityBoost(1000)).toBeLessThanOrEqual(QUALITY_BOOST)
    expect(qualityBoost(1)).toBeLessThan(0)
    expect(qualityBoost(-1000)).toBeGreaterThanOrEqual(-HARMFUL_PENALTY)
    expect(qualityBoost(1)).toBeLessThan(-qualityBoost(5))
  })

  it('never lifts a clearly less relevant entry above a clearly more relevant one, however much feedback', () => {
    const ranked = relevanceRerank([item('relevant', 1.2), item('popular', 0.6, { score: 5, helpful: 500 })], visible, 3)
    expect(ranked.map((r) => r.id)).toEqual(['relevant', 'popular'])
    expect(ranked[1]!.quality_score).toBe(505)
  })

  it('orders near-equally relevant entries by feedback: helpful first, harmful last', () => {
    const ranked = relevanceRerank([item('plain', 1.0), item('harmful', 1.01, { harmful: 1 }), item('helpful', 0.99, { helpful: 1 })], visible, 3)
    expect(ranked.map((r) => r.id)).toEqual(['helpful', 'plain', 'harmful'])
    expect(ranked[0]!.relevance).toBeCloseTo(0.99 / 1.01)
  })

  it('keeps seed 003 filters (min score, negative quality) and breaks exact ties by scope priority', () => {
    const ranked = relevanceRerank(
      [
        item('org', 1, {}, ['org:o']),
        item('user', 1),
        item('low', 1, { score: 2 }),
        item('negative', 1, { harmful: 2 }),
        item('project', 1, {}, ['project:p']),
      ],
      [...visible, 'org:o'],
      3,
    )
    expect(ranked.map((r) => r.id)).toEqual(['user', 'project', 'org'])
  })
})
