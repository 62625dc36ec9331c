/**
 * The learned part of the precision gate (issue 26; docs/retrieval.md, "The learned relevance
 * check"): a small logistic model, per embedder and query script, of how likely a candidate the
 * precision gate keeps is related to the query, from four figures of the candidate against the
 * other candidates of the same query. A kept candidate whose probability is under the model's
 * threshold is dropped — except the anchor and the best candidate, which decide whether the query
 * has an answer at all (that stays the anchor rule's call, so the no-answer rates cannot rise). Learned on `bench/data/small-stores` with `scripts/gate-learn.ts`
 * (cross-validated by store); an embedder not in the table gets no check (the rule-based gate
 * alone, as before).
 *
 * The **answer check** (`answer`, issue 26's third step) is a second model of the same kind, asked
 * of the first kept candidate in a small store (the vector list holds every visible entry): under
 * its threshold the query has no answer there and the search returns nothing. It only removes, so
 * no-answer rates cannot rise either (docs/retrieval.md, "The answer check").
 *
 * The **injection bar** (`injection`, issue 26's fourth step) is a third model, over every result
 * (the first included) and all five figures, asked only of what is put into an agent's context
 * without the agent asking — the assembled context's related knowledge and goal focus — in a small
 * store: a result under its threshold is searchable but not injected (docs/retrieval.md, "The
 * injection bar"). Search results are never judged by it.
 */

/**
 * The fewest similarities a query's vector list must hold for the check to run: the smallest
 * store it was learned on (8 entries). Below that, the z-score it reads is measured over too few
 * entries to mean anything (two entries are always ±1), outside what the model was fitted on.
 */
export const MIN_LEARNED_LIST = 8

/** The figures of one candidate the model reads ({@link relevanceFeatures}). */
export interface RelevanceFeatures {
  /** Full-text strength: BM25 over the query's best possible score (0 without a shared term). */
  strength: number
  /** Strength over the best strength of the query's candidates (0-1; 0 when none shares a word). */
  relativeStrength: number
  /** How many standard deviations the similarity is above the mean of the query's vector list. */
  z: number
  /** ln(1 + the candidate's place in the fused list), 0 for the first. */
  rank: number
  /**
   * Its similarity minus the best similarity of the other entries of the vector list: how far
   * the most similar entry leads the runner-up (positive), or how far another one is behind the
   * most similar (negative).
   */
  lead: number
}

/** A logistic model over {@link RelevanceFeatures}: `p = 1 / (1 + e^−(bias + Σ weight·feature))`, kept at `p ≥ threshold`. */
export interface RelevanceModel {
  bias: number
  strength: number
  relativeStrength: number
  z: number
  rank: number
  /** The weight of `lead` (absent: 0, a model that does not read it). */
  lead?: number
  threshold: number
}

/** The learned models of an embedder family, for Latin-script and CJK queries. */
export interface LearnedRelevance {
  /** Matches the embedder's model name (`Embedder.model`). */
  model: RegExp
  latin: RelevanceModel
  cjk: RelevanceModel
  /**
   * The answer check ({@link answerModelFor}): how likely the first result of a small store's
   * search is related, asked when the vector list holds the whole visible store; under its
   * threshold the search returns nothing. Per script; absent: no check (the anchor rule alone).
   */
  answer?: { latin?: RelevanceModel; cjk?: RelevanceModel }
  /**
   * The injection bar ({@link injectionModelFor}): how likely each result of a small store's search
   * is related, asked of every result an injection carries (not of a search the agent made); under
   * its threshold the result is left out of the injection. Per script; absent: none (injection
   * carries what search returns).
   */
  injection?: { latin?: RelevanceModel; cjk?: RelevanceModel }
  /**
   * The injection bar was fitted on what the rules alone keep (not on the answer check's output):
   * an injection is judged by the bar in place of the answer check (multilingual-e5-small). Absent:
   * an injection is what search returns, then the bar.
   */
  injectionWithoutAnswer?: boolean
}

/** What a query's candidates share, that each candidate's figures are measured against. */
export interface QueryFigures {
  /** The best full-text strength among the query's candidates. */
  bestStrength: number
  /** Mean, standard deviation and least of the similarities of the query's vector list. */
  mean: number
  sd: number
  min: number
  /** The best and second-best similarity of the vector list (−Infinity when it has fewer). */
  best: number
  second: number
}

/**
 * The figures of one candidate: its full-text strength (null: not in the full-text list), its
 * similarity (null: not in the vector list, read as the list's least) and its place among the
 * query's eligible candidates (0-based).
 * @example
 * relevanceFeatures({ strength: 0.3, similarity: 0.5, place: 0 }, { bestStrength: 0.3, mean: 0.3, sd: 0.1, min: 0.1, best: 0.5, second: 0.4 })
 * // { strength: 0.3, relativeStrength: 1, z: 2, rank: 0, lead: 0.1 }
 */
export function relevanceFeatures(candidate: { strength: number | null; similarity: number | null; place: number }, query: QueryFigures): RelevanceFeatures {
  const strength = candidate.strength ?? 0
  const similarity = candidate.similarity ?? query.min
  return {
    strength,
    relativeStrength: query.bestStrength > 0 ? strength / query.bestStrength : 0,
    z: (similarity - query.mean) / Math.max(query.sd, 1e-3),
    rank: Math.log(1 + candidate.place),
    lead: query.second === -Infinity ? 0 : similarity - (similarity >= query.best ? query.second : query.best),
  }
}

/**
 * The mean, standard deviation and least of a query's vector similarities, with the best
 * full-text strength of its candidates.
 * @example
 * queryFigures([0.5, 0.3, 0.1], 0.4) // { bestStrength: 0.4, mean: 0.3, sd: ≈0.163, min: 0.1, best: 0.5, second: 0.3 }
 */
export function queryFigures(similarities: readonly number[], bestStrength: number): QueryFigures {
  const n = similarities.length
  if (n === 0) return { bestStrength, mean: 0, sd: 1, min: 0, best: -Infinity, second: -Infinity }
  let sum = 0
  let min = Infinity
  let best = -Infinity
  let second = -Infinity
  for (const s of similarities) {
    sum += s
    if (s < min) min = s
    if (s > best) {
      second = best
      best = s
    } else if (s > second) second = s
  }
  const mean = sum / n
  let squares = 0
  for (const s of similarities) squares += (s - mean) ** 2
  return { bestStrength, mean, sd: n > 1 ? Math.sqrt(squares / n) : 1, min, best, second }
}

/**
 * The model's probability that a candidate is related to its query.
 * @example
 * relevanceProbability(model, relevanceFeatures(c, figures)) >= model.threshold
 */
export function relevanceProbability(model: RelevanceModel, f: RelevanceFeatures): number {
  const logit =
    model.bias + model.strength * f.strength + model.relativeStrength * f.relativeStrength + model.z * f.z + model.rank * f.rank + (model.lead ?? 0) * f.lead
  return 1 / (1 + Math.exp(-logit))
}

/**
 * Learned on `bench/data/small-stores` (all 31 stores, the candidates the rule-based precision
 * gate keeps at top_k 5) by `scripts/gate-learn.ts`; the threshold is the one with the lowest
 * unrelated share whose hit rate at 5, on stores held out of the fit, is within 0.02 (two
 * answerable queries in a hundred) of the gate without the check (docs/retrieval.md, "The learned relevance check", has the held-out halves). Both
 * embedders read Chinese as the same hashed n-grams with the same fusion, so they share the CJK model.
 */
const CJK_MODEL: RelevanceModel = Object.freeze({ bias: -2.53, strength: -14.219, relativeStrength: 4.24, z: 0.639, rank: -0.75, threshold: 0.59 })
export const LEARNED_RELEVANCE: readonly LearnedRelevance[] = Object.freeze([
  {
    model: /^hashed-ngram-/,
    latin: Object.freeze({ bias: -1.974, strength: 7.576, relativeStrength: 0.542, z: 0.158, rank: -0.876, threshold: 0.58 }),
    cjk: CJK_MODEL,
    // The injection bar (issue 26, fourth step): English only, as for sentence below.
    injection: Object.freeze({
      latin: Object.freeze({ bias: 4.85, strength: 7.86, relativeStrength: -4.782, z: -0.17, rank: -4.115, lead: 4.808, threshold: 0.35 }),
    }),
  },
  {
    model: /^use-lite\+hashed-/,
    latin: Object.freeze({ bias: -2.847, strength: 9.439, relativeStrength: 1.102, z: 0.712, rank: -1.411, threshold: 0.7 }),
    cjk: CJK_MODEL,
    // The answer check (issue 26, third step): English only. On Chinese and with hashed n-grams on English its
    // held-out curve lowers nothing without losing hits (docs/retrieval.md, "The answer check").
    answer: Object.freeze({
      latin: Object.freeze({ bias: -5.179, strength: 8.2, relativeStrength: 3.167, z: 0.944, rank: 0, lead: 9.673, threshold: 0.25 }),
    }),
    // The injection bar (issue 26, fourth step), learned by `scripts/gate-learn.ts` (`--inject-cost 1`: the bar with
    // the most related minus unrelated entries carried, held out by store). On Chinese its best bar is none: every bar
    // loses more related entries than unrelated ones (docs/retrieval.md, "The injection bar").
    injection: Object.freeze({
      latin: Object.freeze({ bias: -5.705, strength: 7.913, relativeStrength: 2.805, z: 1.541, rank: 0.971, lead: 7.954, threshold: 0.48 }),
    }),
  },
  {
    // multilingual-e5-small with its convention (issue 40), over the rules of its calibration (calibration.ts), learned by
    // `scripts/gate-learn.ts --max-hit-loss 0.12` held out by store: the check of each kept candidate at the threshold with
    // the lowest unrelated share within 0.12 of the rules' hit rate; the answer check at 0.5, the point where both scripts
    // return fewer unrelated entries than the offline embedders do and find more (docs/retrieval.md, "Calibration per
    // model"); the injection bar, fitted on the rules' results, in place of the answer check for an injection, at the lowest
    // bar whose held-out tasks get at most 10% unrelated entries (EN 0.35: 9.4%, 2 of 31 empty; ZH 0.4: 3.4%, 1 of 29).
    model: /multilingual-e5-small(-q4)?(:mean)?#e5(-input-type)?$/u,
    latin: Object.freeze({ bias: -3.294, strength: 6.566, relativeStrength: 0.157, z: 1.413, rank: -0.784, threshold: 0.66 }),
    cjk: Object.freeze({ bias: -2.136, strength: -10.138, relativeStrength: 2.284, z: 1.24, rank: -0.791, threshold: 0.75 }),
    answer: Object.freeze({
      latin: Object.freeze({ bias: -2.68, strength: 8.031, relativeStrength: 0.888, z: 0.728, rank: 0, lead: 57.286, threshold: 0.5 }),
      cjk: Object.freeze({ bias: -0.254, strength: 9.298, relativeStrength: -1.106, z: 0.313, rank: 0, lead: 56.605, threshold: 0.5 }),
    }),
    injection: Object.freeze({
      latin: Object.freeze({ bias: -2.641, strength: 11.222, relativeStrength: 0.137, z: 0.995, rank: -0.64, lead: 32.328, threshold: 0.35 }),
      cjk: Object.freeze({ bias: -0.796, strength: 6.406, relativeStrength: -0.056, z: 0.286, rank: -0.382, lead: 56.586, threshold: 0.4 }),
    }),
    injectionWithoutAnswer: true,
  },
])

/**
 * The learned relevance model of an embedder for a query's script, or undefined (no check).
 * @example
 * relevanceModelFor('use-lite+hashed-v2-512', false)?.threshold
 */
export function relevanceModelFor(model: string, cjk: boolean, table: readonly LearnedRelevance[] = LEARNED_RELEVANCE): RelevanceModel | undefined {
  const learned = table.find((entry) => entry.model.test(model))
  return learned ? (cjk ? learned.cjk : learned.latin) : undefined
}

/**
 * The answer check of an embedder for a query's script, or undefined (none: the anchor rule
 * alone decides whether the query has an answer).
 * @example
 * answerModelFor('use-lite+hashed-v2-512', false)?.threshold
 */
export function answerModelFor(model: string, cjk: boolean, table: readonly LearnedRelevance[] = LEARNED_RELEVANCE): RelevanceModel | undefined {
  const answer = table.find((entry) => entry.model.test(model))?.answer
  return cjk ? answer?.cjk : answer?.latin
}

/**
 * Whether an embedder's injections are judged by its injection bar in place of the answer check
 * ({@link LearnedRelevance.injectionWithoutAnswer}).
 * @example
 * injectionReplacesAnswer('openai:multilingual-e5-small-q4#e5-input-type') // true
 */
export function injectionReplacesAnswer(model: string, table: readonly LearnedRelevance[] = LEARNED_RELEVANCE): boolean {
  return table.find((entry) => entry.model.test(model))?.injectionWithoutAnswer === true
}

/**
 * The injection bar of an embedder for a query's script, or undefined (none: an injection carries
 * what search returns).
 * @example
 * injectionModelFor('use-lite+hashed-v2-512', false)?.threshold
 */
export function injectionModelFor(model: string, cjk: boolean, table: readonly LearnedRelevance[] = LEARNED_RELEVANCE): RelevanceModel | undefined {
  const injection = table.find((entry) => entry.model.test(model))?.injection
  return cjk ? injection?.cjk : injection?.latin
}
