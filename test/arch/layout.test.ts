/**
 * The folders say the parts (issue #28): no module sits beside a folder of the same name
 * (`foo.ts` next to `foo/`: which one is the part?), and the three services that used to be
 * flat keep their parts in folders, with only their entry files on top.
 */
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')

/** Every folder under `dir`, itself included. */
function folders(dir: string): string[] {
  return [dir, ...readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? folders(join(dir, e.name)) : []))]
}

/** The modules directly in a folder. */
const modules = (dir: string) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => e.name)
    .sort()

describe('source layout', () => {
  it('no module shares its name with a folder beside it (src/, web/)', () => {
    const clashes = ['src', 'web'].flatMap((top) =>
      folders(join(root, top)).flatMap((dir) => {
        const entries = readdirSync(dir, { withFileTypes: true })
        const files = new Set(entries.filter((e) => e.isFile()).map((e) => e.name.replace(/\.[cm]?[jt]s$/u, '')))
        return entries.filter((e) => e.isDirectory() && files.has(e.name)).map((e) => relative(root, join(dir, e.name)))
      }),
    )
    expect(clashes).toEqual([])
  })

  it('packs/, knowledge/ and store/ keep their parts in folders: only entry and shared modules on top', () => {
    expect(modules('src/packs')).toEqual(['index.ts', 'schema.ts', 'service.ts', 'vocabulary.ts'])
    expect(modules('src/knowledge')).toEqual(['context.ts', 'grounding.ts', 'index.ts', 'prompt-data.ts', 'service.ts'])
    // The store's top holds the database itself (drivers, migrations, template, lock, whole-database copies); a service's SQL is in its folder.
    for (const name of modules('src/store')) expect(name).not.toMatch(/^(knowledge|resources|secret-reads|tokens|sessions|goals|agent-documents|text-)/u)
  })
})
