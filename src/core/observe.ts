/**
 * Observation ports: what a service tells whoever measures it (the composition root's
 * Prometheus registry, src/app/metrics.ts). Services take an observer as an argument and
 * never reach for a global; every method is cheap and synchronous.
 */

/** The stages of a search that are timed (see `runSearch` in src/knowledge/search/search.ts). */
export type SearchStage = 'fulltext' | 'embed' | 'vector' | 'rank' | 'total'

/** How a search used the response cache: answered from it, computed and (maybe) kept, or not cacheable. */
export type SearchCacheOutcome = 'hit' | 'miss' | 'bypass'

/** Told about every search. */
export interface SearchObserver {
  /** One stage's duration in seconds. */
  stage(stage: SearchStage, seconds: number): void
  cache(outcome: SearchCacheOutcome): void
}

/** One LLM request as the provider saw it (retries included in its duration). */
export interface LlmCallObservation {
  task: string
  model: string
  seconds: number
  failed: boolean
  promptTokens: number
  completionTokens: number
}
