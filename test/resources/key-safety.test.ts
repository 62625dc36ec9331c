/**
 * Issue 15.7, key safety, on every backend: a KnowHub started with a key that does not match
 * the stored secrets refuses to start (naming the key id it needs) unless told to run with
 * secrets read-only; a secret's ciphertext is bound to its owner and id, so a copy on
 * another owner's resource with the same id does not decrypt; secrets stored before (`kh1`,
 * bound to the id only) are re-encrypted once at start-up.
 */
import { createCipheriv, randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { Principal } from '../../src/core/principal.js'
import { SECRET_BINDING_MIGRATION } from '../../src/resources/key-check.js'
import { SecretKey } from '../../src/resources/secrets.js'
import { sql } from '../../src/store/sql.js'
import { openStore } from '../../src/store/store.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
const alice2 = Principal.parse({ user: 'alice2', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
const PASSWORD = 'hunter2-key-safety-7731'

describe.each(BACKENDS)('secret key safety on %s', (backend) => {
  let database: TestDatabase
  const keyA = SecretKey.generate()
  const keyB = SecretKey.generate()
  const open = (key: SecretKey, extra: Record<string, unknown> = {}): Promise<KnowHub> =>
    openKnowHub({ ...database.options, embedder: { provider: 'hashed' }, secrets: { key: key.toBase64(), ...extra } })
  const secretRows = async (hub: KnowHub) =>
    hub.store.db.query<{ owner: string; id: string; secure_body: string; secret_key_id: string }>(
      sql`SELECT owner, id, secure_body, secret_key_id FROM resources WHERE secure_body IS NOT NULL ORDER BY owner, id`,
    )

  beforeEach(async () => {
    database = await createTestDatabase(backend)
  })
  afterEach(async () => database.drop())

  it('refuses to start with another key, naming the key id it needs; read-only for secrets starts and refuses secret writes', async () => {
    const hub = await open(keyA)
    await hub.resources.save({ id: 'credentials/site_a', title: 'site A', secure_body: PASSWORD, scopes: ['org:acme'] }, alice)
    const before = await secretRows(hub)
    await hub.close()

    const refused = await open(keyB).then(
      async (h) => {
        await h.close()
        return undefined
      },
      (error: unknown) => error as { code?: string; message: string },
    )
    expect(refused?.code).toBe('config_error')
    expect(refused?.message).toContain(keyA.id)
    expect(refused?.message).toContain(keyB.id)
    expect(refused?.message).toContain('KNOWHUB_SECRETS_READ_ONLY')
    expect(refused?.message).not.toContain(PASSWORD)

    const readOnly = await open(keyB, { readOnly: true })
    try {
      await expect(readOnly.resources.get('credentials/site_a', alice, { includeSecret: true })).rejects.toMatchObject({ code: 'config_error' })
      await expect(readOnly.resources.save({ id: 'credentials/site_b', title: 'B', secure_body: 'x', scopes: ['org:acme'] }, alice)).rejects.toMatchObject({
        code: 'secrets_read_only',
      })
      await expect(readOnly.resources.update('credentials/site_a', { secure_body: 'y' }, alice)).rejects.toMatchObject({ code: 'secrets_read_only' })
      // Everything else works.
      expect((await readOnly.resources.save({ id: 'code/plain', title: 'no secret', scopes: ['org:acme'] }, alice)).id).toBe('code/plain')
      expect((await readOnly.resources.get('credentials/site_a', alice)).title).toBe('site A')
      // No secret was written under the wrong key: still one key in the table.
      expect(await secretRows(readOnly)).toEqual(before)
      expect(await readOnly.store.resources.secretKeyIds()).toEqual([{ key_id: keyA.id, count: 1 }])
    } finally {
      await readOnly.close()
    }
  }, 180_000)

  it("binds a ciphertext to owner and id: alice's ciphertext copied onto alice2's resource with the same id does not decrypt", async () => {
    const hub = await open(keyA)
    try {
      await hub.resources.save({ id: 'credentials/shared', title: 'alice', secure_body: PASSWORD, scopes: ['user:alice'] }, alice)
      await hub.resources.save({ id: 'credentials/shared', title: 'alice2', secure_body: 'decoy', scopes: ['user:alice2'] }, alice2)
      await hub.store.db
        .query(sql`UPDATE resources SET secure_body = (SELECT secure_body FROM resources WHERE owner = 'user:alice' AND id = 'credentials/shared')
        WHERE owner = 'user:alice2' AND id = 'credentials/shared'`)
      const copied = await hub.resources
        .get('credentials/shared', alice2, { includeSecret: true })
        .catch((error: unknown) => error as { code?: string; message: string })
      expect(copied).toMatchObject({ code: 'internal_error' })
      expect(JSON.stringify(copied)).not.toContain(PASSWORD)
      expect((await hub.resources.get('credentials/shared', alice, { includeSecret: true })).secure_body).toBe(PASSWORD)
      // Giving a resource to another owner re-binds its secret, which still reads.
      await hub.resources.save({ id: 'credentials/moving', title: 'm', secure_body: PASSWORD, scopes: ['org:acme'] }, alice)
      // (Handing a resource to another owner is the hub operator's: an org admin names no other owner.)
      const operator = Principal.parse({ user: 'root', org: 'acme', permissions: ['hub:admin'] })
      await hub.resources.update('credentials/moving', { owner: 'user:alice2' }, operator, { owner: 'user:alice' })
      expect((await hub.resources.get('credentials/moving', alice2, { includeSecret: true, owner: 'user:alice2' })).secure_body).toBe(PASSWORD)
    } finally {
      await hub.close()
    }
  }, 120_000)

  it('re-encrypts secrets stored before the owner binding (kh1) once, at start-up', async () => {
    const store = await openStore(database.options)
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', keyA.bytes(), iv, { authTagLength: 16 })
    cipher.setAAD(Buffer.from('knowhub:resource:credentials/old', 'utf8'))
    const ct = Buffer.concat([cipher.update(PASSWORD, 'utf8'), cipher.final()])
    const legacy = ['kh1', keyA.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.')
    const at = new Date().toISOString()
    await store.db
      .query(sql`INSERT INTO resources (id, title, body, secure_body, secret_key_id, content_type, metadata, scopes, owner, version, created_at, updated_at)
      VALUES ('credentials/old', 'old', '', ${legacy}, ${keyA.id}, 'credential', '{}'::jsonb, ${['org:acme']}::text[], 'user:alice', 1, ${at}, ${at})`)
    await store.close()

    const hub = await open(keyA)
    try {
      const [row] = await secretRows(hub)
      expect(row!.secure_body).toMatch(new RegExp(`^kh2\\.${keyA.id}\\.`))
      expect((await hub.resources.get('credentials/old', alice, { includeSecret: true })).secure_body).toBe(PASSWORD)
      const recorded = await hub.store.db.query(sql`SELECT 1 FROM knowhub_meta WHERE key = ${`data-migration:${SECRET_BINDING_MIGRATION}`}`)
      expect(recorded).toHaveLength(1)
    } finally {
      await hub.close()
    }
  }, 120_000)
})
