/**
 * Discovery: scans the configured scopes for folders holding a KNOWLEDGE.md,
 * loads each, applies precedence (project > user > extra > built-in) and
 * records every name clash with the pack it shadowed. Scan problems (symlink
 * loops, unreadable folders, limits) are diagnostics, never exceptions.
 */
import { resolve } from 'node:path'
import { z } from 'zod'
import { parseWith } from '../../core/validate.js'
import { noopLogger, type Logger } from '../../core/logger.js'
import { DEFAULT_MAX_KNOWLEDGE_BYTES, loadPack, type KnowledgeParseCache, type LoadPackResult } from '../load/load.js'
import { mapLimit } from '../files/limit.js'
import { scanLocation, type LocationSpec, type ScanLocation } from './scan.js'
import type { KnowledgeCatalogItem, LoadedPack, PackDiagnostic, PackScope, PackTrust, RejectedPack } from '../schema.js'

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

/** The packs kept so far, by name and by real root. */
interface Precedence {
  byName: Map<string, LoadedPack>
  byRealRoot: Map<string, LoadedPack>
}

/** Trust from lowest to highest: a lower-trust pack shadowing a higher-trust one gets a diagnostic. */
const TRUST_RANK: Record<PackTrust, number> = { unreviewed: 0, external: 1, 'user-confirmed': 2, official: 3 }

/** `1.10.0` > `1.9.2`: numeric comparison of the dotted release numbers (pre-release tags ignored). */
function compareVersions(a: string, b: string): number {
  const parts = (v: string): number[] =>
    v
      .replace(/^v/u, '')
      .split(/[-+]/u)[0]
      ?.split('.')
      .map((n) => Number(n) || 0) ?? []
  const x = parts(a)
  const y = parts(b)
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0)
  return 0
}

/**
 * True when `candidate` should replace a stale `winner` of the same name: it
 * is not stale (nor disputed), and it is newer by `version`, else by `updated`.
 */
export function replacesStale(candidate: LoadedPack, winner: LoadedPack): boolean {
  if (winner.item.status !== 'stale' || candidate.item.status === 'stale' || candidate.item.status === 'disputed') return false
  const [a, b] = [candidate.item, winner.item]
  if (a.version && b.version) return compareVersions(a.version, b.version) > 0
  if (a.updated && b.updated) return Date.parse(a.updated) > Date.parse(b.updated)
  return false
}

/**
 * Files one load outcome (in precedence order) into the result: rejected; the
 * same folder seen again (counted once); archived and hidden (claims no name);
 * shadowed by an earlier pack of the same name; or available.
 */
function admit(result: DiscoveryResult, outcome: LoadPackResult, state: Precedence, includeArchived: boolean, logger: Logger): void {
  if (!outcome.ok) {
    result.rejected.push(outcome.rejected)
    logger.warn('packs.discover.rejected', { location: outcome.rejected.location, outcome: outcome.rejected.outcome })
    return
  }
  const pack = outcome.pack
  const same = state.byRealRoot.get(pack.realRoot)
  if (same) {
    result.diagnostics.push({
      severity: 'info',
      code: 'duplicate',
      path: pack.item.location,
      message: `${pack.item.location} is the same pack as ${same.item.location}; counted once.`,
    })
    return
  }
  state.byRealRoot.set(pack.realRoot, pack)
  // A hidden archived pack claims no name: it never shadows an available pack of that name.
  if (pack.item.status === 'archived' && !includeArchived) {
    result.archived.push(pack)
    result.diagnostics.push({
      severity: 'info',
      code: 'archived',
      path: pack.item.location,
      message: `Pack "${pack.item.name}" in ${pack.item.location} (${pack.item.scope}) is archived: not in the catalog and shadows nothing (include archived packs to use it).`,
    })
    return
  }
  const winner = state.byName.get(pack.item.name)
  // Status rules: a stale pack gives way to a newer alternative of the same name that is not stale.
  if (winner && replacesStale(pack, winner)) {
    result.packs[result.packs.indexOf(winner)] = pack
    state.byName.set(pack.item.name, pack)
    result.shadowed.push({
      name: pack.item.name,
      kept: { location: pack.item.location, scope: pack.item.scope },
      shadowed: { location: winner.item.location, scope: winner.item.scope },
    })
    result.diagnostics.push({
      severity: 'warning',
      code: 'stale_replaced',
      path: winner.item.location,
      message: `Pack "${pack.item.name}" in ${winner.item.location} (${winner.item.scope}) is stale; the newer ${pack.item.location} (${pack.item.scope}, ${pack.item.status}) is used instead.`,
    })
    return
  }
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
    const [kept, lost] = [winner.item.trust ?? 'unreviewed', pack.item.trust ?? 'unreviewed']
    if (TRUST_RANK[kept] < TRUST_RANK[lost]) {
      result.diagnostics.push({
        severity: 'warning',
        code: 'trust_shadow',
        path: winner.item.location,
        message: `Pack "${pack.item.name}" of trust ${kept} (${winner.item.scope}, ${winner.item.location}) shadows one of higher trust ${lost} (${pack.item.scope}, ${pack.item.location}).`,
      })
    }
    return
  }
  state.byName.set(pack.item.name, pack)
  result.packs.push(pack)
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

  const candidates = states.flatMap((s) => s.folders)
  const state: Precedence = { byName: new Map(), byRealRoot: new Map() }
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

  for (const outcome of loaded) admit(result, outcome, state, options.includeArchived, logger)
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
