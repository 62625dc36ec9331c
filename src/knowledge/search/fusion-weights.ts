/**
 * What each candidate list is worth, per embedder and per query script (issue 17.5): the
 * weights of score fusion learned on the dev sets (docs/retrieval-log.md, "Fusion weights"), so
 * that hybrid search never recalls less than its better half. An embedder not in the table
 * gets {@link DEFAULT_FUSION}'s weights.
 */

/**
 * Fusion of the full-text and vector lists: `score` (min-max normalised scores,
 * weighted and summed) or `rrf` (reciprocal rank, `weight / (k + rank)`).
 */
export interface FusionOptions {
  method: 'score' | 'rrf'
  fulltext: number
  vector: number
  /** The rank offset of `rrf` (default 60). */
  k?: number
}

/**
 * Score fusion with the vector list at half the weight of BM25: the weights of an embedder
 * with no learned weights (score fusion beat rank fusion on every set; docs/retrieval.md).
 */
export const DEFAULT_FUSION: FusionOptions = Object.freeze({ method: 'score', fulltext: 1, vector: 0.5 })

/** Learned vector-list weights (full-text 1) of an embedder family, for Latin-script and CJK queries. */
export interface LearnedWeights {
  /** Matches the embedder's model name (`Embedder.model`). */
  model: RegExp
  latin: number
  cjk: number
}

/**
 * The vector list's weight against full-text 1, by embedder, chosen on LoCoMo turns-dev and
 * facts-dev (English) and zh-agent (Chinese) with the relevance gate on: the value that keeps
 * hybrid recall@10 at or above both halves on every set with the best sum over the sets
 * (`bench/fusion-weights.ts`). Hashed n-grams are a weak signal on English (0.3); USE lite
 * carries meaning (0.7). Both read Chinese as hashed n-grams, where no weight from 0 to 1
 * moved recall by more than one query: 0.5 stays.
 */
export const LEARNED_FUSION_WEIGHTS: readonly LearnedWeights[] = Object.freeze([
  { model: /^hashed-ngram-/, latin: 0.3, cjk: 0.5 },
  { model: /^use-lite\+hashed-/, latin: 0.7, cjk: 0.5 },
  // multilingual-e5-small (issue 40): a model of meaning in both scripts. English 1 (turns-dev 0.669, facts-dev 0.763
  // against 0.653 / 0.751 at the default 0.5); Chinese 1.5 (zh-agent 0.976 against 0.963).
  { model: /multilingual-e5-small(-q4)?(:mean)?#e5(-input-type)?$/u, latin: 1, cjk: 1.5 },
])

/**
 * The fusion of one query: the learned weights of the embedder for the query's script,
 * else {@link DEFAULT_FUSION}.
 * @example
 * fusionFor('hashed-ngram-v2-512', false) // { method: 'score', fulltext: 1, vector: 0.3 }
 */
export function fusionFor(model: string, cjk: boolean, table: readonly LearnedWeights[] = LEARNED_FUSION_WEIGHTS): FusionOptions {
  const learned = table.find((entry) => entry.model.test(model))
  return learned ? { method: 'score', fulltext: 1, vector: cjk ? learned.cjk : learned.latin } : DEFAULT_FUSION
}
