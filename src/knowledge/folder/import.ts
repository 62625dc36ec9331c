/**
 * The knowledge folder's import: a plan (added / changed / unchanged / removed), checked in
 * full before anything is written, then applied. New entries go through the JSONL import's
 * checks and writer (jsonl.ts: the same rules and words); a changed entry is an edit by its
 * owner (a new version, reason `edited in <path>`); a removed one is archived only with `prune`.
 */
import { KnowHubError } from '../../core/errors.js'
import { newKnowledgeId } from '../../core/ids.js'
import { checkJsonLimits } from '../../core/json-limits.js'
import type { EditKnowledgeInput, KnowledgeExportLine } from '../../core/knowledge.js'
import { FolderImportQuery, type FolderChange, type FolderFile, type FolderImportReport, type FolderProblem } from '../../core/knowledge-folder.js'
import { assertWritableScopes, requirePermission, type Principal } from '../../core/principal.js'
import { mayManage, writeAccess } from '../../auth/policy.js'
import { parseWith } from '../../core/validate.js'
import { checkVisibility } from '../../core/visibility.js'
import type { KnowledgeContext } from '../context.js'
import { editEntry, setEntryStatus } from '../entries/entries.js'
import { checkLine, parseExportLine, writeChecked, type CheckedLine, type ImportDeps } from '../transfer/jsonl.js'
import { visibleEntries } from './export.js'
import { editableKey, placeOf, sectionOf, sortedKeys } from './layout.js'
import { parseFolder, problemsOf, type FolderItem, type ParsedFolder } from './parse.js'

/** How an import runs. */
export interface FolderImportOptions {
  /** Only report the plan. */
  dryRun?: boolean
  /** Apply the good entries even when others are bad (default: nothing unless all are good). */
  partial?: boolean
  /** Archive the active entries removed from a folder section that exists (default: only report them). */
  prune?: boolean
}

/** A new entry, checked (its id drawn here for an entry written without one). */
interface Add {
  item: FolderItem
  id: string
  checked: CheckedLine
}

/** A changed entry: the edit and the status change it makes. */
interface Change {
  item: FolderItem
  id: string
  edit: Omit<EditKnowledgeInput, 'reason'> | undefined
  status: 'active' | 'archived' | undefined
}

/** What an import will do. */
export interface FolderPlan {
  adds: Add[]
  changes: Change[]
  unchanged: FolderItem[]
  removed: (FolderChange & { manageable: boolean })[]
  errors: FolderProblem[]
  notes: string[]
}

const NON_EDITABLE = [
  'message_id',
  'source',
  'eval',
  'merged_into',
  'version',
  'created_at',
  'updated_at',
  'versions',
  'valid_from',
  'valid_to',
  'superseded_by',
  'supersedes',
  'expires_at',
] as const

function importDeps(ctx: KnowledgeContext, principal: Principal): ImportDeps {
  return { store: ctx.store, embedder: ctx.embedder, principal, maxContentBytes: ctx.maxContentBytes, logger: ctx.logger, clock: ctx.clock }
}

const at = (item: FolderItem) => `${item.file}[${item.index}]`

/** Checks a changed entry: the owner's edit, with the scopes it may write; throws what is wrong. */
function checkChange(item: FolderItem, entry: KnowledgeExportLine, stored: KnowledgeExportLine, principal: Principal, ctx: KnowledgeContext): Change {
  if (!mayManage(principal, stored)) {
    throw new KnowHubError('forbidden', `Only the owner (${stored.owner}) or an admin may change entry ${stored.id}`, { owner: stored.owner })
  }
  if (entry.owner !== stored.owner) {
    throw new KnowHubError('invalid_import', `the owner of ${stored.id} is ${stored.owner}; a folder does not change owners (knowhub reown does)`, {
      issues: [{ path: 'owner', message: `the owner of ${stored.id} is ${stored.owner}; a folder does not change owners (knowhub reown does)` }],
    })
  }
  if (entry.status === 'merged' && stored.status !== 'merged') {
    throw new KnowHubError('invalid_import', 'status merged is set by slim; a folder can set active or archived', {
      issues: [{ path: 'status', message: 'status merged is set by slim; a folder can set active or archived' }],
    })
  }
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
  const edit: Omit<EditKnowledgeInput, 'reason'> = {}
  if (entry.task !== stored.task) edit.task = entry.task
  if (entry.content !== stored.content) {
    ctx.checkContentSize(entry.content)
    edit.content = entry.content
  }
  if (!same(entry.types, stored.types)) edit.types = entry.types
  if (editableKey({ ...stored, tags: entry.tags }) !== editableKey(stored)) edit.tags = entry.tags
  if (!same(entry.scopes, stored.scopes)) {
    assertWritableScopes(principal, entry.scopes)
    edit.scopes = entry.scopes
  }
  if (!same(entry.resource_ids, stored.resource_ids)) edit.resource_ids = entry.resource_ids
  const status = entry.status !== stored.status && entry.status !== 'merged' ? entry.status : undefined
  return { item, id: stored.id, edit: Object.keys(edit).length > 0 ? edit : undefined, status }
}

/**
 * Checks a new entry as the JSONL import checks a line: one with an id (exported, written by hand,
 * or one of the seeds' records) keeps its id and the `eval` it gives; one without is a save.
 */
function checkNew(item: FolderItem, deps: ImportDeps): CheckedLine {
  return checkLine(JSON.stringify(item.json), item.index + 1, deps)
}

/**
 * The plan of importing a parsed folder over the entries the caller sees: every check made,
 * nothing written.
 * @example
 * const plan = await planFolderImport(ctx, parseFolder(files, principal), await visibleEntries(ctx, principal), principal)
 */
export async function planFolderImport(
  ctx: KnowledgeContext,
  parsed: ParsedFolder,
  stored: readonly KnowledgeExportLine[],
  principal: Principal,
): Promise<FolderPlan> {
  const plan: FolderPlan = { adds: [], changes: [], unchanged: [], removed: [], errors: [...parsed.errors], notes: [] }
  const byId = new Map(stored.map((e) => [e.id, e]))
  const deps = importDeps(ctx, principal)
  const taken = new Set<string>([...byId.keys(), ...parsed.items.flatMap((i) => (i.id ? [i.id] : []))])
  const newIds = parsed.items.flatMap((i) => (i.id !== undefined && !byId.has(i.id) ? [i.id] : []))
  // An id taken by an entry the caller cannot see is an unknown id to it: that entry is new, under an id of its own.
  const hidden = new Set<string>()
  for (let i = 0; i < newIds.length; i += 1000) {
    for (const [id, claim] of await ctx.store.knowledge.claims(newIds.slice(i, i + 1000), writeAccess(principal))) if (claim === 'hidden') hidden.add(id)
  }
  for (const item of parsed.items) {
    try {
      const current = item.id === undefined ? undefined : byId.get(item.id)
      if (current === undefined) {
        const checked = checkNew(item, deps)
        if (checked.fresh || hidden.has(checked.record.id)) {
          do checked.record.id = newKnowledgeId(checked.record.created_at)
          while (taken.has(checked.record.id))
          taken.add(checked.record.id)
          if (!checked.fresh) plan.notes.push(`${at(item)} ${item.id}: imported as a new entry, ${checked.record.id} (that id is not available)`)
        }
        plan.adds.push({ item, id: checked.record.id, checked })
        continue
      }
      checkJsonLimits(item.json)
      const entry = parseExportLine(item.json, deps)
      const place = placeOf(entry)
      if (place !== item.file) plan.notes.push(`${at(item)} ${entry.id}: its fields place it in ${place}; the next export writes it there`)
      if (editableKey(entry) === editableKey(current)) {
        plan.unchanged.push(item)
        continue
      }
      const change = checkChange(item, entry, current, principal, ctx)
      checkVisibility(entry.visibility, entry.scopes, entry.owner)
      plan.changes.push(change)
      const kept = NON_EDITABLE.filter(
        (field) => entry[field] !== undefined && JSON.stringify(sortedKeys(entry[field])) !== JSON.stringify(sortedKeys(current[field])),
      )
      if (kept.length > 0)
        plan.notes.push(`${at(item)} ${entry.id}: ${kept.join(', ')} kept as stored (feedback, edits, slim and supersede change them, not the folder)`)
    } catch (error) {
      plan.errors.push(...problemsOf(item.file, item.index, error))
    }
  }
  const inFolder = new Set(parsed.items.flatMap((i) => (i.id ? [i.id] : [])))
  for (const entry of stored) {
    if (entry.status !== 'active' || inFolder.has(entry.id) || !parsed.sections.has(sectionOf(entry))) continue
    plan.removed.push({ id: entry.id, file: placeOf(entry), manageable: mayManage(principal, entry) })
  }
  plan.errors.sort(byPlace)
  return plan
}

/** Problems in folder order: by file, then index (the file's own first). */
function byPlace(a: FolderProblem, b: FolderProblem): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1
  return (a.index ?? -1) - (b.index ?? -1)
}

/**
 * Applies a plan: new entries (one transaction), then each change and archive. Returns what was done, with problems at file and index.
 * @example
 * const done = await applyFolderPlan(ctx, plan, principal, { prune: true })
 */
export async function applyFolderPlan(
  ctx: KnowledgeContext,
  plan: FolderPlan,
  principal: Principal,
  options: FolderImportOptions,
): Promise<{ applied: boolean; added: FolderChange[]; changed: FolderChange[]; archived: FolderChange[]; errors: FolderProblem[] }> {
  const done = { applied: true, added: [] as FolderChange[], changed: [] as FolderChange[], archived: [] as FolderChange[], errors: [] as FolderProblem[] }
  if (plan.adds.length > 0) {
    // Every add was checked by the plan; one transaction writes them all (with `partial`, one a batch).
    try {
      const written = await writeChecked(
        { ...ctx, principal },
        plan.adds.map((a) => a.checked),
        new Set(),
        { atomic: !options.partial },
      )
      await ctx.noteWrites(written)
      for (const add of plan.adds) done.added.push({ id: add.id, file: add.item.file })
    } catch (error) {
      for (const problem of problemsOf(plan.adds[0]!.item.file, null, error)) done.errors.push(problem)
      return { ...done, applied: false }
    }
  }
  for (const change of plan.changes) {
    try {
      if (change.edit) await editEntry(ctx, change.id, { ...change.edit, reason: `edited in ${change.item.file}` }, principal)
      if (change.status) await setEntryStatus(ctx, change.id, change.status, principal)
      done.changed.push({ id: change.id, file: change.item.file })
    } catch (error) {
      done.errors.push(...problemsOf(change.item.file, change.item.index, error))
    }
  }
  if (options.prune) {
    for (const removed of plan.removed) {
      if (!removed.manageable) continue
      try {
        await setEntryStatus(ctx, removed.id, 'archived', principal)
        done.archived.push({ id: removed.id, file: removed.file })
      } catch (error) {
        done.errors.push(...problemsOf(removed.file, null, error))
      }
    }
  }
  return done
}

/**
 * The report of a plan that was not applied (a dry run, or errors without `partial`).
 * @example
 * if (options.dryRun) return planReport(plan, true)
 */
export function planReport(plan: FolderPlan, dryRun: boolean): FolderImportReport {
  return {
    dry_run: dryRun,
    applied: false,
    added: plan.adds.map((a) => ({ id: a.id, file: a.item.file })),
    changed: plan.changes.map((c) => ({ id: c.id, file: c.item.file })),
    unchanged: plan.unchanged.length,
    removed: plan.removed.map(({ id, file }) => ({ id, file })),
    archived: [],
    errors: plan.errors,
    notes: [
      ...plan.notes,
      ...plan.removed.filter((r) => !r.manageable).map((r) => `${r.id} (${r.file}) was removed from the folder but is not yours to archive`),
    ],
  }
}

/**
 * Imports a knowledge folder (seed 002's layout) as the caller: adds new entries, makes each
 * changed entry a new version (`edited in <path>`), reports removed entries and archives them
 * with `prune`. Every file and entry is checked first: a problem names the file, the index and
 * the field, and nothing is written unless `partial`. `dry_run` only reports the plan. `query` is the
 * query of `POST /api/knowledge/folder/import`, checked here.
 * @example
 * const report = await importFolder(ctx, [{ path: 'users/alice/preferences.json', text }], principal, { dry_run: true })
 */
export async function importFolder(
  ctx: KnowledgeContext,
  files: readonly FolderFile[],
  principal: Principal,
  query: FolderImportQuery = {},
): Promise<FolderImportReport> {
  const { dry_run: dryRun, partial, prune } = parseWith(FolderImportQuery, query, 'folder import query')
  const options: FolderImportOptions = { dryRun, partial, prune }
  requirePermission(principal, 'write')
  ctx.requireVectors()
  const parsed = parseFolder(files, principal)
  const plan = await planFolderImport(ctx, parsed, await visibleEntries(ctx, principal), principal)
  const report = planReport(plan, options.dryRun ?? false)
  if (options.dryRun || (plan.errors.length > 0 && !options.partial)) {
    if (plan.errors.length > 0) ctx.logger.warn('knowledge.folder.import.rejected', { errors: plan.errors.length })
    return report
  }
  const done = await applyFolderPlan(ctx, plan, principal, options)
  ctx.logger.info('knowledge.folder.imported', { added: done.added.length, changed: done.changed.length, archived: done.archived.length })
  return {
    ...report,
    applied: done.applied,
    added: done.added,
    changed: done.changed,
    archived: done.archived,
    errors: [...plan.errors, ...done.errors],
  }
}
