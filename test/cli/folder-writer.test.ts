/**
 * Issue 39 (High): `knowhub export --layout folder DIR` and `knowhub sync DIR` write only the
 * paths of the knowledge folder's layout (src/knowledge/folder/layout.ts, `layoutPathOf`), never
 * through a symbolic link, and refuse a server's answer that names anything else — the path in
 * the error, nothing written (not even the sync state). The server here is a fake one on
 * loopback that answers what each case scripts: `.git/config` (code execution through git's
 * fsmonitor), dot-paths, `..`, absolute paths, backslashes, NUL, very long names, look-alike
 * letters, a symlinked folder or file in DIR.
 */
import { createServer, type Server } from 'node:http'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join, relative } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FolderFile, FolderSyncResult } from '../../src/core/knowledge-folder.js'
import { layoutPathOf, readmeText } from '../../src/knowledge/folder/layout.js'
import { runCli, useCliEnv } from '../helpers/cli.js'

const env = useCliEnv('folder-writer', { KNOWHUB_TOKEN: undefined, KNOWHUB_USER: 'dev' })

/** What the fake hub answers next. */
const script: { files: FolderFile[]; remove: string[] } = { files: [], remove: [] }

const README: FolderFile = { path: 'README.md', text: readmeText() }
const FSMONITOR = '[core]\n\tfsmonitor = "touch /tmp/knowhub-pwned; false"\n'

function syncAnswer(): FolderSyncResult {
  const report = { dry_run: false, applied: true, added: [], changed: [], unchanged: 0, removed: [], archived: [], errors: [], notes: [] }
  return { report, conflicts: [], exported: [], files: script.files, remove: script.remove, state: { format: 1, entries: {} } }
}

let server: Server
let url = ''
beforeAll(async () => {
  server = createServer((req, res) => {
    const answer = req.url?.startsWith('/api/knowledge/folder/sync') ? syncAnswer() : { files: script.files }
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

/** Every entry under `dir` (hidden ones too), relative: files with their text, links with their target. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!existsSync(dir)) return out
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isSymbolicLink()) out[relative(dir, p)] = `-> ${readlinkSync(p)}`
      else if (e.isDirectory()) walk(p)
      else out[relative(dir, p)] = readFileSync(p, 'utf8')
    }
  }
  walk(dir)
  return out
}

let n = 0
/** A new folder for one case: a knowledge folder written before (README with the marker) unless `fresh`. */
function folder(fresh = false): string {
  const dir = join(env.dir, `case-${++n}`)
  if (!fresh) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'README.md'), readmeText())
  }
  return dir
}

const ENTRY_FILE = (path: string): FolderFile => ({ path, text: '[]\n' })

/** Paths a hostile hub names, none of them the layout's. */
const HOSTILE: string[] = [
  '.git/config',
  '.git/hooks/post-checkout',
  '.knowhub-sync.json',
  '.gitignore',
  'global/.hidden.json',
  'users/.git/tools.json',
  'users/dev/.tools.json',
  '../x.json',
  '../../etc/cron.d/x',
  '/tmp/knowhub-absolute.json',
  'a/./b',
  'global/./tools.json',
  'users/dev/../../.git/config',
  'conflicts/../.git/config',
  'conflicts/.x.json',
  'conflicts/sub/knowledge-1.json',
  'conflicts/x.txt',
  'global\\tools.json',
  'users\\..\\..\\x.json',
  'global/tools.json\u0000.sh',
  'users/dev\u0000/tools.json',
  `users/${'a'.repeat(300)}/tools.json`,
  `users/dev/${'b'.repeat(255)}.json`,
  `conflicts/${'c'.repeat(200)}.json`,
  'glοbal/tools.json', // Greek omicron
  'ｇlobal/tools.json', // full-width g
  'global/tооls.json', // Cyrillic o
  'users/dеv/tools.json', // Cyrillic e in the section id
  'users/dev/tools.json\u202e', // right-to-left override
  'users/dev/tools.json\u200b', // zero-width space
  'GLOBAL/tools.json',
  'global/Tools.json',
  'global/tools.json/',
  'users//tools.json',
  'users/dev/extra/tools.json',
  'global/tools.json.tmp',
  'README.md\n',
  'package.json',
  'hooks/post-checkout',
  '~/.bashrc',
  'C:/x.json',
  'C:\\x.json',
  'users/dev/tools.json:Zone.Identifier',
]

describe('the folder writer writes only the layout (issue 39)', () => {
  it('writes a legitimate answer (the fake hub works with the CLI): README, sections, a conflict note', async () => {
    const dir = folder(true)
    script.files = [README, ENTRY_FILE('global/tools.json'), ENTRY_FILE('users/dev/preferences.json'), ENTRY_FILE('agents/a.b@c/archive.json')]
    const run = await runCli('export', '--layout', 'folder', dir, '--url', url)
    expect(run.code, run.stderr).toBe(0)
    expect(Object.keys(tree(dir)).sort()).toEqual(['README.md', 'agents/a.b@c/archive.json', 'global/tools.json', 'users/dev/preferences.json'])
    script.files = [README, ENTRY_FILE('global/tools.json'), { path: 'conflicts/knowledge-20260101120000-abcd.json', text: '{}\n' }]
    script.remove = ['users/dev/preferences.json']
    const synced = await runCli('sync', dir, '--url', url)
    expect(synced.code, synced.stderr).toBe(0)
    expect(Object.keys(tree(dir)).sort()).toEqual([
      '.knowhub-sync.json',
      'README.md',
      'agents/a.b@c/archive.json',
      'conflicts/knowledge-20260101120000-abcd.json',
      'global/tools.json',
    ])
    script.remove = []
  })

  it.each(HOSTILE.map((p) => [JSON.stringify(p), p] as const))('export refuses %s, names it, and writes nothing', async (_shown, path) => {
    for (const fresh of [true, false]) {
      const dir = folder(fresh)
      const before = tree(dir)
      // Good files first, the bad one last: nothing of the answer is written.
      script.files = [README, ENTRY_FILE('global/tools.json'), ENTRY_FILE('users/dev/habits.json'), { path, text: FSMONITOR }]
      const run = await runCli('export', '--layout', 'folder', dir, '--url', url)
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(JSON.stringify(path))
      expect(run.stderr).toContain('refused, nothing written')
      expect(tree(dir)).toEqual(before)
      expect(existsSync(dir)).toBe(!fresh)
    }
    expect(existsSync(join(env.dir, 'x.json'))).toBe(false)
  })

  it.each(HOSTILE.map((p) => [JSON.stringify(p), p] as const))(
    'sync refuses %s to write or to delete, and writes nothing (no state either)',
    async (_shown, path) => {
      for (const [files, remove] of [
        [[README, ENTRY_FILE('global/tools.json'), { path, text: FSMONITOR }], []],
        [[README, ENTRY_FILE('global/tools.json')], [path]],
      ] as const) {
        const dir = folder()
        writeFileSync(join(dir, '.gitignore'), '.knowhub-sync.json\n')
        const before = tree(dir)
        script.files = [...files]
        script.remove = [...remove]
        const run = await runCli('sync', dir, '--url', url)
        expect(run.code).toBe(1)
        expect(run.stderr).toContain(JSON.stringify(path))
        expect(tree(dir)).toEqual(before)
      }
      script.remove = []
    },
  )

  describe('never through a symbolic link', () => {
    it('a symlinked section folder pointing out of DIR, or into it: refused, nothing written on either side', async () => {
      for (const target of ['outside', 'inside']) {
        const dir = folder()
        const elsewhere = target === 'outside' ? join(env.dir, `elsewhere-${n}`) : join(dir, 'teams', 'real')
        mkdirSync(elsewhere, { recursive: true })
        symlinkSync(elsewhere, join(dir, 'global'))
        const before = { dir: tree(dir), elsewhere: tree(elsewhere) }
        script.files = [README, ENTRY_FILE('users/dev/habits.json'), { path: 'global/tools.json', text: FSMONITOR }]
        const run = await runCli('export', '--layout', 'folder', dir, '--url', url)
        expect(run.code).toBe(1)
        expect(run.stderr).toContain('global is a symbolic link')
        // A link out of DIR is refused when the folder is read; a link inside it, by the writer.
        if (target === 'inside') expect(run.stderr).toContain('the folder to write names "global/tools.json"')
        expect({ dir: tree(dir), elsewhere: tree(elsewhere) }).toEqual(before)
      }
    })

    it('a symlinked file (to a file in DIR): neither written through nor replaced, by export or sync; a symlinked conflicts/ folder neither', async () => {
      const dir = folder()
      // Links inside DIR (a link out of it is refused when the folder is read, before any writing).
      const victim = join(dir, 'zz-victim.json')
      writeFileSync(victim, '"keep me"\n')
      mkdirSync(join(dir, 'users', 'dev'), { recursive: true })
      symlinkSync(victim, join(dir, 'users', 'dev', 'habits.json'))
      const outsideNotes = join(dir, 'zz-notes')
      mkdirSync(outsideNotes)
      symlinkSync(outsideNotes, join(dir, 'conflicts'))
      const before = tree(dir)
      script.files = [README, { path: 'users/dev/habits.json', text: FSMONITOR }]
      const exported = await runCli('export', '--layout', 'folder', dir, '--url', url)
      expect(exported.code).toBe(1)
      expect(exported.stderr).toContain('users/dev/habits.json is a symbolic link')
      script.files = [README, { path: 'conflicts/knowledge-20260101120000-abcd.json', text: FSMONITOR }]
      const synced = await runCli('sync', dir, '--url', url)
      expect(synced.code).toBe(1)
      expect(synced.stderr).toContain('conflicts is a symbolic link')
      expect(tree(dir)).toEqual(before)
      expect(readFileSync(victim, 'utf8')).toBe('"keep me"\n')
      expect(readdirSync(outsideNotes)).toEqual([])
      expect(lstatSync(join(dir, 'users', 'dev', 'habits.json')).isSymbolicLink()).toBe(true)
    })

    it('export does not delete a stale file through a symlinked folder (a link inside DIR, read as the section it names)', async () => {
      const dir = folder()
      const real = join(dir, 'zz-real', 't')
      mkdirSync(real, { recursive: true })
      writeFileSync(join(real, 'tools.json'), '[]\n')
      symlinkSync(join(dir, 'zz-real'), join(dir, 'projects'))
      script.files = [README]
      const run = await runCli('export', '--layout', 'folder', dir, '--url', url)
      expect(run.code).toBe(1)
      expect(run.stderr).toContain('"projects/t/tools.json"')
      expect(run.stderr).toContain('projects is a symbolic link')
      expect(readdirSync(real)).toEqual(['tools.json'])
    })
  })
})

describe('the layout`s path rule (layoutPathOf), the one predicate of the reader and the writer', () => {
  const pieces = [
    'global',
    'users',
    'agents',
    'projects',
    'teams',
    'conflicts',
    'dev',
    'tools.json',
    'archive.json',
    'README.md',
    '.git',
    '..',
    '.',
    '',
    'config',
    'a\\b',
    'é',
    'knowledge-1.json',
  ]
  it('accepts only relative paths of ASCII names, none a dot-path, at most three deep, under the layout`s folders', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 4 }).map((p) => p.join('/')),
        ),
        (path) => {
          let accepted = true
          try {
            layoutPathOf(path)
          } catch {
            accepted = false
          }
          if (!accepted) return
          const parts = path.split('/')
          expect(parts.length).toBeLessThanOrEqual(3)
          expect(parts.every((p) => /^[A-Za-z0-9][A-Za-z0-9._@+:-]*$/.test(p))).toBe(true)
          expect(['README.md', 'global', 'users', 'agents', 'projects', 'teams', 'conflicts']).toContain(parts[0])
        },
      ),
      { numRuns: 2000 },
    )
  })
})
