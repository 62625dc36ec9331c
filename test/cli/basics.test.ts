/**
 * CLI basics: `knowhub --version` says package.json's version; `knowhub edit` changes an
 * entry (task, content, types, tags, scopes) and keeps the previous version, refusing an
 * edit that changes nothing or a bad value with a clear error; `token create --perm` takes a
 * comma list and warns about a token that may store secrets it cannot read; `--help` loads no
 * schema library.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'

const ROOT = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
useCliEnv('basics', { KNOWHUB_USER: 'dev', KNOWHUB_ORG: 'acme', KNOWHUB_EMBEDDER: 'hashed' })

/**
 * The modules `from` loads when it is imported: its static `import … from` and `export … from`
 * (not `import type`, not `import()`), transitively; packages by name.
 */
function eagerImports(from: string): Set<string> {
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    if (!file.startsWith('/')) return
    const source = readFileSync(file, 'utf8')
    for (const m of source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!
      if (!spec.startsWith('.')) visit(spec.split('/')[0]!.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
      else {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'))
        visit(existsSync(target) ? target : target.replace(/\.ts$/, '/index.ts'))
      }
    }
  }
  visit(from)
  return seen
}

describe('knowhub --help', () => {
  it('loads no schema library: the configuration, data-model and pack schemas load when a command runs', () => {
    const loaded = eagerImports(join(ROOT, 'src', 'cli', 'main.ts'))
    // The walk sees the command definitions (a sanity check of the walk itself)...
    expect(loaded.has(join(ROOT, 'src', 'cli', 'commands', 'packs', 'packs.ts'))).toBe(true)
    expect(loaded.has('commander')).toBe(true)
    // ...and neither zod nor the modules built on it.
    expect(loaded.has('zod')).toBe(false)
    for (const schema of ['core/config.ts', 'core/knowledge.ts', 'packs/schema.ts']) expect(loaded.has(join(ROOT, 'src', schema))).toBe(false)
  })
})

describe('knowhub --version', () => {
  it("prints package.json's version", async () => {
    for (const flag of ['--version', '-V']) {
      const run = await runCli(flag)
      expect(run.code).toBe(0)
      expect(run.stdout.trim()).toBe(pkg.version)
    }
  })
})

describe('knowhub edit', () => {
  it('changes task, content, types, tags and scopes, keeping the previous version', async () => {
    const save = await runCli('save', '--task', 'Log in to site A', '--content', 'Use the test account', '--type', 'tool', '--tag', 'site=a', '--json')
    expect(save.code, save.stderr).toBe(0)
    const id = (JSON.parse(save.stdout) as { id: string }).id

    const edit = await runCli('edit', id, '--content', 'Use the staging test account', '--reason', 'the old account was removed')
    expect(edit.code, edit.stderr).toBe(0)
    expect(edit.stdout).toBe(`edited ${id} (now v2)`)
    const all = await runCli(
      'edit',
      id,
      '--task',
      'Log in to site A (staging)',
      '--type',
      'tool',
      '--type',
      'strategy',
      '--tag',
      'site=a',
      '--tag',
      'env=staging',
      '--scope',
      'user:dev',
      '--scope',
      'org:acme',
      '--json',
    )
    expect(all.code, all.stderr).toBe(0)
    expect(JSON.parse(all.stdout)).toMatchObject({
      task: 'Log in to site A (staging)',
      content: 'Use the staging test account',
      types: ['tool', 'strategy'],
      tags: { site: 'a', env: 'staging' },
      scopes: ['user:dev', 'org:acme'],
      version: 3,
    })
    const untagged = JSON.parse((await runCli('edit', id, '--no-tags', '--json')).stdout) as { tags: object }
    expect(untagged.tags).toEqual({})
    const shown = await runCli('show', id, '--versions')
    expect(shown.stdout).toContain('Use the test account')
    expect(shown.stdout).toContain('the old account was removed')
    // The tag-only edit (--no-tags) shows in the diff of its version, as a change of the tags line.
    expect(shown.stdout).toMatch(/\+\+\+ version 4\n@@[^\n]*@@\n(?: [^\n]*\n)*-tags: env=staging, site=a\n\+tags: \n/)
  })

  it('refuses an edit that changes nothing, a bad value and an unknown id, in words', async () => {
    const save = await runCli('save', '--task', 'Rotate logs', '--content', 'copytruncate', '--type', 'tool', '--json')
    const id = (JSON.parse(save.stdout) as { id: string }).id
    const nothing = await runCli('edit', id)
    expect(nothing.code).toBe(1)
    expect(nothing.stderr).toContain('error [validation_error]: nothing to change')
    const reasonOnly = await runCli('edit', id, '--reason', 'why not')
    expect(reasonOnly.stderr).toContain('nothing to change')
    const badType = await runCli('edit', id, '--type', 'magic')
    expect(badType.code).toBe(1)
    expect(badType.stderr).toContain('error [validation_error]')
    const badTag = await runCli('edit', id, '--tag', 'novalue')
    expect(badTag.stderr).toContain('--tag must be key=value')
    const missing = await runCli('edit', 'knowledge-20990101000000-zzzz', '--task', 'x')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('error [not_found]')
    expect(JSON.parse((await runCli('show', id, '--json')).stdout)).toMatchObject({ content: 'copytruncate', version: 1 })
  })
})

describe('knowhub token create --perm', () => {
  it('takes a comma list as well as repeated --perm, and points out a token that may store secrets it cannot read', async () => {
    const listed = await runCli('token', 'create', '--user', 'alice', '--perm', 'read,write', '--json')
    expect(listed.code, listed.stdout).toBe(0)
    const created = JSON.parse(listed.stdout) as { principal: { permissions: string[] }; warnings?: string[] }
    expect(created.principal.permissions).toEqual(['read', 'write'])
    expect(created.warnings).toEqual([
      expect.stringContaining('may store secrets (a resource secure_body, with write) but not read them back (no secrets:read)'),
    ])

    const mixed = await runCli('token', 'create', '--user', 'bob', '--perm', 'read', '--perm', 'write, secrets:read')
    expect(mixed.code, mixed.stderr).toBe(0)
    expect(mixed.stderr).toMatch(/for user:bob \(read, write, secrets:read\)/)
    expect(mixed.stderr).not.toContain('warning:')

    const plain = await runCli('token', 'create', '--user', 'carol')
    expect(plain.stderr).toMatch(/^warning: this token may store secrets/m)
    const readOnly = await runCli('token', 'create', '--user', 'dave', '--perm', 'read')
    expect(readOnly.stderr).not.toContain('warning:')

    const bad = await runCli('token', 'create', '--user', 'eve', '--perm', 'read,frobnicate')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('error [validation_error]')
    const empty = await runCli('token', 'create', '--user', 'eve', '--perm', ',')
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('give at least one permission')
  })

  it('creates a hub operator token with --hub-admin (issue 27: only the CLI on the server machine can)', async () => {
    const created = await runCli('token', 'create', '--user', 'ops', '--hub-admin', '--json')
    expect(created.code, created.stderr).toBe(0)
    expect((JSON.parse(created.stdout) as { principal: { permissions: string[] } }).principal.permissions).toEqual([
      'read',
      'write',
      'secrets:read',
      'admin',
      'hub:admin',
    ])
  })
})
