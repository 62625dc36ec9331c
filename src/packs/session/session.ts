/**
 * Long-lived pack context (seed 000 Step 7): a session dedupes activations,
 * tracks every loaded file with its hash, version, profile, mode and source
 * map, refreshes when files change (marking stale context), and survives
 * context compaction through `snapshot()` / `restore()`, which reload the
 * active guides and selected context deterministically.
 */
import { z } from 'zod'
import { isKnowHubError } from '../../core/errors.js'
import { noopLogger, type Logger } from '../../core/logger.js'
import { parseWith } from '../../core/validate.js'
import type { Embedder } from '../../embed/embedder.js'
import { activatePack, type Activation, type ActivationMode } from '../activate/activate.js'
import { loadPack, type LoadPackOptions } from '../load/load.js'
import { PackIndexCache, type PackIndexOptions } from '../pack-index/pack-index.js'
import { sha256 } from '../files/paths.js'
import { DEFAULT_BUDGET, ResolveIntent, resolveContext, type ResolveResult } from '../resolve/index.js'
import { GroundingPolicy, type LoadedPack, type PackProfile, type RuntimeMode } from '../schema.js'
import { packByName } from '../catalog/select.js'
import type { UsageLog } from './usage-log.js'

/** A file whose content entered the model context. */
export interface LoadedFileRecord {
  pack: string
  /** Pack-relative path (`KNOWLEDGE.md` for an activated guide). */
  path: string
  hash: string
  version?: string
  profile: PackProfile
  runtime_mode: RuntimeMode
  /** Hash of the pack's source map when it has one. */
  source_map?: string
}

/** A resolved context kept by the session. */
export interface SessionContext {
  id: string
  task: string
  packs: string[]
  budget: number
  grounding?: GroundingPolicy
  intent: ResolveIntent
  result: ResolveResult
  /** sha256 of the wrapped context text. */
  hash: string
  /** Set by `refresh()` when a file it used changed. */
  stale: boolean
}

/**
 * A serialisable session state, kept outside the model context (e.g. with the conversation).
 * @example
 * const saved: SessionSnapshot = session.snapshot()
 * await PackSession.restore(SessionSnapshot.parse(JSON.parse(text)), { packs })
 */
export const SessionSnapshot = z.object({
  version: z.literal(1),
  activations: z.array(z.object({ name: z.string(), location: z.string(), contentHash: z.string(), mode: z.enum(['file', 'tool']) })),
  confirmed: z.array(z.string()),
  contexts: z.array(
    z.object({
      id: z.string(),
      task: z.string(),
      packs: z.array(z.string()),
      budget: z.number().int().positive(),
      grounding: GroundingPolicy.optional(),
      intent: ResolveIntent,
      hash: z.string(),
      files: z.array(z.object({ pack: z.string(), path: z.string(), hash: z.string() })),
    }),
  ),
})
export type SessionSnapshot = z.infer<typeof SessionSnapshot>

/** What `refresh()` found. */
export interface RefreshReport {
  /** Packs whose KNOWLEDGE.md changed (guides reloaded). */
  changedPacks: string[]
  /** Pack files added, removed or modified since they were indexed. */
  changedFiles: { pack: string; path: string }[]
  /** Contexts marked stale. */
  staleContexts: string[]
  /** Active packs that disappeared or no longer load. */
  lostPacks: string[]
  /** Active packs that became disputed: deactivated until confirmed. */
  needsConfirmation: string[]
}

/** What `restore()` reloaded. */
export interface RestoreReport {
  /** Guides reloaded unchanged. */
  guides: string[]
  /** Guides whose KNOWLEDGE.md changed since the snapshot (reloaded from the new text). */
  changedGuides: string[]
  /** Contexts reloaded byte-identical. */
  contexts: string[]
  /** Contexts whose files changed: re-resolved and marked stale. */
  staleContexts: string[]
  /** Packs of the snapshot that are no longer available. */
  lostPacks: string[]
}

/** Options of {@link PackSession.create}. */
export interface PackSessionOptions {
  /** The packs the session may use (e.g. `discoverPacks(…).packs`). */
  packs: readonly LoadedPack[]
  embedder?: Embedder
  usageLog?: UsageLog
  index?: PackIndexOptions
  /**
   * The options the packs were loaded or discovered with (`allowedTypes`,
   * `maxKnowledgeBytes`); `refresh()` reloads with the same ones. Passing the
   * discovery options as they are works.
   * @example
   * PackSession.create({ packs: found.packs, load: discoveryOptions })
   */
  load?: Pick<LoadPackOptions, 'allowedTypes' | 'maxKnowledgeBytes'>
  logger?: Logger
}

/** Options of {@link PackSession.resolve}. */
export interface SessionResolveOptions {
  /** Pack names; default: the active packs. */
  packs?: readonly string[]
  budget?: number
  grounding?: GroundingPolicy
  intent?: ResolveIntent
}

/**
 * A pack session. Create with {@link PackSession.create}.
 * @example
 * const session = await PackSession.create({ packs: found.packs })
 * await session.activate('acme-product-brief')
 * const { context } = await session.resolve('What is the enterprise price?', { budget: 8000 })
 * const saved = session.snapshot()            // before compaction
 * const { session: again } = await PackSession.restore(saved, { packs: found.packs })
 */
export class PackSession {
  private readonly available = new Map<string, LoadedPack>()
  private readonly activations = new Map<string, Activation>()
  private readonly confirmedNames = new Set<string>()
  private readonly contextList: SessionContext[] = []
  private readonly cache: PackIndexCache
  private counter = 0

  private constructor(private readonly options: PackSessionOptions) {
    for (const pack of options.packs) if (!this.available.has(pack.item.name)) this.available.set(pack.item.name, pack)
    this.cache = new PackIndexCache({ ...options.index, ...(options.logger ? { logger: options.logger } : {}) })
  }

  /** Creates a session over the given packs (no I/O until used). */
  static async create(options: PackSessionOptions): Promise<PackSession> {
    return new PackSession(options)
  }

  /** The load options of `refresh()`: only the fields loadPack takes. */
  private get loadOptions(): Pick<LoadPackOptions, 'allowedTypes' | 'maxKnowledgeBytes'> {
    const load = this.options.load ?? {}
    return {
      ...(load.allowedTypes ? { allowedTypes: load.allowedTypes } : {}),
      ...(load.maxKnowledgeBytes !== undefined ? { maxKnowledgeBytes: load.maxKnowledgeBytes } : {}),
    }
  }

  private get logger(): Logger {
    return this.options.logger ?? noopLogger
  }

  /** The packs this session may use. */
  get packs(): LoadedPack[] {
    return [...this.available.values()]
  }

  private pack(name: string): LoadedPack {
    return packByName({ packs: this.packs }, name)
  }

  /** Records the user's explicit confirmation to use a disputed pack. */
  confirm(name: string): void {
    this.pack(name)
    this.confirmedNames.add(name)
  }

  /**
   * Activates a pack once: a second activation of an unchanged pack returns
   * the first (`reused: true`). Disputed packs need `confirm: true` or an
   * earlier `confirm(name)`.
   */
  async activate(name: string, options: { mode?: ActivationMode; confirm?: boolean } = {}): Promise<{ activation: Activation; reused: boolean }> {
    const pack = this.pack(name)
    const existing = this.activations.get(name)
    const mode = options.mode ?? 'tool'
    if (existing && existing.contentHash === pack.contentHash && existing.mode === mode) return { activation: existing, reused: true }
    if (options.confirm) this.confirmedNames.add(name)
    const activation = await activatePack(pack, { mode, confirm: this.confirmedNames.has(name) })
    this.activations.set(name, activation)
    this.logger.info('packs.session.activated', { pack: name, mode })
    return { activation, reused: false }
  }

  /** Active guides, in activation order. */
  active(): Activation[] {
    return [...this.activations.values()]
  }

  /** Resolved contexts, oldest first. */
  contexts(): SessionContext[] {
    return [...this.contextList]
  }

  /**
   * Resolves context for a task over the active packs (or the named ones) and
   * records the loaded files; writes usage records when a log is configured.
   */
  async resolve(task: string, options: SessionResolveOptions = {}): Promise<ResolveResult & { contextId: string }> {
    return this.resolveInternal(task, options, true)
  }

  private async resolveInternal(task: string, options: SessionResolveOptions, log: boolean): Promise<ResolveResult & { contextId: string }> {
    const names = options.packs ?? [...this.activations.keys()]
    const packs = names.map((name) => this.pack(name))
    const result = await resolveContext({
      task,
      packs,
      budget: options.budget ?? DEFAULT_BUDGET,
      ...(options.grounding ? { grounding: options.grounding } : {}),
      ...(options.intent ? { intent: options.intent } : {}),
      confirmed: [...this.confirmedNames],
      cache: this.cache,
      ...(this.options.embedder ? { embedder: this.options.embedder } : {}),
      logger: this.logger,
    })
    const id = `ctx-${++this.counter}`
    this.contextList.push({
      id,
      task,
      packs: [...names],
      budget: result.budget,
      ...(options.grounding ? { grounding: options.grounding } : {}),
      intent: result.intent,
      result,
      hash: sha256(result.context),
      stale: false,
    })
    if (log && this.options.usageLog) await this.options.usageLog.record(result, packs)
    return { ...result, contextId: id }
  }

  /** Every file whose content entered the context: active guides and selected sections. */
  async loadedFiles(): Promise<LoadedFileRecord[]> {
    const records = new Map<string, LoadedFileRecord>()
    const base = async (pack: LoadedPack): Promise<Omit<LoadedFileRecord, 'path' | 'hash'>> => {
      const index = await this.cache.peek(pack)
      return {
        pack: pack.item.name,
        ...(pack.item.version ? { version: pack.item.version } : {}),
        profile: pack.item.profile ?? 'wiki-first',
        runtime_mode: pack.item.runtime?.mode ?? 'data',
        ...(index?.evidence.sourceMapHash ? { source_map: index.evidence.sourceMapHash } : {}),
      }
    }
    for (const activation of this.activations.values()) {
      const pack = this.available.get(activation.name)
      if (!pack) continue
      records.set(`${pack.item.name}\u0000KNOWLEDGE.md`, { ...(await base(pack)), path: 'KNOWLEDGE.md', hash: activation.contentHash })
    }
    for (const context of this.contextList) {
      for (const resolution of context.result.packs) {
        const pack = this.available.get(resolution.pack)
        if (!pack) continue
        for (const piece of resolution.pieces) {
          records.set(`${pack.item.name}\u0000${piece.path}`, { ...(await base(pack)), path: piece.path, hash: piece.fileHash })
        }
      }
    }
    return [...records.values()]
  }

  /**
   * Re-reads active packs and re-checks indexed files. Changed guides are
   * reloaded; contexts that used a changed pack are marked stale (resolve
   * again to get fresh context).
   */
  async refresh(): Promise<RefreshReport> {
    const report: RefreshReport = { changedPacks: [], changedFiles: [], staleContexts: [], lostPacks: [], needsConfirmation: [] }
    const touched = new Set<string>([...this.activations.keys(), ...this.contextList.flatMap((c) => c.packs)])
    const changedNames = new Set<string>()
    for (const name of touched) {
      const pack = this.available.get(name)
      if (!pack) continue
      const reloaded = await loadPack(pack.item.packRoot, { scope: pack.item.scope, ...this.loadOptions })
      if (!reloaded.ok || reloaded.pack.item.name !== name) {
        report.lostPacks.push(name)
        changedNames.add(name)
        continue
      }
      let changed = false
      if (reloaded.pack.contentHash !== pack.contentHash) {
        report.changedPacks.push(name)
        changed = true
      }
      const index = await this.cache.peek(pack)
      const files = index ? await index.changedFiles() : []
      for (const path of files) report.changedFiles.push({ pack: name, path })
      if (files.length > 0) changed = true
      if (changed) {
        changedNames.add(name)
        this.cache.invalidate(pack)
        this.available.set(name, reloaded.pack)
        const activation = this.activations.get(name)
        if (activation) {
          try {
            this.activations.set(name, await activatePack(reloaded.pack, { mode: activation.mode, confirm: this.confirmedNames.has(name) }))
          } catch (error) {
            if (!isKnowHubError(error, 'confirmation_required')) throw error
            this.activations.delete(name)
            report.needsConfirmation.push(name)
          }
        }
      }
    }
    for (const context of this.contextList) {
      if (!context.stale && context.packs.some((name) => changedNames.has(name))) {
        context.stale = true
        report.staleContexts.push(context.id)
      }
    }
    this.logger.info('packs.session.refreshed', { changed: report.changedPacks.length, files: report.changedFiles.length, stale: report.staleContexts.length })
    return report
  }

  /** A serialisable state: active guides and the inputs and hashes of every context. */
  snapshot(): SessionSnapshot {
    return {
      version: 1,
      activations: [...this.activations.values()].map((a) => ({ name: a.name, location: a.location, contentHash: a.contentHash, mode: a.mode })),
      confirmed: [...this.confirmedNames].sort(),
      contexts: this.contextList.map((c) => ({
        id: c.id,
        task: c.task,
        packs: c.packs,
        budget: c.budget,
        ...(c.grounding ? { grounding: c.grounding } : {}),
        intent: c.intent,
        hash: c.hash,
        files: c.result.packs.flatMap((r) => r.pieces.map((p) => ({ pack: r.pack, path: p.path, hash: p.fileHash }))),
      })),
    }
  }

  /**
   * Rebuilds a session from a snapshot: re-activates the guides and re-resolves
   * every context with the same inputs. Unchanged files give byte-identical
   * context; changed ones are reported and their contexts marked stale.
   */
  static async restore(input: unknown, options: PackSessionOptions): Promise<{ session: PackSession; report: RestoreReport }> {
    const snapshot = parseWith(SessionSnapshot, input, 'session snapshot')
    const session = new PackSession(options)
    const report: RestoreReport = { guides: [], changedGuides: [], contexts: [], staleContexts: [], lostPacks: [] }
    for (const name of snapshot.confirmed) if (session.available.has(name)) session.confirmedNames.add(name)
    for (const saved of snapshot.activations) {
      const pack = session.available.get(saved.name)
      if (!pack) {
        report.lostPacks.push(saved.name)
        continue
      }
      await session.activate(saved.name, { mode: saved.mode })
      if (pack.contentHash === saved.contentHash) report.guides.push(saved.name)
      else report.changedGuides.push(saved.name)
    }
    for (const saved of snapshot.contexts) {
      const lost = saved.packs.filter((name) => !session.available.has(name))
      if (lost.length > 0) {
        report.lostPacks.push(...lost.filter((name) => !report.lostPacks.includes(name)))
        report.staleContexts.push(saved.id)
        continue
      }
      await session.resolveInternal(
        saved.task,
        { packs: saved.packs, budget: saved.budget, ...(saved.grounding ? { grounding: saved.grounding } : {}), intent: saved.intent },
        false,
      )
      const context = session.contextList[session.contextList.length - 1]
      if (!context) continue
      context.id = saved.id
      if (context.hash === saved.hash) {
        report.contexts.push(saved.id)
      } else {
        context.stale = true
        report.staleContexts.push(saved.id)
      }
    }
    session.counter = Math.max(session.counter, ...snapshot.contexts.map((c) => Number(/^ctx-(\d+)$/u.exec(c.id)?.[1] ?? 0)))
    return { session, report }
  }
}
