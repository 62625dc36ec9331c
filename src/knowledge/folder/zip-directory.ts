/**
 * The directory of a folder zip, read and checked before anything is inflated (issue 39): the
 * names, kinds and places of its entries from the zip's central directory (PKWARE APPNOTE
 * 4.3.12-4.3.16), where the external attributes say which entry is a symbolic link (fflate,
 * which inflates the data, does not expose them). Refused, naming the entry: a name that is not
 * UTF-8, is absolute, holds a backslash or NUL, or has an empty, `.` or `..` part; a symbolic
 * link or any other entry that is not a plain file or a folder; an encrypted entry, a method
 * other than stored or deflate; two entries of one name; more entries than the limit. Only
 * plain single-disk zips are read (no ZIP64: a knowledge folder zip needs none). No I/O.
 */
import { KnowHubError } from '../../core/errors.js'

/** One file of the zip, where its compressed data is. */
export interface ZipEntry {
  name: string
  /** 0: stored, 8: deflate. */
  method: 0 | 8
  /** Where its data starts in the zip, and its compressed size (the directory's). */
  start: number
  size: number
}

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const names = new TextDecoder('utf-8', { fatal: true })
const lossy = new TextDecoder('utf-8')

const invalid = (message: string, name?: string) => new KnowHubError('invalid_import', message, name === undefined ? {} : { file: name })

/** The end of central directory record: where the directory is and how many entries it has. */
function endRecord(view: DataView): { count: number; offset: number; size: number } {
  const last = view.byteLength - 22
  for (let at = last; at >= 0 && at >= last - 0xffff; at--) {
    if (view.getUint32(at, true) !== EOCD) continue
    const count = view.getUint16(at + 10, true)
    const size = view.getUint32(at + 12, true)
    const offset = view.getUint32(at + 16, true)
    if (view.getUint16(at + 4, true) !== 0 || view.getUint16(at + 6, true) !== 0 || view.getUint16(at + 8, true) !== count) {
      throw invalid('a zip split over several disks is not a folder zip')
    }
    if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) throw invalid('ZIP64 archives are not read (a knowledge folder zip needs none)')
    if (offset + size > at) throw invalid('not a zip file (its directory lies outside it)')
    return { count, offset, size }
  }
  throw invalid('not a zip file (no end of central directory record)')
}

/** Why an entry's name is refused, or undefined: it must be a plain relative `/`-separated path. */
function badName(name: string): string | undefined {
  if (name.includes('\0') || name.includes('\\')) return 'its name holds a NUL or a backslash'
  if (name.startsWith('/') || /^[A-Za-z]:/u.test(name)) return 'its name is an absolute path'
  const parts = (name.endsWith('/') ? name.slice(0, -1) : name).split('/')
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return 'its name has an empty, . or .. part'
  return undefined
}

/** The kind an entry's external attributes give it (Unix mode for zips made on Unix and macOS; the DOS folder bit). */
function kindOf(madeBy: number, attributes: number, name: string): 'file' | 'folder' | 'link' | 'other' {
  const host = madeBy >>> 8
  if (host === 3 || host === 19) {
    const type = (attributes >>> 16) & 0o170000
    if (type === 0o120000) return 'link'
    if (type === 0o040000) return 'folder'
    if (type !== 0 && type !== 0o100000) return 'other'
  }
  if (name.endsWith('/') || (host === 0 && (attributes & 0x10) !== 0)) return 'folder'
  return 'file'
}

/**
 * The files of a zip (folders left out), in directory order, checked as the header says.
 * @example
 * const entries = readZipDirectory(bytes, { maxFiles: 50_000 })
 */
export function readZipDirectory(bytes: Uint8Array, limits: { maxFiles: number }): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 22) throw invalid('not a zip file (too short)')
  const { count, offset, size: directorySize } = endRecord(view)
  if (count > limits.maxFiles) throw new KnowHubError('too_large', `the zip has ${count} entries; a folder zip has at most ${limits.maxFiles}`)
  const entries: (ZipEntry & { local: number })[] = []
  const seen = new Set<string>()
  let at = offset
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.byteLength || view.getUint32(at, true) !== CENTRAL) throw invalid(`not a zip file (entry ${i + 1} of its directory is damaged)`)
    const [madeBy, flags, method] = [view.getUint16(at + 4, true), view.getUint16(at + 8, true), view.getUint16(at + 10, true)]
    const size = view.getUint32(at + 20, true)
    const [nameLength, extraLength, commentLength] = [view.getUint16(at + 28, true), view.getUint16(at + 30, true), view.getUint16(at + 32, true)]
    const attributes = view.getUint32(at + 38, true)
    const local = view.getUint32(at + 42, true)
    if (at + 46 + nameLength > offset + directorySize) throw invalid(`not a zip file (entry ${i + 1} of its directory runs past it)`)
    const raw = bytes.subarray(at + 46, at + 46 + nameLength)
    at += 46 + nameLength + extraLength + commentLength
    let name: string
    try {
      name = names.decode(raw)
    } catch {
      throw invalid(`zip entry ${JSON.stringify(lossy.decode(raw))}: its name is not UTF-8`, lossy.decode(raw))
    }
    const refuse = (why: string) => invalid(`zip entry ${JSON.stringify(name)}: ${why}: refused`, name)
    const bad = badName(name)
    if (bad) throw refuse(bad)
    const kind = kindOf(madeBy, attributes, name)
    if (kind === 'link') throw refuse('it is a symbolic link (a folder zip holds plain files)')
    if (kind === 'other') throw refuse('it is not a plain file')
    if (seen.has(name)) throw refuse('the zip holds two entries of that name')
    seen.add(name)
    if (kind === 'folder') continue
    if ((flags & 1) !== 0) throw refuse('it is encrypted')
    if (method !== 0 && method !== 8) throw refuse(`it is compressed with method ${method} (stored and deflate are read)`)
    if (size === 0xffffffff || local === 0xffffffff) throw refuse('ZIP64 entries are not read')
    if (local + 30 > bytes.byteLength || view.getUint32(local, true) !== LOCAL) throw refuse('its local header is damaged')
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    if (start + size > offset) throw refuse('its data runs past the end of the zip')
    entries.push({ name, method, start, size, local })
  }
  refuseOverlaps(entries)
  return entries.map(({ local: _, ...entry }) => entry)
}

/** Two entries whose data overlap (how the smallest zip bombs reuse one stream) are refused. */
function refuseOverlaps(entries: readonly (ZipEntry & { local: number })[]): void {
  const sorted = [...entries].sort((a, b) => a.local - b.local)
  for (let i = 1; i < sorted.length; i++) {
    const [before, entry] = [sorted[i - 1]!, sorted[i]!]
    if (entry.local < before.start + before.size)
      throw invalid(`zip entry ${JSON.stringify(entry.name)}: its data overlaps ${JSON.stringify(before.name)}: refused`, entry.name)
  }
}
