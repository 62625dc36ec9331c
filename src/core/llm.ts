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

/**
 * How structured answers are asked for, best first: the JSON-schema response format, JSON mode
 * with the schema (llama.cpp's server: a grammar), plain JSON mode, and the schema told in the
 * prompt with no response format (src/llm/formats.ts).
 */
export const STRUCTURED_FORMATS = ['json_schema', 'json_object_schema', 'json_object', 'text'] as const
export const StructuredFormat = z.enum(STRUCTURED_FORMATS)
export type StructuredFormat = z.infer<typeof StructuredFormat>

/**
 * What the provider learnt about its endpoint since this process started: the structured form
 * in use (and the forms the endpoint refused), and every failure counted by its reason
 * (`timeout`, `cancelled` (the caller stopped waiting: routing's deadline), `network`,
 * `http_<status>`, `not_chat_completion`, `format_refused`, `not_json`, `schema`, `truncated`). `truncated_answers`: answers cut at the token cap (`finish_reason: length`).
 * @example
 * LlmHealth.parse({ structured_output: { configured: 'json_schema', current: 'json_object_schema', refused: ['json_schema'] }, failures: { http_500: 1 }, truncated_answers: 0 })
 */
export const LlmHealth = z.object({
  structured_output: z.object({ configured: StructuredFormat, current: StructuredFormat, refused: z.array(StructuredFormat) }),
  failures: z.record(z.string(), z.number().int().min(0)),
  truncated_answers: z.number().int().min(0),
})
export type LlmHealth = z.output<typeof LlmHealth>
