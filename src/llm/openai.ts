/**
 * The LLM provider over any OpenAI-compatible `POST /chat/completions` (OpenAI, OpenRouter,
 * Ollama, vLLM, LM Studio, llama.cpp): a model per task, timeouts, retries with backoff on
 * 429/5xx (core/openai-http.ts), a concurrency limit (p-limit), a `max_tokens` cap on every
 * request and one deadline per call, structured answers (the best form the endpoint takes:
 * ./formats.ts; validated with zod, what can be read without guessing read, one repair request)
 * and token usage counted per task, every failure by its reason (`health()`). Prompts and
 * completions are never logged. Every message is scanned for secrets before it is sent and every
 * answer before it is returned (./secrets.ts): a secret reaches neither the model nor, through
 * its answer, the store.
 */
import pLimit from 'p-limit'
import { z } from 'zod'
import { LlmConfig } from '../core/config.js'
import { KnowHubError, isKnowHubError } from '../core/errors.js'
import type { LlmHealth, LlmTask, LlmUsage, StructuredFormat } from '../core/llm.js'
import type { Logger } from '../core/logger.js'
import type { LlmCallObservation } from '../core/observe.js'
import { noopLogger } from '../core/logger.js'
import { createOpenAIHttp, type OpenAIHttp } from '../core/openai-http.js'
import { parseWith } from '../core/validate.js'
import type { ChatMessage, ChatOptions, LlmProvider, StructuredOptions } from './types.js'
import { isFormatRefusal, nextFormat, refusesFormat, responseFormat, withSchemaInPrompt } from './formats.js'
import { parseStructured } from './structured.js'
import { redactDeep, redactSecrets } from './secrets.js'

export interface OpenAIChatDeps {
  fetch?: typeof globalThis.fetch
  logger?: Logger
  /** Told every call's counts (the composition root adds them to the store for `knowhub status`). */
  onUsage?: (usage: LlmUsage) => void | Promise<void>
  /** Told every request's duration (its retries included) and outcome: the composition root's metrics. */
  onCall?: (call: LlmCallObservation) => void
  /** First backoff delay between retries in ms (default 500; tests use less). */
  retryBaseDelayMs?: number
}

const ChatCompletion = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }), finish_reason: z.string().nullable().optional() })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).optional(),
})

/** One answered request: its text, whether it was cut at the token cap, and its tokens. */
interface Completion {
  text: string
  truncated: boolean
  promptTokens: number
  completionTokens: number
}

/** The format of one request: a structured form, or a plain chat answer. */
type RequestFormat = StructuredFormat | 'plain'

/** What a provider keeps while it lives: its config, endpoint, counters and the structured form in use. */
interface ProviderState {
  config: LlmConfig
  deps: OpenAIChatDeps
  logger: Logger
  http: OpenAIHttp
  limit: ReturnType<typeof pLimit>
  totals: Map<string, LlmUsage>
  health: LlmHealth
  modelFor(task: LlmTask): string
}

/**
 * The provider of an `llm` config.
 * @example
 * const llm = createOpenAIChat({ url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b' })
 * const answer = await llm.chat('evolve', [{ role: 'user', content: 'Say hi' }])
 */
export function createOpenAIChat(raw: z.input<typeof LlmConfig>, deps: OpenAIChatDeps = {}): LlmProvider {
  const config = parseWith(LlmConfig, raw, 'llm configuration')
  const logger = deps.logger ?? noopLogger
  const base = config.url.endsWith('/') ? config.url : `${config.url}/`
  const http = createOpenAIHttp({
    url: new URL('chat/completions', base),
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
    fetch: deps.fetch ?? globalThis.fetch,
    logger,
    retry: { retries: config.retries, baseDelayMs: deps.retryBaseDelayMs ?? 500 },
    errorCode: 'llm_failed',
    timeoutCode: 'llm_timeout',
    logPrefix: 'llm',
    label: 'Chat request',
    // A server error that names the response format is a refusal of the form: the next form is asked, not the same again.
    final: (status, reason) => status >= 500 && refusesFormat(status, reason),
  })
  const state: ProviderState = {
    config,
    deps,
    logger,
    http,
    limit: pLimit(config.concurrency),
    totals: new Map(),
    health: {
      structured_output: { configured: config.structuredOutput, current: config.structuredOutput, refused: [] },
      failures: {},
      truncated_answers: 0,
    },
    modelFor: (task) => config.models[task] ?? config.model,
  }
  return {
    model: config.model,
    modelFor: state.modelFor,
    chat: (task, messages, options = {}) => withDeadline(state, task, options, (signal) => chatAnswer(state, task, messages, { ...options, signal })),
    json: (task, messages, schema, options) =>
      withDeadline(state, task, options, (signal) => jsonAnswer(state, task, messages, schema, { ...options, signal })),
    usage: () => [...state.totals.values()].map((u) => ({ ...u })),
    health: () => structuredClone(state.health),
  }
}

/** Counts a failure under its reason (see LlmHealth). */
function countFailure(state: ProviderState, reason: string): void {
  state.health.failures[reason] = (state.health.failures[reason] ?? 0) + 1
}

/** The reason a failed request is counted under. */
function failureReason(error: unknown): string {
  if (!isKnowHubError(error)) return 'error'
  if (error.code === 'llm_timeout') return 'timeout'
  if (error.code === 'llm_invalid_output') return typeof error.details?.reason === 'string' ? error.details.reason : 'not_chat_completion'
  const status = error.details?.status
  return typeof status === 'number' ? `http_${status}` : 'network'
}

/**
 * Runs one call of a feature within its deadline (`callTimeoutMs`): past it, `llm_timeout`
 * (counted as `timeout`). The caller's own signal still cancels it as the caller's.
 */
async function withDeadline<T>(state: ProviderState, task: LlmTask, options: ChatOptions, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ms = options.callTimeoutMs ?? state.config.callTimeoutMs
  const deadline = AbortSignal.timeout(ms)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    return await run(signal)
  } catch (error) {
    if (isKnowHubError(error)) throw error
    // The caller stopped waiting (routing's own deadline): counted, and its reason rethrown as is.
    if (options.signal?.aborted) countFailure(state, 'cancelled')
    if (!deadline.aborted || options.signal?.aborted) throw error
    countFailure(state, 'timeout')
    throw new KnowHubError('llm_timeout', `The model did not finish the ${task} call within ${ms} ms (llm.callTimeoutMs)`, { task, reason: 'timeout' })
  }
}

/** Counts one request (`calls: 1`), or with `calls: 0` marks an answered request as failed after all (its answer unusable). */
function count(state: ProviderState, task: LlmTask, model: string, failed: boolean, completion?: Completion, calls = 1): void {
  const usage: LlmUsage = {
    task,
    model,
    calls,
    failures: failed ? 1 : 0,
    prompt_tokens: completion?.promptTokens ?? 0,
    completion_tokens: completion?.completionTokens ?? 0,
  }
  const key = `${task}\u0000${model}`
  const total = state.totals.get(key)
  state.totals.set(key, total ? addUsage(total, usage) : usage)
  Promise.resolve(state.deps.onUsage?.(usage)).catch((error: unknown) => state.logger.warn('llm.usage.unsaved', { task, reason: (error as Error).message }))
}

/** The messages with every secret redacted, and how many were. */
async function redacted(messages: readonly ChatMessage[]): Promise<{ safe: ChatMessage[]; found: number }> {
  let found = 0
  const safe = await Promise.all(
    messages.map(async (m) => {
      const { text, found: secrets } = await redactSecrets(m.content)
      found += secrets.length
      return { role: m.role, content: text }
    }),
  )
  return { safe, found }
}

/** One HTTP request and its parsed completion. */
async function complete(state: ProviderState, task: LlmTask, messages: readonly ChatMessage[], format: RequestFormat, options: ChatOptions, schema?: object) {
  const model = options.model ?? state.modelFor(task)
  const { safe, found } = await redacted(format === 'text' && schema ? withSchemaInPrompt(messages, schema) : messages)
  if (found > 0) state.logger.warn('llm.secrets.redacted', { task, where: 'request', secrets: found })
  const body: Record<string, unknown> = {
    model,
    messages: safe,
    temperature: state.config.temperature,
    max_tokens: Math.min(options.maxTokens ?? state.config.maxTokens, state.config.maxTokens),
  }
  const response_format = responseFormat(format, schemaName(options), schema)
  if (response_format) body.response_format = response_format
  const started = performance.now()
  const json = await state.limit(() => state.http.post(body, options.signal, { timeoutMs: options.timeoutMs, retries: options.retries }))
  const parsed = ChatCompletion.safeParse(json)
  if (!parsed.success)
    throw new KnowHubError('llm_invalid_output', `${state.http.where} answered a chat request with something that is not a chat completion`, {
      task,
      model,
      reason: 'not_chat_completion',
    })
  const choice = parsed.data.choices[0]!
  const completion: Completion = {
    text: choice.message.content ?? '',
    truncated: choice.finish_reason === 'length',
    promptTokens: Math.max(0, Math.round(parsed.data.usage?.prompt_tokens ?? 0)),
    completionTokens: Math.max(0, Math.round(parsed.data.usage?.completion_tokens ?? 0)),
  }
  if (completion.truncated) state.health.truncated_answers++
  const ms = Math.round(performance.now() - started)
  state.logger.info('llm.call', {
    task,
    model,
    ms,
    prompt_tokens: completion.promptTokens,
    completion_tokens: completion.completionTokens,
    truncated: completion.truncated,
  })
  return completion
}

/** One counted request; failures are counted (by reason) and rethrown with the task in their details. */
async function call(state: ProviderState, task: LlmTask, messages: readonly ChatMessage[], format: RequestFormat, options: ChatOptions, schema?: object) {
  const model = options.model ?? state.modelFor(task)
  const started = performance.now()
  const observe = (failed: boolean, completion?: Completion): void =>
    state.deps.onCall?.({
      task,
      model,
      seconds: (performance.now() - started) / 1000,
      failed,
      promptTokens: completion?.promptTokens ?? 0,
      completionTokens: completion?.completionTokens ?? 0,
    })
  try {
    const completion = await complete(state, task, messages, format, options, schema)
    count(state, task, model, false, completion)
    observe(false, completion)
    return completion
  } catch (error) {
    count(state, task, model, true)
    observe(true)
    if (options.signal?.aborted && !isKnowHubError(error)) throw error
    countFailure(state, isFormatRefusal(error) && format !== 'plain' ? 'format_refused' : failureReason(error))
    if (error instanceof KnowHubError) throw new KnowHubError(error.code, error.message, { ...error.details, task }, { cause: error.cause })
    throw error
  }
}

/** A structured request in the form in use; an endpoint that refuses it is asked in the next form, from then on. */
async function structuredCall(state: ProviderState, task: LlmTask, messages: readonly ChatMessage[], schema: object, options: StructuredOptions) {
  const formats = state.health.structured_output
  for (;;) {
    const format = formats.current
    try {
      return await call(state, task, messages, format, options, schema)
    } catch (error) {
      const next = nextFormat(format)
      if (!isFormatRefusal(error) || next === undefined) throw error
      // Another call may have stepped down meanwhile: step from the form this one was refused.
      if (formats.current === format) {
        state.logger.warn('llm.structured_output.refused', { task, refused: format, next })
        formats.refused.push(format)
        formats.current = next
      }
    }
  }
}

async function chatAnswer(state: ProviderState, task: LlmTask, messages: readonly ChatMessage[], options: ChatOptions): Promise<string> {
  const completion = await call(state, task, messages, 'plain', options)
  if (completion.truncated) state.logger.warn('llm.answer.truncated', { task, completion_tokens: completion.completionTokens })
  const { text, found } = await redactSecrets(completion.text)
  if (found.length > 0) state.logger.warn('llm.secrets.redacted', { task, where: 'answer', secrets: found.length })
  return text
}

/** An unusable answer: counted under its reason, and (cut at the token cap, or after the repair) the error. */
function unusable(state: ProviderState, task: LlmTask, model: string, reason: string, problems: readonly string[], repaired: boolean): KnowHubError {
  count(state, task, model, true, undefined, 0)
  countFailure(state, reason)
  const what = reason === 'truncated' ? 'was cut at the token cap (max_tokens)' : `is not valid${repaired ? ' even after a repair request' : ''}`
  return new KnowHubError('llm_invalid_output', `The model's answer for ${task} ${what}: ${problems.slice(0, 5).join('; ')}`, { task, reason, problems })
}

async function jsonAnswer<T extends z.ZodType>(
  state: ProviderState,
  task: LlmTask,
  messages: readonly ChatMessage[],
  schema: T,
  options: StructuredOptions,
): Promise<z.output<T>> {
  const jsonSchema = z.toJSONSchema(options.ask ?? schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  delete jsonSchema.$schema
  const model = options.model ?? state.modelFor(task)
  const first = await structuredCall(state, task, messages, jsonSchema, options)
  const parsed = parseStructured(first.text, schema)
  if (parsed.ok) return redactDeep(parsed.value)
  // Cut at the token cap: a repair would be cut too. The caller may ask again with less input.
  if (first.truncated) throw unusable(state, task, model, 'truncated', parsed.problems, false)
  // An answer that fails validation is a failed call in the usage figures, even though the HTTP request succeeded.
  count(state, task, model, true, undefined, 0)
  countFailure(state, parsed.reason)
  state.logger.warn('llm.answer.invalid', { task, reason: parsed.reason, problems: parsed.problems.length, repair: true })
  const repair: ChatMessage[] = [...messages, { role: 'assistant', content: first.text }, { role: 'user', content: repairPrompt(parsed.problems) }]
  const second = await structuredCall(state, task, repair, jsonSchema, options)
  const repaired = parseStructured(second.text, schema)
  if (repaired.ok) return redactDeep(repaired.value)
  throw unusable(state, task, model, second.truncated ? 'truncated' : repaired.reason, repaired.problems, true)
}

function schemaName(options: ChatOptions): string {
  const name = (options as Partial<StructuredOptions>).name ?? 'answer'
  return name.replace(/[^A-Za-z0-9_-]/gu, '_').slice(0, 64)
}

/** The sum of two usage records of the same task and model. */
function addUsage(a: LlmUsage, b: LlmUsage): LlmUsage {
  return {
    task: a.task,
    model: a.model,
    calls: a.calls + b.calls,
    failures: a.failures + b.failures,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
  }
}

function repairPrompt(problems: readonly string[]): string {
  return [
    'Your answer above cannot be used:',
    ...problems.map((p) => `- ${p}`),
    'Answer again with only the corrected JSON object, matching the schema, and nothing else.',
  ].join('\n')
}
