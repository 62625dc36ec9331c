/**
 * #15 item 9: `knowhub backup FILE` / `knowhub restore FILE` for the embedded database. A real
 * `knowhub start` process holds the data folder and keeps taking writes while the backup is
 * taken (the CLI asks it: POST /api/admin/backup with the lock file's local key); the backup is
 * restored into a new folder and holds every entry acknowledged before it began, equal, and
 * secrets that decrypt with the same key. A truncated, damaged or newer-schema file is refused
 * with nothing lost; a folder a server holds is never replaced; PostgreSQL is sent to pg_dump.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub } from '../../src/app/open.js'
import type { KnowledgeEntry } from '../../src/core/knowledge.js'
import { runCli } from '../helpers/cli.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'

const KEY = Buffer.alloc(32, 9).toString('base64')
const SECRET = 'session=backup-secret-7731'
const saved = { ...process.env }
let dir: string
let server: KnowHubProcess | undefined
const env = (dataDir: string) => ({ KNOWHUB_DATA_DIR: dataDir, KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_SECRET_KEY: KEY, KNOWHUB_USER: 'dev', KNOWHUB_ORG: 'acme' })

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-backup-'))
  for (const name of ['DATABASE_URL', 'KNOWHUB_URL', 'KNOWHUB_TOKEN', 'KNOWHUB_CONFIG']) delete process.env[name]
  Object.assign(process.env, env(join(dir, 'live')))
})
afterAll(async () => {
  await server?.stop()
  process.env = saved
  rmSync(dir, { recursive: true, force: true })
})

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

/** Every entry of a data folder, opened in this process with the same key. */
async function entriesOf(dataDir: string): Promise<{ entries: Map<string, KnowledgeEntry>; secret: string | undefined; memory: string[] }> {
  const hub = await openKnowHub({
    dataDir,
    embedder: { provider: 'hashed' },
    secrets: { key: KEY },
    principal: { user: 'dev', org: 'acme', permissions: ['read', 'write', 'secrets:read', 'admin'] },
  })
  try {
    const entries = new Map<string, KnowledgeEntry>()
    let cursor: string | undefined
    do {
      const page = await hub.knowledge.list({ limit: 200, ...(cursor ? { cursor } : {}) }, hub.config.principal)
      for (const e of page.items) entries.set(e.id, e)
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    const resource = await hub.resources.get('cookies/site_a', hub.config.principal, { includeSecret: true })
    // A stored agent's memory (#27): each version of its compact.md.
    const versions = await hub.agent.documents.versions('book', 'compact.md', hub.config.principal)
    const memory = await Promise.all(
      versions.documents.map(async (v) => (await hub.agent.documents.get('book', 'compact.md', { version: v.version }, hub.config.principal)).content),
    )
    return { entries, secret: resource.secure_body ?? undefined, memory }
  } finally {
    await hub.close()
  }
}

describe('knowhub backup and restore (embedded database)', () => {
  const file = () => join(dir, 'live.backup')
  const before = new Map<string, string>()

  it('backs up through the running server while it takes writes; restores into a new folder with every earlier entry equal and secrets readable', async () => {
    server = await startKnowHubProcess({ env: env(join(dir, 'live')), timeoutMs: 180_000 })
    for (let i = 0; i < 30; i++) {
      const response = await post('/api/knowledge', { task: `backup task ${i}`, content: `backup content ${i} ${'x'.repeat(200)}`, types: ['tool'] })
      expect(response.status).toBe(201)
      const entry = (await response.json()) as KnowledgeEntry
      before.set(entry.id, entry.content)
    }
    const stored = await post('/api/resource', { id: 'cookies/site_a', title: 'Site A cookie', content_type: 'cookie', secure_body: SECRET })
    expect(stored.status).toBe(201)
    for (const content of ['chapter 1 done', 'chapter 2 done']) {
      const put = await fetch(`${server.url}/api/agents/book/documents/compact.md`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content }),
      })
      expect(put.status).toBeLessThan(300)
    }
    // Writers keep going during the backup.
    let writing = true
    let during = 0
    const writer = (async () => {
      while (writing) {
        const r = await post('/api/knowledge', { task: `during backup ${during}`, content: `written while the backup ran ${during}`, types: ['tool'] })
        if (r.status === 201) during++
      }
    })()
    const run = await runCli('backup', file())
    writing = false
    await writer
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/backing up the embedded database/)
    expect(run.stderr).toMatch(/the KnowHub server at http:\/\/127\.0\.0\.1:\d+ .* holds .*: running this command there/)
    expect(run.stdout).toMatch(/Backed up the embedded database to .*live\.backup \(\d+(\.\d)? [KM]B, \d+ migrations/)
    expect(run.stdout).toMatch(/Secrets in it are encrypted with key/)
    expect(during).toBeGreaterThan(0)

    const restored = await runCli('restore', file(), '--data-dir', join(dir, 'copy'))
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stderr).toMatch(/backup ok: .* migrations/)
    expect(restored.stderr).toMatch(/the restored database opens: \d+ entries/)
    expect(restored.stdout).toMatch(/Restored .* into .*copy\/db: \d+ entries, 1 resources/)

    await server.stop()
    server = undefined
    const live = await entriesOf(join(dir, 'live'))
    const copy = await entriesOf(join(dir, 'copy'))
    // Every entry acknowledged before the backup is in it, equal; everything in it is a real, equal entry.
    for (const [id, content] of before) expect(copy.entries.get(id)?.content).toBe(content)
    for (const [id, entry] of copy.entries) expect(live.entries.get(id)).toEqual(entry)
    expect(copy.entries.size).toBeGreaterThanOrEqual(before.size)
    expect(copy.entries.size).toBeLessThanOrEqual(live.entries.size)
    expect(copy.secret).toBe(SECRET)
    // Stored agents' memory travels with the backup, every version.
    expect(copy.memory).toEqual(['chapter 2 done', 'chapter 1 done'])
  }, 420_000)

  it('refuses a truncated, damaged, foreign or newer-schema file and changes nothing', async () => {
    const good = readFileSync(file())
    const target = join(dir, 'copy')
    const count = (await entriesOf(target)).entries.size
    const firstLines = good.indexOf(10, good.indexOf(10) + 1) + 1
    const manifest = JSON.parse(good.subarray(good.indexOf(10) + 1, firstLines - 1).toString('utf8')) as { migrations: string[] }
    const cases: [string, Buffer, RegExp][] = [
      ['truncated', good.subarray(0, good.length - 1000), /truncated/],
      [
        'damaged',
        Buffer.concat([good.subarray(0, firstLines + 500), Buffer.from([good[firstLines + 500]! ^ 0xff]), good.subarray(firstLines + 501)]),
        /checksum/,
      ],
      ['foreign', Buffer.from('PK\u0003\u0004 not a backup'), /not a KnowHub backup/],
      [
        'newer',
        Buffer.concat([
          Buffer.from(
            `KNOWHUB-BACKUP 1\n${JSON.stringify({ ...JSON.parse(good.subarray(good.indexOf(10) + 1, firstLines - 1).toString('utf8')), migrations: [...manifest.migrations, '9999_from_the_future'] })}\n`,
          ),
          good.subarray(firstLines),
        ]),
        /newer schema than this KnowHub knows \(migration 9999_from_the_future/,
      ],
      ['newer format', Buffer.concat([Buffer.from('KNOWHUB-BACKUP 2\n'), good.subarray(good.indexOf(10) + 1)]), /format 2, newer than this KnowHub reads/],
    ]
    for (const [name, bytes, message] of cases) {
      const path = join(dir, `${name}.backup`)
      writeFileSync(path, bytes)
      const run = await runCli('restore', path, '--data-dir', join(dir, 'copy'), '--force')
      expect(run.code, name).toBe(1)
      expect(run.stderr, name).toMatch(message)
      expect(run.stderr, name).toMatch(/nothing was changed/)
    }
    // An archive that passes the checksum but is no database: loaded aside, refused, nothing replaced.
    const junk = Buffer.from('this is not a gzipped tarball at all '.repeat(50))
    const { createHash } = await import('node:crypto')
    const forged = Buffer.concat([
      Buffer.from(
        `KNOWHUB-BACKUP 1\n${JSON.stringify({ ...JSON.parse(good.subarray(good.indexOf(10) + 1, firstLines - 1).toString('utf8')), bytes: junk.length, sha256: createHash('sha256').update(junk).digest('hex') })}\n`,
      ),
      junk,
    ])
    writeFileSync(join(dir, 'forged.backup'), forged)
    const run = await runCli('restore', join(dir, 'forged.backup'), '--data-dir', target, '--force')
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/archive is not a gzipped tarball .*nothing was changed/)
    // A gzipped tarball that is no database folder: PGlite cannot open it; refused, nothing replaced.
    const { gzipSync } = await import('node:zlib')
    const header = Buffer.alloc(512)
    header.write('notes.txt', 0)
    header.write('ustar', 257)
    const tar = gzipSync(Buffer.concat([header, Buffer.alloc(1024)]))
    writeFileSync(
      join(dir, 'empty-tar.backup'),
      Buffer.concat([
        Buffer.from(
          `KNOWHUB-BACKUP 1\n${JSON.stringify({ ...JSON.parse(good.subarray(good.indexOf(10) + 1, firstLines - 1).toString('utf8')), bytes: tar.length, sha256: createHash('sha256').update(tar).digest('hex') })}\n`,
        ),
        tar,
      ]),
    )
    const empty = await runCli('restore', join(dir, 'empty-tar.backup'), '--data-dir', target, '--force')
    expect(empty.code).toBe(1)
    expect(empty.stderr).toMatch(/nothing was changed/)
    expect((await entriesOf(target)).entries.size).toBe(count)
    // No staged copy, archive or lock is left beside the database.
    expect(readdirSync(target).filter((name) => name.startsWith('.db.restore-'))).toEqual([])
    // Over an existing database only with --force.
    const over = await runCli('restore', file(), '--data-dir', target)
    expect(over.code).toBe(1)
    expect(over.stderr).toMatch(/Refusing to restore over the existing database .* pass --force/)
    const forced = await runCli('restore', file(), '--data-dir', target, '--force')
    expect(forced.code, forced.stderr).toBe(0)
    expect((await entriesOf(target)).entries.size).toBe(count)
  }, 420_000)

  it('never replaces a folder a running server holds; without a server the CLI dumps the folder itself', async () => {
    server = await startKnowHubProcess({ env: env(join(dir, 'copy')), timeoutMs: 180_000 })
    const held = await runCli('restore', file(), '--data-dir', join(dir, 'copy'), '--force')
    expect(held.code).toBe(1)
    expect(held.stderr).toMatch(
      /Refusing to restore: the embedded database in .*copy\/db is in use by process \d+ .*serving http:\/\/127\.0\.0\.1:\d+.*Stop it first/,
    )
    expect((await fetch(`${server.url}/api/knowledge?limit=1`)).status).toBe(200)
    await server.stop()
    server = undefined
    process.env.KNOWHUB_DATA_DIR = join(dir, 'copy')
    const local = await runCli('backup', join(dir, 'local.backup'), '--json')
    expect(local.code, local.stderr).toBe(0)
    expect(JSON.parse(local.stdout)).toMatchObject({ file: join(dir, 'local.backup'), migrations: expect.any(Number) })
    expect(local.stderr).not.toMatch(/running this command there/)
    const again = await runCli('restore', join(dir, 'local.backup'), '--data-dir', join(dir, 'third'), '--json')
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout).counts.resources).toBe(1)
  }, 420_000)

  it('sends PostgreSQL users to pg_dump and pg_restore, and explains itself in --help', async () => {
    process.env.DATABASE_URL = 'postgres://knowhub@127.0.0.1:1/knowhub'
    try {
      const backup = await runCli('backup', join(dir, 'pg.backup'))
      expect(backup.code).toBe(1)
      expect(backup.stderr).toMatch(/PostgreSQL server \(DATABASE_URL\): back it up with PostgreSQL's own tools, e\.g\. pg_dump/)
      const restore = await runCli('restore', file())
      expect(restore.code).toBe(1)
      expect(restore.stderr).toMatch(/pg_restore/)
    } finally {
      delete process.env.DATABASE_URL
    }
    expect(existsSync(join(dir, 'pg.backup'))).toBe(false)
    const help = await runCli('backup', '--help')
    expect(help.stdout).toMatch(/POST \/api\/admin\/backup/)
    expect((await runCli('restore', '--help')).stdout).toMatch(/--force/)
    const all = (await runCli('--help')).stdout
    expect(all).toMatch(/backup \[options\] <file>/)
    expect(all).toMatch(/restore \[options\] <file\|id>/)
  })
})
