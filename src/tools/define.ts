/**
 * One definition per agent tool: name, description, zod input schema and handler.
 * JSON Schema for function calling (OpenAI, Anthropic, MCP) is derived from the
 * schema; arguments are validated with it before the handler runs.
 */
import { z } from 'zod'
import type { Logger } from '../core/logger.js'
import { parseWith } from '../core/validate.js'
import type { PackService } from '../packs/service.js'
import type { KnowHubBackend } from '../core/backend.js'

/**
 * Defaults the tools fill in when the model leaves a parameter out (seed 003 sets
 * them in agent code). Nothing is hard-coded: absent values fall back to the
 * server's defaults (scopes: the caller's own user scope; owner: the caller).
 * @example
 * createToolkit({ backend, defaults: { scopes: ['project:app'], agent_id: 'coder' } })
 */
export const ToolDefaults = z.object({
  /** Scopes of saved entries and resources. */
  scopes: z.array(z.string()).min(1).optional(),
  /** Owner of saved entries and resources (`kind:id`). */
  owner: z.string().optional(),
  /** `source.agent_id` of saved entries (the owner defaults to `agent:<id>` when it is the caller's agent). */
  agent_id: z.string().optional(),
  /** `source.submitted_by` of saved entries. */
  submitted_by: z.string().optional(),
})
export type ToolDefaults = z.infer<typeof ToolDefaults>

/**
 * What a tool returns: compact text for the model, and the structured data behind it.
 * @example
 * const { text, data } = await kit.callTool('knowledge_list', {})
 */
export interface ToolResult {
  text: string
  data: Record<string, unknown>
}

/** Everything a handler may use. */
export interface ToolContext {
  backend: KnowHubBackend
  defaults: ToolDefaults
  /** The packs service of the pack tools (absent: no packs, no pack tools). */
  packService?: PackService
  /** Names of packs activated so far in this toolkit (the resolver's default selection). */
  activated: Set<string>
  logger?: Logger
}

/** A tool definition with its argument type erased: what toolkits hold. */
export interface AgentTool {
  readonly name: string
  readonly description: string
  /** The zod schema of the arguments (a strict object). */
  readonly input: z.ZodObject
  /** Validates `args` (throws `validation_error` listing every issue), then runs the handler. */
  run(args: unknown, context: ToolContext): Promise<ToolResult>
}

/**
 * Defines a tool. The handler receives parsed arguments, defaults applied.
 * @example
 * const echo = defineTool({
 *   name: 'echo', description: 'Echoes text.', input: z.strictObject({ text: z.string() }),
 *   handler: async ({ text }) => ({ text, data: { text } }),
 * })
 */
export function defineTool<S extends z.ZodObject>(definition: {
  name: string
  description: string
  input: S
  handler: (args: z.output<S>, context: ToolContext) => Promise<ToolResult>
}): AgentTool {
  return {
    name: definition.name,
    description: definition.description,
    input: definition.input,
    run: (args, context) => definition.handler(parseWith(definition.input, args ?? {}, `arguments of ${definition.name}`), context),
  }
}

/**
 * A JSON Schema object (draft-07 subset) describing a tool's arguments.
 * @example
 * const schema: JsonSchema = toolJsonSchema(knowledgeSearch)
 */
export type JsonSchema = Record<string, unknown>

/**
 * The JSON Schema of a tool's arguments, as function-calling APIs take it: the
 * input side of the schema (defaults shown, defaulted fields not required), no `$schema`.
 * @example
 * toolJsonSchema(tool) // { type: 'object', properties: { query: { type: 'string', … } }, required: ['query'], additionalProperties: false }
 */
export function toolJsonSchema(tool: Pick<AgentTool, 'input'>): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.input, { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as JsonSchema
  return schema
}
