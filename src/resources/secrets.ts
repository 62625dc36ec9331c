/**
 * Secrets at rest: AES-256-GCM with a random 12-byte IV and a 16-byte auth tag; the
 * resource's owner and id are the additional authenticated data, so a ciphertext copied to
 * another resource — another id, or the same id in another owner's namespace — does not
 * decrypt. The stored envelope names the key it was made with (a fingerprint, never the key):
 *
 *     kh2.<key id>.<iv>.<tag>.<ciphertext>      (base64url parts)
 *
 * `kh1` envelopes (before issue 15: bound to the id only) are read only to re-encrypt them
 * once at start-up ({@link SecretBox.upgrade}, see `upgradeSecretBinding` in rotate.ts).
 * The key comes from config (`KNOWHUB_SECRET_KEY`, 32 bytes in base64 or hex) or
 * from a key file created on first start with mode 0600 (key-file.ts); rotation is in
 * rotate.ts. No function here puts a key or a plaintext into an error message or a log line.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { KnowHubError } from '../core/errors.js'

const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const ENVELOPE_VERSION = 'kh2'
/** The envelope of secrets written before issue 15: the AAD was the resource id alone. */
const LEGACY_VERSION = 'kh1'
const ALGORITHM = 'aes-256-gcm'

/**
 * A 256-bit key. Its bytes are private: printing, logging or JSON-encoding a key
 * shows only its id (a fingerprint).
 * @example
 * const key = SecretKey.generate()
 * key.id // 'a1b2c3d4e5f60718'
 */
export class SecretKey {
  readonly #bytes: Buffer
  /** A fingerprint of the key (16 hex characters), stored with every ciphertext. */
  readonly id: string

  private constructor(bytes: Buffer) {
    this.#bytes = Buffer.from(bytes)
    this.id = createHash('sha256').update('knowhub-secret-key-id\0').update(this.#bytes).digest('hex').slice(0, 16)
  }

  /** A new random key. */
  static generate(): SecretKey {
    return new SecretKey(randomBytes(KEY_BYTES))
  }

  /** A key from exactly 32 bytes. */
  static fromBytes(bytes: Uint8Array): SecretKey {
    if (bytes.length !== KEY_BYTES) throw new KnowHubError('config_error', `A secret key is ${KEY_BYTES} bytes; got ${bytes.length}`)
    return new SecretKey(Buffer.from(bytes))
  }

  /**
   * A key from text: 64 hex characters, or base64/base64url of 32 bytes. `what` names
   * the source in the error message (the text itself never appears there).
   */
  static fromText(text: string, what = 'the secret key'): SecretKey {
    const trimmed = text.trim()
    if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return new SecretKey(Buffer.from(trimmed, 'hex'))
    if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(trimmed)) {
      const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      if (bytes.length === KEY_BYTES) return new SecretKey(bytes)
    }
    throw new KnowHubError(
      'config_error',
      `${what} must be ${KEY_BYTES} bytes written as base64 (44 characters) or hex (64 characters); create one with \`openssl rand -base64 32\``,
    )
  }

  /** The key as base64 text, for writing a key file. */
  toBase64(): string {
    return this.#bytes.toString('base64')
  }

  /** @internal the raw bytes, for the cipher. */
  bytes(): Buffer {
    return this.#bytes
  }

  toJSON(): string {
    return `[secret key ${this.id}]`
  }

  toString(): string {
    return `[secret key ${this.id}]`
  }

  [inspect.custom](): string {
    return `[secret key ${this.id}]`
  }
}

/** Encrypts and decrypts secrets for resources with one current key. */
export interface SecretBox {
  /** Id of the key new secrets are encrypted with. */
  readonly keyId: string
  /** Encrypts `plaintext` for the resource `resourceId` of `owner` (both the AAD). Returns the envelope text. */
  encrypt(plaintext: string, resourceId: string, owner: string): string
  /**
   * Decrypts an envelope made for the resource `resourceId` of `owner`. Throws
   * `config_error` when it was made with another key, `internal_error` when it was altered
   * or moved to another resource or owner.
   */
  decrypt(envelope: string, resourceId: string, owner: string): string
  /**
   * Re-encrypts a `kh1` envelope (bound to the id only) as a `kh2` one bound to owner and
   * id; undefined when the envelope is not `kh1`. For the one-time upgrade at start-up.
   */
  upgrade(envelope: string, resourceId: string, owner: string): string | undefined
  /** The key id named in an envelope (undefined when the text is not an envelope). */
  keyIdOf(envelope: string): string | undefined
}

function aad(resourceId: string, owner: string): Buffer {
  // NUL cannot occur in an owner or an id: the pair is unambiguous.
  return Buffer.from(`knowhub:resource:v2\0${owner}\0${resourceId}`, 'utf8')
}

function legacyAad(resourceId: string): Buffer {
  return Buffer.from(`knowhub:resource:${resourceId}`, 'utf8')
}

interface Envelope {
  version: string
  keyId: string
  iv: Buffer
  tag: Buffer
  ciphertext: Buffer
}

function parseEnvelope(text: string): Envelope | undefined {
  const parts = text.split('.')
  if (parts.length !== 5 || (parts[0] !== ENVELOPE_VERSION && parts[0] !== LEGACY_VERSION)) return undefined
  const [version, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string]
  if (!/^[0-9a-f]{16}$/.test(keyId)) return undefined
  const decode = (s: string) => (/^[A-Za-z0-9_-]*$/.test(s) ? Buffer.from(s, 'base64url') : undefined)
  const ivBytes = decode(iv)
  const tagBytes = decode(tag)
  const ctBytes = decode(ciphertext)
  if (!ivBytes || ivBytes.length !== IV_BYTES || !tagBytes || tagBytes.length !== TAG_BYTES || !ctBytes) return undefined
  return { version, keyId, iv: ivBytes, tag: tagBytes, ciphertext: ctBytes }
}

/** Opens an envelope with `key` and the given AAD, or throws the errors of {@link SecretBox.decrypt}. */
function open(key: SecretKey, envelope: Envelope, additional: Buffer, resourceId: string): string {
  if (envelope.keyId !== key.id) {
    throw new KnowHubError(
      'config_error',
      `The secret of resource ${resourceId} was encrypted with key ${envelope.keyId}, but the configured key is ${key.id}. Configure the key it was made with (KNOWHUB_SECRET_KEY or the key file); if a \`knowhub secrets rotate\` was interrupted, the new key is in <key file>.new`,
      { id: resourceId, stored_key_id: envelope.keyId, key_id: key.id },
    )
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, key.bytes(), envelope.iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(additional)
    decipher.setAuthTag(envelope.tag)
    return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8')
  } catch {
    // The cipher's own error says nothing useful and must not be chained (no cause).
    throw new KnowHubError(
      'internal_error',
      `Cannot decrypt the secret of resource ${resourceId}: the stored ciphertext was altered, copied from another resource or owner, or the key is wrong`,
      {
        id: resourceId,
        key_id: key.id,
      },
    )
  }
}

function invalidEnvelope(resourceId: string): KnowHubError {
  return new KnowHubError('internal_error', `The stored secret of resource ${resourceId} is not a valid encrypted envelope`, { id: resourceId })
}

/** Options of {@link createSecretBox}. */
export interface SecretBoxOptions {
  /**
   * Secrets read-only: every encryption (a new or changed secret, the start-up upgrade) is
   * refused with `secrets_read_only`. For a server started with a key that does not match
   * the stored secrets (`secrets.readOnly`, `KNOWHUB_SECRETS_READ_ONLY=1`).
   */
  readOnly?: { reason: string; expectedKeyIds: readonly string[] } | undefined
}

/**
 * A {@link SecretBox} over `key`.
 * @example
 * const box = createSecretBox(SecretKey.generate())
 * const envelope = box.encrypt('password: hunter2', 'credentials/website_a', 'user:alice')
 * box.decrypt(envelope, 'credentials/website_a', 'user:alice') // 'password: hunter2'
 */
export function createSecretBox(key: SecretKey, options: SecretBoxOptions = {}): SecretBox {
  const encrypt = (plaintext: string, resourceId: string, owner: string): string => {
    if (options.readOnly) {
      throw new KnowHubError('secrets_read_only', `Secrets are read-only on this server (KNOWHUB_SECRETS_READ_ONLY): ${options.readOnly.reason}`, {
        id: resourceId,
        key_id: key.id,
        expected_key_ids: [...options.readOnly.expectedKeyIds],
      })
    }
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv(ALGORITHM, key.bytes(), iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(aad(resourceId, owner))
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [ENVELOPE_VERSION, key.id, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.')
  }
  return {
    keyId: key.id,
    encrypt,
    decrypt(text, resourceId, owner) {
      const envelope = parseEnvelope(text)
      if (!envelope) throw invalidEnvelope(resourceId)
      if (envelope.version === LEGACY_VERSION) {
        throw new KnowHubError(
          'internal_error',
          `The secret of resource ${resourceId} is still in the old format (kh1, not bound to its owner): start KnowHub once with the right key and without KNOWHUB_SECRETS_READ_ONLY to re-encrypt it`,
          { id: resourceId },
        )
      }
      return open(key, envelope, aad(resourceId, owner), resourceId)
    },
    upgrade(text, resourceId, owner) {
      const envelope = parseEnvelope(text)
      if (!envelope) throw invalidEnvelope(resourceId)
      if (envelope.version !== LEGACY_VERSION) return undefined
      return encrypt(open(key, envelope, legacyAad(resourceId), resourceId), resourceId, owner)
    },
    keyIdOf(text) {
      return parseEnvelope(text)?.keyId
    },
  }
}
