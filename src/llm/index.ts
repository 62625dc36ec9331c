/**
 * `src/llm/`: the LLM provider port. KnowHub's learning features (semantic routing, evolve,
 * LLM slimming, extraction, compaction) talk to an OpenAI-compatible chat model through
 * this interface; the composition root (src/app/) builds the provider from the `llm`
 * config and hands it to the services. Every feature that needs one answers
 * `llm_not_configured` without it and changes nothing.
 */

/** The tasks KnowHub gives a model; each may name its own model in the config. */
export const LLM_TASKS = ['routing', 'evolve', 'slim', 'extract', 'compact'] as const
export type LlmTask = (typeof LLM_TASKS)[number]

/** One chat message as OpenAI-compatible endpoints take it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** A chat model behind an OpenAI-compatible endpoint. */
export interface LlmProvider {
  /** The default model name (a task may override it). */
  readonly model: string
  /**
   * One completion for `task`: the model's text answer.
   * @example
   * const text = await llm.chat('evolve', [{ role: 'user', content: 'Rewrite…' }])
   */
  chat(task: LlmTask, messages: readonly ChatMessage[], options?: { signal?: AbortSignal }): Promise<string>
}
