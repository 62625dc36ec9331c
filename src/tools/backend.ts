/**
 * What the agent tools need of KnowHub: one method per seed-003 HTTP endpoint, taking
 * the request body (or query) as JSON and returning the same JSON as the HTTP API.
 * Two implementations: `localBackend` (in-process services, below) and the HTTP client
 * (src/client). The tools never know which one they run on.
 */
import type { FeedbackInput, BatchFeedbackInput, KnowledgeEntry, ListInput, SaveKnowledgeInput, SearchInput, SearchResponse } from '../core/knowledge.js'
import type { Principal } from '../core/principal.js'
import { Resource, type SaveResourceInput } from '../core/resources.js'
import { SlimResult, type SlimInput } from '../core/slim.js'
import type { KnowHub } from '../app/open.js'
import type { KnowledgeService } from '../knowledge/service.js'
import { slimKnowledge } from '../knowledge/slim.js'
import type { ResourceApi, SlimApi } from '../server/services.js'

/** The body of `GET /api/knowledge` (a page of entries). */
export type KnowledgeListResponse = {
  items: KnowledgeEntry[]
  count: number
  next_cursor: string | null
}

/** The body of `POST /api/knowledge/batch_update`. */
export type BatchUpdateResponse = {
  updated: number
  results: Array<{ knowledge_id: string; ok: boolean; error?: { code: string; message: string } }>
}

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
  /** `POST /api/resource` */
  resourceSave(body: SaveResourceInput): Promise<Resource>
  /** `GET /api/resource/{id}` (`secure_body` only when asked for and allowed) */
  resourceGet(id: string, options?: { includeSecret?: boolean }): Promise<Resource>
}

/**
 * The in-process services a local backend calls (the shapes `createApp` takes, so the
 * server's `/mcp` endpoint runs the tools on the same services as its HTTP routes).
 */
export interface ToolServices {
  knowledge: Pick<KnowledgeService, 'search' | 'save' | 'get' | 'feedback' | 'batchFeedback' | 'list'>
  resources: Pick<ResourceApi, 'save' | 'get'>
  slim: Pick<SlimApi, 'slim'>
}

/**
 * A backend over in-process services, acting as `principal`. Results are checked
 * against the HTTP API's response schemas where the service types are loose.
 * @example
 * const backend = servicesBackend({ knowledge: hub.knowledge, resources: hub.resources, slim }, principal)
 */
export function servicesBackend(services: ToolServices, principal: Principal): ToolBackend {
  const { knowledge, resources, slim } = services
  return {
    search: (query) => knowledge.search(query, principal),
    save: (body) => knowledge.save(body, principal),
    get: (id) => knowledge.get(id, principal),
    update: (id, body) => knowledge.feedback(id, body, principal),
    batchUpdate: (body) => knowledge.batchFeedback(body, principal),
    async list(query) {
      const page = await knowledge.list(query, principal)
      return { items: page.items, count: page.items.length, next_cursor: page.next_cursor }
    },
    slim: async (body) => SlimResult.parse(await slim.slim(body, principal)),
    resourceSave: async (body) => Resource.parse(await resources.save(body, principal)),
    resourceGet: async (id, options = {}) => Resource.parse(await resources.get(id, principal, options)),
  }
}

/**
 * A backend over the in-process services of an open hub, acting as `principal`.
 * @example
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * const backend = localBackend(hub, hub.config.principal)
 * await backend.search({ q: 'selenium login' })
 */
export function localBackend(hub: KnowHub, principal: Principal): ToolBackend {
  const slimDeps = { store: hub.store, embedder: hub.embedder, maxContentBytes: hub.config.maxContentBytes }
  return servicesBackend({ knowledge: hub.knowledge, resources: hub.resources, slim: { slim: (body, who) => slimKnowledge(slimDeps, body, who) } }, principal)
}
