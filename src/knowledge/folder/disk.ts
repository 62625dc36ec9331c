/**
 * The knowledge folder on disk (docs/knowledge-folder.md): reading a folder into `{ path, text }`
 * files for the knowledge service, and writing the files it returns. This is the edge that
 * touches the file system; the layout, the checks and the plan live in src/knowledge/folder/.
 *
 * Reading refuses a symbolic link that leads outside the folder, bounds each file and the whole
 * folder, skips hidden names (`.git`, the sync state, which is read on its own), and accepts a
 * BOM and Windows line endings (the parser does). Writing writes a file only when its text
 * changed (git sees only real changes), through a temporary file and a rename.
 */
import { randomUUID } from 'node:crypto'
import type { Stats } from 'node:fs'
import { lstat, mkdir, readFile, readdir, realpath, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, sep } from 'node:path'
import { KnowHubError } from '../../core/errors.js'
import { FolderSyncState, type FolderFile } from '../../core/knowledge-folder.js'
import { FOLDER_README, README_MARKER, SYNC_STATE_FILE, isKnowledgeFile, layoutPathOf } from './layout.js'

/** Bounds on what a folder read takes in. */
export interface FolderLimits {
  /** Largest file, in bytes. */
  maxFileBytes: number
  /** All files together, in bytes. */
  maxTotalBytes: number
  /** Most files. */
  maxFiles: number
}

/** The default bounds: 64 MiB a file (some 50,000 typical entries), 1 GiB and 50,000 files in all. */
export const FOLDER_LIMITS: FolderLimits = { maxFileBytes: 64 * 1024 * 1024, maxTotalBytes: 1024 * 1024 * 1024, maxFiles: 50_000 }

const utf8 = new TextDecoder('utf-8', { fatal: true })

function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/** A folder's path for the service: `/`-separated, relative to the root. */
const folderPath = (rel: string) => rel.split(sep).join('/')

/**
 * Reads a knowledge folder: every file that is not hidden (a name starting with `.`), and the
 * sync state when there is one. Throws `not_found` for a missing folder, `forbidden` for a link
 * out of it, `too_large` past the limits, `invalid_import` for a file that is not UTF-8.
 * @example
 * const { files, state } = await readKnowledgeFolder('knowledge')
 */
export async function readKnowledgeFolder(
  dir: string,
  limits: FolderLimits = FOLDER_LIMITS,
): Promise<{ files: FolderFile[]; state: FolderSyncState | undefined }> {
  let root: string
  try {
    root = await realpath(dir)
    if (!(await stat(root)).isDirectory()) throw new KnowHubError('validation_error', `${dir} is not a folder`, { dir })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new KnowHubError('not_found', `There is no folder ${dir}`, { dir })
    throw error
  }
  const files: FolderFile[] = []
  const visited = new Set<string>([root])
  let total = 0
  const walk = async (real: string, rel: string): Promise<void> => {
    const entries = await readdir(real, { withFileTypes: true })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      let target = join(real, entry.name)
      if (entry.isSymbolicLink()) {
        let resolved: string
        try {
          resolved = await realpath(target)
        } catch {
          throw new KnowHubError('invalid_import', `${path} is a symbolic link to nothing`, { file: path })
        }
        if (!inside(root, resolved)) {
          throw new KnowHubError('forbidden', `${path} is a symbolic link to ${resolved}, outside ${dir}: refused`, { file: path })
        }
        target = resolved
      }
      const info = await stat(target)
      if (info.isDirectory()) {
        if (visited.has(target)) continue // a link back into the folder: its files are read once
        visited.add(target)
        await walk(target, path)
        continue
      }
      if (!info.isFile()) continue
      if (info.size > limits.maxFileBytes) {
        throw new KnowHubError('too_large', `${path} is ${info.size} bytes; a knowledge file is at most ${limits.maxFileBytes}`, {
          file: path,
          bytes: info.size,
        })
      }
      total += info.size
      if (total > limits.maxTotalBytes) throw new KnowHubError('too_large', `the folder is over ${limits.maxTotalBytes} bytes`, { file: path })
      if (files.length >= limits.maxFiles) throw new KnowHubError('too_large', `the folder has over ${limits.maxFiles} files`, { file: path })
      let text: string
      try {
        text = utf8.decode(await readFile(target))
      } catch {
        throw new KnowHubError('invalid_import', `${path} is not UTF-8 text`, { file: path })
      }
      files.push({ path: folderPath(path), text })
    }
  }
  await walk(root, '')
  return { files, state: await readSyncState(root) }
}

async function readSyncState(root: string): Promise<FolderSyncState | undefined> {
  const file = join(root, SYNC_STATE_FILE)
  let text: string
  try {
    if (!(await lstat(file)).isFile()) throw new KnowHubError('invalid_import', `${SYNC_STATE_FILE} is not a plain file`, { file: SYNC_STATE_FILE })
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new KnowHubError('invalid_import', `${SYNC_STATE_FILE} is not valid JSON (${(error as Error).message}); delete it to sync afresh`, {
      file: SYNC_STATE_FILE,
    })
  }
  const parsed = FolderSyncState.safeParse(json)
  if (!parsed.success) throw new KnowHubError('invalid_import', `${SYNC_STATE_FILE} is not a sync state; delete it to sync afresh`, { file: SYNC_STATE_FILE })
  return parsed.data
}

/** A path of the folder to write that is refused: nothing is written. The path is quoted as JSON (control characters escaped). */
function refused(path: string, why: string): KnowHubError {
  return new KnowHubError('forbidden', `the folder to write names ${JSON.stringify(path)}, ${why}: refused, nothing written`, { file: path })
}

/** lstat, or undefined when nothing is there. */
async function lstatOrNone(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * The place on disk of a path the folder may hold (the layout's rule, {@link layoutPathOf}),
 * checked without following any link: each part that exists is a real folder (the last one a
 * plain file), never a symbolic link. `root` is the folder's real path, or undefined before it exists.
 */
async function placeOnDisk(root: string | undefined, path: string): Promise<string> {
  try {
    layoutPathOf(path)
  } catch (error) {
    throw refused(path, `which is not a path of the knowledge folder (${(error as Error).message})`)
  }
  const parts = path.split('/')
  let at = root ?? ''
  for (const [i, part] of parts.entries()) {
    at = join(at, part)
    const info = root === undefined ? undefined : await lstatOrNone(at)
    if (!info) continue
    const shown = parts.slice(0, i + 1).join('/')
    if (info.isSymbolicLink()) throw refused(path, `and ${shown} is a symbolic link (the folder's writer follows none)`)
    if (i < parts.length - 1 && !info.isDirectory()) throw refused(path, `and ${shown} is not a folder`)
    if (i === parts.length - 1 && !info.isFile()) throw refused(path, 'which is not a plain file here')
  }
  return at
}

/** Creates the folders of `path` under `root` one at a time, refusing a link made meanwhile. */
async function makeFolders(root: string, path: string): Promise<void> {
  let at = root
  for (const part of path.split('/').slice(0, -1)) {
    at = join(at, part)
    await mkdir(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
    const info = await lstat(at)
    if (info.isSymbolicLink() || !info.isDirectory()) throw refused(path, `and ${relative(root, at)} is not a plain folder`)
  }
}

/** Writes `text` at `target` through a new temporary file (created exclusively: never through a link) and a rename. */
async function writeAtomically(target: string, text: string): Promise<void> {
  const temporary = `${target}.knowhub-${randomUUID()}.tmp`
  await writeFile(temporary, text, { encoding: 'utf8', flag: 'wx' })
  await rename(temporary, target)
}

/**
 * Writes files into a folder (created if missing) and deletes the `remove` paths: only paths of
 * the layout ({@link layoutPathOf}), never through a symbolic link. Every path is checked
 * before anything is written: one bad path refuses the whole answer (`forbidden`, naming it).
 * A file is written only when its text differs, through a temporary file and a rename.
 * @example
 * await writeKnowledgeFolder('knowledge', files, [])
 */
export async function writeKnowledgeFolder(
  dir: string,
  files: readonly FolderFile[],
  remove: readonly string[] = [],
): Promise<{ written: number; removed: number }> {
  const existing = await realpath(dir).catch(() => undefined)
  for (const path of [...files.map((f) => f.path), ...remove]) await placeOnDisk(existing, path)
  await mkdir(dir, { recursive: true })
  const root = await realpath(dir)
  let written = 0
  let removed = 0
  for (const file of files) {
    const target = await placeOnDisk(root, file.path)
    const current = await readFile(target, 'utf8').catch(() => undefined)
    if (current === file.text) continue
    await makeFolders(root, file.path)
    await writeAtomically(target, file.text)
    written++
  }
  for (const path of remove) {
    const target = await placeOnDisk(root, path)
    try {
      await unlink(target)
      removed++
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return { written, removed }
}

/**
 * Writes the sync state (hidden, beside the files), its entries sorted by id. The state is the
 * writer's own file, never a path a server names.
 * @example
 * await writeSyncState('knowledge', result.state)
 */
export async function writeSyncState(dir: string, state: FolderSyncState): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(state.entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  const target = join(await realpath(dir), SYNC_STATE_FILE)
  const info = await lstatOrNone(target)
  if (info && !info.isFile()) throw new KnowHubError('forbidden', `${SYNC_STATE_FILE} is not a plain file: refused`, { file: SYNC_STATE_FILE })
  await writeAtomically(target, `${JSON.stringify({ format: state.format, entries: sorted }, null, 2)}\n`)
}

/**
 * Writes an export into a folder: empty, missing, or a knowledge folder written before (its
 * README.md starts with the marker). Knowledge files of the layout that the export no longer
 * has are deleted; nothing else in the folder is touched.
 * @example
 * await writeExportedFolder('knowledge', await session.knowledge.exportFolder())
 */
export async function writeExportedFolder(dir: string, files: readonly FolderFile[]): Promise<{ files: number; written: number; removed: number }> {
  let existing: FolderFile[] = []
  const present = await stat(dir).catch(() => undefined)
  if (present) {
    if (!present.isDirectory()) throw new KnowHubError('validation_error', `${dir} is not a folder`, { dir })
    existing = (await readKnowledgeFolder(dir)).files
    const readme = existing.find((f) => f.path === FOLDER_README)
    const ours = readme?.text.startsWith(README_MARKER) ?? false
    if (!ours && existing.length > 0) {
      throw new KnowHubError(
        'validation_error',
        `${dir} is not empty and is not a knowledge folder (its README.md does not start with the KnowHub marker): export into an empty or new folder`,
        { dir },
      )
    }
  }
  const keep = new Set(files.map((f) => f.path))
  const stale = existing.filter((f) => !keep.has(f.path) && isKnowledgeFile(f.path)).map((f) => f.path)
  const result = await writeKnowledgeFolder(dir, files, stale)
  // Section folders left empty by the deletions go too.
  for (const path of stale) {
    const parent = join(dir, ...path.split('/').slice(0, -1))
    if ((await readdir(parent).catch(() => ['?'])).length === 0) await rmdir(parent).catch(() => {})
  }
  return { files: files.length, ...result }
}
