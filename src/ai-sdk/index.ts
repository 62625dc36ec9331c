/**
 * `knowhub/ai-sdk`: KnowHub in the Vercel AI SDK (`ai`, an optional peer dependency: install it
 * beside knowhub). Nothing else of the package imports this module, so `ai` is needed only here.
 *
 * - {@link knowhubTools}: the seed-003 tools (`knowledge_search`, `knowledge_save`, … `goal`) as AI
 *   SDK `tool()`s: their input schema is the tool's one zod definition (src/tools/, the same the
 *   OpenAI, Anthropic and MCP schemas come from), `execute` is the toolkit's `callTool`, and the model
 *   reads the tool's text (knowledge wrapped as data, as over MCP) while the step keeps `{ text, data }`.
 *   A failed call throws `error [code]: message`, which the AI SDK hands the model as the tool's error.
 * - {@link withGoalFocus}: seed 003's goal focus as context: the goal tree with the knowledge related
 *   to the goal, wrapped as data, prepended to a message list (after its system prompt).
 *
 * @example
 * import { generateText, stepCountIs } from 'ai'
 * import { knowhubTools, withGoalFocus } from 'knowhub/ai-sdk'
 * const tools = knowhubTools({ client: { baseUrl: 'http://127.0.0.1:8420', token } })
 * const messages = await withGoalFocus([{ role: 'user', content: 'Log in to site A' }], { tools, trace_id: 'run-1', goal_id: '1' })
 * const { text } = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) })
 */
import { tool, type ModelMessage, type Tool } from 'ai'
import { clientBackend } from '../client/backend.js'
import { createClient, type ClientOptions } from '../client/client.js'
import { createToolkit, toolErrorText, type Toolkit } from '../tools/toolkit.js'
import type { ToolDefaults, ToolResult } from '../tools/define.js'

/** Options of {@link knowhubTools}. */
export interface KnowHubToolsOptions {
  /** The toolkit whose tools to offer (`createToolkit` from `knowhub/tools`, over any backend). Default: one over `client`. */
  toolkit?: Toolkit
  /** Where the KnowHub server is and the token (`knowhub/client`'s options), when no `toolkit` is given. */
  client?: ClientOptions
  /** Values the tools fill in when the model leaves a parameter out (scopes, owner, agent_id, …), when no `toolkit` is given. */
  defaults?: ToolDefaults
  /** Only these tools (by name; seed 002's `get_knowledge` and `save_knowledge` may be named too). Default: every tool of the toolkit. */
  names?: readonly string[]
}

/** The tools of {@link knowhubTools}: a `ToolSet` for `generateText` / `streamText`, by tool name. */
export type KnowHubTools = Record<string, Tool<Record<string, unknown>, ToolResult>>

/** The toolkit each AI SDK tool runs on, kept beside the tool set (for {@link withGoalFocus}). */
const TOOLKITS = new WeakMap<KnowHubTools, Toolkit>()

/**
 * The KnowHub tools as AI SDK tools, ready for `generateText({ tools })`.
 * @example
 * const tools = knowhubTools({ client: { baseUrl: process.env.KNOWHUB_URL, token: process.env.KNOWHUB_TOKEN } })
 * await generateText({ model, tools, prompt: 'What do we know about the login page?', stopWhen: stepCountIs(3) })
 */
export function knowhubTools(options: KnowHubToolsOptions = {}): KnowHubTools {
  const toolkit =
    options.toolkit ??
    createToolkit({ backend: clientBackend(createClient(options.client)), ...(options.defaults ? { defaults: options.defaults } : {}), seedAliases: true })
  const names = options.names ?? toolkit.tools.filter((t) => !['get_knowledge', 'save_knowledge'].includes(t.name)).map((t) => t.name)
  const tools: KnowHubTools = {}
  for (const name of names) {
    const defined = toolkit.get(name)
    if (!defined) throw new Error(`Unknown tool "${name}" (available: ${toolkit.tools.map((t) => t.name).join(', ')})`)
    tools[name] = tool<Record<string, unknown>, ToolResult>({
      description: defined.description,
      inputSchema: defined.input,
      execute: async (input) => {
        try {
          return await toolkit.callTool(name, input)
        } catch (error) {
          throw new Error(toolErrorText(error), { cause: error })
        }
      },
      toModelOutput: ({ output }) => ({ type: 'text', value: output.text }),
    })
  }
  TOOLKITS.set(tools, toolkit)
  return tools
}

/** Options of {@link withGoalFocus}. */
export interface GoalFocusOptions {
  /** The tools from {@link knowhubTools} (their toolkit runs the focus), or a toolkit. */
  tools: KnowHubTools | Toolkit
  /** The trace (run or conversation) the goal tree belongs to. */
  trace_id: string
  /** The goal to focus (e.g. "1" or "1.2"). */
  goal_id: string
  /** How many knowledge entries to attach (default 3). */
  top_k?: number
  /** Leave out entries scored below this (default 3). */
  min_score?: number
  /**
   * The role of the message that carries it: `user` (default: the knowledge is data, never an
   * instruction, and the AI SDK warns about system messages inside `messages`), or `system`.
   */
  role?: 'user' | 'system'
}

/**
 * Seed 003's goal focus for a model call: focuses the goal (the `goal` tool's `focus`: KnowHub
 * searches knowledge with the goal's description) and puts the goal tree with that knowledge,
 * wrapped as data, before the conversation: one message (`role`, default `user`) after the list's
 * own leading system messages. Returns a new list; `messages` is left as it is.
 * @example
 * const messages = await withGoalFocus([{ role: 'user', content: 'Go on' }], { tools, trace_id: 'run-1', goal_id: '1' })
 * messages[0] // { role: 'user', content: '🎯 Goal tree (trace run-1)\n…\n📚 Related knowledge (2)\n<knowledge_entries …' }
 */
export async function withGoalFocus(messages: readonly ModelMessage[], options: GoalFocusOptions): Promise<ModelMessage[]> {
  const toolkit = 'callTool' in options.tools ? (options.tools as Toolkit) : TOOLKITS.get(options.tools)
  if (!toolkit) throw new Error('withGoalFocus: tools must come from knowhubTools (or be a toolkit)')
  const { text } = await toolkit.callTool('goal', {
    action: 'focus',
    trace_id: options.trace_id,
    goal_id: options.goal_id,
    ...(options.top_k !== undefined ? { top_k: options.top_k } : {}),
    ...(options.min_score !== undefined ? { min_score: options.min_score } : {}),
  })
  const leading = messages.findIndex((m) => m.role !== 'system')
  const at = leading === -1 ? messages.length : leading
  const focus: ModelMessage = options.role === 'system' ? { role: 'system', content: text } : { role: 'user', content: text }
  return [...messages.slice(0, at), focus, ...messages.slice(at)]
}
