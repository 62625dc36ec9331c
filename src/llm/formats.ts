/**
 * How a structured answer is asked for, best first, and how an endpoint's refusal of a form is
 * recognised. OpenAI, vLLM and Ollama take `json_schema`; llama.cpp's Python server
 * (llama_cpp.server) refuses it with an HTTP 500 naming `response_format` and takes
 * `{type: 'json_object', schema}`, which it turns into a grammar; some servers take only JSON
 * mode; a few take no `response_format` at all, and then the prompt carries the schema.
 * A refused form is not asked for again by this process (the provider steps down the ladder).
 */
import { isKnowHubError } from '../core/errors.js'
import { STRUCTURED_FORMATS, type StructuredFormat } from '../core/llm.js'
import type { ChatMessage } from './types.js'

export { STRUCTURED_FORMATS, type StructuredFormat } from '../core/llm.js'

/**
 * The next form after a refusal, or undefined after the last.
 * @example
 * nextFormat('json_schema') // 'json_object_schema'
 */
export function nextFormat(format: StructuredFormat): StructuredFormat | undefined {
  return STRUCTURED_FORMATS[STRUCTURED_FORMATS.indexOf(format) + 1]
}

/**
 * The `response_format` of a request in `format` (none for `text`).
 * @example
 * responseFormat('json_object_schema', 'answer', { type: 'object' }) // { type: 'json_object', schema: { type: 'object' } }
 */
export function responseFormat(format: StructuredFormat | 'plain', name: string, schema: object | undefined): Record<string, unknown> | undefined {
  if (format === 'json_schema') return { type: 'json_schema', json_schema: { name, schema, strict: false } }
  if (format === 'json_object_schema') return { type: 'json_object', schema: schema && boundedForGrammar(schema) }
  if (format === 'json_object') return { type: 'json_object' }
  return undefined
}

/**
 * Whether a failed request was the endpoint refusing the `response_format` rather than failing:
 * HTTP 400 or 422, or a server error whose message names the response format (llama_cpp.server
 * answers 500 to a form its request model does not know).
 * @example
 * isFormatRefusal(new KnowHubError('llm_failed', "HTTP 500: ... ('body', 'response_format', 'type') ...", { status: 500 })) // true
 */
export function isFormatRefusal(error: unknown): boolean {
  if (!isKnowHubError(error, 'llm_failed')) return false
  const status = error.details?.status
  return typeof status === 'number' && refusesFormat(status, error.message)
}

/**
 * Whether an HTTP failure reads as a refused response format (see {@link isFormatRefusal}); such a
 * 5xx is not retried.
 * @example
 * refusesFormat(500, "Input should be 'text' or 'json_object' (response_format.type)") // true
 */
export function refusesFormat(status: number, reason: string): boolean {
  if (status === 400 || status === 422) return true
  return status >= 500 && /response_format|json_schema/u.test(reason)
}

/**
 * The messages of a `text`-form request: the schema told in words at the end of the system
 * message (or as one), since the endpoint takes no response format.
 * @example
 * withSchemaInPrompt([{ role: 'system', content: 'Extract…' }, { role: 'user', content: '…' }], { type: 'object' })
 */
export function withSchemaInPrompt(messages: readonly ChatMessage[], schema: object): ChatMessage[] {
  const note = `Answer with only one JSON object that matches this JSON schema, and nothing else (no prose, no code fence):\n${JSON.stringify(schema)}`
  const [first, ...rest] = messages
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n${note}` }, ...rest]
  return [{ role: 'system', content: note }, ...messages]
}

/** Largest `maxLength` / `maxItems` a grammar is built with (see {@link boundedForGrammar}). */
export const GRAMMAR_BOUNDS = { maxLength: 600, maxItems: 50 } as const

/**
 * The schema without the bounds a grammar cannot hold: llama.cpp's server turns `maxLength: n`
 * and `maxItems: n` into n nested optional rules, so a bound of thousands takes gigabytes (a
 * 1e9 bound took 21 GB before the kernel killed it, here). Bounds above {@link GRAMMAR_BOUNDS}
 * are left out; `max_tokens` and the validation still hold the answer.
 * @example
 * boundedForGrammar({ type: 'string', maxLength: 20000 }) // { type: 'string' }
 */
export function boundedForGrammar(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(boundedForGrammar)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'maxLength' && typeof value === 'number' && value > GRAMMAR_BOUNDS.maxLength) continue
    if (key === 'maxItems' && typeof value === 'number' && value > GRAMMAR_BOUNDS.maxItems) continue
    out[key] = boundedForGrammar(value)
  }
  return out
}
