/**
 * A knowledge folder as one zip file (the dashboard's download, `POST …/folder/import` with a
 * zip body). Zipping is fflate's: a small, dependency-free, widely used zip library; the zip is
 * byte-stable (files sorted by path, a fixed date). Unzipping trusts nothing the zip declares
 * (issue 39): its directory is read and checked first (src/knowledge/folder/zip-directory.ts:
 * names, links, duplicates, the number of entries), then each entry is inflated by Node's zlib
 * off the event loop (libuv's thread pool), which counts the real output and stops at the limit.
 */
import { promisify } from 'node:util'
import { inflateRaw } from 'node:zlib'
import { strToU8, zipSync, type Zippable } from 'fflate'
import { KnowHubError } from '../../core/errors.js'
import { FolderImportQuery, type FolderFile, type FolderImportReport } from '../../core/knowledge-folder.js'
import { requirePermission, type Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import type { KnowledgeContext } from '../context.js'
import { importFolder } from './import.js'
import { readZipDirectory, type ZipEntry } from './zip-directory.js'

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

/** Bounds of a folder zip once inflated, counted in real bytes (the body limit bounds its compressed size). */
export interface ZipLimits {
  maxFiles: number
  maxFileBytes: number
  maxTotalBytes: number
}

/** The documented bounds (docs/knowledge-folder.md): 50,000 entries, 64 MiB a file, 256 MiB in all. */
export const ZIP_LIMITS: ZipLimits = { maxFiles: 50_000, maxFileBytes: 64 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 }

const inflate = promisify(inflateRaw)
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** An entry's bytes, at most `room` of them: inflated in the thread pool, stopped as soon as the output passes `room`. */
async function entryBytes(bytes: Uint8Array, entry: ZipEntry, room: number): Promise<Uint8Array | undefined> {
  const data = bytes.subarray(entry.start, entry.start + entry.size)
  if (entry.method === 0) return data.length > room ? undefined : data
  try {
    // Output pieces of 8 times the input (64 KiB-8 MiB): few trips through the thread pool, small buffers for small files.
    const chunkSize = Math.min(8 * 1024 * 1024, Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(entry.size * 8 + 1))))
    const out = await inflate(data, { maxOutputLength: Math.max(1, room), chunkSize })
    return out.length > room ? undefined : out
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined
    throw new KnowHubError('invalid_import', `zip entry ${JSON.stringify(entry.name)}: its data is damaged (${(error as Error).message})`, {
      file: entry.name,
    })
  }
}

/**
 * The files of a folder zip, bounded in real bytes: at most `maxFiles` entries, `maxFileBytes` a
 * file and `maxTotalBytes` in all, whatever sizes the zip declares; an entry that inflates past
 * them is refused as soon as it does. Entries with a `..`, an absolute name, a link, a name or
 * text that is not UTF-8 are refused, naming the entry; folders and hidden names (`.git/…`) are skipped.
 * @example
 * const files = await unzipFolder(bytes)
 */
export async function unzipFolder(bytes: Uint8Array, limits: ZipLimits = ZIP_LIMITS): Promise<FolderFile[]> {
  const files: FolderFile[] = []
  let total = 0
  for (const entry of readZipDirectory(bytes, limits)) {
    if (entry.name.split('/').some((part) => part.startsWith('.'))) continue
    const room = Math.min(limits.maxFileBytes, limits.maxTotalBytes - total)
    const data = await entryBytes(bytes, entry, room)
    if (data === undefined) {
      const message =
        room === limits.maxFileBytes
          ? `zip entry ${JSON.stringify(entry.name)} inflates past ${limits.maxFileBytes} bytes; a knowledge file is at most that`
          : `the zip inflates past ${limits.maxTotalBytes} bytes in all (at entry ${JSON.stringify(entry.name)})`
      throw new KnowHubError('too_large', message, { file: entry.name })
    }
    total += data.length
    let text: string
    try {
      text = utf8.decode(data)
    } catch {
      throw new KnowHubError('invalid_import', `zip entry ${JSON.stringify(entry.name)} is not UTF-8 text`, { file: entry.name })
    }
    files.push({ path: entry.name, text })
  }
  return files
}

/**
 * Imports a folder zip as the caller (`POST /api/knowledge/folder/import` with a zip body, the
 * dashboard's too): the right to write is checked before anything is inflated, then the zip is
 * unzipped within `limits` and imported like the folder's files.
 * @example
 * const report = await importFolderZip(ctx, bytes, principal, { dry_run: true })
 */
export async function importFolderZip(
  ctx: KnowledgeContext,
  bytes: Uint8Array,
  principal: Principal,
  query: FolderImportQuery = {},
  limits: ZipLimits = ZIP_LIMITS,
): Promise<FolderImportReport> {
  requirePermission(principal, 'write')
  parseWith(FolderImportQuery, query, 'folder import query')
  return importFolder(ctx, await unzipFolder(bytes, limits), principal, query)
}
