/**
 * The LLM provider over any OpenAI-compatible `POST /chat/completions` (OpenAI, OpenRouter,
 * Ollama, vLLM, LM Studio): a model per task, timeouts, retries with backoff on 429/5xx
 * (core/openai-http.ts), a concurrency limit (p-limit), structured answers (JSON schema
 * response format, else JSON mode; validated with zod, one repair request) and token usage
 * counted per task. Prompts and completions are never logged. Every message is scanned for
 * secrets before it is sent and every answer before it is returned (./secrets.ts): a secret
 * reaches neither the model nor, through its answer, the store.
 */
import pLimit from 'p-limit'
import { z } from 'zod'
import { LlmConfig } from '../core/config.js'
import { KnowHubError } from '../core/errors.js'
import type { LlmTask, LlmUsage } from '../core/llm.js'
import type { Logger } from '../core/logger.js'
import type { LlmCallObservation } from '../core/observe.js'
import { noopLogger } from '../core/logger.js'
import { createOpenAIHttp } from '../core/openai-http.js'
import { parseWith } from '../core/validate.js'
import type { ChatMessage, ChatOptions, LlmProvider, StructuredOptions } from './types.js'
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
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).optional(),
})

/** One answered request: its text and tokens. */
interface Completion {
  text: string
  promptTokens: number
  completionTokens: number
}

type Format = 'json_schema' | 'json_object' | 'text'

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
  })
  const limit = pLimit(config.concurrency)
  const totals = new Map<string, LlmUsage>()
  // An endpoint that refuses the json_schema response format is asked in JSON mode from then on.
  let structured: Format = config.structuredOutput
  const modelFor = (task: LlmTask): string => config.models[task] ?? config.model

  /** Counts one request (`calls: 1`), or with `calls: 0` marks an answered request as failed after all (its answer unusable). */
  function count(task: LlmTask, model: string, failed: boolean, completion?: Completion, calls = 1): void {
    const usage: LlmUsage = {
      task,
      model,
      calls,
      failures: failed ? 1 : 0,
      prompt_tokens: completion?.promptTokens ?? 0,
      completion_tokens: completion?.completionTokens ?? 0,
    }
    const key = `${task}\u0000${model}`
    const total = totals.get(key)
    totals.set(key, total ? addUsage(total, usage) : usage)
    Promise.resolve(deps.onUsage?.(usage)).catch((error: unknown) => logger.warn('llm.usage.unsaved', { task, reason: (error as Error).message }))
  }

  async function complete(task: LlmTask, messages: readonly ChatMessage[], format: Format, options: ChatOptions, schema?: object): Promise<Completion> {
    const model = options.model ?? modelFor(task)
    let redacted = 0
    const safe = await Promise.all(
      messages.map(async (m) => {
        const { text, found } = await redactSecrets(m.content)
        redacted += found.length
        return { role: m.role, content: text }
      }),
    )
    if (redacted > 0) logger.warn('llm.secrets.redacted', { task, where: 'request', secrets: redacted })
    const body: Record<string, unknown> = { model, messages: safe, temperature: config.temperature }
    if (format === 'json_schema') body.response_format = { type: 'json_schema', json_schema: { name: schemaName(options), schema, strict: false } }
    if (format === 'json_object') body.response_format = { type: 'json_object' }
    const started = performance.now()
    const json = await limit(() => http.post(body, options.signal, { timeoutMs: options.timeoutMs, retries: options.retries }))
    const parsed = ChatCompletion.safeParse(json)
    if (!parsed.success)
      throw new KnowHubError('llm_invalid_output', `${http.where} answered a chat request with something that is not a chat completion`, { task, model })
    const completion: Completion = {
      text: parsed.data.choices[0]?.message.content ?? '',
      promptTokens: Math.max(0, Math.round(parsed.data.usage?.prompt_tokens ?? 0)),
      completionTokens: Math.max(0, Math.round(parsed.data.usage?.completion_tokens ?? 0)),
    }
    logger.info('llm.call', {
      task,
      model,
      ms: Math.round(performance.now() - started),
      prompt_tokens: completion.promptTokens,
      completion_tokens: completion.completionTokens,
    })
    return completion
  }

  /** One counted request; failures are counted and rethrown with the task in their details. */
  async function call(task: LlmTask, messages: readonly ChatMessage[], format: Format, options: ChatOptions, schema?: object): Promise<Completion> {
    const model = options.model ?? modelFor(task)
    const started = performance.now()
    const observe = (failed: boolean, completion?: Completion): void =>
      deps.onCall?.({
        task,
        model,
        seconds: (performance.now() - started) / 1000,
        failed,
        promptTokens: completion?.promptTokens ?? 0,
        completionTokens: completion?.completionTokens ?? 0,
      })
    try {
      const completion = await complete(task, messages, format, options, schema)
      count(task, model, false, completion)
      observe(false, completion)
      return completion
    } catch (error) {
      count(task, model, true)
      observe(true)
      if (error instanceof KnowHubError) throw new KnowHubError(error.code, error.message, { ...error.details, task }, { cause: error.cause })
      throw error
    }
  }

  /** A structured request in the current format, falling back to JSON mode when the endpoint refuses the schema format. */
  async function structuredCall(task: LlmTask, messages: readonly ChatMessage[], schema: object, options: StructuredOptions): Promise<Completion> {
    if (structured !== 'json_schema') return call(task, messages, structured, options, schema)
    try {
      return await call(task, messages, 'json_schema', options, schema)
    } catch (error) {
      if (!(error instanceof KnowHubError) || error.code !== 'llm_failed' || error.details?.status !== 400) throw error
      logger.warn('llm.json_schema.refused', { task, fallback: 'json_object' })
      const completion = await call(task, messages, 'json_object', options, schema)
      structured = 'json_object'
      return completion
    }
  }

  return {
    model: config.model,
    modelFor,
    async chat(task, messages, options = {}) {
      const { text, found } = await redactSecrets((await call(task, messages, 'text', options)).text)
      if (found.length > 0) logger.warn('llm.secrets.redacted', { task, where: 'answer', secrets: found.length })
      return text
    },
    async json(task, messages, schema, options) {
      const jsonSchema = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })
      const model = options.model ?? modelFor(task)
      const first = await structuredCall(task, messages, jsonSchema, options)
      const parsed = parseStructured(first.text, schema)
      if (parsed.ok) return redactDeep(parsed.value)
      // An answer that fails validation is a failed call in the usage figures, even though the HTTP request succeeded.
      count(task, model, true, undefined, 0)
      logger.warn('llm.answer.invalid', { task, problems: parsed.problems.length, repair: true })
      const repair: ChatMessage[] = [...messages, { role: 'assistant', content: first.text }, { role: 'user', content: repairPrompt(parsed.problems) }]
      const second = await structuredCall(task, repair, jsonSchema, options)
      const repaired = parseStructured(second.text, schema)
      if (repaired.ok) return redactDeep(repaired.value)
      count(task, model, true, undefined, 0)
      throw new KnowHubError(
        'llm_invalid_output',
        `The model's answer for ${task} is not valid even after a repair request: ${repaired.problems.slice(0, 5).join('; ')}`,
        {
          task,
          problems: repaired.problems,
        },
      )
    },
    usage: () => [...totals.values()].map((u) => ({ ...u })),
  }
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
