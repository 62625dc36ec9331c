/**
 * `knowhub/client`: a typed, fetch-based client for the KnowHub HTTP API. Web APIs
 * and zod only: runs in Node 20+, Deno, Bun, workers and browsers.
 * @example
 * import { createClient, isKnowHubClientError } from 'knowhub/client'
 * const kh = createClient({ token: process.env.KNOWHUB_TOKEN })
 * const { results } = await kh.knowledge.search({ q: 'selenium login', top_k: 3 })
 */
export {
  createClient,
  resourcePath,
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUT_MS,
  type ClientOptions,
  type ExpandOption,
  type GetResourceOptions,
  type ResourceTargetOptions,
  type KnowHubClient,
  type ListKnowledgeQuery,
  type ListResourcesQuery,
  type SearchQuery,
  type SlimOptions,
} from './client.js'
export { ClientErrorCode, KnowHubClientError, isKnowHubClientError, isServerErrorCode, type KnowHubClientErrorInit } from './errors.js'
export { parseRetryAfter, type CallOptions, type FetchLike, type RetryOptions } from './http.js'
export {
  BatchUpdateResult,
  Deleted,
  ExpandedResource,
  Health,
  KnowledgeEntryView,
  KnowledgePage,
  KnowledgeVersions,
  OpenApiDocument,
  ResourcePage,
  SearchPage,
  SearchResultView,
} from './schemas.js'
export type {
  BatchFeedbackInput,
  EditKnowledgeInput,
  FeedbackCase,
  FeedbackInput,
  KnowledgeEntry,
  KnowledgeType,
  KnowledgeVersion,
  SaveKnowledgeInput,
  SearchResult,
} from '../core/knowledge.js'
export type { Resource, ResourceSummary, SaveResourceInput, UpdateResourceInput } from '../core/resources.js'
export type { SlimInput, SlimResult, UnmergeResult } from '../core/slim.js'
export type { ForgetCounts, ForgetReceipt, PurgeInput, PurgeReceipt } from '../core/erasure.js'
export type { ProfileEvent, ProfileItem, UserProfile } from '../core/profile.js'
export { clientBackend, toKnowHubError, type ClientBackendOptions } from './backend.js'
