/**
 * Schemas of knowledge slimming (`POST /api/knowledge/slim`, seed doc 003) and of
 * undoing a merge. Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { nullAsAbsent } from './validate.js'

/** Default cosine similarity two entries' vectors need to count as near-duplicates. */
export const DEFAULT_SLIM_THRESHOLD = 0.9
/** Default word-set overlap (Jaccard) two entries need as well. */
export const DEFAULT_SLIM_MIN_OVERLAP = 0.5
/** Default and largest number of entries compared in one run (pairwise, in memory). */
export const DEFAULT_SLIM_LIMIT = 2000
export const MAX_SLIM_LIMIT = 5000

/**
 * The body of `POST /api/knowledge/slim`. `model` (seed doc 003) names the model that writes
 * merged texts, overriding `llm.models.slim`; ignored without an LLM (the merge is deterministic).
 * @example
 * SlimInput.parse({ model: 'google/gemini-2.0-flash-001', dry_run: true })
 */
export const SlimInput = z.strictObject({
  model: z.string().max(200).optional(),
  /** Cosine similarity of the stored vectors, 0.5-1 (default 0.9). */
  threshold: z.coerce.number().min(0.5).max(1).default(DEFAULT_SLIM_THRESHOLD),
  /** Jaccard overlap of the entries' word sets (task + content), 0-1 (default 0.5). */
  min_overlap: z.coerce.number().min(0).max(1).default(DEFAULT_SLIM_MIN_OVERLAP),
  /** Only report the plan; change nothing. */
  dry_run: z.union([z.boolean(), z.stringbool()]).default(false),
  /** How many of the newest visible active entries to compare (default 2000, at most 5000). */
  limit: z.coerce.number().int().min(2).max(MAX_SLIM_LIMIT).default(DEFAULT_SLIM_LIMIT),
  /**
   * Continue with older entries: the `next_cursor` of a previous run. Each window starts
   * half a window after the previous one, so neighbouring windows overlap by half.
   */
  cursor: nullAsAbsent(z.string().max(500)),
})
export type SlimInput = z.input<typeof SlimInput>

/** One group of near-duplicates: merged into `kept_id` (null in a dry run). */
export const SlimGroup = z.object({
  kept_id: z.string().nullable(),
  /** The original entries, the one whose text leads the merge first. */
  merged_ids: z.array(z.string()),
  /** The lowest pairwise cosine similarity inside the group. */
  similarity: z.number(),
  /** The merged text (proposed in a dry run, written otherwise). */
  merged_content: z.string().optional(),
  /** Who wrote it: the LLM, or the deterministic merge (no LLM configured). */
  merge: z.enum(['llm', 'deterministic']).optional(),
})
export type SlimGroup = z.output<typeof SlimGroup>

/**
 * Why a group was not merged: `not_managed` (members the caller may not merge),
 * `scopes_differ` (near-duplicates whose scope sets differ: merging them would change who
 * can read the text), `scopes_not_writable`, `changed` (concurrently), `llm_failed` (the
 * LLM's merged text failed or was unusable: nothing of the group changed).
 */
export const SLIM_SKIP_REASONS = ['not_managed', 'scopes_differ', 'owners_differ', 'scopes_not_writable', 'changed', 'llm_failed', 'ungrounded'] as const

/** A group (or part of one) that was not merged, and why. */
export const SlimSkipped = z.object({
  ids: z.array(z.string()),
  reason: z.enum(SLIM_SKIP_REASONS),
  message: z.string(),
})
export type SlimSkipped = z.output<typeof SlimSkipped>

/** The response of `POST /api/knowledge/slim`. */
export const SlimResult = z.object({
  dry_run: z.boolean(),
  threshold: z.number(),
  min_overlap: z.number(),
  /** Entries compared. */
  considered: z.number().int(),
  /** True when more (older) entries exist than this run compared: continue with `next_cursor`. */
  truncated: z.boolean(),
  /** Pass as `cursor` to compare the next, older window (overlapping this one by half); null at the end. */
  next_cursor: z.string().nullable().default(null),
  groups: z.array(SlimGroup),
  /** Original entries marked `merged` by this run (0 in a dry run). */
  merged: z.number().int(),
  skipped: z.array(SlimSkipped),
})
export type SlimResult = z.output<typeof SlimResult>

/** The result of undoing a merge. */
export const UnmergeResult = z.object({
  /** The merged entry, now archived. */
  id: z.string(),
  status: z.literal('archived'),
  /** The originals, active again. */
  restored_ids: z.array(z.string()),
})
export type UnmergeResult = z.output<typeof UnmergeResult>
