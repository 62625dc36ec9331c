/**
 * The packs service: what every entry point (CLI, agent tools, MCP server,
 * dashboard) calls for knowledge packs — catalog, select, show, activate,
 * resolve, read a file, validate, doctor. It holds the packs (discovered on
 * first use, or a fixed set found at start-up), the pack index cache, the
 * optional embedder and usage log. Entry points parse input, call one of
 * these, and format the answer.
 */
import { existsSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { systemClock, type Clock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import { noopLogger, type Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import { relativise, remotePathMap, restrictDiscovery, type PathMap, type ResolvedAccessRule } from './access/access.js'
import { activatePack, type Activation, type ActivationMode } from './activate/activate.js'
import { CATALOG_INSTRUCTIONS, catalogLanguage, renderCatalog } from './catalog/catalog.js'
import { findAgentSkills } from './discover/skills.js'
import { discoverPacks, scanLocations, type DiscoverOptions, type DiscoveryResult, type ShadowRecord } from './discover/discover.js'
import { readPackFile, type PackFile } from './activate/read-file.js'
import type { KnowledgeParseCache } from './load/load.js'
import { PackIndexCache } from './pack-index/pack-index.js'
import { resolveContext, type ResolveIntent, type ResolveResult } from './resolve/index.js'
import { listPackResources, type PackResource } from './files/resources.js'
import type { GroundingPolicy, KnowledgeCatalogItem, LoadedPack, PackDiagnostic, RejectedPack } from './schema.js'
import { packByName, selectPacks, type PackSelection } from './catalog/select.js'
import type { ScanLocation } from './discover/scan.js'
import { assertAllowed, gatePacks, type GatedPacks, type TrustGate } from './access/gate.js'
import type { PackStateFile, PackStateStore } from './access/state.js'
import { UsageLog, type UsageLogOptions } from './session/usage-log.js'
import type { PackActivationMode } from './evidence/run-records.js'
import { validatePath, validateRunFile, type PackValidationReport, type RunValidationReport } from './validate/validate.js'
import { initPack, type PackInitOptions, type PackInitResult } from './validate/scaffold.js'

/** Options of {@link createPackService}. */
export interface PackServiceOptions {
  /** Where to discover packs (on first use; `discover()` rescans). Ignored when `packs` is given. */
  discovery?: DiscoverOptions
  /** A fixed set of packs, found earlier (e.g. at start-up). */
  packs?: readonly LoadedPack[]
  /** Blended into resolution (the knowledge search's embedder). */
  embedder?: Embedder
  /** Pack indexes kept between resolves (default: one cache per service). */
  indexCache?: PackIndexCache
  /** Reuse parses of unchanged KNOWLEDGE.md files when rediscovering. */
  parseCache?: KnowledgeParseCache
  /** Enable/disable choices and approvals, persisted (a state file); without it every pack is enabled and nothing is approved. */
  state?: PackStateStore
  /** The trust gate: packs of these scopes (default project) need an approval of their digest before activation or resolution. */
  trustGate?: TrustGate
  /** Usage records of every resolve (seed 000 Step 8); none when absent, or with neither `dir` nor `packRuns`. */
  usageLog?: Pick<UsageLogOptions, 'dir' | 'packRuns'>
  /** Who sees which pack roots through {@link PackService.forCaller} (`packs.access`, resolved); none: every pack is everyone's. */
  access?: readonly ResolvedAccessRule[]
  logger?: Logger
  clock?: Clock
}

/** The catalog (tier 1) and what discovery left out. */
export interface PackCatalog {
  items: KnowledgeCatalogItem[]
  /** `<available_knowledge_packs>`; undefined when there is no pack (never an empty catalog). */
  xml?: string
  /** The behaviour instruction disclosed with the catalog, in `language`. */
  instruction: string
  language: 'en' | 'zh'
  /** Names of archived packs (hidden from the catalog). */
  archived: string[]
  /** Names of disabled packs (hidden from the catalog). */
  disabled: string[]
  /** Names of packs in the catalog (metadata only) that need approval before use. */
  pending_approval: string[]
  /** Number of KNOWLEDGE.md files that did not load. */
  rejected: number
  shadowed: ShadowRecord[]
}

/** One pack in detail: its diagnostics (load and listing), files, and the packs it shadows. */
export interface PackDetails {
  item: KnowledgeCatalogItem
  issues: PackDiagnostic[]
  resources: PackResource[]
  shadowed: ShadowRecord[]
}

/** A resolve request: the task, the packs (by name, else matched by the task), budget and policies. */
export interface PackResolveRequest {
  task: string
  /** Pack names; absent or empty: the packs whose catalog entry matches the task. */
  packs?: readonly string[] | undefined
  budget?: number
  grounding?: GroundingPolicy
  intent?: ResolveIntent
  /** Disputed packs confirmed by the user: `true` for all, or their names. */
  confirmed?: boolean | readonly string[]
}

/** What a resolve selected and what the resolver returned. */
export interface PackResolveOutcome {
  /** Names of the selected packs (empty: nothing matched the task). */
  selected: string[]
  result: ResolveResult
}

/** The validation of a path for pack authors: every pack's report and the totals. */
export interface PackValidationSummary {
  /** No error, and at least one pack. */
  ok: boolean
  errors: number
  warnings: number
  packs: PackValidationReport[]
  /** When no pack was found: the Agent Skills (`SKILL.md`) under the path, which are not packs. */
  agentSkills?: string[]
}

/** Where discovery looked and what it found, shadowed, archived and rejected. */
export interface PackDoctorReport {
  locations: ScanLocation[]
  packs: { name: string; scope: KnowledgeCatalogItem['scope']; location: string; issues: PackDiagnostic[] }[]
  archived: { name: string; location: string }[]
  rejected: RejectedPack[]
  shadowed: ShadowRecord[]
  diagnostics: PackDiagnostic[]
}

/** The packs service. Create with {@link createPackService}. */
export interface PackService {
  /** Discovers the packs now (a fixed set is returned as it is) and keeps the result. */
  discover(): Promise<DiscoveryResult>
  /** The available packs known now: the fixed set, or the last discovery (none before the first). */
  available(): readonly LoadedPack[]
  /** The catalog with its instruction (`language` default `en`; `auto`: Chinese when half of the packs are). */
  catalog(options?: { language?: 'en' | 'zh' | 'auto' | undefined }): Promise<PackCatalog>
  /** Packs by name (archived ones too; unknown names throw `not_found`), else those matching the task. */
  select(selection: PackSelection): Promise<LoadedPack[]>
  /** One pack in detail; `not_found` when unknown. */
  show(name: string): Promise<PackDetails>
  /** Activates a pack (tier 2); disputed packs need `confirm`. */
  activate(name: string, options?: { mode?: ActivationMode; confirm?: boolean }): Promise<Activation>
  /** Selects packs and resolves the runtime context (tier 3); records usage when a usage log is set. */
  resolve(request: PackResolveRequest): Promise<PackResolveOutcome>
  /** A pack's guide (`KNOWLEDGE.md`) or file, wrapped as data. */
  readFile(name: string, path: string): Promise<PackFile>
  /** Every available pack with its files (at most `maxFiles` per pack). */
  listFiles(options?: { maxFiles?: number }): Promise<{ item: KnowledgeCatalogItem; resources: PackResource[] }[]>
  /** Validates a pack folder, a KNOWLEDGE.md or a folder of packs, with the discovery's allowed types. */
  validate(path: string): Promise<PackValidationSummary>
  /** Scaffolds a new document-first pack in `<dir>/<name>/` (the discovery's allowed types accepted); see {@link initPack}. */
  init(options: Omit<PackInitOptions, 'allowedTypes'>): Promise<PackInitResult>
  /** Checks a record file (compile run, context resolution, selection eval, source map) against the standard's schemas. */
  validateRun(path: string): Promise<RunValidationReport>
  /** Where discovery looked and every pack it found, shadowed, archived or rejected. */
  doctor(): Promise<PackDoctorReport>
  /** Enables or disables a pack (by name or path), persisted in the state file; `config_error` without one. */
  setEnabled(name: string, enabled: boolean): Promise<{ name: string; enabled: boolean }>
  /** Approves a pack's current digest for use (trust gate), persisted in the state file. */
  approve(name: string): Promise<{ name: string; digest: string }>
  /**
   * The same service as a remote caller (HTTP, `/mcp`, the dashboard) acting as `principal`
   * sees it: only the packs the `access` rules give it (others are `not_found`, as unknown
   * names), and pack-relative paths (`packs/<name>/…`) instead of the server's absolute ones.
   * `validate`, `validateRun`, `setEnabled` and `approve` are `forbidden` there.
   */
  forCaller(principal: Principal): PackService
}

function fixedResult(packs: readonly LoadedPack[]): DiscoveryResult {
  return { packs: [...packs], archived: [], rejected: [], shadowed: [], locations: [], diagnostics: [] }
}

function catalogOf(gated: GatedPacks, language: 'en' | 'zh' | 'auto' | undefined): PackCatalog {
  const found = gated.set
  const items = found.packs.map((p) => p.item)
  const xml = renderCatalog(items)
  const chosen = catalogLanguage(items, language ?? 'en')
  return {
    items,
    ...(xml === undefined ? {} : { xml }),
    instruction: CATALOG_INSTRUCTIONS[chosen],
    language: chosen,
    archived: found.archived.map((p) => p.item.name),
    disabled: gated.disabled,
    pending_approval: gated.pending,
    rejected: found.rejected.length,
    shadowed: found.shadowed,
  }
}

function doctorReport(found: DiscoveryResult): PackDoctorReport {
  return {
    locations: found.locations,
    packs: found.packs.map((p) => ({ name: p.item.name, scope: p.item.scope, location: p.item.location, issues: p.issues })),
    archived: found.archived.map((p) => ({ name: p.item.name, location: p.item.location })),
    rejected: found.rejected,
    shadowed: found.shadowed,
    diagnostics: found.diagnostics,
  }
}

function validationSummary(reports: PackValidationReport[]): PackValidationSummary {
  const errors = reports.reduce((n, r) => n + r.errors, 0)
  const warnings = reports.reduce((n, r) => n + r.warnings, 0)
  return { ok: errors === 0 && reports.length > 0, errors, warnings, packs: reports }
}

/**
 * The root of the pack named `name` where discovery looks (a loaded pack by its frontmatter
 * name, else a rejected one by its folder name): `knowhub packs validate acme-brief`, as the
 * scaffold's KNOWLEDGE.md says, works from the project folder, not only from the pack's parent.
 */
async function packRootNamed(name: string, found: DiscoveryResult): Promise<string> {
  const loaded = [...found.packs, ...found.archived].find((pack) => pack.item.name === name)
  if (loaded) return dirname(loaded.item.location)
  const rejected = found.rejected.find((pack) => basename(pack.packRoot) === name)
  if (rejected) return rejected.packRoot
  throw new KnowHubError(
    'not_found',
    `No folder ${resolve(name)}, and no pack named ${name} where \`knowhub packs list\` looks (${found.locations.map((l) => l.path).join(', ') || 'nowhere'}): give the pack's folder (e.g. knowhub packs validate .agents/knowledge/${name})`,
    { path: name },
  )
}

/**
 * Creates the packs service (no I/O until used).
 * @example
 * const packs = createPackService({ discovery: { projectDir: process.cwd() }, logger })
 * const { xml, instruction } = await packs.catalog()
 * const { result } = await packs.resolve({ task: 'What does the Team plan cost?', budget: 4000 })
 */
export function createPackService(options: PackServiceOptions = {}): PackService {
  const logger = options.logger ?? noopLogger
  const cache = options.indexCache ?? new PackIndexCache({ logger })
  const discovery = options.discovery ?? {}
  const access = options.access ?? []
  let found: Promise<DiscoveryResult> | undefined = options.packs ? Promise.resolve(fixedResult(options.packs)) : undefined
  let known: readonly LoadedPack[] = options.packs ?? []
  let usageLog: Promise<UsageLog> | undefined

  const discover = (): Promise<DiscoveryResult> => {
    if (options.packs) return found as Promise<DiscoveryResult>
    found = discoverPacks(discovery, logger, options.parseCache ? { cache: options.parseCache } : {})
    found.then(
      (result) => void (known = result.packs),
      () => undefined,
    )
    return found
  }
  const store = (): PackStateStore => {
    if (!options.state) throw new KnowHubError('config_error', 'No packs state file is configured; enabling, disabling and approving packs need one.')
    return options.state
  }
  const recordUsage = async (result: ResolveResult, packs: readonly LoadedPack[], activation: PackActivationMode): Promise<void> => {
    const settings = options.usageLog
    if (!settings || (settings.dir === undefined && settings.packRuns !== true)) return
    usageLog ??= UsageLog.create({ ...settings, logger, clock: options.clock ?? systemClock })
    await (await usageLog).record(result, packs, { activation: () => activation })
  }
  const base = packServiceView({ options, discovery, cache, logger, discover, current: () => found ?? discover(), known: () => known, store, recordUsage })
  // What remote callers see instead of absolute paths, per discovery result.
  const pathMaps = new WeakMap<DiscoveryResult, ReturnType<typeof remotePathMap>>()
  const pathMap = async () => {
    const result = await (found ?? discover())
    let map = pathMaps.get(result)
    if (!map) pathMaps.set(result, (map = remotePathMap(result)))
    return map
  }
  return {
    ...base,
    forCaller(principal) {
      const scoped = packServiceView({
        options,
        discovery,
        cache,
        logger,
        discover: async () => restrictDiscovery(await discover(), access, principal),
        current: async () => restrictDiscovery(await (found ?? discover()), access, principal),
        known: () => restrictDiscovery(fixedResult(known), access, principal).packs,
        store,
        recordUsage,
      })
      return remoteView(scoped, pathMap)
    },
  }
}

/**
 * A view for remote callers: every answer with the server's absolute paths replaced
 * (`packs/<name>/…`); nothing that takes a server path.
 */
function remoteView(view: Omit<PackService, 'forCaller'>, pathMap: () => Promise<PathMap>): PackService {
  const shown = async <T>(answer: Promise<T>): Promise<T> => relativise(await answer, await pathMap())
  const refused = (what: string) => () => Promise.reject(new KnowHubError('forbidden', `${what} is not available to remote callers`))
  const self: PackService = {
    discover: () => shown(view.discover()),
    available: () => {
      const packs = view.available()
      return relativise(packs, remotePathMap(fixedResult(packs)))
    },
    catalog: async (options) => {
      const catalog = await shown(view.catalog(options))
      // The XML again from the shown items: escaping in it must not keep a path from being replaced.
      const xml = renderCatalog(catalog.items)
      const { xml: _xml, ...rest } = catalog
      return { ...rest, ...(xml === undefined ? {} : { xml }) }
    },
    select: (selection) => shown(view.select(selection)),
    show: (name) => shown(view.show(name)),
    activate: (name, options) => shown(view.activate(name, options)),
    resolve: (request) => shown(view.resolve(request)),
    readFile: (name, path) => shown(view.readFile(name, path)),
    listFiles: (options) => shown(view.listFiles(options)),
    doctor: () => shown(view.doctor()),
    validate: refused('Validating a server path'),
    validateRun: refused('Validating a server file'),
    setEnabled: refused('Enabling or disabling a pack'),
    approve: refused('Approving a pack'),
    init: refused('Creating a pack on the server'),
    forCaller: () => self,
  }
  return self
}

/** What one view of the packs service shares with the others. */
interface ViewDeps {
  options: PackServiceOptions
  discovery: DiscoverOptions
  cache: PackIndexCache
  logger: Logger
  discover(): Promise<DiscoveryResult>
  current(): Promise<DiscoveryResult>
  known(): readonly LoadedPack[]
  store(): PackStateStore
  recordUsage(result: ResolveResult, packs: readonly LoadedPack[], activation: PackActivationMode): Promise<void>
}

/** The packs service over one view of the packs: every pack (local callers), or the packs one principal may see. */
function packServiceView(deps: ViewDeps): Omit<PackService, 'forCaller'> {
  const { options, discovery, cache, logger, current, store, recordUsage } = deps
  const noState: PackStateFile = { version: 1, disabled: [], approvals: {} }
  const view = async (): Promise<GatedPacks> => gatePacks(await current(), options.state ? await options.state.read() : noState, options.trustGate)
  /** The pack by name or path, when it may enter model context. */
  const usable = async (name: string): Promise<LoadedPack> => {
    const gated = await view()
    const pack = packByName(gated.all, name)
    assertAllowed(pack, gated)
    return pack
  }
  /** Named packs (by name or path) when allowed, else the enabled, approved packs matching the task. */
  const select = async (selection: PackSelection): Promise<LoadedPack[]> => {
    const gated = await view()
    if (!selection.names || selection.names.length === 0) {
      return selectPacks({ ...gated.set, packs: gated.set.packs.filter((p) => !gated.pending.includes(p.item.name)) }, selection)
    }
    return selection.names.map((name) => {
      const pack = packByName(gated.all, name)
      assertAllowed(pack, gated)
      return pack
    })
  }
  return {
    discover: deps.discover,
    available: deps.known,
    catalog: async ({ language } = {}) => catalogOf(await view(), language),
    select,
    async show(name) {
      const found = await current()
      const pack = packByName(found, name)
      const listing = await listPackResources(pack)
      return {
        item: pack.item,
        issues: [...pack.issues, ...listing.issues],
        resources: listing.resources,
        shadowed: found.shadowed.filter((s) => s.name === name),
      }
    },
    activate: async (name, { mode, confirm } = {}) =>
      activatePack(await usable(name), { ...(mode ? { mode } : {}), ...(confirm === undefined ? {} : { confirm }) }),
    async resolve(request) {
      const selected = await select({ names: request.packs, task: request.task })
      const result = await resolveContext({
        task: request.task,
        packs: selected,
        ...(request.budget === undefined ? {} : { budget: request.budget }),
        ...(request.grounding ? { grounding: request.grounding } : {}),
        ...(request.intent ? { intent: request.intent } : {}),
        ...(request.confirmed === undefined ? {} : { confirmed: request.confirmed }),
        ...(options.embedder ? { embedder: options.embedder } : {}),
        cache,
        logger,
      })
      // Named packs were selected explicitly; without names they matched the task by their catalog entry (implicit).
      await recordUsage(result, selected, request.packs && request.packs.length > 0 ? 'explicit' : 'implicit')
      return { selected: selected.map((p) => p.item.name), result }
    },
    readFile: async (name, path) => readPackFile(path === 'KNOWLEDGE.md' ? packByName((await view()).all, name) : await usable(name), path),
    async listFiles({ maxFiles } = {}) {
      const listed = []
      for (const pack of (await current()).packs) {
        const listing = await listPackResources(pack, maxFiles === undefined ? {} : { maxFiles })
        listed.push({ item: pack.item, resources: listing.resources })
      }
      return listed
    },
    async validate(pathOrName) {
      const allowedTypes = discovery.allowedTypes
      const path = existsSync(resolve(pathOrName)) ? pathOrName : await packRootNamed(pathOrName, await current())
      const summary = validationSummary(await validatePath(path, { ...(allowedTypes ? { allowedTypes } : {}), logger }))
      if (summary.packs.length > 0) return summary
      const skills = await findAgentSkills(resolve(path))
      return skills.length > 0 ? { ...summary, agentSkills: skills } : summary
    },
    init: async (init) => {
      // By default the pack goes where discovery looks: the project's .agents/knowledge.
      const dir = resolve(init.dir ?? join(discovery.projectDir ?? '.', '.agents', 'knowledge'))
      const created = await initPack({ ...init, dir, allowedTypes: discovery.allowedTypes })
      return { ...created, discovered: scanLocations(discovery).some((location) => location.path === dir) }
    },
    validateRun: (path) => validateRunFile(path),
    doctor: async () => doctorReport(await current()),
    async setEnabled(name, enabled) {
      const pack = packByName((await view()).all, name)
      const key = pack.item.name
      await store().update((s) => ({ ...s, disabled: enabled ? s.disabled.filter((n) => n !== key) : [...new Set([...s.disabled, key])] }))
      logger.info('packs.state.enabled', { pack: key, enabled })
      return { name: key, enabled }
    },
    async approve(name) {
      const pack = packByName((await view()).all, name)
      const at = (options.clock ?? systemClock).now().toISOString()
      await store().update((s) => ({ ...s, approvals: { ...s.approvals, [pack.item.name]: { digest: pack.contentHash, location: pack.item.location, at } } }))
      logger.info('packs.state.approved', { pack: pack.item.name })
      return { name: pack.item.name, digest: pack.contentHash }
    },
  }
}
