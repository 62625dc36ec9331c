/**
 * `knowhub/agent`: an agent's complete, budgeted starting context from KnowHub (seed 004:
 * template, self-awareness, knowledge files, compact memory, function index; knowledge
 * entries and pack catalog wrapped as data), goal trees whose focus injects knowledge
 * (seed 003), and compaction of long histories. Node-only (reads the agent's folder).
 */
export { createAgentService, type AgentService, type AgentServiceDeps } from './service.js'
export type { AgentSettings } from './context.js'
export {
  AgentContextRequest,
  CompactInput,
  CompactResult,
  HistoryMessage,
  AgentLanguage,
  AgentName,
  AssembleContextInput,
  AssembledContext,
  ContextMessage,
  ContextPart,
  ContextReport,
  FunctionEntry,
  FunctionIndex,
} from '../core/agent.js'
export { buildFunctionIndex, findFunctions, type IndexSource } from './function-index.js'
export { PLACEHOLDERS, renderTemplate, checkTemplate, type Placeholder } from './template.js'
export { AGENT_DEFAULTS_DIR } from './labels.js'
export { Goal, GoalId, GoalRequest, GoalTree, TraceId } from '../core/goals.js'
export type { ExtractFn } from './compact.js'
