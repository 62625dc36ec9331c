/**
 * Forgetting a user and retention purges (issue 31) as zod schemas: what a forget or a purge
 * erased, counted (never content), and what the cleanup of the database files did.
 */
import { z } from 'zod'
import { KnowHubError } from './errors.js'

const UserId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/, 'user ids are 1-128 characters: letters, digits and . _ @ + -')

/**
 * A principal to forget: `user:ID` (the only kind a forget takes today).
 * @example
 * ForgetSubject.parse('user:bob') // 'user:bob'
 */
export const ForgetSubject = z
  .string()
  .refine((s) => s.startsWith('user:') && UserId.safeParse(s.slice('user:'.length)).success, 'give the principal as user:ID (e.g. user:bob)')
export type ForgetSubject = z.infer<typeof ForgetSubject>

/** Rows erased by a forget, by kind. */
export const ForgetCounts = z.object({
  /** Entries the user owned, or that only the user could see (scopes `user:ID` alone), any status. */
  entries: z.number().int(),
  /** Earlier versions of those entries. */
  versions: z.number().int(),
  /** Helpful and harmful cases the user gave on other entries (their counters lowered to match). */
  feedback_cases: z.number().int(),
  /** Score votes the user gave on other entries (those entries re-scored). */
  score_votes: z.number().int(),
  /** Other entries, resources and agent documents shared with `user:ID` among other scopes: the scope removed. */
  scopes_removed: z.number().int(),
  /** Resources the user owned or only the user could see. */
  resources: z.number().int(),
  /** Of those, resources with an encrypted secret. */
  secrets: z.number().int(),
  /** API tokens of the user (revoked or not). */
  tokens: z.number().int(),
  /** Dashboard sessions signed in with those tokens. */
  sessions: z.number().int(),
  /** Goal trees the user owned (and their goals). */
  goal_trees: z.number().int(),
  goals: z.number().int(),
  /** Agent document versions the user owned or wrote. */
  agent_documents: z.number().int(),
  /** Rows of the audit of secret reads by the user, or of the user's resources. */
  secret_reads: z.number().int(),
})
export type ForgetCounts = z.infer<typeof ForgetCounts>

/**
 * The database files' cleanup after an erasure: which tables were rewritten (`VACUUM FULL`), how
 * long it took, and whether the embedded database's write-ahead log moved past the erased rows.
 */
export const FileCleanup = z.object({
  /** `full`: tables rewritten; `skipped`: a dry run, or nothing was erased. */
  mode: z.enum(['full', 'skipped']),
  tables: z.array(z.string()),
  ms: z.number(),
  /** PGlite: WAL segments switched and old ones removed (see docs/operations.md); PostgreSQL: a CHECKPOINT was asked for. */
  wal: z.enum(['rotated', 'checkpointed', 'not_permitted', 'skipped']),
  /** PostgreSQL: how long the rewrite waited for other sessions' snapshots older than the erasure (the rows they may read are copied). */
  waited_ms: z.number(),
  /** Sessions still holding such a snapshot when the wait ended: their rows may stay in the files until the next `VACUUM FULL` (docs/operations.md). */
  older_sessions: z.number(),
})
export type FileCleanup = z.infer<typeof FileCleanup>

/**
 * What `forget` did (or, with `dry_run`, would do): counts only, no content.
 * @example
 * const receipt = ForgetReceipt.parse(await (await fetch(`${url}/api/principals/user:bob?dry_run=true`, { method: 'DELETE' })).json())
 */
export const ForgetReceipt = z.object({
  subject: z.string(),
  dry_run: z.boolean(),
  erased: ForgetCounts,
  /**
   * Housekeeping done in the same transaction that is not the user's data (issue 42: it was
   * counted as erased): per-scope search statistics rows that counted nothing any more, whoever's
   * deletes emptied them.
   */
  housekeeping: z.object({ search_statistics: z.number().int() }),
  cleanup: FileCleanup,
  /** Caches emptied in this process (search responses, routing, query vectors, records, token verifications). */
  caches: z.array(z.string()),
  /** When it ran (ISO 8601). */
  at: z.string(),
  ms: z.number(),
})
export type ForgetReceipt = z.infer<typeof ForgetReceipt>

const DURATION = /^(\d{1,5})(d|h|m)$/u
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const

/**
 * A retention age such as `90d`, `12h` or `30m`, in milliseconds.
 * @example
 * parseAge('90d') // 7776000000
 */
export function parseAge(value: string): number {
  const match = DURATION.exec(value.trim())
  if (!match) throw new KnowHubError('validation_error', `"${value}" is not an age: give a number and d, h or m (e.g. 90d)`, { value })
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}

const Age = z.string().refine((s) => DURATION.test(s.trim()), 'an age is a number and d, h or m (e.g. 90d)')

/**
 * The body of `POST /api/admin/purge` and the options of `knowhub purge`: slimmed originals
 * (`merged`) older than one age, archived entries older than another; at least one.
 * @example
 * PurgeInput.parse({ merged_older_than: '90d', archived_older_than: '30d', dry_run: true })
 */
export const PurgeInput = z
  .strictObject({
    merged_older_than: Age.optional(),
    archived_older_than: Age.optional(),
    dry_run: z.boolean().optional(),
  })
  .refine((v) => v.merged_older_than !== undefined || v.archived_older_than !== undefined, 'give merged_older_than, archived_older_than, or both')
export type PurgeInput = z.input<typeof PurgeInput>

/** What a purge erased (or would), with its cutoffs. */
export const PurgeReceipt = z.object({
  dry_run: z.boolean(),
  /** `hub` for the hub operator; `org` for an org admin (entries its own ids reach, never public-only ones). */
  reach: z.enum(['hub', 'org']),
  merged_before: z.string().nullable(),
  archived_before: z.string().nullable(),
  erased: z.object({
    merged: z.number().int(),
    archived: z.number().int(),
    versions: z.number().int(),
    feedback_cases: z.number().int(),
  }),
  cleanup: FileCleanup,
  at: z.string(),
  ms: z.number(),
})
export type PurgeReceipt = z.infer<typeof PurgeReceipt>
