/**
 * The knowledge folder (seed 002's file layout: `global/`, `agents/<id>/`, `users/<id>/`,
 * `projects/<id>/`, `teams/<id>/`): the shapes its export, import and sync exchange, as zod
 * schemas (docs/knowledge-folder.md). No I/O: the files travel as `{ path, text }`.
 */
import { z } from 'zod'

/** One file of a knowledge folder: its path inside the folder (`/`-separated) and its UTF-8 text. */
export const FolderFile = z.object({ path: z.string().min(1).max(1000), text: z.string() })
export type FolderFile = z.infer<typeof FolderFile>

/**
 * A problem in a folder: the file, the entry's index in the file's array (null for the file as a
 * whole), the field (dotted, null when none) and what is wrong, with an error code.
 */
export const FolderProblem = z.object({
  file: z.string(),
  index: z.number().int().nullable(),
  field: z.string().nullable(),
  code: z.string(),
  message: z.string(),
})
export type FolderProblem = z.infer<typeof FolderProblem>

/** One entry of a plan or report, and the file it is (or was) in. */
export const FolderChange = z.object({ id: z.string(), file: z.string() })
export type FolderChange = z.infer<typeof FolderChange>

/**
 * What an import did or, with `dry_run` (or when errors stopped it), would do.
 * @example
 * const report = FolderImportReport.parse(await res.json())
 * if (!report.applied) for (const e of report.errors) console.error(`${e.file}[${e.index}] ${e.field}: ${e.message}`)
 */
export const FolderImportReport = z.object({
  dry_run: z.boolean(),
  /** True when the changes were written (not a dry run, and no errors, or `partial`). */
  applied: z.boolean(),
  added: z.array(FolderChange),
  /** Entries whose task, content, types, tags, scopes, resources or status differ: a new version each (`edited in <path>`). */
  changed: z.array(FolderChange),
  unchanged: z.number().int(),
  /** Active entries missing from a folder section that exists (archived only with `prune`). */
  removed: z.array(FolderChange),
  /** Entries archived because they were removed (`prune`). */
  archived: z.array(FolderChange),
  errors: z.array(FolderProblem),
  /** Things that were not errors but are worth knowing (fields kept as stored, entries that will move on export). */
  notes: z.array(z.string()),
})
export type FolderImportReport = z.infer<typeof FolderImportReport>

/** The sync state file: the version and the text hash of each entry at the last sync. */
export const FolderSyncState = z.object({
  format: z.literal(1),
  entries: z.record(z.string(), z.object({ version: z.number().int().min(1), hash: z.string() })),
})
export type FolderSyncState = z.infer<typeof FolderSyncState>

/** An entry changed on both sides since the last sync: the folder keeps its text, the store its own, a note names both. */
export const FolderConflict = z.object({ id: z.string(), file: z.string(), note: z.string() })
export type FolderConflict = z.infer<typeof FolderConflict>

/**
 * What a sync did: the import part (folder → store), the conflicts, and the folder to write
 * (every file, and the layout files to delete), with the new state.
 */
export const FolderSyncResult = z.object({
  report: FolderImportReport,
  conflicts: z.array(FolderConflict),
  /** Entries whose store version was written to the folder (new or changed in the store). */
  exported: z.array(FolderChange),
  files: z.array(FolderFile),
  remove: z.array(z.string()),
  state: FolderSyncState,
})
export type FolderSyncResult = z.infer<typeof FolderSyncResult>

/** The body of `POST /api/knowledge/folder/sync`: the folder's files and its state. */
export const FolderSyncInput = z.strictObject({
  files: z.array(FolderFile).max(100_000),
  state: FolderSyncState.nullable().default(null),
  prune: z.boolean().default(false),
  dry_run: z.boolean().default(false),
})
export type FolderSyncInput = z.input<typeof FolderSyncInput>

/** The query of `POST /api/knowledge/folder/import`. */
export const FolderImportQuery = z.strictObject({
  dry_run: z.boolean().default(false),
  partial: z.boolean().default(false),
  prune: z.boolean().default(false),
})
export type FolderImportQuery = z.input<typeof FolderImportQuery>

/** The JSON body of `POST /api/knowledge/folder/import` (a zip of the folder is the other form). */
export const FolderImportBody = z.strictObject({ files: z.array(FolderFile).max(100_000) })
export type FolderImportBody = z.input<typeof FolderImportBody>

/** `GET /api/knowledge/folder?format=json`: the folder's files. */
export const FolderFiles = z.object({ files: z.array(FolderFile) })
export type FolderFiles = z.infer<typeof FolderFiles>
