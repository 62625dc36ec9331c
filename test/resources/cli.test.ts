/**
 * The resource, secrets, slim and unmerge commands, in-process, against a real
 * PostgreSQL database (fast to open) with the key file in a temp data dir.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import type { Io } from '../../src/cli/output.js'
import { SecretKey } from '../../src/resources/secrets.js'
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const SECRET = 'session_id=cli-secret-7781; auth=zz'

describe('resource, secrets and slim commands', () => {
  let dir: string
  let database: TestDatabase
  const saved: Record<string, string | undefined> = {}

  async function run(...args: string[]): Promise<{ out: string; err: string; code: number }> {
    const out: string[] = []
    const err: string[] = []
    const io: Io = { out: (s) => void out.push(s), err: (s) => void err.push(s), interactive: false }
    process.exitCode = 0
    await main(['node', 'knowhub', ...args], io)
    const code = Number(process.exitCode ?? 0)
    process.exitCode = 0
    return { out: out.join('\n'), err: err.join('\n'), code }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-cli-res-'))
    database = await createTestDatabase('postgres')
    for (const name of [
      'KNOWHUB_DATA_DIR',
      'DATABASE_URL',
      'KNOWHUB_SECRET_KEY',
      'KNOWHUB_SECRET_KEY_FILE',
      'KNOWHUB_USER',
      'KNOWHUB_ORG',
      'KNOWHUB_LOG_LEVEL',
    ])
      saved[name] = process.env[name]
    process.env.KNOWHUB_DATA_DIR = dir
    process.env.DATABASE_URL = database.options.databaseUrl
    process.env.KNOWHUB_USER = 'alice'
    process.env.KNOWHUB_ORG = 'acme'
    process.env.KNOWHUB_LOG_LEVEL = 'silent'
    delete process.env.KNOWHUB_SECRET_KEY
    delete process.env.KNOWHUB_SECRET_KEY_FILE
  })
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('saves a secret from a file, hides it by default, shows it with --show-secret, rotates the key', async () => {
    writeFileSync(join(dir, 'cookie.txt'), `${SECRET}\n`)
    const save = await run(
      'resource',
      'save',
      'cookies/site_a',
      '--title',
      'Site A cookie',
      '--type',
      'cookie',
      '--secret-file',
      join(dir, 'cookie.txt'),
      '--expires-at',
      '2020-01-01T00:00:00Z',
      '--scope',
      'org:acme',
      '--body',
      'for API calls',
    )
    expect(save).toMatchObject({ code: 0, out: 'saved cookies/site_a (owner user:alice, v1) (secret encrypted)' })
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600)

    const hidden = await run('resource', 'get', 'cookies/site_a', '--json')
    expect(JSON.parse(hidden.out)).toMatchObject({ id: 'cookies/site_a', has_secret: true, expired: true, body: 'for API calls' })
    expect(hidden.out).not.toContain('cli-secret')
    const shown = await run('resource', 'get', 'cookies/site_a', '--show-secret', '--json')
    expect(JSON.parse(shown.out).secure_body).toBe(SECRET)
    const text = await run('resource', 'get', 'cookies/site_a')
    expect(text.out).toContain('EXPIRED')
    expect(text.out).not.toContain('cli-secret')

    const list = await run('resource', 'list', '--expired', '--json')
    expect(JSON.parse(list.out).items.map((r: { id: string }) => r.id)).toEqual(['cookies/site_a'])
    expect(list.out).not.toContain('cli-secret')
    // Saving an id you own again updates it: the fields given change, the secret is kept.
    expect(await run('resource', 'save', 'cookies/site_a', '--title', 'again')).toMatchObject({
      code: 0,
      out: 'updated cookies/site_a (owner user:alice, v2) (secret encrypted)',
    })
    expect((await run('resource', 'get', 'code/../x')).err).toContain('[validation_error]')

    const oldKey = readFileSync(join(dir, 'secret.key'), 'utf8')
    const status = JSON.parse((await run('secrets', 'status', '--json')).out)
    expect(status).toMatchObject({ source: 'file', secrets_by_key: [{ key_id: status.key_id, count: 1 }] })
    const rotate = JSON.parse((await run('secrets', 'rotate', '--json')).out)
    expect(rotate).toMatchObject({ rotated: 1, unchanged: 0, old_key_id: status.key_id, resumed: false })
    expect(readFileSync(join(dir, 'secret.key'), 'utf8')).not.toBe(oldKey)
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600)
    expect(JSON.parse((await run('resource', 'get', 'cookies/site_a', '--show-secret', '--json')).out).secure_body).toBe(SECRET)
    // With the old key configured, the secret no longer decrypts: a clear config_error.
    process.env.KNOWHUB_SECRET_KEY = oldKey.trim()
    const stale = await run('resource', 'get', 'cookies/site_a', '--show-secret')
    delete process.env.KNOWHUB_SECRET_KEY
    expect(stale.code).toBe(1)
    expect(stale.err).toContain('[config_error]')
    expect(stale.err).not.toContain('cli-secret')

    expect((await run('resource', 'update', 'cookies/site_a', '--remove-secret', '--json')).code).toBe(0)
    expect(await run('resource', 'delete', 'cookies/site_a', '--owner', 'user:alice')).toMatchObject({
      code: 0,
      out: 'deleted cookies/site_a (owner user:alice)',
    })
  })

  it('rotates a key from KNOWHUB_SECRET_KEY only with --new-key or --print-new-key, so the next start still reads every secret', async () => {
    const oldKey = SecretKey.generate().toBase64()
    process.env.KNOWHUB_SECRET_KEY = oldKey
    try {
      writeFileSync(join(dir, 'env-secret.txt'), 'env-secret-5512')
      expect((await run('resource', 'save', 'creds/env', '--title', 'env', '--secret-file', join(dir, 'env-secret.txt'))).code).toBe(0)
      const keyFileBefore = readFileSync(join(dir, 'secret.key'), 'utf8')
      // Without either option: refused, nothing changed, no key file written or replaced.
      const refused = await run('secrets', 'rotate')
      expect(refused.code).toBe(1)
      expect(refused.err).toContain('[config_error]')
      expect(refused.err).toMatch(/--new-key.*--print-new-key/s)
      expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe(keyFileBefore)
      expect(JSON.parse((await run('resource', 'get', 'creds/env', '--show-secret', '--json')).out).secure_body).toBe('env-secret-5512')
      expect((await run('secrets', 'rotate', '--new-key', 'too-short')).err).toContain('[config_error]')
      expect((await run('secrets', 'rotate', '--new-key', oldKey)).err).toContain('[validation_error]')
      expect((await run('secrets', 'rotate', '--new-key', oldKey, '--print-new-key')).err).toContain('[validation_error]')

      // --new-key: the secrets move to the given key; the old one no longer reads them.
      const given = SecretKey.generate()
      const rotated = await run('secrets', 'rotate', '--new-key', given.toBase64())
      expect(rotated.code).toBe(0)
      expect(rotated.out).toContain(`→ ${given.id}`)
      expect(rotated.out).toContain('set KNOWHUB_SECRET_KEY')
      expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe(keyFileBefore)
      expect((await run('resource', 'get', 'creds/env', '--show-secret')).err).toContain('[config_error]')
      process.env.KNOWHUB_SECRET_KEY = given.toBase64()
      expect(JSON.parse((await run('resource', 'get', 'creds/env', '--show-secret', '--json')).out).secure_body).toBe('env-secret-5512')

      // --print-new-key: a new key printed once; with it set, the secrets read.
      const printed = await run('secrets', 'rotate', '--print-new-key')
      expect(printed.code).toBe(0)
      const newKey = /shown only now\): (\S+)/.exec(printed.out)?.[1]
      expect(newKey).toBeDefined()
      expect(printed.out).not.toContain('env-secret')
      process.env.KNOWHUB_SECRET_KEY = newKey!
      expect(JSON.parse((await run('resource', 'get', 'creds/env', '--show-secret', '--json')).out).secure_body).toBe('env-secret-5512')
      expect((await run('resource', 'delete', 'creds/env')).code).toBe(0)
    } finally {
      delete process.env.KNOWHUB_SECRET_KEY
    }
    // With the key in a key file, the options are refused (rotate replaces the file itself).
    expect((await run('secrets', 'rotate', '--print-new-key')).err).toContain('[validation_error]')
  })

  it('slims with a dry run, merges, and unmerges', async () => {
    const content = 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent. Add random delays between requests.'
    for (const extra of ['', ' Sessions last 2 hours.']) {
      expect((await run('save', '--task', 'Log in to site A with selenium', '--content', content + extra, '--type', 'tool', '--scope', 'org:acme')).code).toBe(
        0,
      )
    }
    const plan = JSON.parse((await run('slim', '--dry-run', '--json')).out)
    expect(plan).toMatchObject({ dry_run: true, merged: 0 })
    expect(plan.groups).toHaveLength(1)
    const done = JSON.parse((await run('slim', '--json')).out)
    expect(done.merged).toBe(2)
    const keptId = done.groups[0].kept_id as string
    const undo = await run('unmerge', keptId)
    expect(undo.out).toBe(`restored ${[...done.groups[0].merged_ids].sort().join(', ')}; archived ${keptId}`)
    expect((await run('unmerge', keptId)).err).toContain('[conflict]')
    expect((await run('slim', '--threshold', '3')).err).toContain('[validation_error]')
  })
})
