/**
 * Response shapes of the HTTP API that belong to no one entity: the error body, a
 * deletion, liveness, the OpenAPI document, and the list page every listing uses.
 * The server answers them, the OpenAPI document describes them, the client parses
 * them. Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { LlmHealth, LlmUsage } from './llm.js'
import { Principal } from './principal.js'

/**
 * The JSON body of every error response: `{ "error": { "code", "message", "details" } }`.
 * @example
 * ErrorBody.parse({ error: { code: 'not_found', message: 'No knowledge entry x', details: { id: 'x' } } })
 */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
})
export type ErrorBody = z.output<typeof ErrorBody>

/**
 * A page of a listing: the items, how many, and the cursor of the next page (null at the end).
 * @example
 * const KnowledgeListPage = listPage(KnowledgeEntryView)
 */
export function listPage<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), count: z.number().int(), next_cursor: z.string().nullable() })
}

/**
 * The response of a deletion.
 * @example
 * Deleted.parse({ id: 'knowledge-20260306120000-abcd', deleted: true })
 */
export const Deleted = z.object({ id: z.string(), deleted: z.literal(true) })
export type Deleted = z.output<typeof Deleted>

/**
 * The response of `GET /healthz`: `embedder` is `loading` until the embedder's model has
 * loaded (searches may be full-text-only meanwhile, see `search.whileModelLoads`), then `ready`.
 * @example
 * Health.parse({ status: 'ok', version: '0.1.0', embedder: 'ready' })
 */
export const Health = z.object({ status: z.literal('ok'), version: z.string(), embedder: z.enum(['loading', 'ready']).optional() })
export type Health = z.output<typeof Health>

/**
 * The OpenAPI 3.1 document of `GET /api/openapi.json` (checked only for its top-level shape).
 * @example
 * OpenApiDocument.parse(openApiDocument('0.1.0')).paths['/api/knowledge/search']
 */
export const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
})
export type OpenApiDocument = z.output<typeof OpenApiDocument>

/**
 * The response of `GET /api/status` (and `knowhub status`): where the data is, which
 * embedder, the vector index state, how many entries, and who is asking.
 * @example
 * HubStatus.parse(await hub.status()).entries
 */
/**
 * The embedder search uses (`knowhub status`, the dashboard's overview): its model name (the
 * query/document convention after `#`), dimensions, the convention and where it came from (none for
 * the offline embedders), and how search reads its similarities (docs/embeddings.md).
 * @example
 * EmbedderInfo.parse({ model: 'openai:multilingual-e5-small-q4#e5-input-type', dimension: 384, convention: { name: 'e5-input-type', source: 'table' }, calibration: { source: 'table', name: 'multilingual-e5-small (learned)' } })
 */
export const EmbedderInfo = z.object({
  model: z.string(),
  dimension: z.number().int(),
  convention: z
    .object({ name: z.string(), source: z.enum(['config', 'table', 'unknown']) })
    .nullable()
    .optional(),
  calibration: z.object({ source: z.enum(['builtin', 'table', 'self', 'none']), name: z.string() }).optional(),
})
export type EmbedderInfo = z.output<typeof EmbedderInfo>

export const HubStatus = z.object({
  database: z.enum(['postgres', 'pglite']),
  /**
   * `hub` for the hub operator; `org` for an org admin, who sees its org's counts (entries
   * visible through its own ids) and neither the data location nor the hub's LLM usage.
   */
  reach: z.enum(['hub', 'org']).default('hub'),
  /** The server's host, or the embedded database's folder (hub operator only). */
  location: z.string().optional(),
  pgvector: z.boolean(),
  embedder: EmbedderInfo,
  vectors: z.enum(['ready', 'mismatch']),
  entries: z.number().int(),
  principal: Principal,
  /** The chat model (null when none is configured) and its token usage per task and model, from every process on this database. */
  llm: z
    .object({
      model: z.string(),
      models: z.record(z.string(), z.string().optional()),
      routing: z.enum(['off', 'llm']),
      /** When KnowHub learns with the model by itself: at compaction, and when a goal completes (seed 002's triggers). */
      learning: z.object({ on_compaction: z.boolean(), on_goal_complete: z.boolean() }).optional(),
      usage: z.array(LlmUsage),
      /** This process's view of the endpoint: the structured-output form in use and failures by reason (absent from an older server). */
      health: LlmHealth.optional(),
    })
    .nullable()
    .default(null),
})
export type HubStatus = z.output<typeof HubStatus>
