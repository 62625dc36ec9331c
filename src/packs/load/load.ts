/**
 * Loads one pack folder from disk: bounded read of KNOWLEDGE.md, parse, the
 * validation table, and the checks that need the filesystem (documents/,
 * primaryDocument inside the pack root).
 */
import { readdir, realpath } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { stat } from 'node:fs/promises'
import type { PackContext } from './frontmatter.js'
import { parseKnowledgeMarkdown, type ParsedKnowledge } from './parse.js'
import { isInside, readBounded, readListedFile, resolvePackPath } from '../files/paths.js'
import { formatDiagnostic, type KnowledgeCatalogItem, type LoadedPack, type PackDiagnostic, type PackScope, type RejectedPack } from '../schema.js'

/**
 * Default largest KNOWLEDGE.md read whole (bytes).
 * @example
 * await loadPack(dir, { maxKnowledgeBytes: DEFAULT_MAX_KNOWLEDGE_BYTES * 2 })
 */
export const DEFAULT_MAX_KNOWLEDGE_BYTES = 256 * 1024

/** Options of {@link loadPack}. */
export interface LoadPackOptions {
  scope?: PackScope
  /** Extra `type` values to accept (see `isAcceptedType`). */
  allowedTypes?: readonly string[]
  /** Largest KNOWLEDGE.md read whole; larger files are read up to this size with a warning. */
  maxKnowledgeBytes?: number
  /** Entries of the pack folder when the caller has listed it already (saves system calls). */
  entries?: readonly { name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }[]
  /** The pack folder's real path when the caller knows it already. */
  realRoot?: string
  /** Reuse parse results of unchanged KNOWLEDGE.md files (long-running clients that rescan). */
  cache?: KnowledgeParseCache
}

/** Result of loading one pack folder. */
export type LoadPackResult = { ok: true; pack: LoadedPack } | { ok: false; rejected: RejectedPack }

function errnoMessage(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code ? `${code}: ${error instanceof Error ? error.message : String(error)}` : String(error)
}

type Reject = (outcome: RejectedPack['outcome'], issues: PackDiagnostic[], name?: string) => LoadPackResult

/** Where the pack and its KNOWLEDGE.md really are: a KNOWLEDGE.md symlink must stay inside the pack. */
type Located = { ok: true; realRoot: string; realLocation: string; plainFile: boolean } | { ok: false; result: LoadPackResult }

async function locate(packRoot: string, location: string, options: LoadPackOptions, reject: Reject): Promise<Located> {
  let realRoot: string
  try {
    realRoot = options.realRoot ?? (await realpath(packRoot))
  } catch (error) {
    const message = `The pack folder cannot be resolved (${errnoMessage(error)}).`
    return { ok: false, result: reject('quarantined', [{ severity: 'error', code: 'unreadable', path: packRoot, message }]) }
  }
  // A KNOWLEDGE.md the listing shows as a plain file needs no realpath; a symlink must stay inside the pack.
  const listed = options.entries?.find((entry) => entry.name === 'KNOWLEDGE.md')
  const plainFile = listed !== undefined && listed.isFile() && !listed.isSymbolicLink()
  if (plainFile) return { ok: true, realRoot, realLocation: join(realRoot, 'KNOWLEDGE.md'), plainFile }
  let realLocation: string
  try {
    realLocation = await realpath(location)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const diagnosticCode = code === 'ELOOP' ? 'symlink_loop' : code === 'ENOENT' ? 'broken_symlink' : 'unreadable'
    const message = `KNOWLEDGE.md cannot be resolved (${errnoMessage(error)}).`
    return { ok: false, result: reject('quarantined', [{ severity: 'error', code: diagnosticCode, path: 'KNOWLEDGE.md', message }]) }
  }
  if (!isInside(realRoot, realLocation)) {
    const message = 'KNOWLEDGE.md is a symlink that leaves the pack root; refused.'
    return { ok: false, result: reject('quarantined', [{ severity: 'error', code: 'path_escape', path: 'KNOWLEDGE.md', message }]) }
  }
  return { ok: true, realRoot, realLocation, plainFile }
}

/** KNOWLEDGE.md read (bounded) and parsed, or taken from the parse cache when unchanged. */
type Read = { ok: true; read: CachedParse['read']; parsed: ParsedKnowledge } | { ok: false; result: LoadPackResult }

async function readKnowledge(
  located: { realRoot: string; realLocation: string; plainFile: boolean },
  context: PackContext,
  maxBytes: number,
  options: LoadPackOptions,
  reject: Reject,
): Promise<Read> {
  try {
    const cached = options.cache ? await options.cache.lookup(located.realLocation, `${maxBytes}\u0000${JSON.stringify(context)}`) : undefined
    if (cached?.hit) return { ok: true, ...cached.hit }
    const text =
      located.plainFile && !options.cache
        ? await readListedFile(located.realLocation, maxBytes, located.realRoot)
        : await readBounded(located.realLocation, maxBytes, located.realRoot)
    const read = { hash: text.hash, size: text.size, truncated: text.truncated }
    const parsed = parseKnowledgeMarkdown(text.text, context)
    cached?.store({ read, parsed })
    return { ok: true, read, parsed }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EHARDLINK') {
      const message = 'KNOWLEDGE.md is a hard link to a file outside the pack root; not read.'
      return { ok: false, result: reject('quarantined', [{ severity: 'error', code: 'path_escape', path: 'KNOWLEDGE.md', message }]) }
    }
    if (code === 'ENOTREG' || code === 'EISDIR') {
      return {
        ok: false,
        result: reject('quarantined', [
          { severity: 'error', code: 'not_a_file', path: 'KNOWLEDGE.md', message: 'KNOWLEDGE.md is not a regular file; not read.' },
        ]),
      }
    }
    const message = `KNOWLEDGE.md cannot be read (${errnoMessage(error)}).`
    return { ok: false, result: reject('quarantined', [{ severity: 'error', code: 'unreadable', path: 'KNOWLEDGE.md', message }]) }
  }
}

/**
 * The filesystem checks of the validation table: `metadata.primaryDocument`
 * inside the pack and present (a refused one is dropped from the item), and a
 * document-first pack's documents/ folder and primary document.
 */
async function checkOnDisk(item: KnowledgeCatalogItem, issues: PackDiagnostic[], realRoot: string, entries: LoadPackOptions['entries']): Promise<void> {
  const listing = entries ?? (await listEntries(realRoot))
  const hasDocuments = listing.some((entry) => entry.name === 'documents' && (entry.isDirectory() || entry.isSymbolicLink()))
  const primary = item.metadata?.primaryDocument
  let primaryExists = false
  if (primary !== undefined) {
    const resolved = await resolvePackPath(realRoot, primary, 'metadata.primaryDocument')
    if (!resolved.ok) {
      issues.push(resolved.diagnostic)
      if (item.metadata) delete item.metadata.primaryDocument
    } else if (!resolved.exists) {
      issues.push({
        severity: 'warning',
        code: 'path_missing',
        field: 'metadata.primaryDocument',
        path: resolved.path,
        message: `\`metadata.primaryDocument\` "${resolved.path}" does not exist.`,
      })
    } else {
      primaryExists = true
    }
  }
  if (item.profile === 'document-first' && (!hasDocuments || !primaryExists)) {
    const refused = issues.some((i) => i.field === 'metadata.primaryDocument' && i.code === 'path_escape')
    const what = !hasDocuments
      ? 'has no documents/ folder'
      : refused
        ? 'names a primary document outside the pack'
        : primary === undefined
          ? 'declares no metadata.primaryDocument'
          : 'names a primary document that does not exist'
    issues.push({
      severity: 'warning',
      code: 'document_first_gap',
      field: 'profile',
      message: `The pack is document-first but ${what}; the guide loads, and the resolver reports the gap.`,
    })
  }
}

/**
 * Loads the pack in `packRoot` (a folder with a KNOWLEDGE.md). Never throws for
 * bad content: problems are diagnostics, and an unusable pack comes back as
 * `rejected` (skipped or quarantined).
 * @example
 * const result = await loadPack('/repo/.agents/knowledge/acme-product-brief', { scope: 'project' })
 * if (result.ok) console.log(result.pack.item.name)
 */
export async function loadPack(packRoot: string, options: LoadPackOptions = {}): Promise<LoadPackResult> {
  const scope = options.scope ?? 'extra'
  const location = join(packRoot, 'KNOWLEDGE.md')
  const reject: Reject = (outcome, issues, name) => ({
    ok: false,
    rejected: { outcome, location, packRoot, scope, ...(name === undefined ? {} : { name }), issues },
  })
  const located = await locate(packRoot, location, options, reject)
  if (!located.ok) return located.result
  const maxBytes = options.maxKnowledgeBytes ?? DEFAULT_MAX_KNOWLEDGE_BYTES
  const context = { location, packRoot, folderName: basename(packRoot), scope, ...(options.allowedTypes ? { allowedTypes: options.allowedTypes } : {}) }
  const loaded = await readKnowledge(located, context, maxBytes, options, reject)
  if (!loaded.ok) return loaded.result
  const { read, parsed } = loaded

  const sizeIssue: PackDiagnostic | undefined = read.truncated
    ? {
        severity: 'warning',
        code: 'file_too_large',
        path: 'KNOWLEDGE.md',
        message: `KNOWLEDGE.md is ${read.size} bytes; only the first ${maxBytes} were read.`,
      }
    : undefined
  // Copies: the parse result may be cached and shared between calls.
  const issues = sizeIssue ? [sizeIssue, ...parsed.issues] : [...parsed.issues]
  if (parsed.outcome !== 'loaded') return reject(parsed.outcome, issues, parsed.name)
  const item: KnowledgeCatalogItem = { ...parsed.item, ...(parsed.item.metadata ? { metadata: { ...parsed.item.metadata } } : {}) }
  await checkOnDisk(item, issues, located.realRoot, options.entries)
  item.diagnostics = issues.map(formatDiagnostic)
  return {
    ok: true,
    pack: { item, body: parsed.body, frontmatter: parsed.frontmatter, issues, contentHash: read.hash, realRoot: located.realRoot },
  }
}

async function listEntries(dir: string): Promise<{ name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }[]> {
  try {
    return await readdir(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

interface CachedParse {
  read: { hash: string; size: number; truncated: boolean }
  parsed: ParsedKnowledge
}

/**
 * Parse results of KNOWLEDGE.md files, reused while a file's size, mtime,
 * ctime and inode are unchanged (one `stat` instead of a read and a YAML
 * parse). For clients that rediscover often; discovery without it reads
 * every file.
 * @example
 * const cache = new KnowledgeParseCache()
 * await discoverPacks(options, logger, { cache }) // reads and parses
 * await discoverPacks(options, logger, { cache }) // stats only, for unchanged files
 */
export class KnowledgeParseCache {
  private readonly entries = new Map<string, { fingerprint: string; value: CachedParse }>()

  /** Number of cached files. */
  get size(): number {
    return this.entries.size
  }

  /** Drops everything. */
  clear(): void {
    this.entries.clear()
  }

  /** Stats the file; returns the cached parse when still valid, and a way to store a new one. */
  async lookup(realLocation: string, contextKey: string): Promise<{ hit?: CachedParse; store: (value: CachedParse) => void }> {
    const info = await stat(realLocation)
    if (!info.isFile()) {
      const error = new Error(`${realLocation} is not a regular file`) as NodeJS.ErrnoException
      error.code = 'ENOTREG'
      throw error
    }
    const fingerprint = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${contextKey}`
    const entry = this.entries.get(realLocation)
    const store = (value: CachedParse): void => void this.entries.set(realLocation, { fingerprint, value })
    return entry && entry.fingerprint === fingerprint ? { hit: entry.value, store } : { store }
  }
}
