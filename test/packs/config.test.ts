import { homedir } from 'node:os'
import { delimiter, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/cli/config.js'
import { packDiscoveryOptions, packUsageLog } from '../../src/packs/discover/options.js'

/** The test's own folder and home, as the CLI passes its own. */
const HERE = { cwd: process.cwd(), home: homedir() }
import { PacksConfig } from '../../src/core/config.js'
import { DiscoverOptions } from '../../src/packs/index.js'

describe('the packs section of the configuration', () => {
  it('defaults to what discovery does without it', () => {
    const config = PacksConfig.parse({})
    const discovery = DiscoverOptions.parse({})
    expect(config).toEqual({
      paths: [],
      allowedTypes: [],
      clientName: discovery.clientName,
      maxDepth: discovery.maxDepth,
      maxDirs: discovery.maxDirs,
      respectGitignore: discovery.respectGitignore,
      useRunsDir: false,
      requireApproval: false,
      access: [],
    })
    expect(loadConfig({}).packs).toEqual(config)
    expect(DiscoverOptions.parse(packDiscoveryOptions({ project: '/p', user: false }, config, HERE))).toEqual(
      DiscoverOptions.parse(packDiscoveryOptions({ project: '/p', user: false }, {}, HERE)),
    )
  })

  it('merges with the flags: flags win, folders and types add up (flags first), KNOWHUB_PACK_PATHS before the file', () => {
    const config = PacksConfig.parse({
      paths: ['/cfg/a', '/shared'],
      allowedTypes: ['x'],
      clientName: 'acme',
      maxDepth: 3,
      maxDirs: 50,
      respectGitignore: true,
      builtinDir: '/cfg/builtin',
    })
    const merged = packDiscoveryOptions(
      { project: '/p', user: false, path: ['/flag', '/shared'], allowType: ['y', 'x'], client: 'knowhub', maxDepth: 9, gitignore: false },
      config,
      HERE,
    )
    expect(merged).toMatchObject({
      clientName: 'knowhub',
      extraPaths: ['/flag', '/shared', '/cfg/a'],
      allowedTypes: ['y', 'x'],
      maxDepth: 9,
      maxDirs: 50,
      respectGitignore: false,
      builtinDir: '/cfg/builtin',
    })
    expect(packDiscoveryOptions({ builtin: 'b' }, config, HERE).builtinDir).toBe(resolve('b'))
    expect(loadConfig({ KNOWHUB_PACK_PATHS: ['/env/one', '/env/two'].join(delimiter) }).packs.paths).toEqual(['/env/one', '/env/two'])
    expect(packUsageLog({}, PacksConfig.parse({ logDir: 'logs', useRunsDir: true }), HERE.cwd)).toEqual({ dir: resolve('logs'), packRuns: true })
    expect(packUsageLog({ logDir: '/flag-logs', logPackRuns: false }, PacksConfig.parse({ logDir: 'logs', useRunsDir: true }), HERE.cwd)).toEqual({
      dir: '/flag-logs',
      packRuns: false,
    })
  })

  it('reads who sees which pack roots from packs.access and KNOWHUB_PACK_ACCESS (before the file), refusing a malformed value in words', () => {
    const env = { KNOWHUB_PACK_ACCESS: '/srv/packs/acme=org:acme, user:bob ; /srv/packs/ops=team:ops' }
    expect(loadConfig(env).packs.access).toEqual([
      { root: '/srv/packs/acme', allow: ['org:acme', 'user:bob'] },
      { root: '/srv/packs/ops', allow: ['team:ops'] },
    ])
    expect(() => loadConfig({ KNOWHUB_PACK_ACCESS: '/srv/packs/acme' })).toThrow(/KNOWHUB_PACK_ACCESS: "\/srv\/packs\/acme" is not ROOT=SCOPE/)
    expect(() => loadConfig({ KNOWHUB_PACK_ACCESS: '/srv/packs/acme=acme' })).toThrow(/scope must be public or kind:id/)
    expect(() => PacksConfig.parse({ access: [{ root: '/x', allow: ['org:a'], permission: 'owner' }] })).toThrow()
  })
})
