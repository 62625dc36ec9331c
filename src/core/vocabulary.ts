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
