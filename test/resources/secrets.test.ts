/**
 * Secrets at rest without a database: the AES-256-GCM envelope, key parsing,
 * and the key file (created 0600, refused when others can read it).
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCipheriv, randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { loadOrCreateKey, writeKeyFile } from '../../src/resources/key-file.js'
import { SecretKey, createSecretBox } from '../../src/resources/secrets.js'

const SECRET = 'account: user@example.com\npassword: SecurePass123'

function thrown(fn: () => unknown): { code?: string; message: string; details?: unknown; cause?: unknown } {
  try {
    fn()
  } catch (error) {
    return error as { code?: string; message: string }
  }
  throw new Error('expected a throw')
}

const OWNER = 'user:alice'

describe('secret envelope', () => {
  const key = SecretKey.generate()
  const box = createSecretBox(key)

  it('round-trips and names its key, never holding the plaintext', () => {
    const envelope = box.encrypt(SECRET, 'credentials/website_a', OWNER)
    expect(envelope).toMatch(/^kh2\.[0-9a-f]{16}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/)
    expect(envelope.split('.')[1]).toBe(key.id)
    expect(envelope).not.toContain('SecurePass123')
    expect(envelope).not.toContain(Buffer.from(SECRET).toString('base64'))
    expect(box.decrypt(envelope, 'credentials/website_a', OWNER)).toBe(SECRET)
    expect(box.keyIdOf(envelope)).toBe(key.id)
  })

  it("binds the ciphertext to its owner too (AAD): the same id in another owner's namespace does not decrypt (issue 15.7)", () => {
    const envelope = box.encrypt(SECRET, 'credentials/website_a', 'user:alice')
    const error = thrown(() => box.decrypt(envelope, 'credentials/website_a', 'user:alice2'))
    expect(error.code).toBe('internal_error')
    expect(error.message).not.toContain('SecurePass123')
    expect(box.decrypt(envelope, 'credentials/website_a', 'user:alice')).toBe(SECRET)
  })

  it('reads an old kh1 envelope only to upgrade it, bound to owner and id', () => {
    // A kh1 envelope as the code before issue 15 wrote it: AES-256-GCM, AAD = knowhub:resource:<id>.
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key.bytes(), iv, { authTagLength: 16 })
    cipher.setAAD(Buffer.from('knowhub:resource:r', 'utf8'))
    const ct = Buffer.concat([cipher.update(SECRET, 'utf8'), cipher.final()])
    const legacy = ['kh1', key.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.')
    expect(thrown(() => box.decrypt(legacy, 'r', OWNER)).message).toContain('old format')
    const upgraded = box.upgrade(legacy, 'r', OWNER)!
    expect(upgraded).toMatch(/^kh2\./)
    expect(box.decrypt(upgraded, 'r', OWNER)).toBe(SECRET)
    expect(box.upgrade(upgraded, 'r', OWNER)).toBeUndefined()
    expect(thrown(() => box.upgrade(legacy, 'other', OWNER)).code).toBe('internal_error')
  })

  it('uses a fresh IV every time', () => {
    const a = box.encrypt(SECRET, 'r', OWNER)
    const b = box.encrypt(SECRET, 'r', OWNER)
    expect(a).not.toBe(b)
    expect(a.split('.')[2]).not.toBe(b.split('.')[2])
  })

  it('binds the ciphertext to its resource id (AAD)', () => {
    const envelope = box.encrypt(SECRET, 'credentials/website_a', OWNER)
    const error = thrown(() => box.decrypt(envelope, 'credentials/website_b', OWNER))
    expect(error.code).toBe('internal_error')
    expect(error.message).toContain('credentials/website_b')
    expect(error.message).not.toContain('SecurePass123')
  })

  it('detects tampering with a clear error that leaks nothing', () => {
    const envelope = box.encrypt(SECRET, 'r', OWNER)
    const parts = envelope.split('.')
    const ct = Buffer.from(parts[4]!, 'base64url')
    ct[0] = ct[0]! ^ 1
    const tampered = [...parts.slice(0, 4), ct.toString('base64url')].join('.')
    const error = thrown(() => box.decrypt(tampered, 'r', OWNER))
    expect(error.code).toBe('internal_error')
    expect(error.message).toMatch(/altered/)
    expect(error.cause).toBeUndefined()
    expect(JSON.stringify(error)).not.toContain('SecurePass')
    for (const broken of ['', 'kh1.x.y.z.w', 'plain text', `kh9${envelope.slice(3)}`, envelope.replace(/\.[^.]+$/, '.!!')]) {
      expect(thrown(() => box.decrypt(broken, 'r', OWNER)).code).toBe('internal_error')
    }
  })

  it('refuses another key with config_error naming both key ids', () => {
    const envelope = box.encrypt(SECRET, 'r', OWNER)
    const other = createSecretBox(SecretKey.generate())
    const error = thrown(() => other.decrypt(envelope, 'r', OWNER))
    expect(error.code).toBe('config_error')
    expect(error.message).toContain(key.id)
    expect(error.message).toContain(other.keyId)
  })

  it('a forged key id on a ciphertext of another key still fails authentication', () => {
    const other = SecretKey.generate()
    const foreign = createSecretBox(other).encrypt(SECRET, 'r', OWNER)
    const forged = foreign.replace(other.id, key.id)
    expect(thrown(() => box.decrypt(forged, 'r', OWNER)).code).toBe('internal_error')
  })

  it('handles empty-ish, unicode and large secrets', () => {
    for (const text of ['x', '密码：SecurePass123 🔑', 'a'.repeat(65_536)]) expect(box.decrypt(box.encrypt(text, 'r', OWNER), 'r', OWNER)).toBe(text)
  })
})

describe('SecretKey', () => {
  it('parses base64, base64url and hex of 32 bytes to the same key', () => {
    const bytes = Buffer.alloc(32, 7)
    bytes[0] = 251
    bytes[1] = 255
    const ids = [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), ` ${bytes.toString('base64')}\n`].map(
      (t) => SecretKey.fromText(t).id,
    )
    expect(new Set(ids).size).toBe(1)
    expect(SecretKey.fromBytes(bytes).id).toBe(ids[0])
  })

  it('refuses wrong sizes without echoing the value', () => {
    for (const bad of ['c2hvcnQ=', 'ab'.repeat(31), 'zz'.repeat(32), Buffer.alloc(31).toString('base64'), Buffer.alloc(33).toString('base64')]) {
      const error = thrown(() => SecretKey.fromText(bad, 'KNOWHUB_SECRET_KEY'))
      expect(error.code).toBe('config_error')
      expect(error.message).toContain('KNOWHUB_SECRET_KEY')
      expect(error.message).not.toContain(bad)
    }
  })

  it('never prints its bytes', () => {
    const key = SecretKey.generate()
    const b64 = key.toBase64()
    for (const shown of [JSON.stringify({ key }), String(key), `${key}`, inspect(key), inspect({ nested: { key } })]) {
      expect(shown).not.toContain(b64)
      expect(shown).toContain(key.id)
    }
    expect(Object.keys(key)).toEqual(['id'])
  })
})

describe('key file', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-key-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('is created on first start with mode 0600 and reused afterwards', () => {
    const path = join(dir, 'nested', 'secret.key')
    const first = loadOrCreateKey({ keyFile: path })
    expect(existsSync(path)).toBe(true)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(SecretKey.fromText(readFileSync(path, 'utf8')).id).toBe(first.id)
    expect(loadOrCreateKey({ keyFile: path }).id).toBe(first.id)
    expect(readFileSync(path, 'utf8').trim()).toHaveLength(44)
  })

  it('creates the same key for concurrent first starts (exclusive create)', async () => {
    const path = join(dir, 'secret.key')
    const ids = await Promise.all(Array.from({ length: 8 }, async () => loadOrCreateKey({ keyFile: path }).id))
    expect(new Set(ids).size).toBe(1)
  })

  it('refuses an existing key file that others can read', () => {
    const path = join(dir, 'secret.key')
    writeFileSync(path, `${SecretKey.generate().toBase64()}\n`, { mode: 0o644 })
    chmodSync(path, 0o644)
    const error = thrown(() => loadOrCreateKey({ keyFile: path }))
    expect(error.code).toBe('config_error')
    expect(error.message).toContain('chmod 600')
    expect(error.message).toContain('644')
    chmodSync(path, 0o640)
    expect(thrown(() => loadOrCreateKey({ keyFile: path })).code).toBe('config_error')
    chmodSync(path, 0o600)
    expect(() => loadOrCreateKey({ keyFile: path })).not.toThrow()
  })

  it('refuses a malformed key file without showing its content', () => {
    const path = join(dir, 'secret.key')
    writeFileSync(path, 'not-a-key-at-all', { mode: 0o600 })
    const error = thrown(() => loadOrCreateKey({ keyFile: path }))
    expect(error.code).toBe('config_error')
    expect(error.message).not.toContain('not-a-key-at-all')
  })

  it('prefers an explicit key (KNOWHUB_SECRET_KEY) and creates no file then', () => {
    const path = join(dir, 'secret.key')
    const key = SecretKey.generate()
    expect(loadOrCreateKey({ key: key.toBase64(), keyFile: path }).id).toBe(key.id)
    expect(existsSync(path)).toBe(false)
    expect(thrown(() => loadOrCreateKey({ keyFile: path, create: false })).code).toBe('config_error')
    expect(thrown(() => loadOrCreateKey({})).code).toBe('config_error')
  })

  it('writeKeyFile replaces atomically with mode 0600', () => {
    const path = join(dir, 'secret.key')
    loadOrCreateKey({ keyFile: path })
    const next = SecretKey.generate()
    writeKeyFile(path, next)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(loadOrCreateKey({ keyFile: path }).id).toBe(next.id)
  })

  it('reports errors as KnowHub errors', () => {
    expect(
      isKnowHubError(
        thrown(() => SecretKey.fromText('x')),
        'config_error',
      ),
    ).toBe(true)
  })
})
