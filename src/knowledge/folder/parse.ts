/**
 * Reading a knowledge folder's files (as `{ path, text }`): each file's JSON array, each
 * entry with its file and index, the defaults a file's path gives an entry written without an
 * id, duplicate ids across files, and every problem named by file, index and field. No I/O.
 */
import { isKnowHubError } from '../../core/errors.js'
import type { FolderFile, FolderProblem } from '../../core/knowledge-folder.js'
import type { Principal } from '../../core/principal.js'
import { CONFLICTS_DIR, FOLDER_README, SYNC_STATE_FILE, layoutPathOf, meaningOf, type FileMeaning } from './layout.js'

/** One entry of a folder file: as written, with the defaults its file gives an entry without an id. */
export interface FolderItem {
  file: string
  index: number
  /** The entry's id; undefined for a new entry written by hand. */
  id: string | undefined
  json: Record<string, unknown>
  meaning: FileMeaning
}

/** A folder, read: its entries, its problems, its sections, and the ids with an open conflict note. */
export interface ParsedFolder {
  items: FolderItem[]
  errors: FolderProblem[]
  /** Section folders present (`users/alice`, `global`): an active entry of one that is missing from it was removed. */
  sections: Set<string>
  /** Ids with a note in `conflicts/` (sync leaves them alone until the note is deleted). */
  conflictNotes: Set<string>
}

/**
 * The problems an error stands for, at a file, an index and a field: one per validation issue,
 * else one naming the field the error's details point at (scopes, owner, content).
 * @example
 * problemsOf('users/alice/habits.json', 0, error) // [{ file, index: 0, field: 'scopes', code: 'forbidden', message }]
 */
export function problemsOf(file: string, index: number | null, error: unknown): FolderProblem[] {
  if (!isKnowHubError(error)) return [{ file, index, field: null, code: 'invalid_import', message: (error as Error).message }]
  const code = error.code === 'validation_error' ? 'invalid_import' : error.code
  const details = (error.details ?? {}) as Record<string, unknown>
  const issues = Array.isArray(details.issues) ? (details.issues as { path: string; message: string }[]) : []
  if (issues.length > 0) return issues.map((i) => ({ file, index, field: i.path === '(root)' ? null : i.path, code, message: i.message }))
  const field = 'scopes' in details ? 'scopes' : 'owner' in details ? 'owner' : code === 'too_large' ? 'content' : null
  return [{ file, index, field, code, message: error.message }]
}

/**
 * The scope of a section's new entries: the section's own, or for `global/` the caller's org (public without one).
 * @example
 * sectionScope(meaningOf('global/tools.json'), { org: 'acme', permissions: ['write'] }) // 'org:acme'
 */
export function sectionScope(meaning: FileMeaning, principal: Principal): string {
  if (meaning.section.kind !== 'global') return `${meaning.section.kind}:${meaning.section.id}`
  return principal.org ? `org:${principal.org}` : 'public'
}

/** An entry written by hand, with what its file implies where it says nothing: type, category, scope, and owner in agents/ and users/. */
function withFileDefaults(json: Record<string, unknown>, meaning: FileMeaning, principal: Principal): Record<string, unknown> {
  const out = { ...json }
  // Seed 002's `type` (one) says the type itself.
  if (out.types === undefined && out.type === undefined && meaning.type) out.types = [meaning.type]
  if (meaning.category !== undefined) {
    const tags = out.tags
    if (tags === undefined || tags === null) out.tags = { category: meaning.category }
    else if (typeof tags === 'object' && !Array.isArray(tags) && !('category' in tags)) out.tags = { ...tags, category: meaning.category }
  }
  if (out.scopes === undefined) out.scopes = [sectionScope(meaning, principal)]
  const { section } = meaning
  if (out.owner === undefined && (section.kind === 'agent' || section.kind === 'user')) out.owner = `${section.kind}:${section.id}`
  return out
}

/** Parses a file's text: a BOM and Windows line endings are accepted. */
function parseText(text: string): unknown {
  return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
}

/** True for files of the folder that hold no entries: the README, other Markdown, the sync state. */
function isNotes(path: string): boolean {
  return path === FOLDER_README || path.endsWith('.md') || path === SYNC_STATE_FILE
}

/**
 * Reads every file of a folder into entries, with a problem for each bad file or entry.
 * @example
 * const { items, errors } = parseFolder(files, principal)
 */
export function parseFolder(files: readonly FolderFile[], principal: Principal): ParsedFolder {
  const parsed: ParsedFolder = { items: [], errors: [], sections: new Set(), conflictNotes: new Set() }
  const firstSeen = new Map<string, { file: string; index: number }>()
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  for (const { path, text } of sorted) {
    if (isNotes(path)) continue
    if (path.startsWith(`${CONFLICTS_DIR}/`)) {
      try {
        const note = layoutPathOf(path)
        if (note.kind === 'conflict-note') parsed.conflictNotes.add(note.id)
      } catch (error) {
        parsed.errors.push(...problemsOf(path, null, error))
      }
      continue
    }
    let meaning: FileMeaning
    try {
      meaning = meaningOf(path)
    } catch (error) {
      parsed.errors.push(...problemsOf(path, null, error))
      continue
    }
    parsed.sections.add(meaning.dir)
    let json: unknown
    try {
      json = parseText(text)
    } catch (error) {
      parsed.errors.push({ file: path, index: null, field: null, code: 'invalid_import', message: `not valid JSON (${(error as Error).message})` })
      continue
    }
    if (!Array.isArray(json)) {
      parsed.errors.push({ file: path, index: null, field: null, code: 'invalid_import', message: 'a knowledge file is a JSON array of entries' })
      continue
    }
    json.forEach((value: unknown, index) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        parsed.errors.push({ file: path, index, field: null, code: 'invalid_import', message: 'an entry is a JSON object' })
        return
      }
      const object = value as Record<string, unknown>
      if (!('id' in object)) {
        parsed.items.push({ file: path, index, id: undefined, json: withFileDefaults(object, meaning, principal), meaning })
        return
      }
      if (typeof object.id !== 'string') {
        parsed.errors.push({ file: path, index, field: 'id', code: 'invalid_import', message: 'id must be a string (leave it out for a new entry)' })
        return
      }
      const first = firstSeen.get(object.id)
      if (first) {
        parsed.errors.push({
          file: path,
          index,
          field: 'id',
          code: 'invalid_import',
          message: `duplicate id ${object.id} (also in ${first.file} at index ${first.index})`,
        })
        return
      }
      firstSeen.set(object.id, { file: path, index })
      // An entry written by hand with an id of its own (no `created_at`: not an exported one) takes the file's defaults too.
      const json = 'created_at' in object ? object : withFileDefaults(object, meaning, principal)
      parsed.items.push({ file: path, index, id: object.id, json, meaning })
    })
  }
  return parsed
}
