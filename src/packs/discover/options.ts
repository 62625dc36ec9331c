/**
 * Where to look for packs: the discovery flags of `knowhub packs`, `knowhub mcp`
 * and `knowhub start` (or a library caller's choices) merged with the `packs`
 * section of the configuration (flags win) into discovery options. The
 * composition root (src/app/packs.ts) builds the packs service from these.
 */
import { resolve as resolvePath } from 'node:path'
import type { PacksConfig } from '../../core/config.js'
import type { DiscoverOptions } from './discover.js'

/** Pack-discovery flags as commander parses them (undefined: not given). */
export interface PackFlags {
  project?: string
  home?: string
  /** `--no-user` sets false. */
  user?: boolean
  client?: string
  path?: string[]
  builtin?: string
  includeArchived?: boolean
  allowType?: string[]
  maxDepth?: number
  maxDirs?: number
  /** `--gitignore` true, `--no-gitignore` false. */
  gitignore?: boolean
}

/** Where the caller stands: relative paths resolve from `cwd`; `home` is the user's home folder. */
export interface PackPlaces {
  cwd: string
  home: string
}

/**
 * Discovery options from the flags and the `packs` config: project = the caller's
 * folder unless `--project`, user = the home folder unless `--no-user`. A flag wins over
 * the config; extra folders and allowed types add up (flags' folders first, so they
 * take precedence). Paths are resolved from `places.cwd`.
 * @example
 * const found = await discoverPacks(packDiscoveryOptions({ project: '.', user: false }, config.packs, { cwd: '/repo', home: '/home/me' }))
 */
export function packDiscoveryOptions(flags: PackFlags, config: Partial<PacksConfig>, places: PackPlaces): DiscoverOptions {
  const resolve = (path: string) => resolvePath(places.cwd, path)
  const extraPaths = [...new Set([...(flags.path ?? []), ...(config.paths ?? [])].map((p) => resolve(p)))]
  const allowedTypes = [...new Set([...(flags.allowType ?? []), ...(config.allowedTypes ?? [])])]
  const builtin = flags.builtin ?? config.builtinDir
  const maxDepth = flags.maxDepth ?? config.maxDepth
  const maxDirs = flags.maxDirs ?? config.maxDirs
  const gitignore = flags.gitignore ?? config.respectGitignore
  return {
    projectDir: resolve(flags.project ?? places.cwd),
    ...(flags.user === false ? {} : { homeDir: flags.home ?? places.home }),
    clientName: flags.client ?? config.clientName ?? 'knowhub',
    extraPaths,
    ...(builtin ? { builtinDir: resolve(builtin) } : {}),
    ...(flags.includeArchived === undefined ? {} : { includeArchived: flags.includeArchived }),
    ...(allowedTypes.length > 0 ? { allowedTypes } : {}),
    ...(maxDepth === undefined ? {} : { maxDepth }),
    ...(maxDirs === undefined ? {} : { maxDirs }),
    ...(gitignore === undefined ? {} : { respectGitignore: gitignore }),
  }
}

/**
 * Usage-log settings of `knowhub packs resolve`: `--log-dir` / `--log-pack-runs`
 * win over `packs.logDir` / `packs.useRunsDir`.
 * @example
 * const { dir, packRuns } = packUsageLog({ logDir: opts.logDir }, config.packs, '/repo')
 */
export function packUsageLog(
  flags: { logDir?: string; logPackRuns?: boolean },
  config: Partial<PacksConfig>,
  cwd: string,
): { dir?: string; packRuns: boolean } {
  const dir = flags.logDir ?? config.logDir
  return { ...(dir ? { dir: resolvePath(cwd, dir) } : {}), packRuns: flags.logPackRuns ?? config.useRunsDir ?? false }
}
