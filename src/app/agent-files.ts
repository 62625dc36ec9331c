/**
 * The agent operations that touch only an agent's files, for commands that need no
 * database (so they also run beside a server holding the data folder): the function index.
 */
import { indexAgentFunctions as indexFunctions } from '../agent/context.js'
import { agentSettings } from '../agent/service.js'
import { systemClock } from '../core/clock.js'
import type { KnowHubConfig } from '../core/config.js'
import type { AssembleContextInput, FunctionIndex } from '../core/agent.js'

/**
 * Regenerates an agent's `knowledge_function_index.json` with the config's agent settings.
 * @example
 * const { path, functions } = await indexAgentFunctions(loadConfig(), { agent: 'book_agent' })
 */
export function indexAgentFunctions(
  config: Pick<KnowHubConfig, 'agent'>,
  input: Pick<AssembleContextInput, 'agent' | 'home' | 'knowledgeFiles' | 'language'>,
): Promise<{ path: string; functions: number; index: FunctionIndex }> {
  return indexFunctions(agentSettings(config.agent), input, systemClock)
}
