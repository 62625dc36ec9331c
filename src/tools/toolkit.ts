/**
 * A toolkit: the tools available for one backend (and packs), with their JSON
 * Schema for OpenAI and Anthropic function calling and a `callTool` dispatcher.
 */
import { KnowHubError, isKnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import type { PackIndexCache } from '../packs/pack-index/pack-index.js'
import type { PackService } from '../packs/service.js'
import type { LoadedPack } from '../packs/schema.js'
import type { KnowHubBackend } from '../core/backend.js'
import { ToolDefaults, toolJsonSchema, type AgentTool, type JsonSchema, type ToolContext, type ToolResult } from './define.js'
import { agentCompactTool } from './agent-compact.js'
import { goalTool } from './goal.js'
import { KNOWLEDGE_TOOLS, SEED_002_ALIASES } from './knowledge.js'
import { packCatalog, packTools, toolPackService } from './packs.js'

/** A tool for the OpenAI Chat Completions API (`tools: [...]`). */
export interface OpenAITool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
}

/** A tool for the OpenAI Responses API (`tools: [...]`). */
export interface OpenAIResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: JsonSchema
}

/** A tool for the Anthropic Messages API (`tools: [...]`). */
export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonSchema
}

/**
 * Tools as OpenAI Chat Completions function tools.
 * @example
 * await openai.chat.completions.create({ model, messages, tools: toOpenAITools(KNOWLEDGE_TOOLS) })
 */
export function toOpenAITools(tools: readonly AgentTool[]): OpenAITool[] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) } }))
}

/**
 * Tools as OpenAI Responses API function tools.
 * @example
 * await openai.responses.create({ model, input, tools: toOpenAIResponsesTools(KNOWLEDGE_TOOLS) })
 */
export function toOpenAIResponsesTools(tools: readonly AgentTool[]): OpenAIResponsesTool[] {
  return tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) }))
}

/**
 * Tools as Anthropic Messages API tools.
 * @example
 * await anthropic.messages.create({ model, messages, max_tokens: 1024, tools: toAnthropicTools(KNOWLEDGE_TOOLS) })
 */
export function toAnthropicTools(tools: readonly AgentTool[]): AnthropicTool[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: toolJsonSchema(tool) }))
}

/** LLM failures: the code and a fixed message reach the model (the endpoint's address and answer stay in the log). */
const LLM_FAILURES = new Map<string, string>([
  ['llm_failed', 'The LLM endpoint failed'],
  ['llm_timeout', 'The LLM endpoint did not answer in time'],
  ['llm_invalid_output', 'The LLM answered something unusable'],
])

/** Codes whose message may carry internals (SQL, paths): a model sees a generic message instead. */
const HIDDEN_CODES = new Set<string>(['internal_error', 'database_error', 'config_error'])

/**
 * True when a failure is a bug or an outage (its details belong in a log, not in front of a model).
 * @example
 * if (isInternalToolError(error)) logger.error('tool.failed', { message: (error as Error).message })
 */
export function isInternalToolError(error: unknown): boolean {
  return !isKnowHubError(error) || HIDDEN_CODES.has(error.code) || error.code === 'embedder_failed' || LLM_FAILURES.has(error.code)
}

/**
 * A failed call as text a model can read and act on: `error [code]: message`, then
 * every field issue of a validation error. Internal failures (not KnowHub errors,
 * database, configuration) get a generic message, as over HTTP: nothing internal leaks.
 * @example
 * toolErrorText(error) // 'error [not_found]: No knowledge entry knowledge-x'
 */
export function toolErrorText(error: unknown): string {
  if (isKnowHubError(error, 'embedder_failed')) return 'error [embedder_failed]: The embedding provider failed; try again later'
  if (isKnowHubError(error) && LLM_FAILURES.has(error.code))
    return `error [${error.code}]: ${LLM_FAILURES.get(error.code)}; nothing was changed, try again later`
  if (!isKnowHubError(error) || HIDDEN_CODES.has(error.code)) return 'error [internal_error]: Internal error (details are in the server log)'
  const lines = [`error [${error.code}]: ${error.message}`]
  const issues = (error.details as { issues?: Array<{ path: string; message: string }> } | undefined)?.issues
  if (issues && issues.length > 1) for (const issue of issues) lines.push(`- ${issue.path}: ${issue.message}`)
  return lines.join('\n')
}

/** Options of {@link createToolkit}. */
export interface ToolkitOptions {
  backend: KnowHubBackend
  /** Values filled in when the model leaves a parameter out (see {@link ToolDefaults}). */
  defaults?: ToolDefaults
  /** Knowledge packs for the pack tools (e.g. `discoverPacks(…).packs`); none → no pack tools. */
  packs?: readonly LoadedPack[]
  /** Blended into pack resolution. */
  embedder?: Embedder
  /**
   * Pack indexes kept between resolve calls. Default: one per toolkit
   * ({@link toolPackIndexCache}); a server that builds a toolkit per request
   * passes one shared cache.
   */
  packIndexCache?: PackIndexCache
  /**
   * The packs service the pack tools call (its available packs become the tools'
   * pack names). Default: one built from `packs`, `embedder` and `packIndexCache`.
   */
  packService?: PackService
  /** List seed 002's names too (`get_knowledge`, `save_knowledge`); they are answered either way. */
  seedAliases?: boolean
  logger?: Logger
}

/** The tools of one backend, ready to hand to a model and to dispatch its calls. */
export interface Toolkit {
  readonly tools: readonly AgentTool[]
  /** The pack catalog with its behaviour instruction, or `undefined` when there is no pack. */
  readonly catalog: string | undefined
  /** The tool of this name, if available. */
  get(name: string): AgentTool | undefined
  /**
   * Validates the arguments and runs the tool. Rejects with a `KnowHubError`:
   * `not_found` for an unknown tool, `validation_error` (every issue with its path)
   * for bad arguments, or whatever the backend raised.
   */
  callTool(name: string, args: unknown): Promise<ToolResult>
  toOpenAITools(): OpenAITool[]
  toOpenAIResponsesTools(): OpenAIResponsesTool[]
  toAnthropicTools(): AnthropicTool[]
}

/**
 * Builds a toolkit: the eight knowledge tools, the `goal` and `agent_compact` tools when the
 * backend has agents, and the three pack tools when packs are given.
 * @example
 * const hub = await openKnowHub(config)
 * const kit = createToolkit({ backend: localBackend(hub), packs: (await discoverPacks({ projectDir })).packs })
 * const result = await kit.callTool('knowledge_search', { query: 'selenium login' })
 * console.log(result.text)
 */
export function createToolkit(options: ToolkitOptions): Toolkit {
  const packService = options.packService ?? toolPackService(options)
  const packs = packService?.available() ?? []
  const tools: readonly AgentTool[] = [
    ...KNOWLEDGE_TOOLS,
    ...(options.seedAliases ? SEED_002_ALIASES : []),
    ...(options.backend.agent ? [goalTool, agentCompactTool] : []),
    ...packTools(packs),
  ]
  const byName = new Map([...SEED_002_ALIASES, ...tools].map((tool) => [tool.name, tool]))
  const context: ToolContext = {
    backend: options.backend,
    defaults: ToolDefaults.parse(options.defaults ?? {}),
    ...(packService && packs.length > 0 ? { packService } : {}),
    activated: new Set(),
    ...(options.logger ? { logger: options.logger } : {}),
  }
  return {
    tools,
    catalog: packCatalog(packs),
    get: (name) => byName.get(name),
    async callTool(name, args) {
      const tool = byName.get(name)
      if (!tool) throw new KnowHubError('not_found', `Unknown tool "${name}" (available: ${tools.map((t) => t.name).join(', ')})`, { tool: name })
      return tool.run(args, context)
    },
    toOpenAITools: () => toOpenAITools(tools),
    toOpenAIResponsesTools: () => toOpenAIResponsesTools(tools),
    toAnthropicTools: () => toAnthropicTools(tools),
  }
}
