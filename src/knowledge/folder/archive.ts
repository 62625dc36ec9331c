/**
 * A knowledge folder as one zip file (the dashboard's download, `POST …/folder/import` with a
 * zip body), through fflate: a small, dependency-free, widely used zip library (no archive
 * code of our own). The zip is byte-stable: files sorted by path, a fixed date.
 */
import { strFromU8, strToU8, unzipSync, zipSync, type Zippable } from 'fflate'
import { KnowHubError } from '../../core/errors.js'
import type { FolderFile } from '../../core/knowledge-folder.js'

/** The date of every file in a folder zip (1980-01-01, zip's first day): the same store zips to the same bytes. */
const ZIP_DATE = new Date(1980, 0, 1)

/**
 * Zips a folder's files (deflated, sorted by path, fixed dates).
 * @example
 * const zip = zipFolder(await knowledge.exportFolder(principal))
 */
export function zipFolder(files: readonly FolderFile[]): Uint8Array {
  const tree: Zippable = {}
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    tree[file.path] = [strToU8(file.text), { mtime: ZIP_DATE, level: 6 }]
  }
  return zipSync(tree)
}

/**
 * The files of a folder zip, bounded: at most `maxFiles` files of at most `maxFileBytes` each and
 * `maxTotalBytes` in all (checked from the zip's directory before anything is inflated, so a small
 * zip that would inflate to gigabytes is refused). Folders and hidden names are skipped.
 * @example
 * const files = unzipFolder(bytes, { maxFiles: 50_000, maxFileBytes: 64 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 })
 */
export function unzipFolder(bytes: Uint8Array, limits: { maxFiles: number; maxFileBytes: number; maxTotalBytes: number }): FolderFile[] {
  let count = 0
  let total = 0
  let raw: Record<string, Uint8Array>
  try {
    raw = unzipSync(bytes, {
      filter: (file) => {
        if (file.name.endsWith('/') || file.name.split('/').some((part) => part.startsWith('.'))) return false
        if (file.originalSize > limits.maxFileBytes) {
          throw new KnowHubError('too_large', `${file.name} is ${file.originalSize} bytes; a knowledge file is at most ${limits.maxFileBytes}`, {
            file: file.name,
          })
        }
        if (++count > limits.maxFiles) throw new KnowHubError('too_large', `the zip has over ${limits.maxFiles} files`)
        total += file.originalSize
        if (total > limits.maxTotalBytes) throw new KnowHubError('too_large', `the zip holds over ${limits.maxTotalBytes} bytes`)
        return true
      },
    })
  } catch (error) {
    if (error instanceof KnowHubError) throw error
    throw new KnowHubError('invalid_import', `not a zip file (${(error as Error).message})`)
  }
  return Object.entries(raw).map(([path, data]) => ({ path, text: strFromU8(data) }))
}
