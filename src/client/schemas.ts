/**
 * The client's names for the API's response schemas. Every shape is defined once, in
 * the core (src/core/api.ts, knowledge.ts, resources.ts, slim.ts), and used alike by
 * the server, the OpenAPI document, the tools and this client; these are the names
 * `knowhub/client` has always exported them under.
 */
import { Deleted as CoreDeleted, Health as CoreHealth, OpenApiDocument as CoreOpenApiDocument } from '../core/api.js'
import {
  BatchFeedbackResult,
  KnowledgeEntryView as CoreKnowledgeEntryView,
  KnowledgeListPage,
  KnowledgeVersions as CoreKnowledgeVersions,
  SearchResponse,
  SearchResultView as CoreSearchResultView,
} from '../core/knowledge.js'
import { ExpandedResource as CoreExpandedResource, ResourceListPage } from '../core/resources.js'

/**
 * A referenced resource as `expand=resources` adds it: never with its secret.
 * @example
 * ExpandedResource.parse(entry.resources?.[0]) // id, title, body, … never secure_body
 */
export const ExpandedResource = CoreExpandedResource
export type ExpandedResource = CoreExpandedResource

/**
 * A knowledge entry, with `resources` when asked for with `expand: 'resources'`.
 * @example
 * const entry = KnowledgeEntryView.parse(await (await fetch(`${url}/api/knowledge/${id}?expand=resources`)).json())
 */
export const KnowledgeEntryView = CoreKnowledgeEntryView
export type KnowledgeEntryView = CoreKnowledgeEntryView

/**
 * A search hit, with `resources` when asked for with `expand: 'resources'`.
 * @example
 * const hit: SearchResultView = (await kh.knowledge.search({ q: 'selenium' })).results[0]!
 */
export const SearchResultView = CoreSearchResultView
export type SearchResultView = CoreSearchResultView

/**
 * The response of `GET /api/knowledge/search` (seed 003: `results`, `count`): the core's `SearchResponse`.
 * @example
 * const { results, count } = SearchPage.parse(body)
 */
export const SearchPage = SearchResponse
export type SearchPage = SearchResponse

/**
 * A page of `GET /api/knowledge` (the core's `KnowledgeListPage`). Pass `next_cursor` back as `cursor` for the next page.
 * @example
 * const page = KnowledgePage.parse(body) // page.next_cursor → { cursor } of the next call
 */
export const KnowledgePage = KnowledgeListPage
export type KnowledgePage = KnowledgeListPage

/**
 * A page of `GET /api/resource` (the core's `ResourceListPage`: summaries, no body, no secret).
 * @example
 * const { items } = ResourcePage.parse(body) // summaries: has_secret, never secure_body
 */
export const ResourcePage = ResourceListPage
export type ResourcePage = ResourceListPage

/**
 * The response of `POST /api/knowledge/batch_update` (the core's `BatchFeedbackResult`): one result per item, in order.
 * @example
 * const { updated, results } = await kh.knowledge.batchUpdate({ feedback_list: [{ knowledge_id: id, is_helpful: true }] })
 */
export const BatchUpdateResult = BatchFeedbackResult
export type BatchUpdateResult = BatchFeedbackResult

/**
 * The response of a deletion.
 * @example
 * Deleted.parse({ id: 'code/x', deleted: true })
 */
export const Deleted = CoreDeleted
export type Deleted = CoreDeleted

/**
 * The response of `GET /api/knowledge/{id}/versions`: previous versions, oldest first.
 * @example
 * const { versions } = await kh.knowledge.versions(id) // oldest first
 */
export const KnowledgeVersions = CoreKnowledgeVersions
export type KnowledgeVersions = CoreKnowledgeVersions

/**
 * The response of `GET /healthz`.
 * @example
 * Health.parse(await kh.healthz()) // { status: 'ok', version: '0.1.0' }
 */
export const Health = CoreHealth
export type Health = CoreHealth

/**
 * The OpenAPI 3.1 document of `GET /api/openapi.json` (checked only for its top-level shape).
 * @example
 * const doc = await kh.openapi() // doc.paths['/api/knowledge/search']
 */
export const OpenApiDocument = CoreOpenApiDocument
export type OpenApiDocument = CoreOpenApiDocument
