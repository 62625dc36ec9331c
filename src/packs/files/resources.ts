/**
 * Lists a pack's files by kind without reading any of them. Symlinks that
 * leave the pack root, loops and unreadable folders become diagnostics.
 */
import type { Dirent } from 'node:fs'
import { lstat, readdir, realpath, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { mapLimit } from './limit.js'
import { isInside } from './paths.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'

/** Kinds of resources a guide lists (seed 000 Step 4). */
export type ResourceKind = 'runtime' | 'primary' | 'document' | 'wiki' | 'ontology' | 'answers' | 'evidence' | 'source'

/** One file of a pack. */
export interface PackResource {
  /** Pack-relative, `/`-separated. */
  path: string
  kind: ResourceKind
  size: number
  mtimeMs: number
}

/** Options of {@link listPackResources}. */
export interface ListResourcesOptions {
  /** Most files listed (default 20,000). */
  maxFiles?: number
  /** Deepest folder level below each top folder (default 8). */
  maxDepth?: number
}

/** Resources plus the problems met while listing. */
export interface ResourceListing {
  resources: PackResource[]
  issues: PackDiagnostic[]
  truncated: boolean
}

const TOP_FOLDERS: readonly { folder: string; kind: ResourceKind | 'documents' }[] = [
  { folder: 'compiled', kind: 'runtime' },
  { folder: 'documents', kind: 'documents' },
  { folder: 'wiki', kind: 'wiki' },
  // v0.7 structured layers: data records, selected as task subgraphs, never executed.
  { folder: 'ontology', kind: 'ontology' },
  { folder: 'answers', kind: 'answers' },
  { folder: 'indexes', kind: 'evidence' },
  { folder: 'runs', kind: 'evidence' },
  { folder: 'sources', kind: 'source' },
]

const KIND_ORDER: Record<ResourceKind, number> = { runtime: 0, primary: 1, document: 2, wiki: 3, ontology: 4, answers: 5, evidence: 6, source: 7 }

type TopFolder = (typeof TOP_FOLDERS)[number]

/** One listing in progress: the pack root, the limits, what was found so far. */
interface Lister {
  root: string
  primary: string | undefined
  maxFiles: number
  maxDepth: number
  listing: ResourceListing
}

/** The kind of a file under a top folder: documents/ splits into the primary document and the others. */
function kindOf(lister: Lister, top: TopFolder, rel: string): ResourceKind {
  if (top.kind === 'documents') return rel === lister.primary ? 'primary' : 'document'
  return top.kind
}

/** Adds a file; false (with a `dir_limit` issue, listing marked truncated) when the file limit is reached. */
function addFile(lister: Lister, top: TopFolder, rel: string, info: { size: number; mtimeMs: number }): boolean {
  const { listing } = lister
  if (listing.resources.length >= lister.maxFiles) {
    listing.truncated = true
    listing.issues.push({ severity: 'warning', code: 'dir_limit', path: rel, message: `Stopped listing after ${lister.maxFiles} files.` })
    return false
  }
  listing.resources.push({ path: rel, kind: kindOf(lister, top, rel), size: info.size, mtimeMs: info.mtimeMs })
  return true
}

/** The real path of `rel`, or undefined (with an issue) when it is missing, a loop, unreadable, or a link out of the pack. */
async function realInside(lister: Lister, rel: string, ancestors: ReadonlySet<string>): Promise<string | undefined> {
  const { listing } = lister
  let real: string
  try {
    real = await realpath(join(lister.root, ...rel.split('/')))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') listing.issues.push({ severity: 'warning', code: 'symlink_loop', path: rel, message: `${rel} is a symlink loop; not listed.` })
    else if (code !== 'ENOENT')
      listing.issues.push({ severity: 'warning', code: 'unreadable', path: rel, message: `${rel} cannot be read (${code ?? 'error'}).` })
    return undefined
  }
  if (!isInside(lister.root, real)) {
    listing.issues.push({ severity: 'error', code: 'path_escape', path: rel, message: `${rel} is a symlink that leaves the pack root; not listed.` })
    return undefined
  }
  if (ancestors.has(real)) {
    listing.issues.push({ severity: 'warning', code: 'symlink_loop', path: rel, message: `${rel} links back to an enclosing folder; not listed.` })
    return undefined
  }
  return real
}

/** `indexes/` and `runs/` hold evidence: only their own `.json` files are listed. */
function isFlat(top: TopFolder): boolean {
  return top.folder === 'indexes' || top.folder === 'runs'
}

/** Walks `rel` (a top folder, or a folder or symlink below one): files are added, folders walked in name order. */
async function walk(lister: Lister, top: TopFolder, rel: string, depth: number, ancestors: ReadonlySet<string>): Promise<void> {
  if (lister.listing.truncated) return
  const real = await realInside(lister, rel, ancestors)
  if (real === undefined) return
  let info
  try {
    info = await stat(real)
  } catch {
    return
  }
  if (info.isFile()) {
    if (depth > 0 && !(isFlat(top) && !rel.endsWith('.json'))) addFile(lister, top, rel, info)
    return
  }
  if (!info.isDirectory() || depth >= lister.maxDepth || (isFlat(top) && depth >= 1)) return
  await walkFolder(lister, top, rel, real, depth, new Set([...ancestors, real]))
}

/** Lists one folder: plain files need one lstat each (size, mtime), done in parallel; folders and links are walked in order. */
async function walkFolder(lister: Lister, top: TopFolder, rel: string, real: string, depth: number, ancestors: ReadonlySet<string>): Promise<void> {
  let entries: Dirent[]
  try {
    entries = (await readdir(real, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  } catch (error) {
    const message = `${rel} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`
    lister.listing.issues.push({ severity: 'warning', code: 'unreadable', path: rel, message })
    return
  }
  const visible = entries.filter((entry) => !entry.name.startsWith('.'))
  const infos = await mapLimit(visible, 32, async (entry) => {
    if (!entry.isFile() || (isFlat(top) && !entry.name.endsWith('.json'))) return undefined
    try {
      return await lstat(join(real, entry.name))
    } catch {
      return null
    }
  })
  for (let i = 0; i < visible.length; i++) {
    const entry = visible[i] as Dirent
    const childRel = `${rel}/${entry.name}`
    if (entry.isFile()) {
      const childInfo = infos[i]
      if (!childInfo || !childInfo.isFile()) continue
      if (!addFile(lister, top, childRel, childInfo)) return
      continue
    }
    if (entry.isDirectory() || entry.isSymbolicLink()) await walk(lister, top, childRel, depth + 1, ancestors)
  }
}

/**
 * Lists `compiled/` (runtime), `documents/` (primary and document), `wiki/`,
 * `ontology/` and `answers/` (v0.7 layers), `indexes/*.json` and
 * `runs/*.json` (evidence) and `sources/` (source).
 * Reads folder listings only, never file contents.
 * @example
 * const { resources } = await listPackResources(pack)
 * resources.filter((r) => r.kind === 'runtime').map((r) => r.path) // ['compiled/briefing.md', …]
 */
export async function listPackResources(pack: LoadedPack, options: ListResourcesOptions = {}): Promise<ResourceListing> {
  const lister: Lister = {
    root: pack.realRoot,
    primary: pack.item.metadata?.primaryDocument,
    maxFiles: options.maxFiles ?? 20_000,
    maxDepth: options.maxDepth ?? 8,
    listing: { resources: [], issues: [], truncated: false },
  }
  for (const top of TOP_FOLDERS) await walk(lister, top, top.folder, 0, new Set([lister.root]))
  const { listing } = lister
  listing.resources.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return listing
}
