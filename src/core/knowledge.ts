/**
 * The knowledge entry model (seed docs 002 + 003, DESIGN.md) as zod schemas.
 * Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { listPage } from './api.js'
import { Owner, Scope } from './principal.js'
import { ExpandedResource } from './resources.js'
import { KNOWLEDGE_ID } from './ids.js'
import { nullAsAbsent, nullAsDefault } from './validate.js'
import { Visibility, VisibilityFilter } from './visibility.js'
import { KNOWLEDGE_STATUSES, KNOWLEDGE_TYPES, SEARCH_ORDERS } from './vocabulary.js'

export { KNOWLEDGE_STATUSES, KNOWLEDGE_TYPES, SEARCH_ORDERS }
export type SearchOrder = (typeof SEARCH_ORDERS)[number]
/** What kind of knowledge an entry holds. */
export const KnowledgeType = z.enum(KNOWLEDGE_TYPES)
export type KnowledgeType = z.infer<typeof KnowledgeType>

export const KnowledgeStatus = z.enum(KNOWLEDGE_STATUSES)
export type KnowledgeStatus = z.infer<typeof KnowledgeStatus>

export const KnowledgeId = z.string().regex(KNOWLEDGE_ID, 'knowledge ids are 1-128 characters: letters, digits and . _ : -')

/** Largest content accepted, in UTF-8 bytes (1 MiB). */
export const MAX_CONTENT_BYTES = 1_048_576

const Text = (max: number) => z.string().max(max)

/** Business tags: `{ category: 'preference', domain: 'coding_style', … }`. */
export const Tags = z
  .record(z.string().min(1).max(64), z.union([Text(1000), z.number(), z.boolean(), z.array(Text(1000)).max(50)]))
  .refine((tags) => Object.keys(tags).length <= 50, 'at most 50 tags')
export type Tags = z.infer<typeof Tags>

/** Where the knowledge came from. */
export const Source = z.strictObject({
  name: Text(500).default(''),
  category: Text(64).default('exp'),
  urls: z.array(Text(2000)).max(50).default([]),
  agent_id: Text(200).default(''),
  submitted_by: Text(200).default(''),
  timestamp: Text(64).optional(),
  message_id: Text(200).default(''),
  trace_id: Text(200).default(''),
})
export type Source = z.output<typeof Source>

/** `source` of a save: every field optional, `null` taken as absent, defaults as in {@link Source}. */
export const SourceInput = z.strictObject({
  name: nullAsDefault(Text(500), () => ''),
  category: nullAsDefault(Text(64), () => 'exp'),
  urls: nullAsDefault(z.array(Text(2000)).max(50), () => []),
  agent_id: nullAsDefault(Text(200), () => ''),
  submitted_by: nullAsDefault(Text(200), () => ''),
  timestamp: nullAsAbsent(Text(64)),
  message_id: nullAsDefault(Text(200), () => ''),
  trace_id: nullAsDefault(Text(200), () => ''),
})
export type SourceInput = z.input<typeof SourceInput>

/** One feedback case (a helpful or harmful use of the entry). Free-form beyond the known fields. */
export const FeedbackCase = z
  .looseObject({
    task: Text(10_000).optional(),
    outcome: Text(10_000).optional(),
    reason: Text(10_000).optional(),
    query: Text(10_000).optional(),
    trace_id: Text(200).optional(),
    timestamp: Text(64).optional(),
  })
  .refine((value) => JSON.stringify(value).length <= 65_536, 'a feedback case is at most 64 KiB of JSON')
export type FeedbackCase = z.output<typeof FeedbackCase>

/** A recorded feedback case, as kept in an entry's history. */
export const FeedbackRecord = z.record(z.string(), z.unknown())
export type FeedbackRecord = z.output<typeof FeedbackRecord>

/**
 * A point in time as an input takes it (issue 31: `valid_from`, `expires_at`, `as_of`): an ISO
 * 8601 date (`2026-03-05`, midnight UTC) or date-time (`2026-03-05T12:00:00Z`; without an
 * offset it is taken as UTC), normalised to `toISOString()`'s form.
 * @example
 * InstantInput.parse('2026-03-05') // '2026-03-05T00:00:00.000Z'
 */
const INSTANT_MESSAGE = 'expected an ISO 8601 date (2026-03-05) or date-time (2026-03-05T12:00:00Z)'

export const InstantInput = z
  .union([
    z.iso.date({ error: INSTANT_MESSAGE }),
    z.iso.datetime({ offset: true, local: true, error: INSTANT_MESSAGE }).transform((value) => (/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(value) ? value : `${value}Z`)),
  ])
  .transform((value, ctx) => {
    const at = new Date(value.length === 10 ? `${value}T00:00:00Z` : value)
    if (!Number.isNaN(at.getTime())) return at.toISOString()
    ctx.addIssue({ code: 'custom', message: `no such date: ${value}` })
    return z.NEVER
  })
  .meta({ description: 'an ISO 8601 date (2026-03-05) or date-time (2026-03-05T12:00:00Z; without an offset: UTC)' })
export type InstantInput = z.input<typeof InstantInput>

export const Score = z.number().int().min(1, 'score is 1-5').max(5, 'score is 1-5')

/** Evaluation from feedback. */
export const Eval = z.object({
  score: Score,
  helpful: z.number().int().min(0),
  harmful: z.number().int().min(0),
  confidence: z.number().min(0).max(1),
  helpful_history: z.array(FeedbackRecord),
  harmful_history: z.array(FeedbackRecord),
})
export type Eval = z.output<typeof Eval>

const Types = z
  .array(KnowledgeType)
  .min(1, 'at least one type')
  .max(6)
  .transform((types) => [...new Set(types)])

/** The `eval` of a record given to KnowHub: any of its fields (seed 002's record gives helpful, harmful and confidence only). */
export const EvalInput = z.strictObject({
  score: Score.optional(),
  helpful: z.number().int().min(0).optional(),
  harmful: z.number().int().min(0).optional(),
  confidence: z.number().min(0).max(1).optional(),
  helpful_history: z.array(FeedbackRecord).optional(),
  harmful_history: z.array(FeedbackRecord).optional(),
})
export type EvalInput = z.output<typeof EvalInput>

const ExportedInstant = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'expected an ISO 8601 date-time')

/** The fields of a save; see {@link SaveKnowledgeInput}. */
const SaveFields = z.strictObject({
  task: z.string().trim().min(1, 'task is required').max(10_000),
  content: z.string().min(1, 'content is required'),
  types: Types.optional(),
  /** Seed 002's single type: `types: [type]`. */
  type: KnowledgeType.optional(),
  tags: nullAsDefault(Tags, () => ({})),
  scopes: nullAsAbsent(z.array(Scope).min(1).max(20)),
  owner: nullAsAbsent(Owner),
  /** Seed 002's visibility: checked against the scopes (src/core/visibility.ts), never stored apart. */
  visibility: nullAsAbsent(Visibility),
  source: nullAsDefault(SourceInput, () => SourceInput.parse({})),
  score: nullAsAbsent(Score),
  confidence: nullAsAbsent(z.number().min(0).max(1)),
  /** Seed 002's and 003's `eval`: its score and confidence are taken; counts and histories come from feedback (ignored, and said so). */
  eval: nullAsAbsent(EvalInput),
  message_id: nullAsDefault(Text(200), () => ''),
  resource_ids: nullAsDefault(z.array(Text(512)).max(100), () => []),
  /** When the fact became true (default: `source.timestamp` when it is a date, else now). */
  valid_from: nullAsAbsent(InstantInput),
  /** Retention: past this time the entry leaves search and the agent context (default: never). */
  expires_at: nullAsAbsent(InstantInput),
  /** A client-given id (seed 003's record has one): an idempotent create — the same id with the same task and content is a no-op, other content a 409. */
  id: nullAsAbsent(KnowledgeId),
  /** Seed 003's record carries these: the server keeps its own times (ignored, and said so). */
  created_at: nullAsAbsent(ExportedInstant),
  updated_at: nullAsAbsent(ExportedInstant),
})

/**
 * The body of `POST /api/knowledge` (seed 003) and of `knowhub save`.
 * `scopes` and `owner` default from the caller (see the knowledge service).
 * `null` in an optional field (here and in `source`) counts as absent. The seeds' own records
 * load as written (issue 41, docs/seeds.md): seed 002's `type` and `visibility`, and seed 003's
 * `id`, `eval`, `created_at` and `updated_at`; what the server does not take from a client is
 * listed in `ignored`.
 */
export const SaveKnowledgeInput = SaveFields.superRefine((input, ctx) => {
  if (input.types === undefined && input.type === undefined)
    ctx.addIssue({ code: 'custom', path: ['types'], message: "types is required (or seed 002's type)" })
  if (input.types !== undefined && input.type !== undefined && !input.types.includes(input.type)) {
    ctx.addIssue({
      code: 'custom',
      path: ['type'],
      message: `type is "${input.type}" but types is ${JSON.stringify(input.types)}: give one, or types holding type`,
    })
  }
  // The output is a valid input again (it is parsed twice on some paths: a supersession's new entry).
}).transform(({ type, eval: given, created_at: _created, updated_at: _updated, ...input }) => ({
  ...input,
  types: input.types ?? [type!],
  score: input.score ?? given?.score ?? 3,
  confidence: input.confidence ?? given?.confidence ?? 0.5,
}))
export type SaveKnowledgeInput = z.input<typeof SaveKnowledgeInput>

/**
 * What a save's body gave that a save does not take from a client (it came from a seed's record):
 * feedback counts and histories, and the record's own times. A save answers with them as `ignored`.
 * @example
 * ignoredFields({ task: 't', content: 'c', type: 'tool', eval: { helpful: 5, confidence: 0.9 } }) // ['eval.helpful']
 */
export function ignoredFields(raw: unknown): string[] {
  if (raw === null || typeof raw !== 'object') return []
  const body = raw as { eval?: unknown; created_at?: unknown; updated_at?: unknown }
  const given = body.eval !== null && typeof body.eval === 'object' ? (body.eval as Record<string, unknown>) : {}
  const ignored: string[] = []
  for (const field of ['helpful', 'harmful', 'helpful_history', 'harmful_history'])
    if (given[field] !== undefined && given[field] !== null) ignored.push(`eval.${field}`)
  if (body.created_at !== undefined && body.created_at !== null) ignored.push('created_at')
  if (body.updated_at !== undefined && body.updated_at !== null) ignored.push('updated_at')
  return ignored
}

/** An edit by the owner: content, task, tags, types or scopes. The previous version is kept. */
export const EditKnowledgeInput = z
  .strictObject({
    task: z.string().trim().min(1).max(10_000).optional(),
    content: z.string().min(1).optional(),
    types: Types.optional(),
    tags: Tags.optional(),
    scopes: z.array(Scope).min(1).max(20).optional(),
    resource_ids: z.array(Text(512)).max(100).optional(),
    reason: Text(2000).optional(),
  })
  .refine((v) => Object.keys(v).some((k) => k !== 'reason'), 'nothing to change')
export type EditKnowledgeInput = z.input<typeof EditKnowledgeInput>

/**
 * The body of `POST /api/reown` (admin): every entry owned by `from` gets the owner `to`
 * (its `from` scope becomes the `to` scope) and/or the added `scopes`. Each changed entry
 * keeps its previous version with the reason.
 * @example
 * ReownInput.parse({ from: 'user:local', to: 'user:alice', scopes: ['org:acme'], dry_run: true })
 */
export const ReownInput = z
  .strictObject({
    from: Owner,
    to: Owner.optional(),
    scopes: z.array(Scope).max(20).optional(),
    dry_run: z.boolean().optional(),
    reason: Text(2000).optional(),
  })
  .refine((v) => v.to !== undefined || (v.scopes?.length ?? 0) > 0, 'give to (a new owner), scopes (to share with), or both')
export type ReownInput = z.input<typeof ReownInput>

/**
 * What a reown did (or, with `dry_run`, would do): how many entries `from` owns, and which of them change.
 * @example
 * const { changed, ids } = ReownResult.parse(await res.json())
 */
export const ReownResult = z.object({
  from: z.string(),
  to: z.string(),
  added_scopes: z.array(z.string()),
  dry_run: z.boolean(),
  /** Entries owned by `from` (any status). */
  owned: z.number().int(),
  /** Entries changed (with `dry_run`: that would change); the others already had the owner and scopes. */
  changed: z.number().int(),
  ids: z.array(z.string()),
  reason: z.string(),
})
export type ReownResult = z.infer<typeof ReownResult>

/**
 * What supersedes an entry (issue 31): the id of an existing entry, or the body of a new one
 * (as `POST /api/knowledge` takes it), saved in the same transaction.
 */
export const SupersedeWith = z.union([KnowledgeId, SaveKnowledgeInput])
export type SupersedeWith = z.input<typeof SupersedeWith>

/**
 * A supersession (issue 31): entry `by` (an id, or a new entry's body) replaces the entry named
 * in the call; `valid_to`, when the old one stopped being true (default: when the new one
 * started, if later than the old one's start, else now).
 * @example
 * SupersedeInput.parse({ by: 'knowledge-20260305120000-a1b2' })
 * SupersedeInput.parse({ by: { task: 'CI', content: 'We use GitHub Actions', types: ['tool'] }, valid_to: '2026-03-01' })
 */
export const SupersedeInput = z.strictObject({
  by: SupersedeWith,
  valid_to: nullAsAbsent(InstantInput),
})
export type SupersedeInput = z.input<typeof SupersedeInput>

const FEEDBACK_FIELDS = 'add_helpful_case, add_harmful_case, update_score, evolve_feedback or supersede_with'

/**
 * Feedback on one entry: the body of `PUT /api/knowledge/{id}` (seed 003). `null` counts as
 * absent. `supersede_with` (issue 31) closes the entry and links the one that replaces it (an
 * id, or a new entry's body), with `valid_to` optional: it goes without the feedback fields.
 */
export const FeedbackInput = z
  .strictObject({
    add_helpful_case: nullAsAbsent(FeedbackCase),
    add_harmful_case: nullAsAbsent(FeedbackCase),
    update_score: nullAsAbsent(Score),
    evolve_feedback: nullAsAbsent(z.string().min(1).max(10_000)),
    supersede_with: nullAsAbsent(SupersedeWith),
    valid_to: nullAsAbsent(InstantInput),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), `give at least one of ${FEEDBACK_FIELDS}`)
  .refine((v) => v.valid_to === undefined || v.supersede_with !== undefined, { message: 'valid_to goes with supersede_with', path: ['valid_to'] })
  .refine((v) => v.supersede_with === undefined || [v.add_helpful_case, v.add_harmful_case, v.update_score, v.evolve_feedback].every((x) => x === undefined), {
    message: 'supersede_with goes alone (with valid_to): give feedback in another request',
    path: ['supersede_with'],
  })
export type FeedbackInput = z.input<typeof FeedbackInput>

/** The body of `POST /api/knowledge/batch_update` (seed 003). A `case` of `null` counts as absent. */
export const BatchFeedbackInput = z.strictObject({
  feedback_list: z
    .array(
      z.strictObject({
        knowledge_id: KnowledgeId,
        is_helpful: z.boolean(),
        case: nullAsDefault(FeedbackCase, () => ({})),
      }),
    )
    .min(1)
    .max(1000),
})
export type BatchFeedbackInput = z.input<typeof BatchFeedbackInput>

/** A stored entry, as returned by get/list/export. */
export const KnowledgeEntry = z.object({
  id: KnowledgeId,
  message_id: z.string(),
  types: z.array(KnowledgeType),
  task: z.string(),
  tags: Tags,
  scopes: z.array(Scope),
  owner: Owner,
  content: z.string(),
  resource_ids: z.array(z.string()),
  source: Source,
  eval: Eval,
  status: KnowledgeStatus,
  merged_into: z.string().nullable(),
  version: z.number().int().min(1),
  created_at: z.string(),
  updated_at: z.string(),
  /** When the fact became true: the source message's time when known, else `created_at` (issue 31). */
  valid_from: z.string(),
  /** When it stopped being true (it was superseded); null while current. */
  valid_to: z.string().nullable(),
  /** The entry that superseded this one; null while current. */
  superseded_by: z.string().nullable(),
  /** The entry this one superseded, if any. */
  supersedes: z.string().nullable(),
  /** Retention: past this time the entry leaves search and the agent context; null: never. */
  expires_at: z.string().nullable(),
  /** Seed 002's visibility, derived from scopes and owner (src/core/visibility.ts). */
  visibility: Visibility,
})
export type KnowledgeEntry = z.output<typeof KnowledgeEntry>

/**
 * The answer of `POST /api/knowledge`: the entry, with `ignored` naming what the record gave that
 * the server does not take from a client (feedback counts and histories, the record's own times),
 * and `existed: true` when a client-given id was saved already with the same task and content
 * (nothing changed: 200 instead of 201).
 */
export const SavedKnowledge = KnowledgeEntry.extend({ ignored: z.array(z.string()).optional(), existed: z.literal(true).optional() })
export type SavedKnowledge = z.output<typeof SavedKnowledge>

/** What a supersession did: the closed entry and the entry that supersedes it, as they are now. */
export const SupersedeResult = z.object({ superseded: KnowledgeEntry, current: KnowledgeEntry })
export type SupersedeResult = z.output<typeof SupersedeResult>

/**
 * What a harmful case with `reason: "outdated"` offers (issue 31): superseding the entry, and
 * whether the caller may (the rule of edit), and how.
 */
export const FeedbackSuggestion = z.object({
  action: z.literal('supersede'),
  reason: z.literal('outdated'),
  allowed: z.boolean(),
  how: z.string(),
})
export type FeedbackSuggestion = z.output<typeof FeedbackSuggestion>

/**
 * What became of `evolve_feedback`: the rewrite `applied`; `rejected` because the model's text
 * says what neither the entry nor the feedback does; or `failed` because the model's answer could
 * not be used even after a repair request (not JSON, against the schema, cut at the token cap).
 * Issue 43: `reason` says why; the rest of the feedback is applied, the content stays as it was.
 * (The endpoint failing or too slow is an error: `llm_failed`, `llm_timeout`, nothing written.)
 */
export const EvolveOutcome = z.object({ status: z.enum(['applied', 'rejected', 'failed']), reason: z.string().optional() })
export type EvolveOutcome = z.output<typeof EvolveOutcome>

/**
 * The answer of `PUT /api/knowledge/{id}`: the entry as it is now, with `current` (the entry
 * that supersedes it) after `supersede_with`, `suggest` after a harmful case whose reason
 * is `outdated`, and `evolve` after `evolve_feedback`.
 */
export const FeedbackResponse = KnowledgeEntry.extend({
  current: KnowledgeEntry.optional(),
  suggest: FeedbackSuggestion.optional(),
  evolve: EvolveOutcome.optional(),
})
export type FeedbackResponse = z.output<typeof FeedbackResponse>

/**
 * An entry as the API answers it: with `resources` (the referenced resources the caller
 * can see, never their secrets) when asked for with `expand=resources`.
 * @example
 * const entry = KnowledgeEntryView.parse(await (await fetch(`${url}/api/knowledge/${id}?expand=resources`)).json())
 */
export const KnowledgeEntryView = KnowledgeEntry.extend({ resources: z.array(ExpandedResource).optional() })
export type KnowledgeEntryView = z.output<typeof KnowledgeEntryView>

/** A previous version of an entry, kept on every edit or evolve. */
export const KnowledgeVersion = z.object({
  version: z.number().int().min(1),
  task: z.string(),
  content: z.string(),
  types: z.array(KnowledgeType),
  tags: Tags,
  scopes: z.array(Scope),
  resource_ids: z.array(z.string()),
  reason: z.string(),
  created_at: z.string(),
})
export type KnowledgeVersion = z.output<typeof KnowledgeVersion>

/**
 * One line of a JSONL export: an entry with its version history. Lossless. The validity fields
 * (issue 31) may be absent in a line exported before them: `valid_from` then defaults as a
 * save's does (the source timestamp when it is a date, else `created_at`), the others to null.
 */
export const KnowledgeExportLine = KnowledgeEntry.extend({
  versions: z.array(KnowledgeVersion).default([]),
  valid_from: ExportedInstant.optional(),
  valid_to: ExportedInstant.nullable().default(null),
  superseded_by: KnowledgeId.nullable().default(null),
  supersedes: KnowledgeId.nullable().default(null),
  expires_at: ExportedInstant.nullable().default(null),
  /** Written on export; checked against the scopes when a line gives it (a line exported before issue 41 has none). */
  visibility: Visibility.optional(),
})
export type KnowledgeExportLine = z.output<typeof KnowledgeExportLine>

/**
 * What a search or list adds to the current entries (issue 31): `superseded` (the history:
 * entries another one superseded) and `expired` (entries past their `expires_at`).
 */
export const KNOWLEDGE_INCLUDES = ['superseded', 'expired'] as const
export const KnowledgeInclude = z.enum(KNOWLEDGE_INCLUDES)
export type KnowledgeInclude = z.infer<typeof KnowledgeInclude>

/**
 * A filter by tags: `key:value` pairs, as a list or comma-separated (`tags=category:preference,domain:coding_style`);
 * an entry passes with every pair (a list tag: holding the value; a number or boolean: as text).
 * @example
 * TagsFilter.parse('category:preference,domain:coding_style') // { category: 'preference', domain: 'coding_style' }
 */
export const TagsFilter = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.string().regex(/^[^:]{1,64}:.{0,1000}$/su, 'a tag filter is key:value (the key 1-64 characters, without a colon)'))
      .max(20)
      .transform((pairs) => Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf(':')), pair.slice(pair.indexOf(':') + 1)]))),
  )

/** `include` as a list or a comma-separated string (`include=superseded,expired`). */
const Includes = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.enum(KNOWLEDGE_INCLUDES, { error: (issue) => `unknown include "${String(issue.input)}" (expected ${KNOWLEDGE_INCLUDES.join(', ')})` })))

/**
 * Whether an entry is current at `now`: not superseded (`valid_to` null) and not expired.
 * @example
 * isCurrentAt({ valid_to: null, expires_at: '2026-01-01T00:00:00Z' }, new Date('2026-06-01')) // false: expired
 */
export function isCurrentAt(entry: { valid_to: Date | string | null; expires_at: Date | string | null }, now: Date): boolean {
  return entry.valid_to === null && (entry.expires_at === null || new Date(entry.expires_at).getTime() > now.getTime())
}

/** Query of `GET /api/knowledge/search` (seed 003), parsed. */
export const SearchInput = z.strictObject({
  q: z.string().trim().min(1, 'q is required').max(10_000),
  top_k: z.coerce.number().int().min(1).max(100).default(5),
  min_score: z.coerce.number().int().min(0).max(5).default(3),
  types: z.union([z.array(KnowledgeType), z.string().transform((s, ctx) => splitTypes(s, ctx))]).optional(),
  explain: z.boolean().default(false),
  /**
   * Which lists: `hybrid` (default), `fulltext`, `vector`; `recall`: the hybrid lists with the
   * recall gate, where candidates follow a strong first result instead of each needing evidence
   * of its own (docs/retrieval.md, "Precision and recall"). Ask for it when you will read many results.
   */
  mode: z.enum(['hybrid', 'fulltext', 'vector', 'recall']).default('hybrid'),
  rerank: z.boolean().default(true),
  /** Semantic routing for this request (overrides `search.routing`). */
  routing: z.enum(['off', 'llm']).optional(),
  /**
   * What was valid at this date instead of now (issue 31): entries with `valid_from <= as_of`
   * that were not superseded (`valid_to`) nor expired by then.
   */
  as_of: InstantInput.optional(),
  /** Also `superseded` entries (the history) and/or `expired` ones, each marked in its result. */
  include: Includes.optional(),
  /** Only entries of these visibilities (seed 002: private, shared, org, public; a list or comma-separated). */
  visibility: VisibilityFilter.optional(),
  /** Only entries with these tags (`key:value`, a list or comma-separated; every pair must hold). */
  tags: TagsFilter.optional(),
  /**
   * The order of the results: `relevance` (default: relevance with a quality boost, scope breaking
   * ties; docs/server.md says why), `scope` (seed 002: scope priority user > project > agent > team
   * > org > public, then relevance) or `quality` (seed 003: the quality score, then relevance).
   * Which results pass is the same in every order; only their order, and so the top_k kept, differs.
   */
  order: z.enum(SEARCH_ORDERS).default('relevance'),
})
export type SearchInput = z.input<typeof SearchInput>

function splitTypes(value: string, ctx: z.RefinementCtx): KnowledgeType[] {
  const parts = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const out: KnowledgeType[] = []
  for (const part of parts) {
    const parsed = KnowledgeType.safeParse(part)
    if (parsed.success) out.push(parsed.data)
    else ctx.addIssue({ code: 'custom', message: `unknown type "${part}" (expected one of ${KNOWLEDGE_TYPES.join(', ')})` })
  }
  return out
}

/** Per-stage scores of a result, returned when `explain` is set. */
export const SearchExplain = z.object({
  fulltext_rank: z.number().nullable(),
  fulltext_score: z.number().nullable(),
  vector_rank: z.number().nullable(),
  vector_similarity: z.number().nullable(),
  fused: z.number(),
  scope_priority: z.number(),
  /** Full-text score over the query's best possible score over the caller's visible entries (0-1). */
  fulltext_strength: z.number().nullable(),
  /** Fused score relative to the best candidate's (1 for the best). */
  relevance: z.number(),
  /** The bounded quality boost added to `relevance` for the final order (docs/retrieval.md). */
  quality_boost: z.number(),
  /**
   * What kept the entry: `words` (its full-text strength alone), `agreement` (both lists found
   * it: a shared word and a similarity clearly above the query's background), `meaning` (a
   * similarity well above the background), `anchor` (the strongest candidate, which shows the
   * query has an answer), `follows` (`mode: recall` only: it followed the anchor), `neighbour`
   * (lifted in by a dialogue neighbour), `ungated` (gate off). With LLM routing the model also
   * judged it relevant.
   */
  evidence: z.enum(['words', 'agreement', 'meaning', 'anchor', 'follows', 'neighbour', 'ungated']).optional(),
  /** The median similarity of the query's vector list, which `agreement` and `meaning` are measured over. */
  background_similarity: z.number().optional(),
  /**
   * The embedder's learned relevance check (docs/retrieval.md, "The learned relevance check"): the
   * model's probability that the entry is related to the query; a precision search keeps only
   * entries at or above the model's threshold.
   */
  relevance_probability: z.number().optional(),
  /**
   * The embedder's answer check (docs/retrieval.md, "The answer check"), on the result a small
   * store's precision search rests on (its first kept): the probability that it is related; under
   * the check's threshold the search returns nothing.
   */
  answer_probability: z.number().optional(),
  /**
   * When the query names a day or a month, or asks when: what the entry's date or its time
   * expressions added to `fused` (docs/retrieval-log.md, "Time in questions").
   */
  time_boost: z.number().optional(),
  /**
   * Dialogue neighbours: the candidate whose neighbour in its trace (`source.trace_id`) this
   * entry is and that lifted it most, and what all such candidates added to `fused`
   * (docs/retrieval-log.md, "Dialogue neighbours").
   */
  neighbour_of: z.string().optional(),
  neighbour_lift: z.number().optional(),
  /** Validity in time (issue 31): since when the entry holds, and when and by what it was superseded, or what it superseded. */
  valid_from: z.string().optional(),
  valid_to: z.string().optional(),
  superseded_by: z.string().optional(),
  supersedes: z.string().optional(),
  expires_at: z.string().optional(),
})
export type SearchExplain = z.output<typeof SearchExplain>

/** One search hit, in the shape of seed 003 (plus scopes and resource_ids). */
export const SearchResult = z.object({
  id: z.string(),
  task: z.string(),
  content: z.string(),
  types: z.array(KnowledgeType),
  tags: Tags,
  scopes: z.array(Scope),
  resource_ids: z.array(z.string()),
  eval: z.object({ score: z.number(), helpful: z.number(), harmful: z.number(), confidence: z.number() }),
  quality_score: z.number(),
  explain: SearchExplain.optional(),
  /**
   * Only on a result that is not current (asked for with `include` or `as_of`; issue 31): it was
   * superseded (`superseded: true`, when: `valid_to`, by: `superseded_by`) or it has expired
   * (`expired: true`, `expires_at`). Current results have none of these fields (seed 003's shape).
   */
  superseded: z.literal(true).optional(),
  valid_to: z.string().optional(),
  superseded_by: z.string().optional(),
  expired: z.literal(true).optional(),
  expires_at: z.string().optional(),
})
export type SearchResult = z.output<typeof SearchResult>

/**
 * A search hit as the API answers it: with `resources` when asked for with `expand=resources`.
 * @example
 * const hit: SearchResultView = (await kh.knowledge.search({ q: 'selenium' })).results[0]!
 */
export const SearchResultView = SearchResult.extend({ resources: z.array(ExpandedResource).optional() })
export type SearchResultView = z.output<typeof SearchResultView>

/**
 * What semantic routing did for a search: `off`, `used` (the LLM picked the shortlist) or
 * `fallback` (the hybrid order, with the reason: `llm_timeout`, `llm_failed`,
 * `llm_invalid_output`, `no_known_ids`, `no_candidates`, `llm_not_configured`).
 */
export const SearchRouting = z.object({ mode: z.enum(['off', 'llm']), status: z.enum(['off', 'used', 'fallback']), reason: z.string().optional() })
export type SearchRouting = z.output<typeof SearchRouting>

/**
 * A hybrid search answered without its vector list: `embedder_loading` while the embedder's
 * model is still loading on a server set to answer full-text-only meanwhile
 * (`search.whileModelLoads: full-text`, the default of `knowhub start`); `embedder_unavailable`
 * when the model server failed or did not answer the query's embedding in time
 * (`search.whenEmbedderFails: full-text`, the default).
 */
export const SearchVectors = z.object({ status: z.literal('skipped'), reason: z.enum(['embedder_loading', 'embedder_unavailable']) })
export type SearchVectors = z.output<typeof SearchVectors>

/**
 * The response of `GET /api/knowledge/search` (seed 003: `results`, `count`; `routing` when
 * routing was asked for; `vectors` when a hybrid search skipped its vector list).
 */
export const SearchResponse = z.object({
  results: z.array(SearchResultView),
  count: z.number().int(),
  routing: SearchRouting.optional(),
  vectors: SearchVectors.optional(),
})
export type SearchResponse = z.output<typeof SearchResponse>

/** A page of `GET /api/knowledge`, newest first: pass `next_cursor` back as `cursor` for the next page. */
export const KnowledgeListPage = listPage(KnowledgeEntryView)
export type KnowledgeListPage = z.output<typeof KnowledgeListPage>

/** The response of `GET /api/knowledge/{id}/versions`: previous versions, oldest first. */
export const KnowledgeVersions = z.object({ id: z.string(), versions: z.array(KnowledgeVersion) })
export type KnowledgeVersions = z.output<typeof KnowledgeVersions>

/** The response of `POST /api/knowledge/batch_update`: one result per item, in order; items fail independently. */
export const BatchFeedbackResult = z.object({
  updated: z.number().int(),
  results: z.array(z.object({ knowledge_id: z.string(), ok: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).optional() })),
})
export type BatchFeedbackResult = z.output<typeof BatchFeedbackResult>

/** Options of list. `scopes` narrows to entries in any of these (still within visibility). */
export const ListInput = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  types: z.array(KnowledgeType).optional(),
  scopes: z.array(Scope).optional(),
  status: z.array(KnowledgeStatus).default(['active']),
  cursor: z.string().max(500).optional(),
  /** Also superseded and/or expired entries (default: current ones only; issue 31). */
  include: Includes.optional(),
  /** Only entries of these visibilities (seed 002: private, shared, org, public). */
  visibility: VisibilityFilter.optional(),
  /** Only entries with these tags (`key:value`; every pair must hold). */
  tags: TagsFilter.optional(),
})
export type ListInput = z.input<typeof ListInput>

/**
 * `quality_score = score + helpful - 2 × harmful` (seed 003), where `harmful` is the weighted
 * figure when there is one: one principal's repeated harmful cases count with diminishing
 * weight (docs/feedback.md).
 * @example
 * qualityScore({ score: 3, helpful: 1, harmful: 2, harmful_weight: 1.25 }) // 1.5
 */
export function qualityScore(e: { score: number; helpful: number; harmful: number; harmful_weight?: number | undefined }): number {
  return e.score + e.helpful - 2 * (e.harmful_weight ?? e.harmful)
}

/** Distinct non-owner voters an entry needs before their scores count (docs/feedback.md). */
export const VOTE_QUORUM = 3

/**
 * An entry's score from its owner's score and the scores of its distinct non-owner voters
 * (one each, docs/feedback.md): the owner's score until {@link VOTE_QUORUM} principals have
 * voted, then the mean of the owner's score and the voters' median, a half rounded toward
 * the owner's score. No single principal can bury or promote an entry for everyone: one
 * vote moves a median of three or more only within the other votes' range, and the
 * owner's half stays.
 * @example
 * combinedScore(3, [1]) // 3: one voter is no quorum
 * combinedScore(4, [1, 1, 2]) // 3: (4 + 1) / 2, rounded toward 4
 */
export function combinedScore(ownerScore: number, votes: readonly number[]): number {
  if (votes.length < VOTE_QUORUM) return ownerScore
  const sorted = [...votes].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  const mean = (ownerScore + median) / 2
  return mean > ownerScore ? Math.floor(mean) : Math.ceil(mean)
}

/**
 * The weight of a principal's harmful case on an entry, given how many it gave before:
 * 1, then 1/4, 1/16, … — so one principal's harmful cases never weigh more than 4/3 in all
 * (docs/feedback.md).
 * @example
 * harmfulCaseWeight(0) // 1
 * harmfulCaseWeight(2) // 0.0625
 */
export function harmfulCaseWeight(earlier: number): number {
  return 4 ** -earlier
}

/**
 * What an import did: entries imported, ids skipped (`on_conflict: skip`), and every bad
 * line with its number and error code (nothing imported when there are any, unless partial).
 * @example
 * ImportReport.parse({ imported: 2, skipped: 0, errors: [] })
 */
export const ImportReport = z.object({
  imported: z.number().int(),
  skipped: z.number().int(),
  errors: z.array(z.object({ line: z.number().int(), code: z.string(), message: z.string() })),
  /**
   * Lines imported under a new id, because theirs is taken by an entry you cannot see (an
   * unknown id to you: the line is a new entry); references to them in the import follow.
   */
  renamed: z.array(z.object({ line: z.number().int(), id: z.string(), new_id: z.string() })).optional(),
})
export type ImportReport = z.output<typeof ImportReport>

/**
 * The query of `POST /api/knowledge/import` (a JSONL body): all or nothing by default.
 * @example
 * ImportQuery.parse({ on_conflict: 'skip' }) // { mode: 'atomic', on_conflict: 'skip' }
 */
export const ImportQuery = z.strictObject({
  mode: z.enum(['atomic', 'partial']).default('atomic'),
  on_conflict: z.enum(['error', 'skip', 'replace']).default('error'),
})
export type ImportQuery = z.input<typeof ImportQuery>
