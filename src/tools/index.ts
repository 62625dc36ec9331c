/**
 * `knowhub/tools`: the agent tools of seed 003 (knowledge_search, knowledge_save,
 * knowledge_update, knowledge_batch_update, knowledge_list, knowledge_slim,
 * resource_save, resource_get) and the knowledge-pack tools (knowledge_pack_list,
 * knowledge_pack_activate, knowledge_pack_resolve): one definition each, JSON Schema
 * for OpenAI and Anthropic function calling derived from it, handlers over a
 * the one port, {@link KnowHubBackend} (in-process services — `localBackend` from `knowhub` — or the HTTP
 * client's `clientBackend`).
 *
 * @example
 * import { localBackend } from 'knowhub'
 * import { createToolkit } from 'knowhub/tools'
 * const kit = createToolkit({ backend: localBackend(hub, hub.config.principal) })
 * const tools = kit.toOpenAITools()
 * const result = await kit.callTool('knowledge_search', { query: 'selenium login' })
 */
export type { KnowHubBackend } from '../core/backend.js'
export { ToolDefaults, defineTool, toolJsonSchema } from './define.js'
export type { AgentTool, JsonSchema, ToolContext, ToolResult } from './define.js'
export { DATA_PREAMBLE, wrapEntries, wrapResource } from './format.js'
export type { EntryView } from './format.js'
export {
  DEFAULT_SLIM_MODEL,
  KNOWLEDGE_TOOLS,
  knowledgeBatchUpdate,
  knowledgeList,
  knowledgeSave,
  knowledgeSearch,
  knowledgeSlim,
  knowledgeExtract,
  knowledgeUpdate,
  resourceGet,
  userProfile,
  resourceSave,
  SEED_002_ALIASES,
} from './knowledge.js'
export { saveTarget, type SaveTarget, type SaveTargetArgs } from './save-defaults.js'
export { PACK_TOOL_NAMES, TOOL_INDEX_CACHE, packCatalog, packTools, toolPackIndexCache } from './packs.js'
export { createToolkit, isInternalToolError, toAnthropicTools, toOpenAIResponsesTools, toOpenAITools, toolErrorText } from './toolkit.js'
export type { AnthropicTool, OpenAIResponsesTool, OpenAITool, Toolkit, ToolkitOptions } from './toolkit.js'
