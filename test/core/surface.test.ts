/**
 * Pins the package's public surface: the export map, and that the core layer
 * does no I/O (no fs, network or database driver imports).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')

describe('public surface', () => {
  it('exports exactly the documented subpaths, each with a source index', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; bin: Record<string, string> }
    const subpaths = Object.keys(pkg.exports).sort()
    expect(subpaths).toEqual(['.', './client', './core', './embed', './knowledge', './mcp', './package.json', './packs', './store', './tools'].sort())
    for (const subpath of subpaths.filter((s) => s !== './package.json')) {
      const target = (pkg.exports[subpath] as { import: string }).import
      const source = target.replace('./dist/', 'src/').replace(/\.js$/, '.ts')
      expect(() => readFileSync(join(root, source)), `${subpath} → ${source}`).not.toThrow()
    }
    expect(pkg.bin.knowhub).toBe('./bin/knowhub.js')
  })

  it('keeps the core free of I/O imports', () => {
    const dir = join(root, 'src', 'core')
    const forbidden = /from ['"](node:)?(fs|fs\/promises|net|http|https|child_process|pg)['"]|from ['"]@electric-sql\//
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8')
      expect(forbidden.test(text), `src/core/${file} imports I/O`).toBe(false)
    }
  })
})
