/**
 * Several KnowHub servers on one PostgreSQL database (docs/scale.md): two real `knowhub start`
 * processes, started at the same moment on an empty database, sharing nothing but it. Writes
 * through one are read through the other at once; concurrent feedback through both loses no
 * count; a revoked token is refused by both within a second; no response is ever stale.
 * On every PostgreSQL backend of the run (with and without pgvector).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMigrations } from '../../src/store/migrate.js'
import { runCli } from '../helpers/cli.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { SERVER_BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'
import pg from 'pg'

const SECRET_KEY = Buffer.alloc(32, 9).toString('base64')

// Response bodies are checked field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

async function call(server: KnowHubProcess, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

describe.each(SERVER_BACKENDS)('two KnowHub servers on one PostgreSQL database (%s)', (backend) => {
  let database: TestDatabase
  let a: KnowHubProcess
  let b: KnowHubProcess
  let alice: string
  const saved: Record<string, string | undefined> = {}
  const env = (): Record<string, string> => ({
    DATABASE_URL: database.options.databaseUrl!,
    KNOWHUB_EMBEDDER: 'hashed',
    KNOWHUB_SECRET_KEY: SECRET_KEY,
    KNOWHUB_RATE_LIMIT: '0',
    KNOWHUB_LOG_LEVEL: 'info',
  })

  /** Creates a token through a third process on the same database (the CLI, in-process). */
  async function createToken(user: string): Promise<{ token: string; id: string }> {
    const run = await runCli('token', 'create', '--user', user, '--org', 'acme', '--perm', 'read', '--perm', 'write')
    expect(run.code, run.stderr).toBe(0)
    return { token: run.stdout.trim(), id: /created (tok_[a-z0-9]+)/.exec(run.stderr)![1]! }
  }

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    // Both at once, on an empty database: they race for the migrations.
    ;[a, b] = await Promise.all([startKnowHubProcess({ env: env() }), startKnowHubProcess({ env: env() })])
    for (const name of ['DATABASE_URL', 'KNOWHUB_SECRET_KEY', 'KNOWHUB_LOG_LEVEL', 'KNOWHUB_EMBEDDER']) saved[name] = process.env[name]
    Object.assign(process.env, env(), { KNOWHUB_LOG_LEVEL: 'silent' })
    alice = (await createToken('alice')).token
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    await database?.drop()
  })

  it('both starting at once apply each migration exactly once between them', async () => {
    const names = (await loadMigrations()).map((m) => m.name)
    const applied = [...a.stderr, ...b.stderr].flatMap((line) => {
      const entry = JSON.parse(line) as { msg?: string; message?: string; name?: string }
      return (entry.msg ?? entry.message) === 'store.migration.applied' ? [entry.name] : []
    })
    expect(applied.sort()).toEqual([...names].sort())
    const client = new pg.Client({ connectionString: database.adminUrl })
    await client.connect()
    const { rows } = await client.query<{ name: string }>('SELECT name FROM knowhub_migrations ORDER BY name')
    await client.end()
    expect(rows.map((r) => r.name)).toEqual([...names].sort())
  })

  it('reads through one server what was written through the other, at once', async () => {
    const saved = await call(a, alice, 'POST', '/api/knowledge', { task: 'Deploy with pnpm in Docker', content: 'corepack enable first', types: ['tool'] })
    expect(saved.status).toBe(201)
    const id = saved.body.id as string
    expect((await call(b, alice, 'GET', `/api/knowledge/${id}`)).body).toMatchObject({ id, content: 'corepack enable first' })

    const edited = await call(b, alice, 'PATCH', `/api/knowledge/${id}`, { content: 'corepack enable, then pnpm install --frozen-lockfile' })
    expect(edited.status).toBe(200)
    expect((await call(a, alice, 'GET', `/api/knowledge/${id}`)).body).toMatchObject({
      content: 'corepack enable, then pnpm install --frozen-lockfile',
      version: edited.body.version,
    })
    expect((await call(a, alice, 'GET', `/api/knowledge/${id}/versions`)).body.versions.length).toBeGreaterThanOrEqual(1)

    expect((await call(a, alice, 'DELETE', `/api/knowledge/${id}`)).status).toBe(200)
    expect((await call(b, alice, 'GET', `/api/knowledge/${id}`)).status).toBe(404)
  })

  it('adds exactly 200 helpful cases from 100 + 100 concurrent requests through both servers', async () => {
    const id = (await call(a, alice, 'POST', '/api/knowledge', { task: 'Retry flaky uploads', content: 'exponential backoff', types: ['strategy'] })).body.id
    const feedback = (server: KnowHubProcess, i: number) =>
      call(server, alice, 'PUT', `/api/knowledge/${id}`, { add_helpful_case: { task: `case ${i}`, outcome: 'worked' } })
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => [feedback(a, i), feedback(b, 100 + i)]).flat())
    expect(results.map((r) => r.status)).toEqual(Array(200).fill(200))
    for (const server of [a, b]) {
      const entry = (await call(server, alice, 'GET', `/api/knowledge/${id}`)).body
      expect(entry.eval.helpful).toBe(200)
      expect(entry.eval.helpful_history).toHaveLength(200)
      expect(new Set(entry.eval.helpful_history.map((h: { task: string }) => h.task)).size).toBe(200)
    }
  })

  it('never answers a search from a stale cache: a write through one server shows in the next search through the other', async () => {
    const search = async (server: KnowHubProcess) =>
      (await call(server, alice, 'GET', `/api/knowledge/search?q=${encodeURIComponent('kafka consumer lag')}&top_k=5&min_score=0`)).body
    const first = await call(a, alice, 'POST', '/api/knowledge', { task: 'Kafka consumer lag alerts', content: 'alert on lag growth', types: ['tool'] })
    // The same search twice on each server: a response cache, if any, holds it now.
    for (const server of [a, b, a, b]) expect((await search(server)).results.map((r: { id: string }) => r.id)).toEqual([first.body.id])

    const second = await call(b, alice, 'POST', '/api/knowledge', { task: 'Kafka consumer lag after rebalance', content: 'pin partitions', types: ['tool'] })
    for (const server of [a, b]) expect((await search(server)).results.map((r: { id: string }) => r.id).sort()).toEqual([first.body.id, second.body.id].sort())

    await call(b, alice, 'PUT', `/api/knowledge/${first.body.id}`, { add_helpful_case: { task: 'lag', outcome: 'found it' } })
    const seen = (await search(a)).results.find((r: { id: string }) => r.id === first.body.id)
    expect(seen.eval.helpful).toBe(1)

    await call(a, alice, 'POST', `/api/knowledge/${second.body.id}/archive`)
    expect((await search(b)).results.map((r: { id: string }) => r.id)).toEqual([first.body.id])
  })

  it('refuses a revoked token on both servers within a second', async () => {
    const { token, id } = await createToken('bob')
    // Both servers have verified (and may remember) the token.
    for (const server of [a, b]) expect((await call(server, token, 'GET', '/api/knowledge')).status).toBe(200)
    const revoked = await runCli('token', 'revoke', id)
    expect(revoked.stdout).toBe(`revoked ${id}`)
    const start = Date.now()
    const refusedAfter = await Promise.all(
      [a, b].map(async (server) => {
        for (;;) {
          const status = (await call(server, token, 'GET', '/api/knowledge')).status
          if (status === 401) return Date.now() - start
          expect(status).toBe(200)
          if (Date.now() - start > 5_000) return Infinity
          await new Promise((resolve) => setTimeout(resolve, 25))
        }
      }),
    )
    for (const ms of refusedAfter) expect(ms).toBeLessThan(1_000)
    // Other tokens are unaffected.
    for (const server of [a, b]) expect((await call(server, alice, 'GET', '/api/knowledge')).status).toBe(200)
  })
})
