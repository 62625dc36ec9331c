/**
 * Response schemas of the HTTP API that are not a core schema on their own (pages,
 * batch results, deletions, expansions), built from the same core schemas the
 * server validates with. Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { KnowledgeEntry, KnowledgeVersion, SearchResult } from '../core/knowledge.js'
import { Resource, ResourceSummary } from '../core/resources.js'

/**
 * A referenced resource as `expand=resources` adds it: never with its secret.
 * @example
 * ExpandedResource.parse(entry.resources?.[0]) // id, title, body, … never secure_body
 */
export const ExpandedResource = Resource.omit({ secure_body: true })
export type ExpandedResource = z.output<typeof ExpandedResource>

/**
 * A knowledge entry, with `resources` when asked for with `expand: 'resources'`.
 * @example
 * const entry = KnowledgeEntryView.parse(await (await fetch(`${url}/api/knowledge/${id}?expand=resources`)).json())
 */
export const KnowledgeEntryView = KnowledgeEntry.extend({ resources: z.array(ExpandedResource).optional() })
export type KnowledgeEntryView = z.output<typeof KnowledgeEntryView>

/**
 * A search hit, with `resources` when asked for with `expand: 'resources'`.
 * @example
 * const hit: SearchResultView = (await kh.knowledge.search({ q: 'selenium' })).results[0]!
 */
export const SearchResultView = SearchResult.extend({ resources: z.array(ExpandedResource).optional() })
export type SearchResultView = z.output<typeof SearchResultView>

/**
 * The response of `GET /api/knowledge/search` (seed 003: `results`, `count`).
 * @example
 * const { results, count } = SearchPage.parse(body)
 */
export const SearchPage = z.object({ results: z.array(SearchResultView), count: z.number().int() })
export type SearchPage = z.output<typeof SearchPage>

/**
 * A page of `GET /api/knowledge`. Pass `next_cursor` back as `cursor` for the next page.
 * @example
 * const page = KnowledgePage.parse(body) // page.next_cursor → { cursor } of the next call
 */
export const KnowledgePage = z.object({ items: z.array(KnowledgeEntryView), count: z.number().int(), next_cursor: z.string().nullable() })
export type KnowledgePage = z.output<typeof KnowledgePage>

/**
 * A page of `GET /api/resource` (summaries: no body, no secret).
 * @example
 * const { items } = ResourcePage.parse(body) // summaries: has_secret, never secure_body
 */
export const ResourcePage = z.object({ items: z.array(ResourceSummary), count: z.number().int(), next_cursor: z.string().nullable() })
export type ResourcePage = z.output<typeof ResourcePage>

/**
 * The response of `POST /api/knowledge/batch_update`: one result per item, in order.
 * @example
 * const { updated, results } = await kh.knowledge.batchUpdate({ feedback_list: [{ knowledge_id: id, is_helpful: true }] })
 */
export const BatchUpdateResult = z.object({
  updated: z.number().int(),
  results: z.array(z.object({ knowledge_id: z.string(), ok: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).optional() })),
})
export type BatchUpdateResult = z.output<typeof BatchUpdateResult>

/**
 * The response of a deletion.
 * @example
 * Deleted.parse({ id: 'code/x', deleted: true })
 */
export const Deleted = z.object({ id: z.string(), deleted: z.literal(true) })
export type Deleted = z.output<typeof Deleted>

/**
 * The response of `GET /api/knowledge/{id}/versions`: previous versions, oldest first.
 * @example
 * const { versions } = await kh.knowledge.versions(id) // oldest first
 */
export const KnowledgeVersions = z.object({ id: z.string(), versions: z.array(KnowledgeVersion) })
export type KnowledgeVersions = z.output<typeof KnowledgeVersions>

/**
 * The response of `GET /healthz`.
 * @example
 * Health.parse(await kh.healthz()) // { status: 'ok', version: '0.1.0' }
 */
export const Health = z.object({ status: z.literal('ok'), version: z.string() })
export type Health = z.output<typeof Health>

/**
 * The OpenAPI 3.1 document of `GET /api/openapi.json` (checked only for its top-level shape).
 * @example
 * const doc = await kh.openapi() // doc.paths['/api/knowledge/search']
 */
export const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
})
export type OpenApiDocument = z.output<typeof OpenApiDocument>
