/**
 * The resource service on BOTH backends (PGlite and a real PostgreSQL): CRUD with
 * path-like ids, bad ids, visibility, who may write, secrets (encrypted in the row,
 * absent unless allowed, never in logs or errors), expiry, list and expand, rotation.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Clock } from '../../src/core/clock.js'
import { isKnowHubError, type ErrorCode } from '../../src/core/errors.js'
import type { Logger } from '../../src/core/logger.js'
import { Principal, memberScopes, visibleScopes } from '../../src/core/principal.js'
import { resourceIdFromPath } from '../../src/core/resources.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService } from '../../src/knowledge/service.js'
import { loadOrCreateKey } from '../../src/resources/key-file.js'
import { checkSecretKey, rotateKeyFile, rotateSecrets } from '../../src/resources/rotate.js'
import { SecretKey, createSecretBox } from '../../src/resources/secrets.js'
import { createResourceService, type ResourceService } from '../../src/resources/service.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'
import { seededRandom } from '../../src/core/random.js'

const alice = Principal.parse({ user: 'alice', agent: 'research', project: 'p1', team: 't1', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
const carol = Principal.parse({ user: 'carol', project: 'p1', org: 'acme', permissions: ['read', 'write'] })
const dave = Principal.parse({ user: 'dave', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
const bob = Principal.parse({ user: 'bob', project: 'p2', org: 'other', permissions: ['read', 'write', 'secrets:read'] })
const admin = Principal.parse({ user: 'root', org: 'acme', permissions: ['admin'] })
const reader = Principal.parse({ user: 'reader', org: 'acme', permissions: ['read'] })

const PASSWORD = 'SecurePass123-Zq9'
const COOKIE = 'session_id=abc123XYZ; auth_token=xyz789QQ'

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  try {
    await promise
  } catch (error) {
    if (!isKnowHubError(error, code)) throw new Error(`expected ${code}, got ${String((error as { code?: string }).code)}: ${(error as Error).message}`)
    return error as Error
  }
  throw new Error(`expected ${code}, but it succeeded`)
}

function fixedClock(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso)
  return { now: () => new Date(now), set: (next) => void (now = new Date(next)) }
}

/** A logger that keeps every line as text. */
function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`)
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

describe.each(BACKENDS)('resources on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let key: SecretKey
  let clock: ReturnType<typeof fixedClock>
  let logger: ReturnType<typeof captureLogger>
  let resources: ResourceService

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    await store.db.query(sql`DELETE FROM resources`) // faster than TRUNCATE on PGlite for a few rows
    key = SecretKey.generate()
    clock = fixedClock('2026-03-06T12:00:00Z')
    logger = captureLogger()
    resources = createResourceService({ store, secrets: createSecretBox(key), logger, clock })
  })

  const credential = {
    id: 'credentials/website_a',
    title: 'Site A test account',
    body: 'Log in directly; 100 logins a day',
    secure_body: `account: user@example.com\npassword: ${PASSWORD}`,
    content_type: 'credential',
    metadata: { acquired_at: '2026-03-06T10:00:00Z' },
    scopes: ['org:acme'],
  }

  it('saves, gets, updates, lists and deletes a resource with a path-like id', async () => {
    const code = {
      id: 'code/selenium/undetected_login',
      title: 'Selenium login that avoids detection',
      body: 'import undetected_chromedriver as uc\n\ndriver = uc.Chrome()',
      content_type: 'code',
      metadata: { language: 'python' },
    }
    const saved = await resources.save(code, alice)
    expect(saved).toEqual({
      ...code,
      scopes: ['user:alice'],
      owner: 'user:alice',
      has_secret: false,
      expired: false,
      version: 1,
      created_at: '2026-03-06T12:00:00.000Z',
      updated_at: '2026-03-06T12:00:00.000Z',
    })
    expect(await resources.get('code/selenium/undetected_login', alice)).toEqual(saved)
    clock.set('2026-03-06T13:00:00Z')
    const updated = await resources.update(code.id, { body: 'driver = uc.Chrome(headless=True)', scopes: ['user:alice', 'project:p1'] }, alice)
    expect(updated).toMatchObject({
      body: 'driver = uc.Chrome(headless=True)',
      title: code.title,
      scopes: ['user:alice', 'project:p1'],
      version: 2,
      updated_at: '2026-03-06T13:00:00.000Z',
      created_at: saved.created_at,
    })
    expect((await resources.get(code.id, carol)).body).toBe('driver = uc.Chrome(headless=True)')
    const page = await resources.list({}, alice)
    expect(page.items.map((r) => r.id)).toEqual([code.id])
    expect(page.items[0]).not.toHaveProperty('body')
    await resources.delete(code.id, alice)
    await expectCode(resources.get(code.id, alice), 'not_found')
    await expectCode(resources.delete(code.id, alice), 'not_found')
  })

  it('namespaces ids by owner: saving an id you own updates it, another owner gets a resource of its own', async () => {
    const first = await resources.save(credential, alice)
    // Alice again (seed resource_save refreshing it): updated in place; fields given replace, the others are kept.
    clock.set('2026-03-06T12:30:00Z')
    const again = await resources.upsert({ id: credential.id, title: 'refreshed', secure_body: 'password: Fresh-1' }, alice)
    expect(again.created).toBe(false)
    expect(again.resource).toMatchObject({
      title: 'refreshed',
      version: 2,
      scopes: ['org:acme'],
      body: credential.body,
      content_type: 'credential',
      owner: 'user:alice',
      created_at: first.created_at,
    })
    expect((await resources.get(credential.id, alice, { includeSecret: true })).secure_body).toBe('password: Fresh-1')
    // Bob (another org) cannot see it: his save makes his own (no conflict, no hint), and he reads his.
    await expectCode(resources.get(credential.id, bob), 'not_found')
    const bobs = await resources.upsert({ ...credential, scopes: ['org:other'], secure_body: 'password: Bob-2' }, bob)
    expect(bobs).toMatchObject({ created: true, resource: { owner: 'user:bob', version: 1 } })
    expect((await resources.get(credential.id, bob, { includeSecret: true })).secure_body).toBe('password: Bob-2')
    expect((await resources.get(credential.id, alice, { includeSecret: true })).secure_body).toBe('password: Fresh-1')
    // Dave (same org) sees alice's; his save makes his own, which he resolves to first from then on.
    expect((await resources.get(credential.id, dave)).owner).toBe('user:alice')
    clock.set('2026-03-06T13:00:00Z')
    expect((await resources.upsert({ ...credential, title: 'dave', secure_body: 'password: Dave-3' }, dave)).created).toBe(true)
    expect((await resources.get(credential.id, dave, { includeSecret: true })).secure_body).toBe('password: Dave-3')
    expect((await resources.get(credential.id, alice)).owner).toBe('user:alice')
    // Carol sees alice's and dave's, both in org:acme: the oldest first; ?owner picks one.
    expect((await resources.get(credential.id, carol)).owner).toBe('user:alice')
    expect((await resources.get(credential.id, carol, { owner: 'user:dave' })).title).toBe('dave')
    await expectCode(resources.get(credential.id, carol, { owner: 'user:bob' }), 'not_found')
    await expectCode(resources.get(credential.id, carol, { owner: 'public' }), 'validation_error')
    // Lists show each (owner, id) the caller sees, ordered by id then owner; cursors walk them all.
    expect((await resources.list({}, carol)).items.map((r) => `${r.id} ${r.owner}`)).toEqual([`${credential.id} user:alice`, `${credential.id} user:dave`])
    const walked: string[] = []
    for (let cursor: string | undefined, n = 0; n < 5; n++) {
      const page = await resources.list({ limit: 1, ...(cursor ? { cursor } : {}) }, carol)
      walked.push(...page.items.map((r) => r.owner))
      if (!page.next_cursor) break
      cursor = page.next_cursor
    }
    expect(walked).toEqual(['user:alice', 'user:dave'])
    // Expanding resource_ids resolves the same way, per caller.
    for (const [who, owner] of [
      [alice, 'user:alice'],
      [bob, 'user:bob'],
      [carol, 'user:alice'],
      [dave, 'user:dave'],
    ] as const) {
      expect((await resources.expandResources([credential.id], who)).map((r) => r.owner)).toEqual([owner])
    }
    // PUT and DELETE resolve the same way: dave changes his own; carol may change neither.
    expect((await resources.update(credential.id, { body: 'dave edit' }, dave)).owner).toBe('user:dave')
    await expectCode(resources.update(credential.id, { body: 'x' }, carol), 'forbidden')
    await expectCode(resources.update(credential.id, { body: 'x' }, carol, { owner: 'user:dave' }), 'forbidden')
    expect((await resources.get(credential.id, alice)).body).toBe(credential.body)
    expect(await resources.delete(credential.id, dave)).toEqual({ owner: 'user:dave' })
    expect((await resources.get(credential.id, dave)).owner).toBe('user:alice')
    expect((await resources.get(credential.id, bob)).owner).toBe('user:bob')
  })

  it('resolves an id the caller does not own by scope priority (user > project > agent > team > org > public), then age', async () => {
    await resources.save({ id: 'shared/x', title: 'org copy', scopes: ['org:acme'] }, dave)
    clock.set('2026-03-06T13:00:00Z')
    await resources.save({ id: 'shared/x', title: 'public copy', scopes: ['public'], owner: 'user:root' }, admin)
    clock.set('2026-03-06T14:00:00Z')
    await resources.save({ id: 'shared/x', title: 'project copy', scopes: ['project:p1'] }, alice)
    // carol: project:p1 beats org:acme beats public, though the project copy is the newest.
    expect((await resources.get('shared/x', carol)).title).toBe('project copy')
    expect((await resources.expandResources(['shared/x'], carol)).map((r) => r.title)).toEqual(['project copy'])
    expect((await resources.get('shared/x', reader)).title).toBe('org copy')
    expect((await resources.get('shared/x', bob)).title).toBe('public copy')
    // Own first, whatever the scopes.
    expect((await resources.get('shared/x', dave)).title).toBe('org copy')
    expect((await resources.get('shared/x', admin)).title).toBe('public copy')
  })

  it("resolves among the caller's own namespaces in the order a save picks its owner: user, then agent, project, team, org", async () => {
    // An agent-only caller of alice's agent saves first, in the agent's scope (priority above org).
    const researchAgent = Principal.parse({ agent: 'research', permissions: ['read', 'write'] })
    expect((await resources.save({ id: 'mine/x', title: 'agent copy' }, researchAgent)).owner).toBe('agent:research')
    clock.set('2026-03-06T13:00:00Z')
    await resources.save({ id: 'mine/x', title: 'team copy', scopes: ['team:t1'], owner: 'team:t1' }, alice)
    expect((await resources.get('mine/x', alice)).title).toBe('agent copy')
    // Alice saves it with no owner: her user namespace, in the org scope; reading it back gives hers.
    clock.set('2026-03-06T14:00:00Z')
    const saved = await resources.upsert({ id: 'mine/x', title: 'alice copy', scopes: ['org:acme'] }, alice)
    expect(saved).toMatchObject({ created: true, resource: { owner: 'user:alice' } })
    expect((await resources.get('mine/x', alice)).title).toBe('alice copy')
    expect((await resources.expandResources(['mine/x'], alice)).map((r) => r.owner)).toEqual(['user:alice'])
    expect((await resources.update('mine/x', { body: 'edited' }, alice)).owner).toBe('user:alice')
    // The agent alone still resolves to its own; the others keep theirs.
    expect((await resources.get('mine/x', researchAgent)).title).toBe('agent copy')
    expect(await resources.delete('mine/x', alice)).toEqual({ owner: 'user:alice' })
    expect((await resources.get('mine/x', alice)).title).toBe('agent copy')
  })

  it('never reveals a resource the caller cannot see when saving; its owner sees it with any of its tokens', async () => {
    // Alice's resource in org:acme only; a token of alice without the org id still sees and updates it
    // (its owner), but reads no secret (none of the token's ids is among its scopes).
    await resources.save(credential, alice)
    const aliceAlone = Principal.parse({ user: 'alice', permissions: ['read', 'write', 'secrets:read'] })
    const seen = await resources.get(credential.id, aliceAlone, { includeSecret: true })
    expect(seen.owner).toBe('user:alice')
    expect('secure_body' in seen).toBe(false)
    const refreshed = await resources.upsert({ id: credential.id, title: 'from the narrow token' }, aliceAlone)
    expect(refreshed).toMatchObject({ created: false, resource: { scopes: ['org:acme'], version: 2 } })
    // Another org's principal saving the same id never meets it: created, 201-style, every time.
    for (const who of [bob, Principal.parse({ user: 'eve', org: 'evil', permissions: ['read', 'write'] })]) {
      expect((await resources.upsert({ id: credential.id, title: 'squat?' }, who)).created).toBe(true)
      expect((await resources.upsert({ id: credential.id, title: 'again' }, who)).created).toBe(false)
    }
    expect((await resources.get(credential.id, alice)).title).toBe('from the narrow token')
    // An org admin never writes into another owner's namespace (issue 27: it planted resources that
    // the owner's id resolution preferred), whether that owner exists or not: the same refusal.
    const planted = await expectCode(resources.save({ id: credential.id, title: 'admin', owner: 'user:alice' }, admin), 'forbidden')
    const unknown = await expectCode(resources.save({ id: credential.id, title: 'admin', owner: 'user:nobody-at-all' }, admin), 'forbidden')
    expect(planted.message.replaceAll('alice', 'X')).toBe(unknown.message.replaceAll('nobody-at-all', 'X'))
    // Only the hub operator can; an id taken there by a resource it cannot see is a conflict
    // (nothing else about it is said), one it sees is updated.
    const operator = Principal.parse({ user: 'root', org: 'acme', permissions: ['hub:admin'] })
    const conflict = await expectCode(resources.save({ id: credential.id, title: 'admin', owner: 'user:bob' }, operator), 'conflict')
    expect(JSON.stringify(conflict)).not.toMatch(/org:other|squat|again/)
    expect((await resources.upsert({ id: credential.id, title: 'admin edit', owner: 'user:alice' }, operator)).created).toBe(false)
    // Moving a resource to an owner that has the id already is a conflict, and changes nothing.
    await resources.save({ id: 'moving/x', title: 'as agent', owner: 'agent:research', scopes: ['org:acme'] }, alice)
    await resources.save({ id: 'moving/x', title: 'as user', scopes: ['org:acme'] }, alice)
    await expectCode(resources.update('moving/x', { owner: 'agent:research' }, alice, { owner: 'user:alice' }), 'conflict')
    expect((await resources.get('moving/x', alice, { owner: 'user:alice' })).version).toBe(1)
  })

  it('refuses a secret nobody could read: a resource whose only scope is public', async () => {
    const error = await expectCode(resources.save({ ...credential, id: 'pub/s', scopes: ['public'], owner: 'user:root' }, admin), 'validation_error')
    expect((error as unknown as { details: { issues: Array<{ path: string }> } }).details.issues[0]!.path).toBe('secure_body')
    expect(error.message).toMatch(/only scope is public/)
    const plain = await resources.save({ id: 'pub/s', title: 'public note', scopes: ['public'], owner: 'user:root' }, admin)
    expect(plain.scopes).toEqual(['public'])
    await expectCode(resources.update('pub/s', { secure_body: 'x' }, admin), 'validation_error')
    await resources.save({ ...credential, id: 'pub/acme', scopes: ['public', 'org:acme'], owner: 'user:root' }, admin)
    await expectCode(resources.update('pub/acme', { scopes: ['public'] }, admin), 'validation_error')
    expect((await resources.update('pub/acme', { scopes: ['public'], secure_body: null }, admin)).has_secret).toBe(false)
  })

  it('rejects traversal and malformed ids with validation_error', async () => {
    const bad = [
      '../etc/passwd',
      'code/../secret',
      'code/./x',
      '/abs/path',
      'code//x',
      'code/x/',
      'code\\x',
      'a\0b',
      '',
      '..',
      '.hidden',
      'code/%2e%2e/x',
      'sp ace',
      'x'.repeat(513),
      'ü/x',
    ]
    for (const id of bad) {
      await expectCode(resources.save({ ...credential, id }, alice), 'validation_error')
      await expectCode(resources.get(id, alice), 'validation_error')
      await expectCode(resources.update(id, { title: 't' }, alice), 'validation_error')
      await expectCode(resources.delete(id, alice), 'validation_error')
    }
    // The raw route path is decoded once and then validated.
    for (const raw of ['code/%2e%2e/secret', '%2E%2E/x', 'code%2F..%2Fx', 'a%00b', 'a%5Cb', '%2Fabs', 'bad%', 'code//x']) {
      expect(() => resourceIdFromPath(raw), raw).toThrow(expect.objectContaining({ code: 'validation_error' }))
    }
    expect(resourceIdFromPath('code/selenium/login')).toBe('code/selenium/login')
    expect(resourceIdFromPath('code%2Fselenium%2Flogin')).toBe('code/selenium/login')
    expect(resourceIdFromPath('cookies/site_a.v2@x+y~z-1')).toBe('cookies/site_a.v2@x+y~z-1')
  })

  it('rejects bad bodies: unknown fields, types, metadata dates; too_large for big bodies and secrets', async () => {
    await expectCode(resources.save({ ...credential, surprise: 1 }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, content_type: 'binary' }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, content_type: 'X-Bad' }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, metadata: { expires_at: 'tomorrow' } }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, title: '' }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, secure_body: '' }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, scopes: ['org acme'] }, alice), 'validation_error')
    await expectCode(resources.save({ ...credential, body: 'x'.repeat(1_048_577) }, alice), 'too_large')
    await expectCode(resources.save({ ...credential, secure_body: 'x'.repeat(65_537) }, alice), 'too_large')
    await expectCode(resources.update('credentials/website_a', {}, alice), 'validation_error')
    await expectCode(resources.update('credentials/website_a', { title: 'x' }, alice), 'not_found')
    await expectCode(resources.list({ limit: 0 }, alice), 'validation_error')
    await expectCode(resources.list({ cursor: 'garbage' }, alice), 'validation_error')
    const custom = await resources.save(
      { ...credential, id: 'x/har', content_type: 'x-har', metadata: { language: 'json', custom: { nested: [1, 2] } } },
      alice,
    )
    expect(custom.content_type).toBe('x-har')
    expect(custom.metadata).toEqual({ language: 'json', custom: { nested: [1, 2] } })
  })

  it('lets only the owner or an admin change or delete, and only into scopes the writer belongs to', async () => {
    await resources.save(credential, alice)
    await expectCode(resources.update(credential.id, { title: 'mine now' }, carol), 'forbidden')
    await expectCode(resources.delete(credential.id, carol), 'forbidden')
    await expectCode(resources.update(credential.id, { title: 'x' }, bob), 'not_found')
    await expectCode(resources.update(credential.id, { scopes: ['org:other'] }, alice), 'forbidden')
    await expectCode(resources.update(credential.id, { owner: 'user:carol' }, alice), 'forbidden')
    await expectCode(resources.save({ ...credential, id: 'c/2', scopes: ['org:other'] }, alice), 'forbidden')
    await expectCode(resources.save({ ...credential, id: 'c/3', scopes: ['public'] }, alice), 'forbidden')
    await expectCode(resources.save({ ...credential, id: 'c/4', owner: 'user:carol' }, alice), 'forbidden')
    await expectCode(resources.save({ ...credential, id: 'c/5' }, reader), 'forbidden')
    expect((await resources.update(credential.id, { title: 'by admin', scopes: ['org:acme', 'public'] }, admin)).scopes).toEqual(['org:acme', 'public'])
    expect((await resources.save({ ...credential, id: 'c/6', secure_body: undefined, scopes: ['public'], owner: 'user:root' }, admin)).scopes).toEqual([
      'public',
    ])
    await resources.delete(credential.id, admin)
  })

  it('stores only ciphertext: the row never contains the plaintext', async () => {
    await resources.save(credential, alice)
    await resources.save(
      {
        id: 'cookies/website_a',
        title: 'Site A cookie',
        body: 'for logged-in API calls',
        secure_body: COOKIE,
        content_type: 'cookie',
        metadata: { expires_at: '2026-03-07T10:00:00Z' },
        scopes: ['org:acme'],
      },
      alice,
    )
    const rows = await store.db.query(sql`SELECT * FROM resources`)
    const dump = JSON.stringify(rows)
    for (const secret of [PASSWORD, COOKIE, 'abc123XYZ', Buffer.from(COOKIE).toString('base64'), Buffer.from(PASSWORD).toString('hex')])
      expect(dump).not.toContain(secret)
    for (const row of rows) {
      expect(row.secure_body).toMatch(new RegExp(`^kh2\\.${key.id}\\.`))
      expect(row.secret_key_id).toBe(key.id)
    }
  })

  it('returns secure_body only when asked and allowed; otherwise the key is absent', async () => {
    await resources.save(credential, alice)
    const allowed = await resources.get(credential.id, alice, { includeSecret: true })
    expect(allowed.secure_body).toBe(credential.secure_body)
    expect(allowed.has_secret).toBe(true)
    expect((await resources.get(credential.id, dave, { includeSecret: true })).secure_body).toBe(credential.secure_body)
    expect((await resources.get(credential.id, admin, { includeSecret: true })).secure_body).toBe(credential.secure_body)
    // Not asked, no secrets:read, or read-only: absent — not empty, not null.
    for (const [who, options] of [
      [alice, {}],
      [alice, { includeSecret: false }],
      [carol, { includeSecret: true }],
      [reader, { includeSecret: true }],
    ] as const) {
      const r = await resources.get(credential.id, who, options)
      expect('secure_body' in r).toBe(false)
      expect(Object.keys(r)).not.toContain('secure_body')
      expect(JSON.stringify(r)).not.toContain(PASSWORD)
      expect(r.has_secret).toBe(true)
    }
    await expectCode(resources.get(credential.id, bob, { includeSecret: true }), 'not_found')
    // save, update, list and expand never carry it.
    const saved = await resources.save({ ...credential, id: 'c/b' }, alice)
    expect('secure_body' in saved).toBe(false)
    const updated = await resources.update('c/b', { title: 'renamed' }, alice)
    expect('secure_body' in updated).toBe(false)
    expect((await resources.get('c/b', alice, { includeSecret: true })).secure_body).toBe(credential.secure_body)
    for (const item of (await resources.list({}, alice)).items) expect('secure_body' in item).toBe(false)
    for (const item of await resources.expandResources([credential.id, 'c/b'], alice)) expect('secure_body' in item).toBe(false)
  })

  it('public alone does not grant secrets, not even to an admin', async () => {
    // Saving such a resource is refused now; rows from before that still exist.
    await resources.save({ ...credential, id: 'pub/secret', scopes: ['public', 'org:acme'], owner: 'user:root' }, admin)
    await store.db.query(sql`UPDATE resources SET scopes = '{public}' WHERE id = 'pub/secret'`)
    await resources.save({ ...credential, id: 'pub/acme', scopes: ['public', 'org:acme'], owner: 'user:root' }, admin)
    for (const who of [alice, bob, dave, admin]) {
      const r = await resources.get('pub/secret', who, { includeSecret: true })
      expect('secure_body' in r).toBe(false)
    }
    expect((await resources.get('pub/acme', dave, { includeSecret: true })).secure_body).toBe(credential.secure_body)
    expect('secure_body' in (await resources.get('pub/acme', bob, { includeSecret: true }))).toBe(false)
  })

  it('replaces and removes a secret on update', async () => {
    await resources.save(credential, alice)
    await resources.update(credential.id, { secure_body: 'password: NewPass456' }, alice)
    expect((await resources.get(credential.id, alice, { includeSecret: true })).secure_body).toBe('password: NewPass456')
    const removed = await resources.update(credential.id, { secure_body: null }, alice)
    expect(removed.has_secret).toBe(false)
    expect('secure_body' in (await resources.get(credential.id, alice, { includeSecret: true }))).toBe(false)
    const [row] = await store.db.query(sql`SELECT secure_body, secret_key_id FROM resources WHERE id = ${credential.id}`)
    expect(row).toEqual({ secure_body: null, secret_key_id: null })
  })

  it('a ciphertext moved to another resource, tampered, or under another key fails clearly without leaking', async () => {
    await resources.save(credential, alice)
    await resources.save({ ...credential, id: 'credentials/website_b', secure_body: 'password: OtherPass777' }, alice)
    await store.db.query(
      sql`UPDATE resources SET secure_body = (SELECT secure_body FROM resources WHERE id = ${credential.id}) WHERE id = 'credentials/website_b'`,
    )
    const moved = await expectCode(resources.get('credentials/website_b', alice, { includeSecret: true }), 'internal_error')
    expect(moved.message).not.toContain(PASSWORD)
    const [row] = await store.db.query<{ secure_body: string }>(sql`SELECT secure_body FROM resources WHERE id = ${credential.id}`)
    const parts = row!.secure_body.split('.')
    const tag = Buffer.from(parts[3]!, 'base64url')
    tag[5] = tag[5]! ^ 0x40
    await store.db.query(
      sql`UPDATE resources SET secure_body = ${[...parts.slice(0, 3), tag.toString('base64url'), parts[4]].join('.')} WHERE id = ${credential.id}`,
    )
    const tampered = await expectCode(resources.get(credential.id, alice, { includeSecret: true }), 'internal_error')
    expect(tampered.message).toMatch(/altered/)
    // Without asking for the secret the resource still reads fine.
    expect((await resources.get(credential.id, alice)).title).toBe(credential.title)
    const otherKey = createResourceService({ store, secrets: createSecretBox(SecretKey.generate()), logger, clock })
    await resources.save({ ...credential, id: 'c/k' }, alice)
    const wrong = await expectCode(otherKey.get('c/k', alice, { includeSecret: true }), 'config_error')
    expect(wrong.message).toContain(key.id)
    expect(`${moved.message}${tampered.message}${wrong.message}${JSON.stringify([moved, tampered, wrong])}`).not.toMatch(/SecurePass|OtherPass/)
  })

  it('never writes a secret into a log line or an error message, across every operation', async () => {
    const secrets = [PASSWORD, COOKIE, 'NewSecret-4242', 'BigSecret-9999']
    const errors: string[] = []
    const attempt = async (p: Promise<unknown>) => {
      try {
        await p
      } catch (error) {
        errors.push(`${(error as Error).message} ${JSON.stringify(error)} ${String((error as Error).stack)}`)
      }
    }
    await resources.save(credential, alice)
    await resources.save(
      { id: 'cookies/a', title: 'cookie', secure_body: COOKIE, content_type: 'cookie', metadata: { expires_at: '2026-03-01T00:00:00Z' }, scopes: ['org:acme'] },
      alice,
    )
    await resources.get(credential.id, alice, { includeSecret: true })
    await resources.get('cookies/a', dave, { includeSecret: true })
    await resources.get('cookies/a', carol, { includeSecret: true })
    await resources.update('cookies/a', { secure_body: 'NewSecret-4242' }, alice)
    await resources.list({ content_type: 'cookie,credential', expired: true }, alice)
    await resources.expandResources(['cookies/a', credential.id], alice)
    await attempt(resources.save({ ...credential, id: 'pub/x', secure_body: PASSWORD, scopes: ['public'], owner: 'user:root' }, admin)) // secret nobody could read
    await attempt(resources.save({ ...credential, id: 'x/1', secure_body: `BigSecret-9999${'x'.repeat(70_000)}` }, alice)) // too_large
    await attempt(resources.save({ ...credential, id: 'x/2', secure_body: PASSWORD, extra: PASSWORD }, alice)) // unknown field
    await attempt(resources.save({ ...credential, id: '../x', secure_body: PASSWORD }, alice)) // bad id
    await attempt(resources.save({ ...credential, id: 'x/3', secure_body: PASSWORD, scopes: ['org:other'] }, alice)) // forbidden scope
    await attempt(resources.update('cookies/a', { secure_body: COOKIE }, carol)) // forbidden
    await attempt(resources.update('cookies/a', { secure_body: 123 }, alice)) // wrong type
    await attempt(resources.update('cookies/a', { secure_body: `BigSecret-9999${'x'.repeat(70_000)}` }, alice)) // too_large
    await store.db.query(sql`UPDATE resources SET secure_body = ${createSecretBox(key).encrypt(PASSWORD, 'elsewhere', 'user:alice')} WHERE id = 'cookies/a'`)
    await attempt(resources.get('cookies/a', alice, { includeSecret: true })) // moved ciphertext
    await attempt(
      createResourceService({ store, secrets: createSecretBox(SecretKey.generate()), logger, clock }).get(credential.id, alice, { includeSecret: true }),
    ) // wrong key
    await rotateSecrets(store, key, SecretKey.generate(), { logger }).catch((error: Error) => errors.push(error.message))
    await resources.delete(credential.id, alice)
    expect(logger.lines.length).toBeGreaterThan(5)
    expect(errors.length).toBe(11)
    for (const line of [...logger.lines, ...errors]) {
      for (const secret of secrets) expect(line).not.toContain(secret)
      expect(line).not.toContain('abc123XYZ')
    }
  })

  it('flags expired cookies with expired: true, computed against the clock', async () => {
    const cookie = {
      id: 'cookies/website_a',
      title: 'Site A cookie',
      secure_body: COOKIE,
      content_type: 'cookie',
      metadata: { acquired_at: '2026-03-06T10:00:00Z', expires_at: '2026-03-07T10:00:00Z' },
      scopes: ['org:acme'],
    }
    await resources.save(cookie, alice)
    await resources.save({ ...cookie, id: 'cookies/old', metadata: { expires_at: '2026-03-01T00:00:00+08:00' } }, alice)
    await resources.save({ ...cookie, id: 'cookies/forever', metadata: {} }, alice)
    expect((await resources.get('cookies/website_a', alice)).expired).toBe(false)
    expect((await resources.get('cookies/old', alice)).expired).toBe(true)
    expect((await resources.list({ expired: true }, alice)).items.map((r) => r.id)).toEqual(['cookies/old'])
    expect((await resources.list({ expired: 'false' }, alice)).items.map((r) => r.id)).toEqual(['cookies/forever', 'cookies/website_a'])
    clock.set('2026-03-08T00:00:00Z')
    const later = await resources.get('cookies/website_a', alice, { includeSecret: true })
    expect(later.expired).toBe(true)
    expect(later.secure_body).toBe(COOKIE)
    expect((await resources.list({ expired: true }, alice)).items.map((r) => r.id)).toEqual(['cookies/old', 'cookies/website_a'])
  })

  it('takes a metadata date-time without an offset as UTC (Python isoformat), storing it with Z', async () => {
    const naive = await resources.save(
      { id: 'cookies/naive', title: 'naive', metadata: { acquired_at: '2026-03-06T10:00:00', expires_at: '2026-03-07T10:00:00.250' } },
      alice,
    )
    expect(naive.metadata).toEqual({ acquired_at: '2026-03-06T10:00:00Z', expires_at: '2026-03-07T10:00:00.250Z' })
    const [row] = await store.db.query<{ metadata: Record<string, string> }>(sql`SELECT metadata FROM resources WHERE id = 'cookies/naive'`)
    expect(row!.metadata.expires_at).toBe('2026-03-07T10:00:00.250Z')
    clock.set('2026-03-07T10:00:00.200Z')
    expect((await resources.get('cookies/naive', alice)).expired).toBe(false)
    clock.set('2026-03-07T10:00:00.300Z')
    expect((await resources.get('cookies/naive', alice)).expired).toBe(true)
    expect((await resources.list({ expired: true }, alice)).items.map((r) => r.id)).toEqual(['cookies/naive'])
    // Offsets are kept as given; an update takes naive times the same way; nonsense is still refused.
    expect((await resources.update('cookies/naive', { metadata: { expires_at: '2026-03-08T10:00:00+08:00' } }, alice)).metadata.expires_at).toBe(
      '2026-03-08T10:00:00+08:00',
    )
    expect((await resources.update('cookies/naive', { metadata: { expires_at: '2026-03-09T10:00' } }, alice)).metadata.expires_at).toBe('2026-03-09T10:00Z')
    await expectCode(resources.update('cookies/naive', { metadata: { expires_at: '2026-03-09' } }, alice), 'validation_error')
    await expectCode(resources.update('cookies/naive', { metadata: { expires_at: 'next tuesday' } }, alice), 'validation_error')
  })

  it('lists with filters and cursor pagination, ordered by id', async () => {
    const ids = ['code/a/1', 'code/a/2', 'code/b/1', 'cookies/x', 'credentials/y', 'notes/z']
    for (const id of ids) {
      const content_type = id.startsWith('code') ? 'code' : id.startsWith('cookies') ? 'cookie' : id.startsWith('credentials') ? 'credential' : 'text'
      await resources.save({ id, title: id, content_type, scopes: id === 'notes/z' ? ['project:p1'] : ['org:acme'] }, alice)
    }
    await resources.save({ id: 'code/a/3', title: 'bob', scopes: ['org:other'] }, bob)
    expect((await resources.list({ prefix: 'code/a/' }, alice)).items.map((r) => r.id)).toEqual(['code/a/1', 'code/a/2'])
    expect((await resources.list({ content_type: ['cookie', 'credential'] }, alice)).items.map((r) => r.id)).toEqual(['cookies/x', 'credentials/y'])
    expect((await resources.list({ scopes: 'project:p1' }, alice)).items.map((r) => r.id)).toEqual(['notes/z'])
    expect((await resources.list({ owner: 'user:bob' }, alice)).items).toEqual([])
    const seen: string[] = []
    let cursor: string | undefined
    for (;;) {
      const page = await resources.list({ limit: '4', ...(cursor ? { cursor } : {}) }, alice)
      seen.push(...page.items.map((r) => r.id))
      if (!page.next_cursor) break
      cursor = page.next_cursor
    }
    expect(seen).toEqual(ids)
  })

  it('expands resource_ids to the visible resources only: a visible entry does not make its resources visible', async () => {
    const knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
    await store.db.query(sql`DELETE FROM knowledge`)
    await resources.save({ ...credential, id: 'credentials/private', scopes: ['user:alice'] }, alice)
    await resources.save({ ...credential, id: 'code/shared', scopes: ['org:acme'] }, alice)
    const entry = await knowledge.save(
      {
        task: 'Log in to site A',
        content: 'Use the test account',
        types: ['tool'],
        scopes: ['org:acme'],
        resource_ids: ['credentials/private', 'code/shared', 'missing/one', '../bad'],
      },
      alice,
    )
    const seenByCarol = await knowledge.get(entry.id, carol)
    const expanded = await resources.expandResources(seenByCarol.resource_ids, carol)
    expect(expanded.map((r) => r.id)).toEqual(['code/shared'])
    expect(expanded[0]!.body).toBe(credential.body)
    expect('secure_body' in expanded[0]!).toBe(false)
    await expectCode(resources.get('credentials/private', carol), 'not_found')
    expect((await resources.expandResources(entry.resource_ids, alice)).map((r) => r.id)).toEqual(['credentials/private', 'code/shared'])
    expect(await resources.expandResources([], alice)).toEqual([])
  })

  it('enforces visibility for every read path over random principals and scopes (seeded)', async () => {
    const random = seededRandom(backend === 'pglite' ? 1234 : 4321)
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
    const pools = { user: ['u1', 'u2', 'u3'], project: ['p1', 'p2'], agent: ['a1', 'a2'], team: ['t1'], org: ['o1', 'o2'] }
    const allScopes = ['public', ...Object.entries(pools).flatMap(([kind, ids]) => ids.map((id) => `${kind}:${id}`))]
    const made: Array<{ id: string; scopes: string[] }> = []
    for (let i = 0; i < 24; i++) {
      // At most one id per kind, written by the hub operator holding exactly those ids (writers write only their own scopes; only the operator names another owner).
      const picked = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(allScopes))
      const scopes = picked.filter((scope, at) => picked.findIndex((other) => other.split(':')[0] === scope.split(':')[0]) === at)
      const writer = Principal.parse({ ...Object.fromEntries(scopes.filter((s) => s !== 'public').map((s) => s.split(':'))), permissions: ['hub:admin'] })
      const id = `r/${i}`
      const secret = scopes.length === 1 && scopes[0] === 'public' ? {} : { secure_body: `secret-${i}` }
      await resources.save({ id, title: `resource ${i}`, body: `body ${i}`, ...secret, scopes, owner: 'user:writer' }, writer)
      made.push({ id, scopes })
    }
    for (let n = 0; n < 20; n++) {
      const fields: Record<string, unknown> = {}
      for (const [kind, ids] of Object.entries(pools)) if (random() < 0.6) fields[kind] = pick(ids)
      const permissions = random() < 0.15 ? ['admin'] : random() < 0.5 ? ['read', 'write', 'secrets:read'] : ['read']
      const who = Principal.parse({ ...fields, permissions })
      const visible = new Set(visibleScopes(who))
      const own = new Set(memberScopes(who))
      const canSecrets = permissions.includes('admin') || permissions.includes('secrets:read')
      const expectedVisible = made
        .filter((r) => r.scopes.some((s) => visible.has(s)))
        .map((r) => r.id)
        .sort()
      const listed = (await resources.list({ limit: 1000 }, who)).items.map((r) => r.id).sort()
      expect(listed, JSON.stringify(who)).toEqual(expectedVisible)
      expect(
        (
          await resources.expandResources(
            made.map((r) => r.id),
            who,
          )
        )
          .map((r) => r.id)
          .sort(),
      ).toEqual(expectedVisible)
      for (const r of made) {
        const isVisible = expectedVisible.includes(r.id)
        if (!isVisible) {
          await expectCode(resources.get(r.id, who, { includeSecret: true }), 'not_found')
          await expectCode(
            resources.update(r.id, { title: 'x' }, who),
            permissions.includes('read') && !permissions.includes('write') && !permissions.includes('admin') ? 'forbidden' : 'not_found',
          )
          continue
        }
        const got = await resources.get(r.id, who, { includeSecret: true })
        const secretExpected = canSecrets && r.scopes.some((s) => s !== 'public' && own.has(s))
        expect('secure_body' in got, `${r.id} ${JSON.stringify(r.scopes)} for ${JSON.stringify(who)}`).toBe(secretExpected)
        if (secretExpected) expect(got.secure_body).toBe(`secret-${r.id.slice(2)}`)
        if (!permissions.includes('admin')) {
          await expectCode(resources.delete(r.id, who), 'forbidden')
        }
      }
    }
  })

  it('rotates every secret to a new key in one transaction; the old key no longer decrypts', async () => {
    await resources.save(credential, alice)
    await resources.save({ ...credential, id: 'cookies/a', secure_body: COOKIE, content_type: 'cookie' }, alice)
    await resources.save({ id: 'code/plain', title: 'no secret', scopes: ['org:acme'] }, alice)
    const before = await store.db.query<{ id: string; secure_body: string | null }>(sql`SELECT id, secure_body FROM resources ORDER BY id`)
    const next = SecretKey.generate()
    const report = await rotateSecrets(store, key, next)
    expect(report).toEqual({ rotated: 2, unchanged: 0, old_key_id: key.id, new_key_id: next.id })
    const after = await store.db.query<{ id: string; secure_body: string | null; secret_key_id: string | null }>(
      sql`SELECT id, secure_body, secret_key_id FROM resources ORDER BY id`,
    )
    expect(after.find((r) => r.id === 'code/plain')).toMatchObject({ secure_body: null, secret_key_id: null })
    for (const row of after.filter((r) => r.secure_body)) {
      expect(row.secret_key_id).toBe(next.id)
      expect(row.secure_body).not.toBe(before.find((b) => b.id === row.id)!.secure_body)
      expect(() => createSecretBox(key).decrypt(row.secure_body!, row.id, 'user:alice')).toThrow()
    }
    const rotated = createResourceService({ store, secrets: createSecretBox(next), clock })
    expect((await rotated.get(credential.id, alice, { includeSecret: true })).secure_body).toBe(credential.secure_body)
    expect((await rotated.get('cookies/a', alice, { includeSecret: true })).secure_body).toBe(COOKIE)
    await expectCode(resources.get('cookies/a', alice, { includeSecret: true }), 'config_error')
    expect(await store.resources.secretKeyIds()).toEqual([{ key_id: next.id, count: 2 }])
    // Running it again is harmless (resumable), and a row under a third key aborts everything.
    expect((await rotateSecrets(store, key, next)).unchanged).toBe(2)
    const third = SecretKey.generate()
    await store.db.query(
      sql`UPDATE resources SET secure_body = ${createSecretBox(third).encrypt('x', 'cookies/a', 'user:alice')}, secret_key_id = ${third.id} WHERE id = 'cookies/a'`,
    )
    const snapshot = await store.db.query(sql`SELECT id, secure_body FROM resources ORDER BY id`)
    await expectCode(rotateSecrets(store, next, SecretKey.generate()), 'config_error')
    expect(await store.db.query(sql`SELECT id, secure_body FROM resources ORDER BY id`)).toEqual(snapshot)
  })

  it('warns at start-up when stored secrets are under another key (e.g. servers with different key files)', async () => {
    await resources.save(credential, alice)
    expect(await checkSecretKey(store, key, logger)).toEqual([])
    const other = SecretKey.generate()
    expect(await checkSecretKey(store, other, logger)).toEqual([{ key_id: key.id, count: 1 }])
    expect(logger.lines.filter((line) => line.startsWith('warn secrets.key.mismatch'))).toHaveLength(1)
  })

  it('rotates the key file: pending .new first, renamed after the commit, resumable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-rotate-'))
    try {
      const keyFile = join(dir, 'secret.key')
      const oldKey = loadOrCreateKey({ keyFile })
      const service = createResourceService({ store, secrets: createSecretBox(oldKey), clock })
      await service.save(credential, alice)
      const report = await rotateKeyFile(store, { oldKey, keyFile })
      expect(report).toMatchObject({ rotated: 1, unchanged: 0, resumed: false, key_file: keyFile, old_key_id: oldKey.id })
      expect(existsSync(`${keyFile}.new`)).toBe(false)
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      const newKey = loadOrCreateKey({ keyFile })
      expect(newKey.id).toBe(report.new_key_id)
      expect(readFileSync(keyFile, 'utf8')).not.toContain(oldKey.toBase64())
      expect(
        (await createResourceService({ store, secrets: createSecretBox(newKey), clock }).get(credential.id, alice, { includeSecret: true })).secure_body,
      ).toBe(credential.secure_body)
      // A crash after the commit but before the rename leaves <file>.new: the next run finishes the job.
      const pendingKey = SecretKey.generate()
      await rotateSecrets(store, newKey, pendingKey)
      const { writeFileSync } = await import('node:fs')
      writeFileSync(`${keyFile}.new`, `${pendingKey.toBase64()}\n`, { mode: 0o600 })
      const resumed = await rotateKeyFile(store, { oldKey: newKey, keyFile })
      expect(resumed).toMatchObject({ rotated: 0, unchanged: 1, resumed: true, new_key_id: pendingKey.id })
      expect(loadOrCreateKey({ keyFile }).id).toBe(pendingKey.id)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
