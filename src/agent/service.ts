/**
 * The agent service: an agent's starting context (seed 004), its function index, goal
 * trees with knowledge focus (seed 003) and compaction of its history. It holds the
 * settings and dependencies; the work is done by the modules of this folder.
 */
import { systemClock, type Clock } from '../core/clock.js'
import type { AgentConfig } from '../core/config.js'
import { noopLogger, type Logger } from '../core/logger.js'
import type { Principal } from '../core/principal.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { PackService } from '../packs/service.js'
import { goalStore } from '../store/goals.js'
import type { Store } from '../store/store.js'
import { assembleAgentContext, indexAgentFunctions, type AgentSettings } from './context.js'
import type { CompactInput, CompactResult } from '../core/agent.js'
import type { GoalRequest, GoalTree } from '../core/goals.js'
import type { LlmProvider } from '../llm/index.js'
import { compactHistory, type ExtractFn } from './compact.js'
import { runGoal } from './goals.js'
import type { AssembleContextInput, AssembledContext, FunctionIndex } from '../core/agent.js'

/** What the agent service needs. */
export interface AgentServiceDeps {
  store: Store
  knowledge: Pick<KnowledgeService, 'search'>
  /** The knowledge packs (their catalog goes into the context); none: no catalog. A remote caller gets `forCaller`'s view (none without it). */
  packs?: (Pick<PackService, 'catalog'> & Partial<Pick<PackService, 'forCaller'>>) | undefined
  /** The chat model compaction summarises with; none: `compact` answers `llm_not_configured`. */
  llm?: LlmProvider | undefined
  /** Extraction run on each compacted span (the knowledge service's); none: skipped and reported. */
  extract?: ExtractFn | undefined
  /** The `agent` config (defaults apply to what is missing). */
  config?: Partial<AgentConfig>
  clock?: Clock
  logger?: Logger
}

/** The agent service. Create with {@link createAgentService}. */
export interface AgentService {
  /** The settings in force (home, language, budget, thresholds). */
  readonly settings: AgentSettings & { compactThreshold: number }
  /**
   * Assembles an agent's starting context within its token budget. `remote`: for a caller over
   * HTTP or `/mcp` (the pack catalog is the packs it may see, with pack-relative paths).
   */
  assembleContext(input: AssembleContextInput & { principal: Principal; remote?: boolean }): Promise<AssembledContext>
  /** Regenerates the agent's `knowledge_function_index.json`. */
  indexFunctions(
    input: Pick<AssembleContextInput, 'agent' | 'home' | 'knowledgeFiles' | 'language'>,
  ): Promise<{ path: string; functions: number; index: FunctionIndex }>
  /** The `goal` tool: create, focus (injects related knowledge), complete, abandon, show. */
  goal(request: GoalRequest, principal: Principal): Promise<GoalTree>
  /** Past the threshold, summarises the older history into compact.md (previous kept) and extracts knowledge from it. */
  compact(input: CompactInput, principal: Principal): Promise<CompactResult>
}

/**
 * The settings in force for an agent config: its values, else the defaults.
 * @example
 * agentSettings({ home: '/srv/agents' }).budget // 16000
 */
export function agentSettings(config: AgentServiceDeps['config'] = {}): AgentSettings & { compactThreshold: number } {
  return {
    home: config.home,
    language: config.language ?? 'en',
    budget: config.budget ?? 16_000,
    maxFileBytes: config.maxFileBytes ?? 1_048_576,
    profileLimit: config.profileLimit ?? 50,
    relatedLimit: config.relatedLimit ?? 5,
    defaultsDir: config.defaultsDir,
    compactThreshold: config.compactThreshold ?? 70_000,
  }
}

/**
 * Creates the agent service.
 * @example
 * const agent = createAgentService({ store, knowledge, packs, config: { home: '/srv/agents' } })
 * const { messages, report } = await agent.assembleContext({ agent: 'book_agent', task: 'Write chapter 3', principal })
 */
export function createAgentService(deps: AgentServiceDeps): AgentService {
  const settings = agentSettings(deps.config)
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? noopLogger
  const assembly = { store: deps.store, knowledge: deps.knowledge, packs: deps.packs, settings, clock, logger }
  const goals = { goals: goalStore(deps.store.db), store: deps.store, knowledge: deps.knowledge, clock, language: settings.language }
  return {
    settings,
    assembleContext: ({ principal, remote, ...input }) =>
      assembleAgentContext(remote ? { ...assembly, packs: deps.packs?.forCaller?.(principal) } : assembly, input, principal),
    indexFunctions: (input) => indexAgentFunctions(settings, input, clock),
    goal: (request, principal) => runGoal(goals, request, principal),
    compact: (input, principal) => compactHistory({ llm: deps.llm, extract: deps.extract, settings, clock, logger }, input, principal),
  }
}
