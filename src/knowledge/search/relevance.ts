/**
 * Relevance before quality (issue 17): the search's relevance gate — a candidate must be
 * relevant on its own merits, by full-text strength or by vector similarity — and the
 * bounded quality rerank that orders near-equally relevant candidates by feedback without
 * ever lifting a clearly less relevant one above a clearly more relevant one. The rules and
 * a worked example are in docs/retrieval-log.md ("Relevance gate" and "Quality within relevance").
 */
import { qualityScore } from '../../core/knowledge.js'
import { scopePriority } from '../../core/principal.js'
import { CJK_FUNCTION_WORDS, hasCjk, PACK_BIGRAM_PARTICLE } from '../../core/text/index.js'
import type { RerankItem } from './rank.js'

/** The relevance gate's thresholds (see {@link DEFAULT_RELEVANCE_GATE}). */
export interface RelevanceGate {
  /**
   * Full-text strength a candidate needs on its own: its BM25 score divided by the query's
   * best possible score over the caller's visible entries (the store's `textQueryBound`).
   */
  minTextStrength: number
  /** The same for a query that is largely Chinese/Japanese/Korean text (`isLargelyCjk`). */
  minTextStrengthCjk: number
  /**
   * What a CJK query's anchor needs when it shares only **one** content term with the query
   * ({@link contentTerms}); two or more shared content terms need `minTextStrengthCjk`. A
   * question about something absent meets a stored entry on one word (北京, 规则, 时间); a
   * paraphrase of it shares two (docs/retrieval-log.md, "The Chinese anchor").
   */
  minTextStrengthCjkOneTerm: number
  /**
   * Cosine similarity a candidate needs on its own when the embedder gives no floor for the
   * query (the hashed n-grams on Chinese text); otherwise the embedder's `similarityFloor`.
   */
  fallbackSimilarity: number
  /**
   * Once one candidate of the query passes the gate (the query has an answer), the others
   * need only this share of the full-text strength threshold (or the similarity floor, as
   * before): they follow the anchor. 1 gates every candidate alike.
   */
  followStrength: number
  /**
   * The precision gate (the default; `mode: recall` uses the followers above instead): once the
   * query has an answer, each other candidate is kept only on its **own** evidence
   * ({@link ownEvidence}), not for following the anchor.
   */
  own: OwnEvidenceGate
}

/**
 * What a candidate needs on its own to be kept by the precision gate (docs/retrieval.md,
 * "The precision gate"). Strength is the BM25 score over the query's best possible score: with
 * one occurrence of each shared term in an entry of average length it is the idf-weighted share
 * of the query's terms the entry holds, divided by k1 + 1 (2.2).
 */
export interface OwnEvidenceGate {
  /** Full-text strength that keeps a candidate by its words alone (Latin-script queries). */
  textStrength: number
  /** The same for a largely CJK query. */
  textStrengthCjk: number
  /**
   * A candidate that both lists found (it shares a word and is similar) is kept at this much
   * strength when its similarity clears the floor by `agreementMargin` over the background.
   */
  agreementStrength: number
  /** Similarity over the query's background (the median similarity of the vector list) that, with a shared word, keeps a candidate. */
  agreementMargin: number
  /** Similarity over the background that keeps a candidate by meaning alone (it also needs the anchor floor when no word is shared). */
  meaningMargin: number
  /**
   * 1: the anchor and the best candidate are kept only with evidence of their own too (a query
   * none of whose candidates has any gets nothing); 0: they are kept as the proof that the query
   * has an answer.
   */
  strictAnchor: number
  /**
   * 1: a candidate kept by the rules above must also pass the embedder's learned relevance check
   * (gate-weights.ts: a small logistic model of how likely it is related, with its threshold),
   * when the embedder has one, and in a small store the first result its answer check; 0: the
   * rules alone.
   */
  learned: number
}

/**
 * Calibrated on the retrieval sets and the no-answer sets of `bench/data/` (docs/retrieval.md,
 * "Relevance gate"): the strength and similarity that relevant entries clear and that the best
 * candidate of a query about nothing stored stays under.
 */
export const DEFAULT_RELEVANCE_GATE: RelevanceGate = Object.freeze({
  minTextStrength: 0.2,
  minTextStrengthCjk: 0.08,
  minTextStrengthCjkOneTerm: 0.1,
  fallbackSimilarity: 0.3,
  followStrength: 0.25,
  own: Object.freeze({
    textStrength: 0.15,
    textStrengthCjk: 0.1,
    agreementStrength: 0.05,
    agreementMargin: 0.15,
    meaningMargin: 0.15,
    strictAnchor: 0,
    learned: 1,
  }),
})

/**
 * In full-text-only mode (`mode: fulltext`) no vector similarity can back a weak lexical
 * match: the Latin-script strength threshold is halved (a query that shares two of four words
 * with its entry, the other two found nowhere, still passes; docs/retrieval.md). Not the CJK
 * one: n-gram vectors back no Chinese match in hybrid mode either, and halved it answered
 * 70% of the Chinese questions about absent topics.
 */
export const FULLTEXT_ONLY_FACTOR = 0.5

/** The thresholds of one query's gate: the anchor's, and the followers' full-text strength. */
export interface QueryGate {
  minTextStrength: number
  minSimilarity: number
  /** The strength a candidate needs once another has passed (the similarity floor stays). */
  followTextStrength: number
  /** CJK queries: the anchor's strength when it shares one content term only (see {@link gateCandidates}). */
  oneTermTextStrength?: number
  /**
   * The similarity a candidate that the full-text list did not find (it shares no search term
   * with the query) needs to anchor the answer on its own; default `minSimilarity`.
   */
  loneSimilarity?: number
  /**
   * The similarity a candidate that the full-text list also found (it shares a search term) needs
   * to anchor the answer; default `minSimilarity`. A model whose cosines are all high
   * (multilingual-e5-small) needs more than its floor there: a Chinese question about something
   * absent shares a character or two with many entries (calibration.ts).
   */
  corroboratedSimilarity?: number
  /**
   * The similarity every anchor needs, whatever its words (undefined: none): for a model whose
   * similarities are calibrated, a question about something absent that shares a word or two with
   * an entry anchors on words only if the entry is also near it in meaning (calibration.ts).
   */
  anchorSimilarity?: number
  /**
   * The precision gate of this query ({@link ownEvidence}): the gate's own-evidence thresholds
   * for the query's script and the query's background similarity. Absent: the recall gate
   * (candidates follow the anchor at `followTextStrength` or the similarity floor).
   */
  own?: { textStrength: number; agreementStrength: number; agreementMargin: number; meaningMargin: number; strictAnchor: number; background: number }
}

/**
 * The gate of one query: the threshold of its script (Latin or CJK), halved for a Latin query
 * in full-text-only mode, the similarity floor (the embedder's, else the fallback) and the
 * followers' share.
 * @example
 * queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3 })
 * // { minTextStrength: 0.2, minSimilarity: 0.3, followTextStrength: 0.05 }
 */
export function queryGate(
  gate: RelevanceGate,
  query: {
    cjk: boolean
    fulltextOnly: boolean
    floor: number | undefined
    anchorFloor?: number | undefined
    /** What a candidate that shares a search term needs to anchor by similarity (default: the floor). */
    corroboratedFloor?: number | undefined
    /** The similarity every anchor needs, words or not (default: none). */
    anchorSimilarity?: number | undefined
    /** The precision gate with this background similarity (the median of the vector list; 0 without one); absent: the recall gate. */
    background?: number | undefined
  },
): QueryGate {
  const minTextStrength = query.cjk ? gate.minTextStrengthCjk : gate.minTextStrength * (query.fulltextOnly ? FULLTEXT_ONLY_FACTOR : 1)
  const minSimilarity = query.floor ?? gate.fallbackSimilarity
  const queryGate: QueryGate = { minTextStrength, minSimilarity, followTextStrength: minTextStrength * gate.followStrength }
  if (query.cjk) queryGate.oneTermTextStrength = Math.max(minTextStrength, gate.minTextStrengthCjkOneTerm)
  if (query.anchorFloor !== undefined && query.anchorFloor > minSimilarity) queryGate.loneSimilarity = query.anchorFloor
  if (query.corroboratedFloor !== undefined && query.corroboratedFloor > minSimilarity) queryGate.corroboratedSimilarity = query.corroboratedFloor
  if (query.anchorSimilarity !== undefined) queryGate.anchorSimilarity = query.anchorSimilarity
  if (query.background !== undefined) {
    const own = gate.own
    const textStrength = (query.cjk ? own.textStrengthCjk : own.textStrength) * (query.fulltextOnly && !query.cjk ? FULLTEXT_ONLY_FACTOR : 1)
    queryGate.own = {
      textStrength,
      agreementStrength: Math.min(own.agreementStrength, textStrength),
      agreementMargin: own.agreementMargin,
      meaningMargin: own.meaningMargin,
      strictAnchor: own.strictAnchor,
      background: query.background,
    }
  }
  return queryGate
}

/**
 * The full-text strength a candidate needs to anchor a query's answer, given how many of the
 * query's content terms it shares (`undefined`: not counted — a Latin-script query): none —
 * only similarity can anchor it; one — the gate's one-term strength (CJK); two or more — the
 * gate's strength.
 * @example
 * anchorStrength(queryGate(DEFAULT_RELEVANCE_GATE, { cjk: true, fulltextOnly: false, floor: undefined }), 1) // 0.1
 */
export function anchorStrength(gate: QueryGate, sharedContent: number | undefined): number {
  if (sharedContent === undefined) return gate.minTextStrength
  if (sharedContent <= 0) return Infinity
  return sharedContent === 1 ? (gate.oneTermTextStrength ?? gate.minTextStrength) : gate.minTextStrength
}

/**
 * The relevance gate over a query's fused candidates: nothing unless at least one candidate
 * passes on its own merits ({@link passesGate}: the query has an answer); then, under the
 * precision gate (`gate.own`, the default), the first such anchor, the best candidate (the first)
 * when it clears the followers' bar, and every candidate with evidence of its own
 * ({@link ownEvidence}); under the recall gate, every candidate with the
 * followers' full-text strength, or the similarity floor. Order is kept. With
 * `sharedContent` (Chinese queries: how many of the query's content terms, {@link contentTerms},
 * a candidate shares), a candidate anchors by full-text strength only when it shares one — at
 * the one-term strength when it shares just one ({@link anchorStrength}); by similarity as before.
 * With `related` (the embedder's learned relevance check, gate-weights.ts), the precision gate
 * keeps, besides the anchor and the best candidate (and their twins), only the candidates it
 * accepts; the recall gate ignores it.
 * A candidate that the full-text list did not find anchors by similarity only at the gate's
 * `loneSimilarity` (the embedder's anchor floor), when it has one: a semantic embedder finds
 * something near any question in a large store, a shared word is the corroboration.
 * @example
 * gateCandidates(fused, bound, queryGate(DEFAULT_RELEVANCE_GATE, { cjk: false, fulltextOnly: false, floor: 0.3 }))
 */
export function gateCandidates<T extends GateCandidate>(
  candidates: readonly T[],
  bound: number,
  gate: QueryGate,
  sharedContent?: (candidate: T) => number,
  related?: (candidate: T) => boolean,
): T[] {
  const anchors = (c: T) =>
    passesGate(c, bound, {
      minTextStrength: anchorStrength(gate, sharedContent?.(c)),
      minSimilarity: c.positions[0] ? (gate.corroboratedSimilarity ?? gate.minSimilarity) : (gate.loneSimilarity ?? gate.minSimilarity),
    }) &&
    (gate.anchorSimilarity === undefined || (c.positions[1]?.score ?? -Infinity) >= gate.anchorSimilarity)
  const anchor = candidates.find(anchors)
  if (anchor === undefined) return []
  const own = gate.own
  // The precision gate: once the query has an answer (an anchor), the anchor, the best candidate
  // when it clears the followers' bar, and every candidate with evidence of its own.
  if (own) {
    const follow = { minTextStrength: gate.followTextStrength, minSimilarity: gate.minSimilarity }
    const best = candidates[0]!
    const bestProves = passesGate(best, bound, follow)
    // A twin (the same full-text score and similarity: the same text stored twice) is exactly as related as the candidate it equals.
    const twin = (a: T, b: T) => a.positions[0]?.score === b.positions[0]?.score && a.positions[1]?.score === b.positions[1]?.score
    const proof = (c: T) => own.strictAnchor === 0 && (c === anchor || twin(c, anchor) || (bestProves && (c === best || twin(c, best))))
    // The learned relevance check (`related`, when the embedder has a model) is asked of every other kept candidate:
    // whether the query has an answer stays the anchor rule's call.
    return candidates.filter((c) => proof(c) || (ownEvidence(c, bound, gate, own) !== undefined && (related?.(c) ?? true)))
  }
  const follow = { minTextStrength: gate.followTextStrength, minSimilarity: gate.minSimilarity }
  return candidates.filter((c) => passesGate(c, bound, follow))
}

/**
 * Why the gate keeps a candidate: `words` (full-text strength on its own), `agreement` (both
 * lists found it: a shared word, and similar clearly above the query's background), `meaning`
 * (similar well above the background, and above the anchor floor when it shares no word).
 */
export type Evidence = 'words' | 'agreement' | 'meaning'

/**
 * A candidate's own evidence under the precision gate ({@link QueryGate.own}), or undefined
 * when it has none: it would only have followed a stronger candidate.
 * @example
 * ownEvidence({ positions: [null, { rank: 1, score: 0.6 }] }, 0, gate, gate.own!) // 'meaning' when 0.6 − background ≥ 0.15
 */
export function ownEvidence(c: GateCandidate, bound: number, gate: QueryGate, own: NonNullable<QueryGate['own']>): Evidence | undefined {
  const text = c.positions[0]
  const strength = textStrength(c, bound)
  if (text && strength >= own.textStrength) return 'words'
  const similarity = c.positions[1]?.score
  if (similarity === undefined) return undefined
  const margin = similarity - own.background
  if (text && strength >= own.agreementStrength && margin >= own.agreementMargin) return 'agreement'
  if (margin >= own.meaningMargin && similarity >= (text ? gate.minSimilarity : (gate.loneSimilarity ?? gate.minSimilarity))) return 'meaning'
  return undefined
}

/**
 * The median of a query's vector similarities (its background: how similar an entry of the
 * store is to the query by default); 0 without any.
 * @example
 * backgroundSimilarity([0.6, 0.3, 0.2]) // 0.3
 */
export function backgroundSimilarity(similarities: readonly number[]): number {
  if (similarities.length === 0) return 0
  const sorted = similarities.slice().sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * The query terms that can anchor a Chinese query's answer ({@link gateCandidates}): Latin
 * words, and CJK terms of two or more characters that are not function words
 * ({@link CJK_FUNCTION_WORDS}) nor a two-character term with a particle in it (是什, 的导:
 * `PACK_BIGRAM_PARTICLE`). A question about something absent matches stored entries on
 * single characters (调, 年, 图, 回) and function words (什么, 怎么) only; a paraphrase of a
 * stored entry shares at least one real word with it (docs/retrieval-log.md, "The Chinese anchor").
 * @example
 * contentTerms(['饺子馅', '怎么', '调', '多汁']) // ['饺子馅', '多汁']
 */
export function contentTerms(terms: readonly string[]): string[] {
  return terms.filter((term) => {
    if (!hasCjk(term)) return true
    const length = [...term].length
    return length >= 2 && !CJK_FUNCTION_WORDS.has(term) && !(length === 2 && PACK_BIGRAM_PARTICLE.test(term))
  })
}

/** A fused candidate as the gate reads it: its full-text score (if any) and vector similarity (if any). */
export interface GateCandidate {
  positions: ReadonlyArray<{ rank: number; score: number } | null>
}

/**
 * The full-text strength of a candidate: its BM25 score over the query's best possible
 * score (0 when it shares no term with the query, or the bound is 0).
 * @example
 * textStrength({ positions: [{ rank: 1, score: 2 }, null] }, 8) // 0.25
 */
export function textStrength(candidate: GateCandidate, bound: number): number {
  const text = candidate.positions[0]
  return text && bound > 0 ? text.score / bound : 0
}

/**
 * True when the candidate is relevant on its own merits: full-text strength of at least
 * `minTextStrength`, or a vector similarity of at least `minSimilarity`.
 * @example
 * passesGate({ positions: [null, { rank: 1, score: 0.5 }] }, 0, { minTextStrength: 0.2, minSimilarity: 0.3 }) // true
 */
export function passesGate(candidate: GateCandidate, bound: number, gate: { minTextStrength: number; minSimilarity: number }): boolean {
  if (candidate.positions[0] && textStrength(candidate, bound) >= gate.minTextStrength) return true
  const vector = candidate.positions[1]
  return vector !== null && vector !== undefined && vector.score >= gate.minSimilarity
}

/**
 * How far helpful feedback may lift a candidate, in units of relevance relative to the best
 * candidate of the query (1): at most +0.1. A candidate less relevant than another by more
 * than 0.1 can never overtake it; within that, feedback decides.
 */
export const QUALITY_BOOST = 0.1

/**
 * How far harmful feedback may lower a candidate: at most −0.2. Harmful cases weigh twice
 * as much as helpful ones in seed 003's quality score, and demotion lifts nothing that the
 * caller's own relevance did not already put near the top.
 */
export const HARMFUL_PENALTY = 0.2

/**
 * The bounded quality boost of an entry, 0 for the quality of a new entry (3: seed 003's
 * default score, no feedback): `boost · tanh((q − 3) / 2)` above 3, `2 · boost ·
 * tanh(q − 3)` below. At the default boost one helpful case (quality 4) gives +0.046, five
 * +0.099; a quality of 2 (one helpful and one harmful case) −0.152, one harmful case (quality 1) −0.193.
 * @example
 * qualityBoost(4) // ≈ 0.0462
 */
export function qualityBoost(quality: number, boost = QUALITY_BOOST): number {
  return quality >= 3 ? boost * Math.tanh((quality - 3) / 2) : 2 * boost * Math.tanh(quality - 3)
}

/** A reranked candidate: seed 003's quality score, its scope priority, relevance and boost. */
export type Reranked<T> = T & { quality_score: number; scope_priority: number; relevance: number; quality_boost: number }

/**
 * Quality within relevance: each candidate's relevance is its fused score relative to the
 * best candidate's (1 for the best), plus its bounded {@link qualityBoost}; ties by scope
 * priority (user > project > agent > team > org > public), then fused score, then id. Seed
 * 003's filters stay: entries with `score < minScore` or a negative quality score are dropped.
 * The items take their four figures in place (the search's own items, built with room for
 * them: a copy a candidate made each one a hidden class of its own, see `rankItem`).
 * @example
 * relevanceRerank(items, visibleScopes(principal), 3)
 */
export function relevanceRerank<T extends RerankItem>(
  items: readonly T[],
  visible: readonly string[],
  minScore: number,
  boost = QUALITY_BOOST,
): Array<Reranked<T>> {
  const best = items.reduce((max, item) => Math.max(max, item.fused), 0)
  const reranked: Array<Reranked<T>> = []
  for (const candidate of items) {
    const item = candidate as Reranked<T>
    const quality_score = qualityScore(item)
    item.quality_score = quality_score
    item.scope_priority = scopePriority(item.scopes, visible)
    item.relevance = best > 0 ? item.fused / best : 0
    item.quality_boost = qualityBoost(quality_score, boost)
    if (item.score >= minScore && quality_score >= 0) reranked.push(item)
  }
  return reranked.sort(
    (a, b) =>
      b.relevance + b.quality_boost - (a.relevance + a.quality_boost) ||
      a.scope_priority - b.scope_priority ||
      b.fused - a.fused ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  )
}
