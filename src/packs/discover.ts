/**
 * Discovery: scans the configured scopes for folders holding a KNOWLEDGE.md,
 * loads each, applies precedence (project > user > extra > built-in) and
 * records every name clash with the pack it shadowed. Scan problems (symlink
 * loops, unreadable folders, limits) are diagnostics, never exceptions.
 */
import { readFile, readdir, realpath, stat } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { z } from 'zod'
import { parseWith } from '../core/validate.js'
import { noopLogger, type Logger } from '../core/logger.js'
import { isIgnored, parseGitignore, type GitignoreRule } from './gitignore.js'
import { DEFAULT_MAX_KNOWLEDGE_BYTES, loadPack, type KnowledgeParseCache } from './load.js'
import { mapLimit } from './limit.js'
import { isInside } from './paths.js'
import type { KnowledgeCatalogItem, LoadedPack, PackDiagnostic, PackScope, RejectedPack } from './schema.js'

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

/**
 * Discovery options. Scopes whose folder is not given are not scanned.
 * @example
 * const options = DiscoverOptions.parse({ projectDir: '/repo', extraPaths: ['/shared/packs'] })
 */
export const DiscoverOptions = z.object({
  /** Project folder: scans `<project>/.<client>/knowledge/` and `<project>/.agents/knowledge/`. */
  projectDir: z.string().min(1).optional(),
  /** Home folder: scans `~/.<client>/knowledge/` and `~/.agents/knowledge/`. */
  homeDir: z.string().min(1).optional(),
  /** Client name for the client-native folders (default `knowhub`). */
  clientName: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u, 'letters, digits, dot, dash and underscore only')
    .default('knowhub'),
  /** Extra folders (from config or flags), in precedence order. */
  extraPaths: z.array(z.string().min(1)).default([]),
  /** The built-in folder bundled with the client, lowest precedence. */
  builtinDir: z.string().min(1).optional(),
  /** Show archived packs in `packs` (otherwise they are only in `archived`). */
  includeArchived: z.boolean().default(false),
  /** Non-standard `type` values to accept (`*` accepts all). */
  allowedTypes: z.array(z.string()).default([]),
  /** Deepest folder level read below a location root (the root is level 0). */
  maxDepth: z.number().int().min(0).max(64).default(6),
  /** Most folders read per location. */
  maxDirs: z.number().int().min(1).default(2000),
  /** Skip folders matched by .gitignore files (from the project folder down). */
  respectGitignore: z.boolean().default(false),
  /** Largest KNOWLEDGE.md read whole. */
  maxKnowledgeBytes: z.number().int().min(1024).default(DEFAULT_MAX_KNOWLEDGE_BYTES),
  /** Parallel filesystem operations. */
  concurrency: z.number().int().min(1).max(1024).default(64),
})
export type DiscoverOptions = z.input<typeof DiscoverOptions>

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

/** A name clash: `kept` won, `shadowed` is not used. */
export interface ShadowRecord {
  name: string
  kept: { location: string; scope: PackScope }
  shadowed: { location: string; scope: PackScope }
}

/** Everything discovery found. `packs` is what the catalog discloses. */
export interface DiscoveryResult {
  packs: LoadedPack[]
  /**
   * Archived packs, hidden from the catalog unless `includeArchived` (then they
   * are in `packs`). They claim no name: an archived pack never shadows an
   * available one. Each also has an `archived` diagnostic.
   */
  archived: LoadedPack[]
  /** KNOWLEDGE.md files that did not load, with why. */
  rejected: RejectedPack[]
  shadowed: ShadowRecord[]
  locations: ScanLocation[]
  /** Scan-level problems: symlink loops, unreadable folders, limits. */
  diagnostics: PackDiagnostic[]
}

interface LocationSpec {
  scope: PackScope
  source: ScanLocation['source']
  path: string
}

interface Candidate {
  location: LocationSpec
  dir: string
  real: string
  entries: Dirent[]
}

/**
 * The folders discovery scans, in precedence order.
 * @example
 * scanLocations({ projectDir: '/repo', homeDir: '/home/me' }).map((l) => l.path)
 * // ['/repo/.knowhub/knowledge', '/repo/.agents/knowledge', '/home/me/.knowhub/knowledge', '/home/me/.agents/knowledge']
 */
export function scanLocations(input: DiscoverOptions = {}): { scope: PackScope; source: ScanLocation['source']; path: string }[] {
  const options = parseWith(DiscoverOptions, input, 'discovery options')
  const specs: LocationSpec[] = []
  const native = `.${options.clientName}`
  const pair = (base: string, scope: PackScope): void => {
    specs.push({ scope, source: 'client', path: resolve(base, native, 'knowledge') })
    if (native !== '.agents') specs.push({ scope, source: 'agents', path: resolve(base, '.agents', 'knowledge') })
  }
  if (options.projectDir) pair(options.projectDir, 'project')
  if (options.homeDir) pair(options.homeDir, 'user')
  for (const extra of options.extraPaths) specs.push({ scope: 'extra', source: 'extra', path: resolve(extra) })
  if (options.builtinDir) specs.push({ scope: 'builtin', source: 'builtin', path: resolve(options.builtinDir) })
  const seen = new Set<string>()
  return specs.filter((spec) => (seen.has(spec.path) ? false : (seen.add(spec.path), true)))
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN'
}

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

async function readGitignore(dir: string): Promise<GitignoreRule[]> {
  try {
    const text = await readFile(join(dir, '.gitignore'), 'utf8')
    return parseGitignore(text.slice(0, 64 * 1024), dir)
  } catch {
    return []
  }
}

interface WalkState {
  location: ScanLocation
  candidates: Candidate[]
  diagnostics: PackDiagnostic[]
  depthReported: boolean
}

async function scanLocation(spec: LocationSpec, options: z.output<typeof DiscoverOptions>, logger: Logger): Promise<WalkState> {
  const state: WalkState = {
    location: { scope: spec.scope, source: spec.source, path: spec.path, exists: false, dirsScanned: 0, packsFound: 0, skippedDirs: 0 },
    candidates: [],
    diagnostics: [],
    depthReported: false,
  }
  const diag = (severity: PackDiagnostic['severity'], code: string, path: string, message: string): void => {
    state.diagnostics.push({ severity, code, path, message })
    logger.debug('packs.discover.diagnostic', { code, path })
  }

  let rootReal: string
  try {
    const info = await stat(spec.path)
    if (!info.isDirectory()) {
      diag('warning', 'not_a_directory', spec.path, `The ${spec.scope} location ${spec.path} is not a folder; not scanned.`)
      return state
    }
    rootReal = await realpath(spec.path)
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT') {
      diag('info', 'location_missing', spec.path, `The ${spec.scope} location ${spec.path} does not exist.`)
    } else if (code === 'ELOOP') {
      diag('warning', 'symlink_loop', spec.path, `The ${spec.scope} location ${spec.path} is a symlink loop; not scanned.`)
    } else {
      diag('warning', 'unreadable', spec.path, `The ${spec.scope} location ${spec.path} cannot be read (${code}).`)
    }
    return state
  }
  state.location.exists = true

  const baseRules = options.respectGitignore ? await ancestorGitignores(options.projectDir, spec.path) : []
  type Frame = { dir: string; real: string; depth: number; ancestors: ReadonlySet<string>; rules: GitignoreRule[] }
  let frontier: Frame[] = [{ dir: spec.path, real: rootReal, depth: 0, ancestors: new Set([rootReal]), rules: baseRules }]
  const visited = new Set<string>([rootReal])

  while (frontier.length > 0) {
    const nextFrontier: Frame[] = []
    const budget = options.maxDirs - state.location.dirsScanned
    if (budget <= 0) break
    const batch = frontier.slice(0, budget)
    if (batch.length < frontier.length) {
      state.location.limited = 'dirs'
      diag(
        'warning',
        'dir_limit',
        spec.path,
        `Stopped after ${options.maxDirs} folders in ${spec.path}; ${frontier.length - batch.length} folders were not read (raise maxDirs).`,
      )
    }
    state.location.dirsScanned += batch.length
    await mapLimit(batch, options.concurrency, async (frame) => {
      let entries: Dirent[]
      try {
        entries = await readdir(frame.dir, { withFileTypes: true })
      } catch (error) {
        const code = errnoCode(error)
        diag('warning', code === 'ELOOP' ? 'symlink_loop' : 'unreadable', frame.dir, `Folder ${frame.dir} cannot be read (${code}); skipped.`)
        return
      }
      if (entries.some((entry) => entry.name === 'KNOWLEDGE.md')) {
        state.candidates.push({ location: spec, dir: frame.dir, real: frame.real, entries })
        return
      }
      const rules =
        options.respectGitignore && entries.some((e) => e.name === '.gitignore' && e.isFile())
          ? [...frame.rules, ...(await readGitignore(frame.dir))]
          : frame.rules
      for (const entry of entries) {
        if (!entry.isDirectory() && !entry.isSymbolicLink()) continue
        if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) {
          if (entry.isDirectory()) state.location.skippedDirs++
          continue
        }
        const childPath = join(frame.dir, entry.name)
        let childReal = join(frame.real, entry.name)
        if (entry.isSymbolicLink()) {
          try {
            const info = await stat(childPath)
            if (!info.isDirectory()) continue
            childReal = await realpath(childPath)
          } catch (error) {
            const code = errnoCode(error)
            if (code === 'ELOOP') diag('warning', 'symlink_loop', childPath, `Symlink ${childPath} is a loop; skipped.`)
            else if (code === 'ENOENT') diag('info', 'broken_symlink', childPath, `Symlink ${childPath} points to nothing; skipped.`)
            else diag('warning', 'unreadable', childPath, `Symlink ${childPath} cannot be followed (${code}); skipped.`)
            continue
          }
          if (frame.ancestors.has(childReal)) {
            diag('warning', 'symlink_loop', childPath, `Symlink ${childPath} points back to ${childReal}, an enclosing folder; skipped.`)
            continue
          }
        }
        if (visited.has(childReal)) {
          diag('info', 'duplicate', childPath, `Folder ${childPath} was already scanned as ${childReal}; skipped.`)
          continue
        }
        if (options.respectGitignore && isIgnored(rules, childPath, true)) {
          state.location.skippedDirs++
          continue
        }
        if (frame.depth + 1 > options.maxDepth) {
          state.location.limited ??= 'depth'
          if (!state.depthReported) {
            state.depthReported = true
            diag('info', 'depth_limit', childPath, `Folders deeper than ${options.maxDepth} levels below ${spec.path} are not scanned (first: ${childPath}).`)
          }
          continue
        }
        visited.add(childReal)
        nextFrontier.push({ dir: childPath, real: childReal, depth: frame.depth + 1, ancestors: new Set([...frame.ancestors, childReal]), rules })
      }
    })
    frontier = nextFrontier
  }
  state.candidates.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
  state.location.packsFound = state.candidates.length
  logger.debug('packs.discover.location', { scope: spec.scope, path: spec.path, dirs: state.location.dirsScanned, packs: state.candidates.length })
  return state
}

/**
 * Discovers, loads and validates every pack in the configured scopes. Pass a
 * {@link KnowledgeParseCache} to skip re-reading unchanged KNOWLEDGE.md files.
 * @example
 * const found = await discoverPacks({ projectDir: process.cwd(), homeDir: os.homedir() })
 * const xml = renderCatalog(found.packs.map((p) => p.item))
 * for (const s of found.shadowed) console.log(`${s.name}: ${s.kept.location} shadows ${s.shadowed.location}`)
 */
export async function discoverPacks(
  input: DiscoverOptions = {},
  logger: Logger = noopLogger,
  extra: { cache?: KnowledgeParseCache } = {},
): Promise<DiscoveryResult> {
  const options = parseWith(DiscoverOptions, input, 'discovery options')
  const specs = scanLocations(options)
  const states = await Promise.all(specs.map((spec) => scanLocation(spec, options, logger)))
  const result: DiscoveryResult = {
    packs: [],
    archived: [],
    rejected: [],
    shadowed: [],
    locations: states.map((s) => s.location),
    diagnostics: states.flatMap((s) => s.diagnostics),
  }

  const candidates = states.flatMap((s) => s.candidates)
  const loaded = await mapLimit(candidates, options.concurrency, (candidate) =>
    loadPack(candidate.dir, {
      scope: candidate.location.scope,
      allowedTypes: options.allowedTypes,
      maxKnowledgeBytes: options.maxKnowledgeBytes,
      entries: candidate.entries,
      realRoot: candidate.real,
      ...(extra.cache ? { cache: extra.cache } : {}),
    }),
  )

  const byName = new Map<string, LoadedPack>()
  const byRealRoot = new Map<string, LoadedPack>()
  for (const outcome of loaded) {
    if (!outcome.ok) {
      result.rejected.push(outcome.rejected)
      logger.warn('packs.discover.rejected', { location: outcome.rejected.location, outcome: outcome.rejected.outcome })
      continue
    }
    const pack = outcome.pack
    const same = byRealRoot.get(pack.realRoot)
    if (same) {
      result.diagnostics.push({
        severity: 'info',
        code: 'duplicate',
        path: pack.item.location,
        message: `${pack.item.location} is the same pack as ${same.item.location}; counted once.`,
      })
      continue
    }
    byRealRoot.set(pack.realRoot, pack)
    // A hidden archived pack claims no name: it never shadows an available pack of that name.
    if (pack.item.status === 'archived' && !options.includeArchived) {
      result.archived.push(pack)
      result.diagnostics.push({
        severity: 'info',
        code: 'archived',
        path: pack.item.location,
        message: `Pack "${pack.item.name}" in ${pack.item.location} (${pack.item.scope}) is archived: not in the catalog and shadows nothing (include archived packs to use it).`,
      })
      continue
    }
    const winner = byName.get(pack.item.name)
    if (winner) {
      result.shadowed.push({
        name: pack.item.name,
        kept: { location: winner.item.location, scope: winner.item.scope },
        shadowed: { location: pack.item.location, scope: pack.item.scope },
      })
      result.diagnostics.push({
        severity: 'warning',
        code: 'shadowed',
        path: pack.item.location,
        message: `Pack "${pack.item.name}" in ${pack.item.location} (${pack.item.scope}) is shadowed by ${winner.item.location} (${winner.item.scope}).`,
      })
      continue
    }
    byName.set(pack.item.name, pack)
    result.packs.push(pack)
  }
  logger.info('packs.discover.done', { packs: result.packs.length, rejected: result.rejected.length, shadowed: result.shadowed.length })
  return result
}

/**
 * The catalog records of a discovery result.
 * @example
 * const items = catalogItems(await discoverPacks({ projectDir: '.' }))
 */
export function catalogItems(result: Pick<DiscoveryResult, 'packs'>): KnowledgeCatalogItem[] {
  return result.packs.map((pack) => pack.item)
}

/**
 * Finds a pack by name in a discovery result (archived ones too when asked).
 * @example
 * const pack = findPack(found, 'acme-product-brief')
 */
export function findPack(
  result: Pick<DiscoveryResult, 'packs' | 'archived'>,
  name: string,
  options: { includeArchived?: boolean } = {},
): LoadedPack | undefined {
  return result.packs.find((p) => p.item.name === name) ?? (options.includeArchived ? result.archived.find((p) => p.item.name === name) : undefined)
}
