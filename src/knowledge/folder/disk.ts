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
import { lstat, mkdir, readFile, readdir, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'
import { KnowHubError } from '../../core/errors.js'
import { FolderSyncState, type FolderFile } from '../../core/knowledge-folder.js'
import { FOLDER_README, README_MARKER, SYNC_STATE_FILE, meaningOf } from './layout.js'

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

/** The place of a folder path on disk, checked: relative, no `..`, and its parent folder inside the root. */
async function placeOnDisk(root: string, path: string): Promise<string> {
  const parts = path.split('/')
  if (isAbsolute(path) || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new KnowHubError('validation_error', `${path} is not a path inside the folder`, { file: path })
  }
  const target = join(root, ...parts)
  await mkdir(dirname(target), { recursive: true })
  if (!inside(root, await realpath(dirname(target)))) throw new KnowHubError('forbidden', `${path} leads outside the folder: refused`, { file: path })
  const info = await lstat(target).catch(() => undefined)
  if (info?.isSymbolicLink()) throw new KnowHubError('forbidden', `${path} is a symbolic link: refused (the folder writes plain files)`, { file: path })
  return target
}

/**
 * Writes files into a folder (created if missing) and deletes the `remove` paths: a file is
 * written only when its text differs, through a temporary file and a rename.
 * @example
 * await writeKnowledgeFolder('knowledge', files, [])
 */
export async function writeKnowledgeFolder(
  dir: string,
  files: readonly FolderFile[],
  remove: readonly string[] = [],
): Promise<{ written: number; removed: number }> {
  await mkdir(dir, { recursive: true })
  const root = await realpath(dir)
  let written = 0
  let removed = 0
  for (const file of files) {
    const target = await placeOnDisk(root, file.path)
    const current = await readFile(target, 'utf8').catch(() => undefined)
    if (current === file.text) continue
    const temporary = `${target}.knowhub-${process.pid}.tmp`
    await writeFile(temporary, file.text, 'utf8')
    await rename(temporary, target)
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
 * Writes the sync state (hidden, beside the files), its entries sorted by id.
 * @example
 * await writeSyncState('knowledge', result.state)
 */
export async function writeSyncState(dir: string, state: FolderSyncState): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(state.entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  await writeKnowledgeFolder(dir, [{ path: SYNC_STATE_FILE, text: `${JSON.stringify({ format: state.format, entries: sorted }, null, 2)}\n` }])
}

/** True for a path of the layout (a knowledge file, not the README or a note). */
function isLayoutFile(path: string): boolean {
  try {
    meaningOf(path)
    return true
  } catch {
    return false
  }
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
  const stale = existing.filter((f) => !keep.has(f.path) && isLayoutFile(f.path)).map((f) => f.path)
  const result = await writeKnowledgeFolder(dir, files, stale)
  // Section folders left empty by the deletions go too.
  for (const path of stale) {
    const parent = join(dir, ...path.split('/').slice(0, -1))
    if ((await readdir(parent).catch(() => ['?'])).length === 0) await rm(parent, { recursive: true, force: true })
  }
  return { files: files.length, ...result }
}
