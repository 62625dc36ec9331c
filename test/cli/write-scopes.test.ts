/**
 * Nobody — admins included — writes where they could not read again: a save, edit or import
 * into a scope outside the caller's own ids is refused with `forbidden`, naming the scope and
 * how to act in it. Through the knowledge service and through the CLI.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { isKnowHubError, type KnowHubError } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { runCli } from '../helpers/cli.js'
import { tempDataDir } from '../helpers/stores.js'

async function failure(promise: Promise<unknown>): Promise<KnowHubError> {
  try {
    await promise
  } catch (error) {
    return error as KnowHubError
  }
  throw new Error('expected a failure')
}

describe('writes outside the caller’s scopes (service)', () => {
  let hub: KnowHub
  beforeAll(async () => {
    hub = await openKnowHub({ dataDir: tempDataDir('write-scopes'), embedder: { provider: 'hashed' } })
  })
  afterAll(async () => {
    await hub?.close()
  })

  const admin = Principal.parse({ user: 'local', permissions: ['read', 'write', 'admin'] })
  const acmeAdmin = Principal.parse({ user: 'local', org: 'acme', permissions: ['read', 'write', 'admin'] })
  const entry = { task: 'Deploy with pnpm', content: 'corepack enable first', types: ['tool'] }

  it('refuses an admin’s save into a scope it does not belong to, and saves what it can see again', async () => {
    const error = await failure(hub.knowledge.save({ ...entry, scopes: ['org:acme'] }, admin))
    expect(isKnowHubError(error, 'forbidden')).toBe(true)
    expect(error.message).toMatch(/scope org:acme: it is not among your scopes \(user:local\)/)
    expect(error.message).toContain('KNOWHUB_ORG=acme')
    expect((await hub.knowledge.list({ limit: 50 }, acmeAdmin)).items).toHaveLength(0)

    const saved = await hub.knowledge.save({ ...entry, scopes: ['org:acme', 'public'] }, acmeAdmin)
    expect((await hub.knowledge.get(saved.id, acmeAdmin)).scopes).toEqual(['org:acme', 'public'])
  })

  it('refuses moving an entry into an unseen scope by edit, and importing lines in one', async () => {
    const saved = await hub.knowledge.save(entry, admin)
    const error = await failure(hub.knowledge.edit(saved.id, { scopes: ['team:ops'] }, admin))
    expect(isKnowHubError(error, 'forbidden')).toBe(true)
    expect(error.message).toContain('KNOWHUB_TEAM=ops')
    expect((await hub.knowledge.get(saved.id, admin)).scopes).toEqual(['user:local'])

    const line = JSON.parse(await firstLine(hub.knowledge.exportJsonl(acmeAdmin))) as Record<string, unknown>
    const foreign = JSON.stringify({ ...line, id: 'knowledge-20260101000000-abcd', scopes: ['org:elsewhere'] })
    const report = await hub.knowledge.importJsonl([foreign], admin)
    expect(report.imported).toBe(0)
    expect(report.errors[0]).toMatchObject({ line: 1, code: 'forbidden' })
  })
})

async function firstLine(lines: AsyncIterable<string>): Promise<string> {
  for await (const line of lines) return line
  throw new Error('nothing exported')
}

describe('writes outside the caller’s scopes (CLI)', () => {
  const saved = { ...process.env }
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-scopes-'))
    process.env.KNOWHUB_DATA_DIR = join(dir, 'data')
    process.env.KNOWHUB_EMBEDDER = 'hashed'
    for (const name of ['DATABASE_URL', 'KNOWHUB_USER', 'KNOWHUB_AGENT', 'KNOWHUB_PROJECT', 'KNOWHUB_TEAM', 'KNOWHUB_ORG', 'KNOWHUB_CONFIG'])
      delete process.env[name]
    writeFileSync(join(dir, 'content.txt'), 'x')
  })
  afterAll(() => {
    process.env = saved
    rmSync(dir, { recursive: true, force: true })
  })

  it('`knowhub save --scope org:acme` without KNOWHUB_ORG is refused (the local admin too) and says how to fix it', async () => {
    const refused = await runCli('save', '--task', 'Log in to site A', '--content', 'use the test account', '--type', 'tool', '--scope', 'org:acme')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('error [forbidden]: You cannot write to scope org:acme')
    expect(refused.stderr).toContain('KNOWHUB_ORG=acme for the CLI')
    expect((await runCli('list', '--json')).stdout).toContain('"items": []')

    process.env.KNOWHUB_ORG = 'acme'
    try {
      const ok = await runCli('save', '--task', 'Log in to site A', '--content', 'use the test account', '--type', 'tool', '--scope', 'org:acme', '--json')
      expect(ok.code).toBe(0)
      const id = (JSON.parse(ok.stdout) as { id: string }).id
      expect((await runCli('show', id)).code).toBe(0)
    } finally {
      delete process.env.KNOWHUB_ORG
    }
  })

  it('answers a malformed scope with validation_error at its path, as docs/cli.md says (not invalid_scope)', async () => {
    const bad = await runCli('save', '--task', 't', '--content', 'c', '--type', 'tool', '--scope', 'org acme', '--json')
    const error = (JSON.parse(bad.stdout) as { error: { code: string; details: { issues: Array<{ path: string }> } } }).error
    expect(error.code).toBe('validation_error')
    expect(error.details.issues.map((issue) => issue.path)).toEqual(['scopes.0'])
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'cli.md'), 'utf8')
    expect(doc).not.toContain('`invalid_scope`')
    expect(doc).toMatch(/`validation_error` with field paths — a\s+malformed scope too, e\.g\. `scopes\.0:/)
  })
})
