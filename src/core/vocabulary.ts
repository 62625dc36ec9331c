/**
 * The fixed word lists of the data model, without their schemas: what command lines and help
 * texts need before (or without) validating anything. The schemas in knowledge.ts and
 * resources.ts are built from them.
 */

/** Kinds of knowledge entry (seed 003). */
export const KNOWLEDGE_TYPES = ['user_profile', 'strategy', 'tool', 'usecase', 'definition', 'plan'] as const

/** Lifecycle states of a knowledge entry. */
export const KNOWLEDGE_STATUSES = ['active', 'merged', 'archived'] as const

/** What a resource holds, besides custom `x-…` types. */
export const RESOURCE_CONTENT_TYPES = ['code', 'credential', 'cookie', 'text', 'markdown', 'json', 'url', 'file'] as const

/**
 * Seed 002's `visibility` of an entry, derived from its scopes and owner (src/core/visibility.ts):
 * `private` (only its owner's scope), `shared` (other scopes, no org and not public), `org` (an org
 * scope, not public), `public`.
 */
export const VISIBILITIES = ['private', 'shared', 'org', 'public'] as const

/** The orders of search results (`order`): relevance (KnowHub's), scope (seed 002's) and quality (seed 003's). */
export const SEARCH_ORDERS = ['relevance', 'scope', 'quality'] as const
