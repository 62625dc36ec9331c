/**
 * What the CLI beside a running server needs of it: the lock file names the server and its
 * local key (embedded database only), the local key is the local principal in either mode,
 * `/api/status` and `/api/tokens` for admins only, and the JSONL export and import routes.
 * Runs once per backend (vitest.config.ts): on PostgreSQL there is no lock file, so no local
 * key, and an admin token is what administers the server once a token exists.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/server/serve.js'
import { HUB_BACKEND, client, errorOf, openTestHub, type TestHub } from './helpers.js'

let t: TestHub
let server: RunningServer

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
  server = await t.start()
})
afterAll(async () => t?.close())

/** What `/api/status` says about the database of each backend. */
const DATABASE = {
  pglite: { database: 'pglite', pgvector: true },
  postgres: { database: 'postgres', pgvector: false },
  pgvector: { database: 'postgres', pgvector: true },
} as const

/** The lock file's server fields, when the hub runs on the embedded database. */
function lockOwner(): { pid: number; url?: string; key?: string } | undefined {
  const path = join(t.dataDir, 'db.lock')
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { pid: number; url?: string; key?: string }) : undefined
}

describe('a server beside the CLI', () => {
  it('writes its URL and local key into the embedded database lock (nothing without one)', () => {
    const owner = lockOwner()
    if (HUB_BACKEND === 'pglite') {
      expect(t.hub.config.databaseUrl).toBeUndefined()
      expect(owner).toMatchObject({ pid: process.pid, url: server.url, key: expect.stringMatching(/^khl_[\w-]{32}$/) })
    } else {
      // A PostgreSQL server is held by nobody: no lock file, and nothing to announce in.
      expect(t.hub.config.databaseUrl).toMatch(/^postgres(ql)?:\/\//)
      expect(owner).toBeUndefined()
      expect(t.hub.store.announceServer({ url: server.url, key: 'khl_x' })).toBe(false)
      expect(existsSync(join(t.dataDir, 'db.lock'))).toBe(false)
    }
  })

  it('answers status and creates tokens for the local principal (local mode); refuses others', async () => {
    const local = client(server.url)
    const status = await local.get('/api/status')
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({
      entries: 0,
      principal: { user: 'local' },
      embedder: { dimension: 64, convention: null, calibration: { source: 'builtin' } },
      ...DATABASE[HUB_BACKEND],
    })
    // Where the data is, as the hub operator sees it: the data folder, or the PostgreSQL server's host (never its credentials).
    const where = HUB_BACKEND === 'pglite' ? t.hub.config.dataDir : new URL(t.hub.config.databaseUrl!).host
    expect(status.body.location).toBe(where)
    expect(String(status.body.location)).not.toContain('@')

    const created = await local.post('/api/tokens', { user: 'alice', org: 'acme' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ principal: { user: 'alice', org: 'acme', permissions: ['read', 'write'] }, token: expect.stringMatching(/^kh_/) })

    // Alice may read and write, but is no admin.
    const alice = client(server.url, created.body.token as string)
    for (const response of [await alice.get('/api/status'), await alice.post('/api/tokens', { user: 'bob' }), await alice.get('/api/tokens')]) {
      expect(response.status).toBe(403)
      expect(errorOf(response)).toMatchObject({ code: 'forbidden', details: { permission: 'admin' } })
    }
  })

  it('the local key (embedded database) or an admin token (PostgreSQL) administers it once tokens exist; a wrong key is refused', async () => {
    const owner = lockOwner()
    let credential: string
    if (HUB_BACKEND === 'pglite') {
      credential = owner!.key!
    } else {
      expect(owner).toBeUndefined()
      // The hub operator's token (since #27 an org admin's reach ends at its org).
      credential = (await t.hub.tokens.create({ user: 'ops', permissions: ['hub:admin'] })).token
    }
    const admin = client(server.url, credential)
    const status = await admin.get('/api/status')
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ entries: 0, ...DATABASE[HUB_BACKEND] })
    const listed = await admin.get('/api/tokens')
    expect(listed.status).toBe(200)
    expect((listed.body.items as Array<{ principal: { user: string } }>).map((i) => i.principal.user)).toContain('alice')
    const alice = (listed.body.items as Array<{ id: string; principal: { user: string } }>).find((i) => i.principal.user === 'alice')!
    expect((await admin.post(`/api/tokens/${alice.id}/revoke`)).body).toMatchObject({ id: alice.id, status: 'revoked' })
    // A bad token body is a validation error naming the field.
    const bad = await admin.post('/api/tokens', { permissions: ['read'] })
    expect(bad.status).toBe(400)
    expect(errorOf(bad)).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'user' }] } })
    const wrong = await client(server.url, `${credential.slice(0, -1)}${credential.endsWith('x') ? 'y' : 'x'}`).get('/api/status')
    expect(wrong.status).toBe(401)
  })
})

describe('JSONL export and import over HTTP', () => {
  it('exports visible entries and imports them back: skip, conflict, a bad line (all or nothing), partial', async () => {
    const owner = lockOwner()
    const key = owner?.key ?? (await t.hub.tokens.create({ user: 'local', permissions: ['read', 'write', 'admin'] })).token
    const me = client(server.url, key)
    const saved = await me.post('/api/knowledge', { task: 'Deploy with pnpm in Docker', content: 'corepack enable first', types: ['tool'] })
    expect(saved.status).toBe(201)

    const exported = await fetch(`${server.url}/api/knowledge/export`, { headers: { authorization: `Bearer ${key}` } })
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson')
    const jsonl = await exported.text()
    const lines = jsonl.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: saved.body.id, versions: [] })

    const ndjson = { 'content-type': 'application/x-ndjson' }
    expect((await me.post('/api/knowledge/import?on_conflict=skip', jsonl, ndjson)).body).toEqual({ imported: 0, skipped: 1, errors: [] })
    const conflict = await me.post('/api/knowledge/import', jsonl, ndjson)
    expect(conflict.body).toMatchObject({ imported: 0, errors: [{ line: 1, code: 'conflict' }] })

    const other = JSON.stringify({ ...JSON.parse(lines[0]!), id: 'knowledge-20260101000000-abcd' })
    const withBad = `${other}\n{"not":"an entry"}\n`
    const atomic = await me.post('/api/knowledge/import', withBad, ndjson)
    expect(atomic.body).toMatchObject({ imported: 0, errors: [{ line: 2 }] })
    expect((await me.get('/api/knowledge/knowledge-20260101000000-abcd')).status).toBe(404)
    const partial = await me.post('/api/knowledge/import?mode=partial', withBad, ndjson)
    expect(partial.body).toMatchObject({ imported: 1, errors: [{ line: 2 }] })

    const badQuery = await me.post('/api/knowledge/import?mode=sometimes', jsonl, ndjson)
    expect(badQuery.status).toBe(400)
    expect(errorOf(badQuery).code).toBe('validation_error')
  })
})
