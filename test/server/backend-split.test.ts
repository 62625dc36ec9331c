/**
 * The split of the server tests between "per backend" and "once, on PGlite" is written down:
 * vitest.config.ts reruns exactly SERVER_TESTS_PER_BACKEND on each PostgreSQL backend, and
 * docs/testing.md names every server test file under one of its three lists with the reason.
 * A new server test file fails here until it is put in one of them.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SERVER_TESTS_PER_BACKEND } from '../helpers/backends.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

function serverTestFiles(dir = join(ROOT, 'test', 'server')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return serverTestFiles(path)
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path).split('\\').join('/')] : []
  })
}

/** The backquoted test file paths of the bullets under `heading` in docs/testing.md. */
function listed(doc: string, heading: string): string[] {
  const start = doc.indexOf(`\n### ${heading}\n`)
  expect(start, `docs/testing.md has no section "### ${heading}"`).toBeGreaterThan(-1)
  const end = doc.indexOf('\n#', start + heading.length + 6)
  const section = doc.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^- `(test\/[^`]+\.test\.ts)`/gm)].map((m) => m[1]!)
}

describe('which server tests run per backend', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8')
  const perBackend = listed(doc, 'Per backend')
  const loops = listed(doc, 'Looping over the backends itself')
  const once = listed(doc, 'Once, on PGlite')

  it('docs/testing.md lists exactly the files vitest.config.ts reruns per backend', () => {
    expect([...perBackend].sort()).toEqual([...SERVER_TESTS_PER_BACKEND].sort())
  })

  it('names every server test file in exactly one list, and no file that is gone', () => {
    const files = serverTestFiles().sort()
    const named = [...perBackend, ...loops, ...once]
    expect([...named].sort()).toEqual(files)
    expect(new Set(named).size).toBe(named.length)
  })
})
