/**
 * Scanning one discovery location for pack folders (folders holding a
 * KNOWLEDGE.md), breadth first, within a depth and a folder budget; hidden
 * and build folders, .gitignore'd folders (when asked) and folders already
 * seen are skipped; symlinks are followed once. Every problem is a
 * diagnostic, never an exception. It does not descend into a pack.
 */
import type { Dirent } from 'node:fs'
import { readFile, readdir, realpath, stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import type { Logger } from '../../core/logger.js'
import { isIgnored, parseGitignore, type GitignoreRule } from './gitignore.js'
import { mapLimit } from '../files/limit.js'
import { isInside } from '../files/paths.js'
import type { PackDiagnostic, PackScope } from '../schema.js'

/**
 * Folder names never descended into (besides hidden folders).
 * @example
 * SKIPPED_DIRS.has('node_modules') // true
 */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  'node_modules',
  'indexes',
  'dist',
  'build',
  'out',
  'target',
  'coverage',
  '__pycache__',
  'bower_components',
  'vendor',
])

/** One scanned location, for `packs doctor`. */
export interface ScanLocation {
  scope: PackScope
  /** `client`: `.<client>/knowledge`; `agents`: `.agents/knowledge`. */
  source: 'client' | 'agents' | 'extra' | 'builtin'
  path: string
  exists: boolean
  dirsScanned: number
  packsFound: number
  skippedDirs: number
  /** Set when a limit stopped the scan early. */
  limited?: 'depth' | 'dirs'
}

/** A location to scan. */
export interface LocationSpec {
  scope: PackScope
  source: ScanLocation['source']
  path: string
}

/** A folder holding a KNOWLEDGE.md, with its listing (handed to loadPack to save system calls). */
export interface PackFolder {
  location: LocationSpec
  dir: string
  real: string
  entries: Dirent[]
}

/** The scan limits and switches of discovery. */
export interface ScanOptions {
  projectDir?: string | undefined
  maxDepth: number
  maxDirs: number
  respectGitignore: boolean
  concurrency: number
}

/** What scanning one location found. */
export interface LocationScan {
  location: ScanLocation
  folders: PackFolder[]
  diagnostics: PackDiagnostic[]
}

/** One folder to read: where it is, its real path, its depth, the real paths above it, the .gitignore rules in force. */
interface Frame {
  dir: string
  real: string
  depth: number
  ancestors: ReadonlySet<string>
  rules: GitignoreRule[]
}

/** The state of one location's scan, shared by its steps. */
interface Scan extends LocationScan {
  spec: LocationSpec
  options: ScanOptions
  visited: Set<string>
  depthReported: boolean
  diag(severity: PackDiagnostic['severity'], code: string, path: string, message: string): void
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN'
}

async function readGitignore(dir: string): Promise<GitignoreRule[]> {
  try {
    const text = await readFile(join(dir, '.gitignore'), 'utf8')
    return parseGitignore(text.slice(0, 64 * 1024), dir)
  } catch {
    return []
  }
}

/** The .gitignore rules of the folders from the project folder down to a location inside it. */
async function ancestorGitignores(projectDir: string | undefined, root: string): Promise<GitignoreRule[]> {
  if (!projectDir) return []
  const project = resolve(projectDir)
  if (!isInside(project, root) || project === root) return []
  const rules: GitignoreRule[] = []
  const parts = relative(project, root).split(sep)
  let dir = project
  for (let i = 0; i < parts.length; i++) {
    rules.push(...(await readGitignore(dir)))
    dir = join(dir, parts[i] ?? '')
  }
  return rules
}

/** The real path of the location root, or undefined (with a diagnostic) when it is missing, not a folder, a loop or unreadable. */
async function openRoot(scan: Scan): Promise<string | undefined> {
  const { spec } = scan
  try {
    const info = await stat(spec.path)
    if (!info.isDirectory()) {
      scan.diag('warning', 'not_a_directory', spec.path, `The ${spec.scope} location ${spec.path} is not a folder; not scanned.`)
      return undefined
    }
    return await realpath(spec.path)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT') {
      scan.diag('info', 'location_missing', spec.path, `The ${spec.scope} location ${spec.path} does not exist.`)
    } else if (code === 'ELOOP') {
      scan.diag('warning', 'symlink_loop', spec.path, `The ${spec.scope} location ${spec.path} is a symlink loop; not scanned.`)
    } else {
      scan.diag('warning', 'unreadable', spec.path, `The ${spec.scope} location ${spec.path} cannot be read (${code}).`)
    }
    return undefined
  }
}

/** The real path of a symlinked child folder, or undefined (with a diagnostic) when it is not a folder, broken, a loop or points back up. */
async function followLink(scan: Scan, frame: Frame, childPath: string): Promise<string | undefined> {
  let childReal: string
  try {
    const info = await stat(childPath)
    if (!info.isDirectory()) return undefined
    childReal = await realpath(childPath)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ELOOP') scan.diag('warning', 'symlink_loop', childPath, `Symlink ${childPath} is a loop; skipped.`)
    else if (code === 'ENOENT') scan.diag('info', 'broken_symlink', childPath, `Symlink ${childPath} points to nothing; skipped.`)
    else scan.diag('warning', 'unreadable', childPath, `Symlink ${childPath} cannot be followed (${code}); skipped.`)
    return undefined
  }
  if (frame.ancestors.has(childReal)) {
    scan.diag('warning', 'symlink_loop', childPath, `Symlink ${childPath} points back to ${childReal}, an enclosing folder; skipped.`)
    return undefined
  }
  return childReal
}

/** The frame of a child folder to read next, or undefined when it is skipped (hidden, build output, seen, ignored, too deep). */
async function childFrame(scan: Scan, frame: Frame, entry: Dirent, rules: GitignoreRule[]): Promise<Frame | undefined> {
  const { location, options } = scan
  if (!entry.isDirectory() && !entry.isSymbolicLink()) return undefined
  if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) {
    if (entry.isDirectory()) location.skippedDirs++
    return undefined
  }
  const childPath = join(frame.dir, entry.name)
  const childReal = entry.isSymbolicLink() ? await followLink(scan, frame, childPath) : join(frame.real, entry.name)
  if (childReal === undefined) return undefined
  if (scan.visited.has(childReal)) {
    scan.diag('info', 'duplicate', childPath, `Folder ${childPath} was already scanned as ${childReal}; skipped.`)
    return undefined
  }
  if (options.respectGitignore && isIgnored(rules, childPath, true)) {
    location.skippedDirs++
    return undefined
  }
  if (frame.depth + 1 > options.maxDepth) {
    location.limited ??= 'depth'
    if (!scan.depthReported) {
      scan.depthReported = true
      scan.diag(
        'info',
        'depth_limit',
        childPath,
        `Folders deeper than ${options.maxDepth} levels below ${scan.spec.path} are not scanned (first: ${childPath}).`,
      )
    }
    return undefined
  }
  scan.visited.add(childReal)
  return { dir: childPath, real: childReal, depth: frame.depth + 1, ancestors: new Set([...frame.ancestors, childReal]), rules }
}

/** Reads one folder: a pack folder becomes a candidate (not descended into); otherwise its child folders are returned. */
async function readFrame(scan: Scan, frame: Frame): Promise<Frame[]> {
  let entries: Dirent[]
  try {
    entries = await readdir(frame.dir, { withFileTypes: true })
  } catch (error) {
    const code = errnoCode(error)
    scan.diag('warning', code === 'ELOOP' ? 'symlink_loop' : 'unreadable', frame.dir, `Folder ${frame.dir} cannot be read (${code}); skipped.`)
    return []
  }
  if (entries.some((entry) => entry.name === 'KNOWLEDGE.md')) {
    scan.folders.push({ location: scan.spec, dir: frame.dir, real: frame.real, entries })
    return []
  }
  const rules =
    scan.options.respectGitignore && entries.some((e) => e.name === '.gitignore' && e.isFile())
      ? [...frame.rules, ...(await readGitignore(frame.dir))]
      : frame.rules
  const children: Frame[] = []
  for (const entry of entries) {
    const child = await childFrame(scan, frame, entry, rules)
    if (child) children.push(child)
  }
  return children
}

/**
 * Scans one location breadth first, at most `maxDirs` folders and `maxDepth`
 * levels; pack folders come back sorted by path.
 * @example
 * const { folders, location } = await scanLocation({ scope: 'project', source: 'agents', path: '/repo/.agents/knowledge' }, options, logger)
 */
export async function scanLocation(spec: LocationSpec, options: ScanOptions, logger: Logger): Promise<LocationScan> {
  const scan: Scan = {
    spec,
    options,
    location: { scope: spec.scope, source: spec.source, path: spec.path, exists: false, dirsScanned: 0, packsFound: 0, skippedDirs: 0 },
    folders: [],
    diagnostics: [],
    visited: new Set(),
    depthReported: false,
    diag(severity, code, path, message) {
      scan.diagnostics.push({ severity, code, path, message })
      logger.debug('packs.discover.diagnostic', { code, path })
    },
  }
  const rootReal = await openRoot(scan)
  if (rootReal === undefined) return { location: scan.location, folders: scan.folders, diagnostics: scan.diagnostics }
  scan.location.exists = true
  scan.visited.add(rootReal)
  const baseRules = options.respectGitignore ? await ancestorGitignores(options.projectDir, spec.path) : []
  let frontier: Frame[] = [{ dir: spec.path, real: rootReal, depth: 0, ancestors: new Set([rootReal]), rules: baseRules }]
  while (frontier.length > 0) {
    const budget = options.maxDirs - scan.location.dirsScanned
    if (budget <= 0) break
    const batch = frontier.slice(0, budget)
    if (batch.length < frontier.length) {
      scan.location.limited = 'dirs'
      const left = frontier.length - batch.length
      scan.diag('warning', 'dir_limit', spec.path, `Stopped after ${options.maxDirs} folders in ${spec.path}; ${left} folders were not read (raise maxDirs).`)
    }
    scan.location.dirsScanned += batch.length
    frontier = (await mapLimit(batch, options.concurrency, (frame) => readFrame(scan, frame))).flat()
  }
  scan.folders.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
  scan.location.packsFound = scan.folders.length
  logger.debug('packs.discover.location', { scope: spec.scope, path: spec.path, dirs: scan.location.dirsScanned, packs: scan.folders.length })
  return { location: scan.location, folders: scan.folders, diagnostics: scan.diagnostics }
}
