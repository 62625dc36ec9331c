/**
 * The seeds' own record shapes, as written in the design documents, brought to KnowHub's
 * (issue 41; docs/seeds.md):
 *
 * - seed 002's record: `type` (one), `visibility`, an `eval` with some of its fields, an id such
 *   as `profile_001`;
 * - seed 003's full record: `id`, `eval` with every count, `created_at` / `updated_at`, no
 *   `status`, `version`, `merged_into` or validity.
 *
 * `liftRecord` turns such a record into a line of KnowHub's export format: `type` becomes
 * `types: [type]`, the `eval` fields given are kept and the others defaulted (score 3, helpful 0,
 * harmful 0, confidence 0.5, empty histories), KnowHub's own fields take their defaults, and an
 * export line passes through unchanged. `visibility` stays, for the import to check against the
 * scopes. No I/O.
 */
import { KnowHubError } from './errors.js'
import { KnowledgeType } from './knowledge.js'

const SOURCE_DEFAULTS = { name: '', category: 'exp', urls: [], agent_id: '', submitted_by: '', message_id: '', trace_id: '' }

/** The defaults of an `eval` field a record leaves out. */
export const EVAL_DEFAULTS = { score: 3, helpful: 0, harmful: 0, confidence: 0.5, helpful_history: [], harmful_history: [] } as const

/**
 * `types` from seed 002's `type` (one) and/or `types`: `type` alone becomes `[type]`; given
 * both, `types` must hold `type`. Throws `validation_error` naming both otherwise.
 * @example
 * typesOf({ type: 'user_profile' }) // ['user_profile']
 */
export function typesOf(record: { type?: unknown; types?: unknown }): unknown {
  if (record.type === undefined || record.type === null) return record.types
  const type = KnowledgeType.safeParse(record.type)
  if (!type.success) {
    const message = `type must be one of ${KnowledgeType.options.join(', ')}`
    throw new KnowHubError('validation_error', `Invalid knowledge entry: type: ${message}`, { issues: [{ path: 'type', message }] })
  }
  if (record.types === undefined || record.types === null) return [type.data]
  if (Array.isArray(record.types) && record.types.includes(type.data)) return record.types
  const message = `type is "${type.data}" but types is ${JSON.stringify(record.types)}: give one of them, or a types that holds type`
  throw new KnowHubError('validation_error', `Invalid knowledge entry: ${message}`, { issues: [{ path: 'type', message }] })
}

/** What a lifted record takes from its surroundings when it leaves a field out. */
export interface LiftDefaults {
  /** `created_at` and `updated_at` when absent. */
  now: Date
  /** `scopes` when absent (the importer's own scope, or the folder section's). */
  scopes: () => string[]
  /** `owner` when absent (the importer, or the folder section's user). */
  owner: () => string
}

/**
 * A record with an `id` (seed 002's, seed 003's, or an export line) as an export line of
 * KnowHub's: see the file comment. Fields KnowHub does not know are left in place, for the
 * strict parse that follows to report.
 * @example
 * liftRecord({ id: 'profile_001', type: 'user_profile', task: 't', content: 'c', scopes: ['user:123'], owner: 'user:123', eval: { confidence: 0.9 } }, defaults)
 * // { id: 'profile_001', types: ['user_profile'], …, eval: { score: 3, helpful: 0, harmful: 0, confidence: 0.9, helpful_history: [], harmful_history: [] }, status: 'active', version: 1, … }
 */
export function liftRecord(record: Record<string, unknown>, defaults: LiftDefaults): Record<string, unknown> {
  const { type: _type, ...rest } = record
  const now = defaults.now.toISOString()
  const source = isObject(record.source) ? record.source : {}
  return {
    message_id: typeof source.message_id === 'string' ? source.message_id : '',
    tags: {},
    resource_ids: [],
    status: 'active',
    merged_into: null,
    version: 1,
    created_at: typeof record.updated_at === 'string' ? record.updated_at : now,
    updated_at: typeof record.created_at === 'string' ? record.created_at : now,
    ...rest,
    types: typesOf(record),
    scopes: record.scopes ?? defaults.scopes(),
    owner: record.owner ?? defaults.owner(),
    // A source or eval of the wrong shape stays as given, for the strict parse to report.
    source: record.source === undefined || isObject(record.source) ? { ...SOURCE_DEFAULTS, ...source } : record.source,
    eval: record.eval === undefined || isObject(record.eval) ? { ...EVAL_DEFAULTS, ...(record.eval ?? {}) } : record.eval,
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
