/**
 * Response schemas of the HTTP API that are not a core schema on their own (pages,
 * batch results, deletions, expansions), built from the same core schemas the
 * server validates with. Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { KnowledgeEntry, KnowledgeVersion, SearchResult } from '../core/knowledge.js'
import { Resource, ResourceSummary } from '../core/resources.js'

/** A referenced resource as `expand=resources` adds it: never with its secret. */
export const ExpandedResource = Resource.omit({ secure_body: true })
export type ExpandedResource = z.output<typeof ExpandedResource>

/** A knowledge entry, with `resources` when asked for with `expand: 'resources'`. */
export const KnowledgeEntryView = KnowledgeEntry.extend({ resources: z.array(ExpandedResource).optional() })
export type KnowledgeEntryView = z.output<typeof KnowledgeEntryView>

/** A search hit, with `resources` when asked for with `expand: 'resources'`. */
export const SearchResultView = SearchResult.extend({ resources: z.array(ExpandedResource).optional() })
export type SearchResultView = z.output<typeof SearchResultView>

/** The response of `GET /api/knowledge/search` (seed 003: `results`, `count`). */
export const SearchPage = z.object({ results: z.array(SearchResultView), count: z.number().int() })
export type SearchPage = z.output<typeof SearchPage>

/** A page of `GET /api/knowledge`. Pass `next_cursor` back as `cursor` for the next page. */
export const KnowledgePage = z.object({ items: z.array(KnowledgeEntryView), count: z.number().int(), next_cursor: z.string().nullable() })
export type KnowledgePage = z.output<typeof KnowledgePage>

/** A page of `GET /api/resource` (summaries: no body, no secret). */
export const ResourcePage = z.object({ items: z.array(ResourceSummary), count: z.number().int(), next_cursor: z.string().nullable() })
export type ResourcePage = z.output<typeof ResourcePage>

/** The response of `POST /api/knowledge/batch_update`: one result per item, in order. */
export const BatchUpdateResult = z.object({
  updated: z.number().int(),
  results: z.array(z.object({ knowledge_id: z.string(), ok: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).optional() })),
})
export type BatchUpdateResult = z.output<typeof BatchUpdateResult>

/** The response of a deletion. */
export const Deleted = z.object({ id: z.string(), deleted: z.literal(true) })
export type Deleted = z.output<typeof Deleted>

/** The response of `GET /api/knowledge/{id}/versions`: previous versions, oldest first. */
export const KnowledgeVersions = z.object({ id: z.string(), versions: z.array(KnowledgeVersion) })
export type KnowledgeVersions = z.output<typeof KnowledgeVersions>

/** The response of `GET /healthz`. */
export const Health = z.object({ status: z.literal('ok'), version: z.string() })
export type Health = z.output<typeof Health>

/** The OpenAPI 3.1 document of `GET /api/openapi.json` (checked only for its top-level shape). */
export const OpenApiDocument = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
})
export type OpenApiDocument = z.output<typeof OpenApiDocument>
