/**
 * What the agent tools need of KnowHub: one method per seed-003 HTTP endpoint, taking
 * the request body (or query) as JSON and returning the same JSON as the HTTP API.
 * Two implementations: `localBackend` (in-process services, src/app/backend.ts) and the
 * HTTP client (src/client/backend.ts). The tools never know which one they run on.
 */
import type {
  BatchFeedbackInput,
  BatchFeedbackResult,
  FeedbackInput,
  KnowledgeEntry,
  KnowledgeListPage,
  ListInput,
  SaveKnowledgeInput,
  SearchInput,
  SearchResponse,
} from '../core/knowledge.js'
import type { AgentContextRequest, AssembledContext, CompactRequest, CompactResult } from '../core/agent.js'
import type { GoalRequest, GoalTree } from '../core/goals.js'
import type { Resource, SaveResourceInput } from '../core/resources.js'
import type { SlimInput, SlimResult } from '../core/slim.js'
import type { ExtractInput, ExtractResult } from '../core/extract.js'

/** The body of `GET /api/knowledge` (a page of entries): the core's `KnowledgeListPage`. */
export type KnowledgeListResponse = KnowledgeListPage

/** The body of `POST /api/knowledge/batch_update`: the core's `BatchFeedbackResult`. */
export type BatchUpdateResponse = BatchFeedbackResult

/**
 * The KnowHub operations the agent tools call, shaped like the HTTP API of seed 003.
 * Every method rejects with a `KnowHubError` (string `code`) on failure.
 */
export interface ToolBackend {
  /** `GET /api/knowledge/search?q&top_k&min_score&types` */
  search(query: SearchInput): Promise<SearchResponse>
  /** `POST /api/knowledge` */
  save(body: SaveKnowledgeInput): Promise<KnowledgeEntry>
  /** `GET /api/knowledge/{id}` */
  get(id: string): Promise<KnowledgeEntry>
  /** `PUT /api/knowledge/{id}` (feedback: helpful/harmful case, score, evolve) */
  update(id: string, body: FeedbackInput): Promise<KnowledgeEntry>
  /** `POST /api/knowledge/batch_update` */
  batchUpdate(body: BatchFeedbackInput): Promise<BatchUpdateResponse>
  /** `GET /api/knowledge?limit&types&scopes` */
  list(query: ListInput): Promise<KnowledgeListResponse>
  /** `POST /api/knowledge/slim` */
  slim(body: SlimInput): Promise<SlimResult>
  /** `POST /api/knowledge/extract` (needs the server's LLM) */
  extract(body: ExtractInput): Promise<ExtractResult>
  /** `POST /api/resource` */
  resourceSave(body: SaveResourceInput): Promise<Resource>
  /** `GET /api/resource/{id}` (`secure_body` only when asked for and allowed) */
  resourceGet(id: string, options?: { includeSecret?: boolean }): Promise<Resource>
  /** `POST /api/goals` (seed 003's goal tool); absent: no `goal` tool. */
  goal?(body: GoalRequest): Promise<GoalTree>
  /** `POST /api/agent/context` (seed 004); absent: no `agent-context` MCP prompt. */
  agentContext?(body: AgentContextRequest): Promise<AssembledContext>
  /** `POST /api/agents/{agent}/compact` (seed 004 compaction; in-process: the agent's folder); absent: no `agent_compact` tool. */
  agentCompact?(agent: string, body: CompactRequest): Promise<CompactResult>
}
