/**
 * The packs service as the composition root builds it: discovery from the
 * caller's flags over the `packs` config, one long-lived pack index cache,
 * the knowledge search's embedder, and the usage log a caller asks for.
 * `openKnowHub` builds it as `hub.packs`; commands that need packs but no
 * database (`knowhub packs …`, `knowhub mcp --url`) call it on their own.
 */
import { homedir } from 'node:os'
import type { Clock } from '../core/clock.js'
import type { KnowHubConfig } from '../core/config.js'
import type { Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import { resolveAccessRules } from '../packs/access/access.js'
import { packDiscoveryOptions, packUsageLog, type PackFlags } from '../packs/discover/options.js'
import { join, resolve } from 'node:path'
import { createPackService, type PackService } from '../packs/service.js'
import { PackStateStore } from '../packs/access/state.js'
import { toolPackIndexCache } from '../tools/packs.js'

/** How to find packs: discovery flags over the `packs` config, or `false` for no packs at all. */
export type PackSource = PackFlags | false

/** Options of {@link openPacks}. */
export interface OpenPacksOptions {
  /** Discovery flags (default: the current folder and your home, as the config says); `false`: no packs. */
  source?: PackSource
  /** Usage records of resolves: `--log-dir` / `--log-pack-runs` over `packs.logDir` / `packs.useRunsDir` (default: none). */
  usageLog?: { logDir?: string; logPackRuns?: boolean }
  /** Blended into resolution. */
  embedder?: Embedder
  logger?: Logger
  clock?: Clock
  /** The folder relative paths and the default project resolve from (default: the process's). */
  cwd?: string
  /** The user's home folder, scanned for user packs (default: the process user's). */
  home?: string
}

/**
 * Builds the packs service for a configuration. Discovery happens on first use
 * (or `discover()`), so building it costs nothing.
 * @example
 * const packs = openPacks(config, { source: { project: '.', user: false } })
 * const { items } = await packs.catalog()
 */
export function openPacks(config: KnowHubConfig, options: OpenPacksOptions = {}): PackService {
  const shared = {
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  }
  if (options.source === false) return createPackService({ packs: [], ...shared })
  const places = { cwd: options.cwd ?? process.cwd(), home: options.home ?? homedir() }
  return createPackService({
    discovery: packDiscoveryOptions(options.source ?? {}, config.packs, places),
    // Enable/disable and approvals persist in the state folder; the trust gate is on when the config asks for it.
    state: PackStateStore.open(resolve(config.packs.stateFile ?? join(config.dataDir, 'packs-state.json'))),
    ...(config.packs.requireApproval ? { trustGate: { scopes: ['project'] } } : {}),
    indexCache: toolPackIndexCache(options.logger),
    ...(options.usageLog ? { usageLog: packUsageLog(options.usageLog, config.packs, places.cwd) } : {}),
    // Who sees which pack roots through the server (remote callers: `packs.forCaller(principal)`).
    access: resolveAccessRules(config.packs.access, places.cwd),
    ...shared,
  })
}
