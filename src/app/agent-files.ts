/**
 * The agent operations on a local agent's files that need no database of their own, for
 * commands that run anywhere — also beside a server holding the data folder, or with `--url`:
 * the function index; a context assembled from the user's `~/.agent/NAME/` with KnowHub's
 * knowledge from a server; and compaction of the user's agent by that server's LLM, the memory
 * kept in the user's folder. The files are read here, by the user's own process: a server
 * never reads its HOME for a caller.
 */
import { folderMemory } from '../agent/compact.js'
import { assembleFrom, folderSource, indexAgentFunctions as indexFunctions, type GatheredKnowledge } from '../agent/context.js'
import { agentHome } from '../agent/files.js'
import { agentSettings } from '../agent/service.js'
import { systemClock } from '../core/clock.js'
import type { LocalAgentFiles } from '../core/backend.js'
import { AgentConfig, type KnowHubConfig } from '../core/config.js'
import {
  AssembleContextInput,
  CompactInput,
  type AgentLanguage,
  type AssembledContext,
  type CompactResult,
  type FunctionIndex,
  type LocalCompactRequest,
} from '../core/agent.js'
import { noopLogger } from '../core/logger.js'
import { parseWith } from '../core/validate.js'

/**
 * Regenerates an agent's `knowledge_function_index.json` with the config's agent settings.
 * @example
 * const { path, functions } = await indexAgentFunctions(loadConfig(), { agent: 'book_agent' })
 */
export function indexAgentFunctions(
  config: Pick<KnowHubConfig, 'agent'>,
  input: Pick<AssembleContextInput, 'agent' | 'home' | 'knowledgeFiles' | 'language' | 'project'>,
): Promise<{ path: string; functions: number; index: FunctionIndex }> {
  return indexFunctions(agentSettings(config.agent), input, systemClock)
}

/**
 * Assembles a local agent's context: its folder on this machine (read here, links refused),
 * KnowHub's part from `knowledge` (a server's `POST /api/agent/knowledge`).
 * @example
 * const context = await assembleLocalContext(config, { agent: 'book_agent', task }, (task, language) => kh.agent.knowledge({ task, language }))
 */
export async function assembleLocalContext(
  config: Pick<KnowHubConfig, 'agent'>,
  raw: AssembleContextInput,
  knowledge: (task: string | undefined, language: AgentLanguage) => Promise<GatheredKnowledge>,
): Promise<AssembledContext> {
  const settings = agentSettings(config.agent)
  const input = parseWith(AssembleContextInput, raw, 'agent context')
  const source = await folderSource(agentHome(input.home ?? settings.home), input.agent, settings.maxFileBytes, input.project)
  return assembleFrom({ source, knowledge, settings, clock: systemClock, logger: noopLogger }, input)
}

/**
 * Compacts a local agent's history with a server's LLM and extraction: the previous
 * `compact.md` is read here and sent, the new memory comes back and is written here (the
 * previous one kept in `compact_history/`). The server stores no memory.
 * @example
 * const result = await compactLocalAgent(config, { agent: 'book_agent', history }, (body) => kh.agent.compactHeld(body))
 */
export async function compactLocalAgent(
  config: Pick<KnowHubConfig, 'agent'>,
  raw: CompactInput,
  compactHeld: (body: LocalCompactRequest) => Promise<CompactResult>,
): Promise<CompactResult> {
  const settings = agentSettings(config.agent)
  const { home, ...input } = parseWith(CompactInput, raw, 'compaction request')
  const place = folderMemory(agentHome(home ?? settings.home), input.agent, settings.maxFileBytes, systemClock)
  const previous = await place.previous()
  const result = await compactHeld({
    ...input,
    threshold: input.threshold ?? settings.compactThreshold,
    ...(previous !== undefined ? { previous_memory: previous } : {}),
  })
  const { memory, ...rest } = result
  if (!result.compacted || memory === undefined) return rest
  return { ...rest, ...(await place.save(memory.replace(/\n$/u, ''), previous)) }
}

/**
 * The local agent folders of this machine, for the HTTP adapter of the port (`clientBackend`'s
 * `agentFiles`): the CLI beside a server reads and writes the user's `~/.agent/NAME/` here.
 * @example
 * const backend = clientBackend(client, { agentFiles: async () => localAgentFiles })
 */
export const localAgentFiles: LocalAgentFiles = {
  context: (input, config, knowledge) => assembleLocalContext({ agent: parseWith(AgentConfig, config, 'agent config') }, input, knowledge),
  compact: (input, config, compactHeld) => compactLocalAgent({ agent: parseWith(AgentConfig, config, 'agent config') }, input, compactHeld),
}
