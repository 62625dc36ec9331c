/**
 * The knowledge folder's sync: both directions in one step, against a small state (the
 * version and text hash of each entry at the last sync). For each entry, the side that changed
 * since then wins; an entry changed on both sides is a conflict: the folder keeps its text, the
 * store keeps its own, a note in `conflicts/<id>.json` holds the store's version, and nothing is
 * overwritten. While the note is there the entry is left alone; once it is deleted, the folder's
 * text (merged by hand) is the edit. Only the text fields count (task, content, types, tags,
 * scopes, resources, status): counters, histories and dates are the store's and flow out.
 */
import { createHash } from 'node:crypto'
import { KnowledgeExportLine } from '../../core/knowledge.js'
import {
  FolderSyncInput,
  type FolderChange,
  type FolderConflict,
  type FolderFile,
  type FolderSyncResult,
  type FolderSyncState,
} from '../../core/knowledge-folder.js'
import { requirePermission, type Principal } from '../../core/principal.js'
import { mayManage } from '../../auth/policy.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeContext } from '../context.js'
import { visibleEntries } from './export.js'
import { applyFolderPlan, planFolderImport, planReport } from './import.js'
import { CONFLICTS_DIR, FOLDER_README, editableKey, fileText, isConflictNote, isKnowledgeFile, jsonText, orderedEntry, placeOf, readmeText } from './layout.js'
import { parseFolder, type FolderItem } from './parse.js'

/**
 * The hash the state keeps of an entry's text fields.
 * @example
 * state.entries[entry.id] = { version: entry.version, hash: textHash(entry) }
 */
export function textHash(entry: KnowledgeExportLine): string {
  return createHash('sha256').update(editableKey(entry)).digest('base64url')
}

const ImportLine = KnowledgeExportLine.strict()

function conflictNote(id: string, file: string, store: KnowledgeExportLine | undefined): FolderFile {
  const note = store
    ? `${id} changed in the folder (${file}) and in the store since the last sync. The folder keeps its text; the store's version is below. ` +
      'Merge by hand into the file, then delete this note: the next sync makes the file the new version.'
    : `${id} changed in the folder (${file}) and was deleted or hidden in the store since the last sync. Delete this note to add it again from the file, or delete it from the file too.`
  return { path: `${CONFLICTS_DIR}/${id}.json`, text: jsonText({ note, file, store: store ? orderedEntry(store) : null }) }
}

const byPath = (a: FolderFile, b: FolderFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/**
 * One sync step between a folder's files (and its state) and the store, as the caller.
 * Returns the import report, the conflicts, the folder to write (all files, the layout files to
 * delete) and the new state. With `dry_run` nothing is written and no files are returned.
 * @example
 * const result = await syncFolder(ctx, { files, state }, principal)
 */
export async function syncFolder(ctx: KnowledgeContext, raw: unknown, principal: Principal): Promise<FolderSyncResult> {
  requirePermission(principal, 'write')
  const input = parseWith(FolderSyncInput, raw, 'folder sync')
  const base: FolderSyncState['entries'] = input.state?.entries ?? {}
  const parsed = parseFolder(input.files, principal)
  const stored = await visibleEntries(ctx, principal)
  const storedById = new Map(stored.map((e) => [e.id, e]))
  const unchangedResult = (report: FolderSyncResult['report'], conflicts: FolderConflict[] = []): FolderSyncResult => ({
    report,
    conflicts,
    exported: [],
    files: [],
    remove: [],
    state: input.state ?? { format: 1, entries: {} },
  })

  // What changed where, entry by entry.
  const toApply: FolderItem[] = []
  const keptInFolder = new Map<string, { item: FolderItem; entry: KnowledgeExportLine }>()
  const conflicts: FolderConflict[] = []
  const notes: FolderFile[] = []
  const exported: FolderChange[] = []
  const removedIds: string[] = []
  const dropFromState = new Set<string>()
  const inFolder = new Set<string>()
  for (const item of parsed.items) {
    if (item.id === undefined) {
      toApply.push(item)
      continue
    }
    inFolder.add(item.id)
    const result = ImportLine.safeParse(item.json)
    if (!result.success) {
      toApply.push(item) // the plan reports what is wrong with it
      continue
    }
    const entry = result.data
    const store = storedById.get(item.id)
    const was = base[item.id]?.hash
    if (parsed.conflictNotes.has(item.id)) {
      keptInFolder.set(item.id, { item, entry })
      continue
    }
    const folderHash = textHash(entry)
    if (!store) {
      if (was === undefined)
        toApply.push(item) // new in the folder
      else if (was !== folderHash) {
        keptInFolder.set(item.id, { item, entry })
        dropFromState.add(item.id)
        const note = conflictNote(item.id, item.file, undefined)
        notes.push(note)
        conflicts.push({ id: item.id, file: item.file, note: note.path })
      }
      // else: deleted in the store, unchanged in the folder: it leaves the folder.
      continue
    }
    const storeHash = textHash(store)
    if (folderHash === storeHash) continue
    if (was !== undefined && folderHash === was) {
      exported.push({ id: store.id, file: placeOf(store) })
      continue
    }
    if (was !== undefined && storeHash === was) {
      toApply.push(item)
      continue
    }
    keptInFolder.set(item.id, { item, entry })
    const note = conflictNote(item.id, item.file, store)
    notes.push(note)
    conflicts.push({ id: item.id, file: item.file, note: note.path })
  }
  for (const store of stored) {
    if (inFolder.has(store.id)) continue
    const was = base[store.id]?.hash
    if (was === undefined) exported.push({ id: store.id, file: placeOf(store) })
    else if (was === textHash(store) && store.status === 'active') removedIds.push(store.id)
    else exported.push({ id: store.id, file: placeOf(store) })
  }

  // The folder's side, through the import's plan (its checks, its words).
  const subset = { ...parsed, items: toApply, sections: new Set<string>() }
  const plan = await planFolderImport(ctx, subset, stored, principal)
  for (const id of removedIds) {
    const entry = storedById.get(id)!
    plan.removed.push({ id, file: placeOf(entry), manageable: mayManage(principal, entry) })
  }
  const report = planReport(plan, input.dry_run)
  // With errors nothing is written, the conflict notes included: the report says what to fix first.
  if (input.dry_run || plan.errors.length > 0) return unchangedResult(report, input.dry_run ? conflicts : [])
  const done = await applyFolderPlan(ctx, plan, principal, { prune: input.prune })
  const finalReport = { ...report, applied: done.applied, added: done.added, changed: done.changed, archived: done.archived, errors: done.errors }
  if (!done.applied || done.errors.length > 0) return unchangedResult(finalReport)

  // The store's side: the folder as the store now has it, but every kept entry as the folder has it.
  const wrote = done.added.length + done.changed.length + done.archived.length > 0
  const after = wrote ? await visibleEntries(ctx, principal) : stored
  const byFile = new Map<string, KnowledgeExportLine[]>()
  const put = (path: string, entry: KnowledgeExportLine) => {
    const list = byFile.get(path)
    if (list) list.push(entry)
    else byFile.set(path, [entry])
  }
  const entries: FolderSyncState['entries'] = {}
  for (const entry of after) {
    const kept = keptInFolder.get(entry.id)
    entries[entry.id] = kept && parsed.conflictNotes.has(entry.id) && base[entry.id] ? base[entry.id]! : { version: entry.version, hash: textHash(entry) }
    if (!kept) put(placeOf(entry), entry)
  }
  for (const [id, { item, entry }] of keptInFolder) {
    put(item.file, entry)
    if (dropFromState.has(id)) delete entries[id]
    else if (!storedById.has(id) && base[id]) entries[id] = base[id]!
  }
  const files: FolderFile[] = [{ path: FOLDER_README, text: readmeText() }]
  for (const [path, list] of byFile) files.push({ path, text: fileText(list) })
  files.push(...notes)
  const written = new Set(files.map((f) => f.path))
  for (const file of input.files) {
    // Open conflict notes stay as they are.
    if (isConflictNote(file.path) && !written.has(file.path)) {
      files.push(file)
      written.add(file.path)
    }
  }
  const remove = input.files.map((f) => f.path).filter((path) => !written.has(path) && isKnowledgeFile(path))
  ctx.logger.info('knowledge.folder.synced', { added: done.added.length, changed: done.changed.length, conflicts: conflicts.length, exported: exported.length })
  return { report: finalReport, conflicts, exported, files: files.sort(byPath), remove, state: { format: 1, entries } }
}
