/**
 * API tokens on both backends: created once (only a SHA-256 hash stored), verified,
 * listed without the token, revoked, expired; the authenticator's local and token
 * modes; and `knowhub token create|list|revoke` in-process against PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTokenService, hashToken, type TokenService } from '../../src/auth/tokens.js'
import { main } from '../../src/cli/main.js'
import type { Io } from '../../src/cli/output.js'
import { isKnowHubError } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { createAuthenticator } from '../../src/auth/authenticate.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, createTestDatabase, openTestStore, type TestDatabase } from '../helpers/stores.js'

async function rejects(promise: Promise<unknown>, code: string): Promise<void> {
  try {
    await promise
  } catch (error) {
    expect(isKnowHubError(error), String(error)).toBe(true)
    expect((error as { code: string }).code).toBe(code)
    return
  }
  throw new Error(`expected ${code}`)
}

describe.each(BACKENDS)('token service on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let now = new Date('2026-03-05T12:00:00Z')
  const clock = { now: () => now }
  let tokens: TokenService

  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore(backend))
  })
  afterAll(async () => cleanup?.())
  beforeEach(async () => {
    await store.db.query(sql`TRUNCATE knowhub_token`)
    now = new Date('2026-03-05T12:00:00Z')
    tokens = createTokenService({ db: store.db, clock, cacheTtlMs: 0 })
  })

  it('creates a kh_ token shown once; only its hash is stored', async () => {
    expect(await tokens.hasAny()).toBe(false)
    const created = await tokens.create({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'], name: 'laptop' })
    expect(created.token).toMatch(/^kh_[A-Za-z0-9_-]{43}$/)
    expect(created).toMatchObject({ id: expect.stringMatching(/^tok_[a-z0-9]{12}$/), name: 'laptop', status: 'active', prefix: created.token.slice(0, 10) })
    expect(created.principal).toEqual({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
    const rows = await store.db.query(sql`SELECT * FROM knowhub_token`)
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(created.token)
    expect(rows[0]!.token_hash).toBe(hashToken(created.token))
    expect(await tokens.hasAny()).toBe(true)
    const listed = await tokens.list()
    expect(listed).toHaveLength(1)
    expect(listed[0]).not.toHaveProperty('token')
    expect(JSON.stringify(listed)).not.toContain(created.token.slice(10))
  })

  it('authenticates the token as its principal, and nothing else', async () => {
    const { token } = await tokens.create({ agent: 'research_agent', project: 'p1' })
    expect(await tokens.authenticate(token)).toEqual({ agent: 'research_agent', project: 'p1', permissions: ['read', 'write'] })
    expect(await tokens.authenticate(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined()
    expect(await tokens.authenticate('kh_short')).toBeUndefined()
    expect(await tokens.authenticate('')).toBeUndefined()
    expect(await tokens.authenticate(hashToken(token))).toBeUndefined()
  })

  it('revokes (idempotently); unknown ids are not_found', async () => {
    const a = await tokens.create({ user: 'a' })
    const b = await tokens.create({ user: 'b' })
    const revoked = await tokens.revoke(a.id)
    expect(revoked.status).toBe('revoked')
    expect((await tokens.revoke(a.id)).revoked_at).toBe(revoked.revoked_at)
    expect(await tokens.authenticate(a.token)).toBeUndefined()
    expect(await tokens.authenticate(b.token)).toBeDefined()
    await rejects(tokens.revoke('tok_doesnotexist'), 'not_found')
    await rejects(tokens.revoke("x' OR 1=1"), 'not_found')
    await tokens.revoke(b.id)
    expect(await tokens.hasAny()).toBe(false)
    expect((await tokens.list()).map((t) => t.status)).toEqual(['revoked', 'revoked'])
  })

  it('expires', async () => {
    const { token } = await tokens.create({ user: 'temp', expires_at: '2026-03-06T12:00:00Z' })
    expect(await tokens.authenticate(token)).toBeDefined()
    now = new Date('2026-03-06T12:00:01Z')
    expect(await tokens.authenticate(token)).toBeUndefined()
    expect(await tokens.hasAny()).toBe(false)
    expect((await tokens.list())[0]!.status).toBe('expired')
    await rejects(tokens.create({ user: 'late', expires_at: '2020-01-01T00:00:00Z' }), 'validation_error')
  })

  it('validates the principal: at least one id, known permissions, no unknown fields', async () => {
    await rejects(tokens.create({ permissions: ['read'] }), 'validation_error')
    await rejects(tokens.create({ user: 'x', permissions: ['root'] }), 'validation_error')
    await rejects(tokens.create({ user: 'x', permissions: [] }), 'validation_error')
    await rejects(tokens.create({ user: 'bad id with spaces' }), 'validation_error')
    await rejects(tokens.create({ user: 'x', superuser: true }), 'validation_error')
  })

  it('caches verified tokens; a revoke through the service takes effect at once', async () => {
    const cached = createTokenService({ db: store.db, clock, cacheTtlMs: 60_000 })
    const { token, id } = await cached.create({ user: 'c' })
    expect(await cached.authenticate(token)).toBeDefined()
    await cached.revoke(id)
    expect(await cached.authenticate(token)).toBeUndefined()
  })
})

describe('authenticator', () => {
  const local = Principal.parse({ user: 'local', permissions: ['admin'] })
  const alice = Principal.parse({ user: 'alice' })
  let exists = false
  const verifier = {
    verify: async (token: string) => (token === `kh_${'a'.repeat(43)}` ? { id: 'tok_aaaaaaaaaaaa', principal: alice } : undefined),
    hasAny: async () => exists,
  }
  const request = (authorization?: string) => new Request('http://127.0.0.1/api/knowledge', authorization ? { headers: { authorization } } : {})

  it('local mode: no token is the local principal; a token sent is still checked', async () => {
    exists = false
    const authenticate = createAuthenticator({ tokens: verifier, localPrincipal: local, localMode: true })
    expect(await authenticate(request())).toEqual({ principal: local, key: 'local' })
    expect(await authenticate(request(`Bearer kh_${'a'.repeat(43)}`))).toEqual({ principal: alice, key: 'token:tok_aaaaaaaaaaaa' })
    await rejects(authenticate(request('Bearer nope')), 'unauthenticated')
    await rejects(authenticate(request('Token abc')), 'unauthenticated')
  })

  it('local mode ends for good once a token exists', async () => {
    exists = false
    let now = 0
    const authenticate = createAuthenticator({ tokens: verifier, localPrincipal: local, localMode: true, clock: { now: () => new Date(now) }, recheckMs: 1000 })
    expect((await authenticate(request())).key).toBe('local')
    exists = true
    now = 1000
    await rejects(authenticate(request()), 'unauthenticated')
    exists = false
    now = 5000
    await rejects(authenticate(request()), 'unauthenticated')
  })

  it('local mode ends at once when this process creates a token (no recheck window for anonymous requests)', async () => {
    exists = false
    // Tokens this process made before the server started (and since revoked) do not count.
    let created = 2
    const authenticate = createAuthenticator({
      tokens: { ...verifier, createdHere: () => created },
      localPrincipal: local,
      localMode: true,
      clock: { now: () => new Date(0) },
      recheckMs: 60_000,
    })
    expect((await authenticate(request())).key).toBe('local')
    // The token service counts what it creates; the stored check (hasAny) would only run after recheckMs.
    created = 3
    await rejects(authenticate(request()), 'unauthenticated')
  })

  it('token mode: a token is required', async () => {
    const authenticate = createAuthenticator({ tokens: verifier, localPrincipal: local, localMode: false })
    await rejects(authenticate(request()), 'unauthenticated')
    expect((await authenticate(request(`bearer   kh_${'a'.repeat(43)}`))).principal).toEqual(alice)
  })
})

describe('knowhub token create | list | revoke', () => {
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
    dir = mkdtempSync(join(tmpdir(), 'knowhub-cli-token-'))
    database = await createTestDatabase('postgres')
    for (const name of ['KNOWHUB_DATA_DIR', 'DATABASE_URL', 'KNOWHUB_SECRET_KEY', 'KNOWHUB_LOG_LEVEL']) saved[name] = process.env[name]
    process.env.KNOWHUB_DATA_DIR = dir
    process.env.DATABASE_URL = database.options.databaseUrl
    process.env.KNOWHUB_SECRET_KEY = Buffer.alloc(32, 1).toString('base64')
    process.env.KNOWHUB_LOG_LEVEL = 'silent'
  })
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('creates (printing the token once), lists without it, revokes', async () => {
    const created = await run('token', 'create', '--user', 'alice', '--org', 'acme', '--perm', 'read', '--perm', 'secrets:read', '--name', 'ci')
    expect(created.code).toBe(0)
    const token = created.out.trim()
    expect(token).toMatch(/^kh_[A-Za-z0-9_-]{43}$/)
    expect(created.err).toMatch(/created tok_[a-z0-9]{12} for user:alice org:acme \(read, secrets:read\)/)
    expect(created.err).toMatch(/shown only now/)
    const id = /created (tok_[a-z0-9]{12})/.exec(created.err)![1]!

    const listed = await run('token', 'list')
    expect(listed.out).toContain(id)
    expect(listed.out).toContain('active')
    expect(listed.out).not.toContain(token.slice(10))
    const json = JSON.parse((await run('token', 'list', '--json')).out) as Array<Record<string, unknown>>
    expect(json[0]).toMatchObject({ id, name: 'ci', status: 'active', principal: { user: 'alice', org: 'acme', permissions: ['read', 'secrets:read'] } })
    expect(json[0]).not.toHaveProperty('token')

    expect((await run('token', 'revoke', id)).out).toBe(`revoked ${id}`)
    expect((await run('token', 'list')).out).toContain('revoked')
    const missing = await run('token', 'revoke', 'tok_000000000000')
    expect(missing.code).toBe(1)
    expect(missing.err).toMatch(/not_found/)
    const invalid = await run('token', 'create', '--perm', 'read')
    expect(invalid.code).toBe(1)
    expect(invalid.err).toMatch(/validation_error.*at least one of user, agent, project, team, org/)
  })
})
