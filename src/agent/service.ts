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
import { goalStore } from '../store/agent/goals.js'
import type { Store } from '../store/store.js'
import { assembleAgentContext, gatherKnowledge, indexAgentFunctions, type AgentSettings } from './context.js'
import {
  AgentContextRequest,
  AgentKnowledgeRequest,
  AssembleContextInput,
  CompactRequest,
  LocalCompactRequest,
  type AgentKnowledge,
  type CompactInput,
  type CompactResult,
} from '../core/agent.js'
import { KnowHubError } from '../core/errors.js'
import { requirePermission } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import { agentDocumentStore } from '../store/agent/agent-documents.js'
import { createAgentDocuments, type AgentDocuments } from './documents.js'
import type { GoalRequest, GoalTree } from '../core/goals.js'
import type { LlmProvider } from '../llm/index.js'
import { compactHistory, type ExtractFn } from './compact.js'
import { runGoal } from './goals.js'
import { AgentName as CompactInputAgent, type AssembledContext, type FunctionIndex } from '../core/agent.js'

/** What the agent service needs. */
export interface AgentServiceDeps {
  store: Store
  knowledge: Pick<KnowledgeService, 'search' | 'profileViews' | 'activeViews'>
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
   * Assembles an agent's starting context within its token budget. Local (the library, the CLI
   * on its own database): the agent's folder under the agent home. `remote` (a caller over HTTP
   * or `/mcp`): the agent stored in the caller's org, as the caller may see it (`not_found`
   * otherwise), never a file of the server's; the pack catalog is the packs it may see.
   */
  assembleContext(input: AssembleContextInput & { principal: Principal; remote?: boolean }): Promise<AssembledContext>
  /** The context a remote caller asks for (`POST /api/agent/context`'s body, `AgentContextRequest`): the agent stored in its org. */
  contextFor(raw: unknown, principal: Principal): Promise<AssembledContext>
  /** KnowHub's part of a context the caller assembles itself (`POST /api/agent/knowledge`). */
  knowledgeFor(input: unknown, principal: Principal, options?: { remote?: boolean }): Promise<AgentKnowledge>
  /** Stored agents' documents (`/api/agents/…`). */
  readonly documents: AgentDocuments
  /** Compacts a stored agent's history into its `compact.md` document (`POST /api/agents/{agent}/compact`). */
  compactStored(agent: string, input: unknown, principal: Principal): Promise<CompactResult>
  /** Compacts a history whose memory the caller keeps: the previous memory in, the new one out; nothing stored (`POST /api/agent/compact`). */
  compactHeld(input: unknown, principal: Principal): Promise<CompactResult>
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
    detectLanguage: config.language === undefined,
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
  const assembly = { knowledge: deps.knowledge, packs: deps.packs, settings, clock, logger }
  // Learning when a goal completes needs the model: without one the tree says not_configured.
  const goals = {
    goals: goalStore(deps.store.db),
    knowledge: deps.knowledge,
    clock,
    language: settings.language,
    extract: deps.llm ? deps.extract : undefined,
    logger,
  }
  const documents = createAgentDocuments({ docs: agentDocumentStore(deps.store.db), settings, clock })
  const compaction = { llm: deps.llm, extract: deps.extract, settings, clock, logger }
  const remoteAssembly = (principal: Principal) => ({ ...assembly, packs: deps.packs?.forCaller?.(principal) })
  const assembleContext: AgentService['assembleContext'] = async ({ principal, remote, ...raw }) => {
    if (!remote) return assembleAgentContext(assembly, raw, principal)
    const input = parseWith(AssembleContextInput, raw, 'agent context')
    const local = (['home', 'template', 'project'] as const).find((field) => input[field] !== undefined)
    if (local) {
      throw new KnowHubError(
        'validation_error',
        'A remote caller cannot name an agent home, a template or a project folder: the agent is the one stored on the server',
        {
          issues: [{ path: [local], message: 'not accepted from a remote caller' }],
        },
      )
    }
    requirePermission(principal, 'read')
    return assembleAgentContext(remoteAssembly(principal), input, principal, await documents.source(input.agent, principal))
  }
  return {
    settings,
    documents,
    assembleContext,
    async contextFor(raw, principal) {
      const { knowledge_files: knowledgeFiles, ...input } = parseWith(AgentContextRequest, raw, 'agent context request')
      return assembleContext({ ...input, ...(knowledgeFiles ? { knowledgeFiles } : {}), principal, remote: true })
    },
    async knowledgeFor(raw, principal, options = {}) {
      const input = parseWith(AgentKnowledgeRequest, raw ?? {}, 'agent knowledge request')
      requirePermission(principal, 'read')
      const from = options.remote ? remoteAssembly(principal) : assembly
      return gatherKnowledge(from, principal, input.task, input.language ?? settings.language)
    },
    async compactStored(agent, raw, principal) {
      const input = parseWith(CompactRequest, raw, 'compaction request')
      const name = parseWith(CompactInputAgent, agent, 'agent name')
      const place = await documents.memory(name, principal)
      return compactHistory(compaction, { ...input, agent: name }, principal, place)
    },
    async compactHeld(raw, principal) {
      const { previous_memory: previous, ...input } = parseWith(LocalCompactRequest, raw, 'compaction request')
      return compactHistory(compaction, input, principal, { previous: async () => previous, save: async (summary) => ({ memory: `${summary}\n` }) })
    },
    indexFunctions: (input) => indexAgentFunctions(settings, input, clock),
    goal: (request, principal) => runGoal(goals, request, principal),
    compact: (input, principal) => compactHistory(compaction, input, principal),
  }
}
