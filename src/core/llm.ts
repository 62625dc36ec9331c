/**
 * What the rest of KnowHub knows about the LLM: the tasks a model is given (each may name
 * its own model in the config) and the token usage counted per task. The provider itself
 * lives in src/llm/.
 */
import { z } from 'zod'

/**
 * The tasks KnowHub gives a model; each may name its own model in the config (`llm.models`).
 * @example
 * LLM_TASKS.includes('extract') // true
 */
export const LLM_TASKS = ['routing', 'evolve', 'slim', 'extract', 'compact'] as const
export const LlmTask = z.enum(LLM_TASKS)
export type LlmTask = z.infer<typeof LlmTask>

/**
 * Calls and tokens of one task on one model, as counted by the provider and kept by the store.
 * @example
 * LlmUsage.parse({ task: 'extract', model: 'gpt-4o-mini', calls: 2, failures: 0, prompt_tokens: 900, completion_tokens: 200 })
 */
export const LlmUsage = z.object({
  task: LlmTask,
  model: z.string(),
  /** Requests answered (each retry of a failed request is not a call). */
  calls: z.number().int().min(0),
  /** Calls that ended in an error (after retries) or an unusable answer. */
  failures: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
})
export type LlmUsage = z.output<typeof LlmUsage>
