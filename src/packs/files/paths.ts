/**
 * Safe access to files inside a pack: every path a pack names is
 * pack-relative, has no `..` segment, is not absolute, and after resolving
 * symlinks still lies inside the pack's real root. Reads are bounded, and a file
 * with more than one hard link is read only when every link lies inside the pack.
 */
import { createHash } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises'
import { join, posix, sep } from 'node:path'
import type { PackDiagnostic } from '../schema.js'

/**
 * Default largest file read whole (bytes). Larger files are read up to this size only.
 * @example
 * await readBounded(path, DEFAULT_MAX_FILE_BYTES)
 */
export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024

/** A pack-relative path that passed the lexical checks. */
export type NormalisedPath = { ok: true; path: string } | { ok: false; reason: string }

/**
 * Checks a path a pack names, lexically: no NUL, not absolute (POSIX, drive or
 * UNC), no URL scheme, no `..` segment. Returns it normalised with `/`.
 * @example
 * normalisePackPath('documents\\brief.md') // { ok: true, path: 'documents/brief.md' }
 * normalisePackPath('../secrets.md')       // { ok: false, reason: 'has a .. segment' }
 */
export function normalisePackPath(raw: string): NormalisedPath {
  if (raw.length === 0 || raw.trim().length === 0) return { ok: false, reason: 'is empty' }
  if (raw.includes('\0')) return { ok: false, reason: 'contains a NUL byte' }
  const slashed = raw.trim().replace(/\\/gu, '/')
  if (slashed.startsWith('/') || /^[a-zA-Z]:/u.test(slashed)) return { ok: false, reason: 'is absolute' }
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//u.test(slashed)) return { ok: false, reason: 'is a URL, not a pack path' }
  if (slashed.split('/').some((part) => part === '..')) return { ok: false, reason: 'has a .. segment' }
  const normalised = posix.normalize(slashed).replace(/^\.\//u, '').replace(/\/$/u, '')
  if (normalised === '.' || normalised === '') return { ok: false, reason: 'names the pack root itself' }
  return { ok: true, path: normalised }
}

/**
 * True when `target` is `root` or lies below it (both already real paths).
 * @example
 * isInside('/packs/a', '/packs/a/documents/x.md') // true
 * isInside('/packs/a', '/packs/ab')               // false
 */
export function isInside(root: string, target: string): boolean {
  if (target === root) return true
  const prefix = root.endsWith(sep) ? root : root + sep
  return target.startsWith(prefix)
}

/** Outcome of resolving a pack-relative path against the pack's real root. */
export type ResolvedPackPath =
  { ok: true; path: string; absPath: string; realPath: string | undefined; exists: boolean } | { ok: false; path: string; diagnostic: PackDiagnostic }

/**
 * Resolves a pack-relative path inside `realRoot` (the pack root with symlinks
 * resolved). Refuses `..`, absolute paths, and symlinks whose target leaves
 * the root, with a `path_escape` diagnostic; a path that does not exist is
 * `ok` with `exists: false`.
 * @example
 * const r = await resolvePackPath(pack.realRoot, 'documents/brief.md', 'metadata.primaryDocument')
 * if (r.ok && r.exists) await readBounded(r.absPath)
 */
export async function resolvePackPath(realRoot: string, raw: string, field?: string): Promise<ResolvedPackPath> {
  const normalised = normalisePackPath(raw)
  if (!normalised.ok) {
    return {
      ok: false,
      path: raw,
      diagnostic: { severity: 'error', code: 'path_escape', message: `Path "${raw}" ${normalised.reason}; refused.`, path: raw, ...(field ? { field } : {}) },
    }
  }
  const absPath = realRoot + sep + normalised.path.split('/').join(sep)
  let real: string
  try {
    real = await realpath(absPath)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') {
      return {
        ok: false,
        path: normalised.path,
        diagnostic: {
          severity: 'error',
          code: 'symlink_loop',
          message: `Path "${normalised.path}" is a symlink loop; refused.`,
          path: normalised.path,
          ...(field ? { field } : {}),
        },
      }
    }
    // ENOENT, or a dangling symlink: check that whatever exists of it stays inside.
    const escape = await danglingEscape(realRoot, normalised.path)
    if (escape) {
      return {
        ok: false,
        path: normalised.path,
        diagnostic: {
          severity: 'error',
          code: 'path_escape',
          message: `Path "${normalised.path}" goes through a symlink that leaves the pack root; refused.`,
          path: normalised.path,
          ...(field ? { field } : {}),
        },
      }
    }
    return { ok: true, path: normalised.path, absPath, realPath: undefined, exists: false }
  }
  if (!isInside(realRoot, real)) {
    return {
      ok: false,
      path: normalised.path,
      diagnostic: {
        severity: 'error',
        code: 'path_escape',
        message: `Path "${normalised.path}" resolves outside the pack root (symlink); refused.`,
        path: normalised.path,
        ...(field ? { field } : {}),
      },
    }
  }
  return { ok: true, path: normalised.path, absPath, realPath: real, exists: true }
}

/** For a path that does not resolve: does its longest existing prefix already leave the root? */
async function danglingEscape(realRoot: string, relPath: string): Promise<boolean> {
  const parts = relPath.split('/')
  for (let i = parts.length - 1; i >= 1; i--) {
    const prefix = realRoot + sep + parts.slice(0, i).join(sep)
    try {
      return !isInside(realRoot, await realpath(prefix))
    } catch {
      // keep shortening
    }
  }
  return false
}

/** A bounded read. */
export interface BoundedRead {
  text: string
  /** Size of the file on disk, in bytes. */
  size: number
  /** True when only the first `maxBytes` were read. */
  truncated: boolean
  /** sha256 of the bytes read, `sha256:<hex>`. */
  hash: string
  mtimeMs: number
}

/**
 * Reads a regular file as UTF-8, never more than `maxBytes` (cut at a
 * character boundary). Throws the underlying error for a missing file; a
 * directory, FIFO or device is refused with `ENOTREG` before any read; a file
 * with more than one hard link is refused with `EHARDLINK` unless every link
 * lies inside `root` (see {@link checkHardlinks}).
 * @example
 * const { text, truncated } = await readBounded('/packs/a/KNOWLEDGE.md', 256 * 1024, '/packs/a')
 */
export async function readBounded(absPath: string, maxBytes = DEFAULT_MAX_FILE_BYTES, root?: string): Promise<BoundedRead> {
  const info = await stat(absPath)
  if (!info.isFile()) {
    const error = new Error(`${absPath} is not a regular file`) as NodeJS.ErrnoException
    error.code = 'ENOTREG'
    throw error
  }
  const handle = await open(absPath, 'r')
  try {
    // The file opened is the one checked (not swapped since the stat), and its links stay inside the pack.
    const opened = await handle.stat()
    if (opened.ino !== info.ino || opened.dev !== info.dev || !opened.isFile()) {
      const error = new Error(`${absPath} changed while it was opened`) as NodeJS.ErrnoException
      error.code = 'ENOTREG'
      throw error
    }
    await checkHardlinks(absPath, opened, root)
    const wanted = Math.min(info.size, maxBytes)
    const buffer = Buffer.alloc(wanted)
    let offset = 0
    while (offset < wanted) {
      const { bytesRead } = await handle.read(buffer, offset, wanted - offset, offset)
      if (bytesRead === 0) break
      offset += bytesRead
    }
    const truncated = info.size > maxBytes
    const end = truncated ? utf8Boundary(buffer, offset) : offset
    const bytes = buffer.subarray(0, end)
    return {
      text: bytes.toString('utf8'),
      size: info.size,
      truncated,
      hash: sha256(bytes),
      mtimeMs: info.mtimeMs,
    }
  } finally {
    await handle.close()
  }
}

/**
 * Like {@link readBounded} for a file a directory listing reported as regular:
 * four system calls (open, fstat for the link count, read, close) instead of six. It opens with
 * O_NONBLOCK, so a file swapped for a FIFO since the listing fails instead of
 * hanging. `size` is the file size when the file was read whole.
 * @example
 * const read = await readListedFile('/packs/a/KNOWLEDGE.md', 256 * 1024, '/packs/a')
 */
export async function readListedFile(absPath: string, maxBytes: number, root?: string): Promise<Omit<BoundedRead, 'mtimeMs'>> {
  const handle = await open(absPath, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    await checkHardlinks(absPath, await handle.stat(), root)
    const chunks: Buffer[] = []
    let total = 0
    for (let round = 0; ; round++) {
      // Most KNOWLEDGE.md files fit the first, small read.
      const want = Math.min(round === 0 ? 16 * 1024 : 256 * 1024, maxBytes + 1 - total)
      if (want <= 0) break
      const buffer = Buffer.allocUnsafe(want)
      const { bytesRead } = await handle.read(buffer, 0, want, null)
      if (bytesRead > 0) chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
      // A short read of a regular file is its end.
      if (bytesRead < want) break
    }
    const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total)
    const truncated = total > maxBytes
    const size = truncated ? (await handle.stat()).size : total
    const bytes = truncated ? all.subarray(0, utf8Boundary(all, maxBytes)) : all
    return { text: bytes.toString('utf8'), size, truncated, hash: sha256(bytes) }
  } finally {
    await handle.close()
  }
}

/** The largest end ≤ `length` that does not split a UTF-8 sequence. */
function utf8Boundary(buffer: Buffer, length: number): number {
  let end = length
  let back = 0
  while (end > 0 && back < 4 && ((buffer[end - 1] ?? 0) & 0xc0) === 0x80) {
    end--
    back++
  }
  if (end === 0) return length
  const lead = buffer[end - 1] ?? 0
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return need === back + 1 ? length : end - 1
}

/**
 * `sha256:<hex>` of a string or bytes.
 * @example
 * sha256('hello') // 'sha256:2cf24dba…'
 */
export function sha256(data: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`
}

/** Most entries {@link checkHardlinks} visits looking for a file's other links. */
const MAX_LINK_WALK = 20_000

/**
 * Refuses (`EHARDLINK`) a regular file with more than one hard link unless all its
 * links lie inside `root` (the pack's real root): a hard link to `/etc/passwd`
 * placed in a pack is the same file as `/etc/passwd`, so no symlink check sees it.
 * The links inside are counted by walking `root` (not following symlinks, at most
 * {@link MAX_LINK_WALK} entries) for the same device and inode; without `root`
 * every multiply-linked file is refused. Files with one link cost nothing.
 * @example
 * await checkHardlinks(path, await handle.stat(), pack.realRoot) // throws EHARDLINK for a link to a file outside
 */
export async function checkHardlinks(absPath: string, info: Pick<Stats, 'nlink' | 'dev' | 'ino'>, root: string | undefined): Promise<void> {
  if (info.nlink <= 1) return
  const inside = root === undefined ? 0 : await countLinksInside(root, info.dev, info.ino, info.nlink)
  if (inside >= info.nlink) return
  const error = new Error(
    `${absPath} has ${info.nlink} hard links and ${info.nlink - inside} of them lie outside the pack root; refused (copy the file into the pack instead)`,
  ) as NodeJS.ErrnoException
  error.code = 'EHARDLINK'
  throw error
}

/** How many directory entries under `root` are the file (dev, ino); stops at `want` or after {@link MAX_LINK_WALK} entries. */
async function countLinksInside(root: string, dev: number, ino: number, want: number): Promise<number> {
  let found = 0
  let visited = 0
  const folders = [root]
  for (let folder = folders.pop(); folder !== undefined && found < want && visited < MAX_LINK_WALK; folder = folders.pop()) {
    let entries
    try {
      entries = await readdir(folder, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) {
      if (++visited > MAX_LINK_WALK) break
      const path = join(folder, entry.name)
      if (entry.isDirectory()) folders.push(path)
      else if (entry.isFile()) {
        const info = await lstat(path).catch(() => undefined)
        if (info && info.ino === ino && info.dev === dev) found++
      }
    }
  }
  return found
}
