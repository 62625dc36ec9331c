/**
 * `knowhub status` (the hub operator's `GET /api/status`) as data: where the data is, which embedder, the vector index state,
 * how many entries, and who the local principal is.
 */
import type { EmbedderInfo, HubStatus } from '../core/api.js'
import type { KnowHubConfig } from '../core/config.js'
import type { Embedder } from '../embed/embedder.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { LlmProvider } from '../llm/index.js'
import type { Store } from '../store/store.js'

export type { HubStatus }

/**
 * The hub's status, from its config and services.
 * @example
 * const status = await hubStatus(hub)
 */
export async function hubStatus(hub: {
  config: KnowHubConfig
  store: Pick<Store, 'pgvector' | 'llmUsage'>
  embedder: Pick<Embedder, 'model' | 'dimension' | 'convention'>
  knowledge: Pick<KnowledgeService, 'vectorState' | 'count' | 'calibration'>
  llm?: Pick<LlmProvider, 'health'> | undefined
}): Promise<HubStatus> {
  const { config } = hub
  return {
    database: config.databaseUrl ? 'postgres' : 'pglite',
    reach: 'hub',
    location: config.databaseUrl ? new URL(config.databaseUrl).host : config.dataDir,
    pgvector: hub.store.pgvector,
    embedder: embedderInfo(hub),
    vectors: hub.knowledge.vectorState().status,
    entries: await hub.knowledge.count(),
    principal: config.principal,
    llm: config.llm
      ? {
          model: config.llm.model,
          models: config.llm.models,
          routing: config.search.routing,
          // When KnowHub learns with the model: on compaction, and when a goal completes (seed 002's triggers).
          learning: { on_compaction: true, on_goal_complete: true },
          usage: await hub.store.llmUsage.list(),
          ...(hub.llm ? { health: hub.llm.health() } : {}),
        }
      : null,
  }
}

/**
 * What the hub's embedder is: model, dimensions, query/document convention and calibration.
 * @example
 * embedderInfo(hub).calibration // { source: 'table', name: 'multilingual-e5-small (learned)' }
 */
export function embedderInfo(hub: {
  embedder: Pick<Embedder, 'model' | 'dimension' | 'convention'>
  knowledge: Pick<KnowledgeService, 'calibration'>
}): EmbedderInfo {
  const { convention } = hub.embedder
  return {
    model: hub.embedder.model,
    dimension: hub.embedder.dimension,
    convention: convention ? { name: convention.applied.name, source: convention.source } : null,
    calibration: hub.knowledge.calibration(),
  }
}
