/**
 * The pack-discovery flags shared by `knowhub packs`, `knowhub mcp` and
 * `knowhub start`, turned into discovery options.
 */
import { homedir } from 'node:os'
import { resolve } from 'node:path'
import type { DiscoverOptions } from '../packs/discover.js'

/** Pack-discovery flags as commander parses them. */
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
  gitignore?: boolean
}

/**
 * Discovery options from the flags: project = the current folder unless `--project`,
 * user = your home unless `--no-user`, client-native folder `.knowhub/knowledge`.
 * @example
 * const found = await discoverPacks(packDiscoveryOptions({ project: '.', user: false }))
 */
export function packDiscoveryOptions(flags: PackFlags): DiscoverOptions {
  return {
    projectDir: resolve(flags.project ?? process.cwd()),
    ...(flags.user === false ? {} : { homeDir: flags.home ?? homedir() }),
    clientName: flags.client ?? 'knowhub',
    extraPaths: (flags.path ?? []).map((p) => resolve(p)),
    ...(flags.builtin ? { builtinDir: resolve(flags.builtin) } : {}),
    ...(flags.includeArchived === undefined ? {} : { includeArchived: flags.includeArchived }),
    ...(flags.allowType === undefined ? {} : { allowedTypes: flags.allowType }),
    ...(flags.maxDepth === undefined ? {} : { maxDepth: flags.maxDepth }),
    ...(flags.maxDirs === undefined ? {} : { maxDirs: flags.maxDirs }),
    ...(flags.gitignore === undefined ? {} : { respectGitignore: flags.gitignore }),
  }
}
