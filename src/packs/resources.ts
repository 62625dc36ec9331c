/**
 * Lists a pack's files by kind without reading any of them. Symlinks that
 * leave the pack root, loops and unreadable folders become diagnostics.
 */
import type { Dirent } from 'node:fs'
import { lstat, readdir, realpath, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { mapLimit } from './limit.js'
import { isInside } from './paths.js'
import type { LoadedPack, PackDiagnostic } from './schema.js'

/** Kinds of resources a guide lists (seed 000 Step 4). */
export type ResourceKind = 'runtime' | 'primary' | 'document' | 'wiki' | 'evidence' | 'source'

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
  { folder: 'indexes', kind: 'evidence' },
  { folder: 'runs', kind: 'evidence' },
  { folder: 'sources', kind: 'source' },
]

const KIND_ORDER: Record<ResourceKind, number> = { runtime: 0, primary: 1, document: 2, wiki: 3, evidence: 4, source: 5 }

/**
 * Lists `compiled/` (runtime), `documents/` (primary and document), `wiki/`,
 * `indexes/*.json` and `runs/*.json` (evidence) and `sources/` (source).
 * Reads folder listings only, never file contents.
 * @example
 * const { resources } = await listPackResources(pack)
 * resources.filter((r) => r.kind === 'runtime').map((r) => r.path) // ['compiled/briefing.md', …]
 */
export async function listPackResources(pack: LoadedPack, options: ListResourcesOptions = {}): Promise<ResourceListing> {
  const maxFiles = options.maxFiles ?? 20_000
  const maxDepth = options.maxDepth ?? 8
  const primary = pack.item.metadata?.primaryDocument
  const root = pack.realRoot
  const listing: ResourceListing = { resources: [], issues: [], truncated: false }

  for (const top of TOP_FOLDERS) {
    const flat = top.folder === 'indexes' || top.folder === 'runs'
    await walk(top.folder, 0, new Set([root]))

    async function walk(rel: string, depth: number, ancestors: ReadonlySet<string>): Promise<void> {
      if (listing.truncated) return
      const abs = join(root, ...rel.split('/'))
      let real: string
      try {
        real = await realpath(abs)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ELOOP') listing.issues.push({ severity: 'warning', code: 'symlink_loop', path: rel, message: `${rel} is a symlink loop; not listed.` })
        else if (code !== 'ENOENT')
          listing.issues.push({ severity: 'warning', code: 'unreadable', path: rel, message: `${rel} cannot be read (${code ?? 'error'}).` })
        return
      }
      if (!isInside(root, real)) {
        listing.issues.push({ severity: 'error', code: 'path_escape', path: rel, message: `${rel} is a symlink that leaves the pack root; not listed.` })
        return
      }
      if (ancestors.has(real)) {
        listing.issues.push({ severity: 'warning', code: 'symlink_loop', path: rel, message: `${rel} links back to an enclosing folder; not listed.` })
        return
      }
      let info
      try {
        info = await stat(real)
      } catch {
        return
      }
      if (info.isFile()) {
        if (depth === 0) return
        if (flat && !rel.endsWith('.json')) return
        if (listing.resources.length >= maxFiles) {
          listing.truncated = true
          listing.issues.push({ severity: 'warning', code: 'dir_limit', path: rel, message: `Stopped listing after ${maxFiles} files.` })
          return
        }
        let kind: ResourceKind
        if (top.kind === 'documents') kind = rel === primary ? 'primary' : 'document'
        else kind = top.kind
        listing.resources.push({ path: rel, kind, size: info.size, mtimeMs: info.mtimeMs })
        return
      }
      if (!info.isDirectory()) return
      if (depth >= maxDepth || (flat && depth >= 1)) return
      let entries: Dirent[]
      try {
        entries = (await readdir(real, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      } catch (error) {
        listing.issues.push({
          severity: 'warning',
          code: 'unreadable',
          path: rel,
          message: `${rel} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
        })
        return
      }
      const next = new Set([...ancestors, real])
      const visible = entries.filter((entry) => !entry.name.startsWith('.'))
      // Plain files need one lstat each (size, mtime), done in parallel; folders and links are walked in order.
      const infos = await mapLimit(visible, 32, async (entry) => {
        if (!entry.isFile() || (flat && !entry.name.endsWith('.json'))) return undefined
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
          if (listing.resources.length >= maxFiles) {
            listing.truncated = true
            listing.issues.push({ severity: 'warning', code: 'dir_limit', path: childRel, message: `Stopped listing after ${maxFiles} files.` })
            return
          }
          const kind: ResourceKind = top.kind === 'documents' ? (childRel === primary ? 'primary' : 'document') : top.kind
          listing.resources.push({ path: childRel, kind, size: childInfo.size, mtimeMs: childInfo.mtimeMs })
          continue
        }
        if (entry.isDirectory() || entry.isSymbolicLink()) await walk(childRel, depth + 1, next)
      }
    }
  }
  listing.resources.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return listing
}
