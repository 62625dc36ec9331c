/**
 * The LLM port's types: messages, per-call options and the provider interface.
 */
import type { z } from 'zod'
import type { LlmHealth, LlmTask, LlmUsage } from '../core/llm.js'

/** One chat message as OpenAI-compatible endpoints take it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** Per-call options: cancellation, and a shorter timeout or fewer retries than configured (routing). */
export interface ChatOptions {
  signal?: AbortSignal
  timeoutMs?: number
  retries?: number
  /** A model for this call only (e.g. the `model` of `POST /api/knowledge/slim`). */
  model?: string
  /** `max_tokens` of this call (default, and at most: the config's `maxTokens`). */
  maxTokens?: number
  /** Longest time of the whole call, retries and repair included (default: the config's `callTimeoutMs`). */
  callTimeoutMs?: number
}

/** Options of a structured call. */
export interface StructuredOptions extends ChatOptions {
  /** Name of the answer's schema as the endpoint sees it (letters, digits, `_`). */
  name: string
  /**
   * The schema the model is asked with, when it differs from the one that validates the answer:
   * tight lengths and counts (a grammar-constrained small model cannot ramble past them), while
   * validation stays lenient so that one odd item does not sink the answer.
   */
  ask?: z.ZodType
}

/** A chat model behind an OpenAI-compatible endpoint. */
export interface LlmProvider {
  /** The default model name (a task may override it). */
  readonly model: string
  /**
   * The model a task uses.
   * @example
   * llm.modelFor('routing') // 'qwen2.5:3b' when llm.models.routing says so, else llm.model
   */
  modelFor(task: LlmTask): string
  /**
   * One completion for `task`: the model's text answer.
   * @example
   * const text = await llm.chat('evolve', [{ role: 'user', content: 'Rewrite…' }])
   */
  chat(task: LlmTask, messages: readonly ChatMessage[], options?: ChatOptions): Promise<string>
  /**
   * A structured answer: asked for with the JSON schema of `schema` (or the next form the endpoint
   * takes), parsed and validated; one repair request when it is not valid, then
   * `llm_invalid_output` (details: `reason` not_json | schema | truncated). An answer cut at the
   * token cap gets no repair request: the caller may ask again with less input.
   * @example
   * const { content } = await llm.json('evolve', messages, z.object({ content: z.string() }), { name: 'evolved_entry' })
   */
  json<T extends z.ZodType>(task: LlmTask, messages: readonly ChatMessage[], schema: T, options: StructuredOptions): Promise<z.output<T>>
  /**
   * Calls and tokens per task and model since this provider was built.
   * @example
   * llm.usage().find((u) => u.task === 'extract')?.calls
   */
  usage(): LlmUsage[]
  /**
   * The structured form in use and every failure by its reason, since this provider was built.
   * @example
   * llm.health().structured_output.current // 'json_object_schema' after llama.cpp refused json_schema
   */
  health(): LlmHealth
}
