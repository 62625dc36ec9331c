import { execFileSync } from 'node:child_process'
import { chmod, mkdir, rename, symlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { catalogItems, scanLocations } from '../../src/packs/discover/discover.js'
import { KnowledgeParseCache, discoverPacks, findPack } from '../../src/packs/index.js'
import { SCOPES, knowledge, tempDir, writeTree } from './helpers.js'

const scopes = {
  projectDir: join(SCOPES, 'project'),
  homeDir: join(SCOPES, 'home'),
  extraPaths: [join(SCOPES, 'extra')],
  builtinDir: join(SCOPES, 'builtin'),
}

describe('discovery scopes and precedence', () => {
  it('scans project, user, extra and built-in locations, client-native and .agents', () => {
    const paths = scanLocations({ ...scopes, clientName: 'acme' }).map((l) => `${l.scope}:${l.path.slice(SCOPES.length)}`)
    expect(paths).toEqual([
      'project:/project/.acme/knowledge',
      'project:/project/.agents/knowledge',
      'user:/home/.acme/knowledge',
      'user:/home/.agents/knowledge',
      'extra:/extra',
      'builtin:/builtin',
    ])
  })

  it('finds every fixture pack once, in precedence order, and records each shadowed pack', async () => {
    const found = await discoverPacks(scopes)
    const names = found.packs.map((p) => `${p.item.scope}:${p.item.name}`)
    expect(names).toEqual([
      'project:client-notes',
      'project:acme-product-brief',
      'project:founder-persona',
      'project:hybrid-support-ops',
      'project:research-wiki-zh',
      'project:shared-glossary',
      'project:nested-notes',
      'user:user-style-notes',
      'extra:extra-campaign',
      'builtin:builtin-help',
    ])
    expect(findPack(found, 'shared-glossary')?.item.description).toContain('project copy')
    expect(found.shadowed.map((s) => `${s.kept.scope}>${s.shadowed.scope}`)).toEqual(['project>user', 'project>builtin'])
    expect(found.shadowed[0]?.shadowed.location).toBe(join(SCOPES, 'home/.agents/knowledge/shared-glossary/KNOWLEDGE.md'))
    expect(found.diagnostics.filter((d) => d.code === 'shadowed')).toHaveLength(2)
  })

  it('lists every location scanned, including missing ones', async () => {
    const found = await discoverPacks(scopes)
    expect(found.locations).toHaveLength(6)
    const missing = found.locations.find((l) => l.path.endsWith('home/.knowhub/knowledge'))
    expect(missing).toMatchObject({ exists: false, scope: 'user' })
    expect(found.diagnostics).toContainEqual(expect.objectContaining({ code: 'location_missing', path: missing?.path }))
    const project = found.locations.find((l) => l.path.endsWith('project/.agents/knowledge'))
    expect(project).toMatchObject({ exists: true, packsFound: 6 })
  })

  it('user beats extra beats built-in when project has no such pack', async () => {
    const found = await discoverPacks({ homeDir: scopes.homeDir, builtinDir: scopes.builtinDir })
    expect(findPack(found, 'shared-glossary')?.item.scope).toBe('user')
    const onlyBuiltin = await discoverPacks({ builtinDir: scopes.builtinDir })
    expect(findPack(onlyBuiltin, 'shared-glossary')?.item.scope).toBe('builtin')
  })

  it('client-native beats .agents within the same scope', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        '.agents/knowledge/same/KNOWLEDGE.md': knowledge({ name: 'same', description: 'agents copy' }),
        '.acme/knowledge/same/KNOWLEDGE.md': knowledge({ name: 'same', description: 'client copy' }),
      })
      const found = await discoverPacks({ projectDir: dir, clientName: 'acme' })
      expect(found.packs.map((p) => p.item.description)).toEqual(['client copy'])
      expect(found.shadowed).toHaveLength(1)
    } finally {
      await cleanup()
    }
  })

  it('hides archived packs unless asked, and reports rejected ones', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'old/KNOWLEDGE.md': knowledge({ name: 'old', status: 'archived' }),
        'broken/KNOWLEDGE.md': '---\nname: [\n---\n',
        'nodesc/KNOWLEDGE.md': knowledge({ name: 'nodesc', description: undefined }),
      })
      const hidden = await discoverPacks({ extraPaths: [dir] })
      expect(catalogItems(hidden)).toEqual([])
      expect(hidden.archived.map((p) => p.item.name)).toEqual(['old'])
      expect(hidden.rejected.map((r) => `${r.outcome}:${r.packRoot.slice(dir.length + 1)}`).sort()).toEqual(['quarantined:broken', 'skipped:nodesc'])
      const shown = await discoverPacks({ extraPaths: [dir], includeArchived: true })
      expect(catalogItems(shown).map((i) => i.name)).toEqual(['old'])
    } finally {
      await cleanup()
    }
  })

  it('an archived pack claims no name: an archived project pack does not shadow a ready user pack', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'project/.agents/knowledge/x/KNOWLEDGE.md': knowledge({ name: 'x', status: 'archived', description: 'old project copy' }),
        'home/.agents/knowledge/x/KNOWLEDGE.md': knowledge({ name: 'x', description: 'current user copy' }),
      })
      const options = { projectDir: join(dir, 'project'), homeDir: join(dir, 'home') }
      const found = await discoverPacks(options)
      expect(found.packs.map((p) => `${p.item.name}:${p.item.scope}:${p.item.description}`)).toEqual(['x:user:current user copy'])
      expect(found.archived.map((p) => `${p.item.name}:${p.item.scope}`)).toEqual(['x:project'])
      expect(found.shadowed).toEqual([])
      expect(found.diagnostics).toContainEqual(
        expect.objectContaining({ code: 'archived', severity: 'info', path: join(dir, 'project/.agents/knowledge/x/KNOWLEDGE.md') }),
      )
      expect(findPack(found, 'x')?.item.scope).toBe('user')
      // Asked for, archived packs take part in precedence like any other.
      const all = await discoverPacks({ ...options, includeArchived: true })
      expect(all.packs.map((p) => `${p.item.name}:${p.item.scope}`)).toEqual(['x:project'])
      expect(all.shadowed).toEqual([
        expect.objectContaining({ name: 'x', kept: expect.objectContaining({ scope: 'project' }), shadowed: expect.objectContaining({ scope: 'user' }) }),
      ])
    } finally {
      await cleanup()
    }
  })

  it('ignores SKILL.md folders (Agent Skills) and finds a pack given directly as a path', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'skill/SKILL.md': '---\nname: skill\ndescription: d\n---\n', 'direct/KNOWLEDGE.md': knowledge({ name: 'direct' }) })
      expect((await discoverPacks({ extraPaths: [dir] })).packs.map((p) => p.item.name)).toEqual(['direct'])
      expect((await discoverPacks({ extraPaths: [join(dir, 'direct')] })).packs.map((p) => p.item.name)).toEqual(['direct'])
      // The real Agent Skills corpus in ../shared (beside the repository): skills are not packs.
      const corpus = await discoverPacks({ extraPaths: [fileURLToPath(new URL('../../../shared/corpus/packs', import.meta.url))] })
      expect(corpus.locations[0]?.exists).toBe(true)
      expect(corpus.packs).toEqual([])
      expect(corpus.rejected).toEqual([])
    } finally {
      await cleanup()
    }
  })
})

describe('discovery parse cache', () => {
  it('reuses parses of unchanged files, re-reads changed ones, and hands out independent copies', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'a/KNOWLEDGE.md': knowledge({ name: 'a', description: 'first' }),
        'b/KNOWLEDGE.md': knowledge({ name: 'b', profile: 'document-first' }),
      })
      const cache = new KnowledgeParseCache()
      const first = await discoverPacks({ extraPaths: [dir] }, undefined, { cache })
      expect(cache.size).toBe(2)
      first.packs[0]!.item.description = 'mutated by a caller'
      const second = await discoverPacks({ extraPaths: [dir] }, undefined, { cache })
      expect(findPack(second, 'a')?.item.description).toBe('first')
      expect(findPack(second, 'b')?.issues.map((i) => i.code)).toEqual(findPack(first, 'b')?.issues.map((i) => i.code))
      await writeFile(join(dir, 'a', 'KNOWLEDGE.md'), knowledge({ name: 'a', description: 'second' }))
      await utimes(join(dir, 'a', 'KNOWLEDGE.md'), new Date(), new Date(Date.now() + 5000))
      const third = await discoverPacks({ extraPaths: [dir] }, undefined, { cache })
      expect(findPack(third, 'a')?.item.description).toBe('second')
      expect(findPack(third, 'a')?.contentHash).not.toBe(findPack(first, 'a')?.contentHash)
    } finally {
      await cleanup()
    }
  })
})

describe('discovery skips and limits', () => {
  it('skips .git, node_modules, build output, hidden caches and indexes/', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const files: Record<string, string> = { 'good/KNOWLEDGE.md': knowledge({ name: 'good' }) }
      for (const skipped of ['.git', 'node_modules', 'dist', 'build', '.cache', 'indexes', 'coverage']) {
        files[`${skipped}/p-${skipped.replace('.', '')}/KNOWLEDGE.md`] = knowledge({ name: `p-${skipped.replace('.', '')}` })
      }
      await writeTree(dir, files)
      const found = await discoverPacks({ extraPaths: [dir] })
      expect(found.packs.map((p) => p.item.name)).toEqual(['good'])
      expect(found.locations[0]?.skippedDirs).toBe(7)
    } finally {
      await cleanup()
    }
  })

  it('honours .gitignore from the project folder down, only when asked', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        '.gitignore': '.agents/knowledge/private-*/\n',
        '.agents/knowledge/.gitignore': 'drafts/\n!drafts/keep/\n',
        '.agents/knowledge/public/KNOWLEDGE.md': knowledge({ name: 'public' }),
        '.agents/knowledge/private-notes/KNOWLEDGE.md': knowledge({ name: 'private-notes' }),
        '.agents/knowledge/drafts/wip/KNOWLEDGE.md': knowledge({ name: 'wip' }),
      })
      const plain = await discoverPacks({ projectDir: dir })
      expect(plain.packs.map((p) => p.item.name).sort()).toEqual(['private-notes', 'public', 'wip'])
      const ignored = await discoverPacks({ projectDir: dir, respectGitignore: true })
      expect(ignored.packs.map((p) => p.item.name)).toEqual(['public'])
    } finally {
      await cleanup()
    }
  })

  it('bounds depth and folder count, with diagnostics', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const files: Record<string, string> = { 'a/b/c/d/deep/KNOWLEDGE.md': knowledge({ name: 'deep' }) }
      for (let i = 0; i < 30; i++) files[`many/p${String(i).padStart(2, '0')}/KNOWLEDGE.md`] = knowledge({ name: `p${String(i).padStart(2, '0')}` })
      await writeTree(dir, files)
      const shallow = await discoverPacks({ extraPaths: [dir], maxDepth: 3 })
      expect(findPack(shallow, 'deep')).toBeUndefined()
      expect(shallow.diagnostics).toContainEqual(expect.objectContaining({ code: 'depth_limit' }))
      expect(shallow.locations[0]?.limited).toBe('depth')
      const deep = await discoverPacks({ extraPaths: [dir], maxDepth: 5 })
      expect(findPack(deep, 'deep')).toBeDefined()
      const capped = await discoverPacks({ extraPaths: [dir], maxDirs: 10 })
      expect(capped.locations[0]).toMatchObject({ dirsScanned: 10, limited: 'dirs' })
      expect(capped.diagnostics).toContainEqual(expect.objectContaining({ code: 'dir_limit', severity: 'warning' }))
      expect(capped.packs.length).toBeLessThan(30)
    } finally {
      await cleanup()
    }
  })
})

describe('discovery never crashes on hostile trees', () => {
  it('reports a symlink to an enclosing folder and a symlink cycle as loops', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'ok/KNOWLEDGE.md': knowledge({ name: 'ok' }) })
      await mkdir(join(dir, 'nest'))
      await symlink(dir, join(dir, 'nest', 'up'))
      await symlink(join(dir, 'cycle-b'), join(dir, 'cycle-a'))
      await symlink(join(dir, 'cycle-a'), join(dir, 'cycle-b'))
      await symlink(join(dir, 'nowhere'), join(dir, 'dangling'))
      const found = await discoverPacks({ extraPaths: [dir] })
      expect(found.packs.map((p) => p.item.name)).toEqual(['ok'])
      const loops = found.diagnostics
        .filter((d) => d.code === 'symlink_loop')
        .map((d) => d.path?.slice(dir.length + 1))
        .sort()
      expect(loops).toEqual(['cycle-a', 'cycle-b', 'nest/up'])
      expect(found.diagnostics).toContainEqual(expect.objectContaining({ code: 'broken_symlink', path: join(dir, 'dangling') }))
    } finally {
      await cleanup()
    }
  })

  it('follows a symlinked pack folder but counts a pack reachable twice once', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'real/pack/KNOWLEDGE.md': knowledge({ name: 'pack' }) })
      await mkdir(join(dir, 'links'))
      await symlink(join(dir, 'real', 'pack'), join(dir, 'links', 'pack'))
      const found = await discoverPacks({ extraPaths: [join(dir, 'real'), join(dir, 'links')] })
      expect(found.packs).toHaveLength(1)
      expect(found.shadowed).toEqual([])
      expect(found.diagnostics).toContainEqual(expect.objectContaining({ code: 'duplicate' }))
    } finally {
      await cleanup()
    }
  })

  it('quarantines a KNOWLEDGE.md that is a folder, a FIFO, or a symlink out of the pack', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'outside.md': knowledge({ name: 'escape' }), 'dir-pack/KNOWLEDGE.md/x': 'x' })
      await mkdir(join(dir, 'fifo-pack'))
      execFileSync('mkfifo', [join(dir, 'fifo-pack', 'KNOWLEDGE.md')])
      await mkdir(join(dir, 'escape'))
      await symlink(join(dir, 'outside.md'), join(dir, 'escape', 'KNOWLEDGE.md'))
      const found = await discoverPacks({ extraPaths: [dir] })
      expect(found.packs).toEqual([])
      const byFolder = Object.fromEntries(found.rejected.map((r) => [r.packRoot.slice(dir.length + 1), r.issues[0]?.code]))
      expect(byFolder).toEqual({ 'dir-pack': 'not_a_file', 'fifo-pack': 'not_a_file', escape: 'path_escape' })
    } finally {
      await cleanup()
    }
  })

  it('turns a folder the OS refuses to read (path too long) into a diagnostic', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      // Build short nested names, then rename bottom-up to 250-character names: every
      // rename uses a short path, but the final tree's paths exceed PATH_MAX (4096).
      const levels = 18
      let path = join(dir, 'deep')
      const chain: string[] = []
      for (let i = 0; i < levels; i++) {
        path = join(path, `d${i}`)
        chain.push(path)
      }
      await mkdir(path, { recursive: true })
      for (let i = chain.length - 1; i >= 0; i--) {
        const current = chain[i] as string
        await rename(current, join(current, '..', `${String(i).padStart(2, '0')}${'x'.repeat(248)}`))
      }
      await writeTree(dir, { 'ok/KNOWLEDGE.md': knowledge({ name: 'ok' }) })
      const found = await discoverPacks({ extraPaths: [dir], maxDepth: 40 })
      expect(found.packs.map((p) => p.item.name)).toEqual(['ok'])
      expect(found.diagnostics).toContainEqual(
        expect.objectContaining({ code: 'unreadable', severity: 'warning', message: expect.stringContaining('ENAMETOOLONG') }),
      )
    } finally {
      // rm cannot delete paths over PATH_MAX: shorten the names top-down first.
      let parent = join(dir, 'deep')
      for (let i = 0; i < 18; i++) {
        const long = join(parent, `${String(i).padStart(2, '0')}${'x'.repeat(248)}`)
        const short = join(parent, `s${i}`)
        await rename(long, short).catch(() => undefined)
        parent = short
      }
      await cleanup()
    }
  })

  // Root reads everything, so as root the check runs in a child process without capabilities (setpriv).
  it('turns a permission-denied folder into a diagnostic', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, {
        'packs/ok/KNOWLEDGE.md': knowledge({ name: 'ok' }),
        'packs/locked/inner/KNOWLEDGE.md': knowledge({ name: 'inner' }),
        'probe.mts': `import { discoverPacks } from ${JSON.stringify(new URL('../../src/packs/index.js', import.meta.url).pathname)}\nconst found = await discoverPacks({ extraPaths: [process.argv[2]] })\nconsole.log(JSON.stringify({ packs: found.packs.map((p) => p.item.name), diagnostics: found.diagnostics }))\n`,
      })
      await chmod(dir, 0o755)
      await chmod(join(dir, 'packs'), 0o755)
      await chmod(join(dir, 'packs', 'locked'), 0o000)
      let found: { packs: string[]; diagnostics: { code: string; message: string; path?: string }[] }
      if (process.getuid?.() === 0) {
        // Root ignores permission bits only through its capabilities: run the probe as root without any.
        const tsx = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname
        const output = execFileSync('setpriv', ['--inh-caps=-all', '--bounding-set=-all', '--', tsx, join(dir, 'probe.mts'), join(dir, 'packs')], {
          encoding: 'utf8',
        })
        found = JSON.parse(output.trim().split('\n').pop() ?? '{}') as typeof found
      } else {
        const result = await discoverPacks({ extraPaths: [join(dir, 'packs')] })
        found = { packs: result.packs.map((p) => p.item.name), diagnostics: result.diagnostics }
      }
      expect(found.packs).toEqual(['ok'])
      expect(found.diagnostics).toContainEqual(
        expect.objectContaining({ code: 'unreadable', path: join(dir, 'packs', 'locked'), message: expect.stringContaining('EACCES') }),
      )
      await chmod(join(dir, 'packs', 'locked'), 0o755)
    } finally {
      await cleanup()
    }
  }, 60_000)

  it('reports a location that is a file, and rejects a bad client name', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await writeTree(dir, { 'file.txt': 'x' })
      const found = await discoverPacks({ extraPaths: [join(dir, 'file.txt')] })
      expect(found.diagnostics).toContainEqual(expect.objectContaining({ code: 'not_a_directory' }))
      await expect(discoverPacks({ projectDir: dir, clientName: '../evil' })).rejects.toThrow(/clientName/)
    } finally {
      await cleanup()
    }
  })
})
