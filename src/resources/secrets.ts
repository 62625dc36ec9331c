/**
 * Secrets at rest: AES-256-GCM with a random 12-byte IV and a 16-byte auth tag;
 * the resource id is the additional authenticated data, so a ciphertext copied to
 * another resource does not decrypt. The stored envelope names the key it was made
 * with (a fingerprint, never the key):
 *
 *     kh1.<key id>.<iv>.<tag>.<ciphertext>      (base64url parts)
 *
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
const ENVELOPE_VERSION = 'kh1'
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
  /** Encrypts `plaintext` for resource `resourceId` (the AAD). Returns the envelope text. */
  encrypt(plaintext: string, resourceId: string): string
  /**
   * Decrypts an envelope made for `resourceId`. Throws `config_error` when it was made
   * with another key, `internal_error` when it was altered or moved to another resource.
   */
  decrypt(envelope: string, resourceId: string): string
  /** The key id named in an envelope (undefined when the text is not an envelope). */
  keyIdOf(envelope: string): string | undefined
}

function aad(resourceId: string): Buffer {
  return Buffer.from(`knowhub:resource:${resourceId}`, 'utf8')
}

interface Envelope {
  keyId: string
  iv: Buffer
  tag: Buffer
  ciphertext: Buffer
}

function parseEnvelope(text: string): Envelope | undefined {
  const parts = text.split('.')
  if (parts.length !== 5 || parts[0] !== ENVELOPE_VERSION) return undefined
  const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string]
  if (!/^[0-9a-f]{16}$/.test(keyId)) return undefined
  const decode = (s: string) => (/^[A-Za-z0-9_-]*$/.test(s) ? Buffer.from(s, 'base64url') : undefined)
  const ivBytes = decode(iv)
  const tagBytes = decode(tag)
  const ctBytes = decode(ciphertext)
  if (!ivBytes || ivBytes.length !== IV_BYTES || !tagBytes || tagBytes.length !== TAG_BYTES || !ctBytes) return undefined
  return { keyId, iv: ivBytes, tag: tagBytes, ciphertext: ctBytes }
}

/**
 * A {@link SecretBox} over `key`.
 * @example
 * const box = createSecretBox(SecretKey.generate())
 * const envelope = box.encrypt('password: hunter2', 'credentials/website_a')
 * box.decrypt(envelope, 'credentials/website_a') // 'password: hunter2'
 */
export function createSecretBox(key: SecretKey): SecretBox {
  return {
    keyId: key.id,
    encrypt(plaintext, resourceId) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv(ALGORITHM, key.bytes(), iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(aad(resourceId))
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const tag = cipher.getAuthTag()
      return [ENVELOPE_VERSION, key.id, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.')
    },
    decrypt(text, resourceId) {
      const envelope = parseEnvelope(text)
      if (!envelope) {
        throw new KnowHubError('internal_error', `The stored secret of resource ${resourceId} is not a valid encrypted envelope`, { id: resourceId })
      }
      if (envelope.keyId !== key.id) {
        throw new KnowHubError(
          'config_error',
          `The secret of resource ${resourceId} was encrypted with key ${envelope.keyId}, but the configured key is ${key.id}. Configure the key it was made with (KNOWHUB_SECRET_KEY or the key file); if a \`knowhub secrets rotate\` was interrupted, the new key is in <key file>.new`,
          { id: resourceId, stored_key_id: envelope.keyId, key_id: key.id },
        )
      }
      try {
        const decipher = createDecipheriv(ALGORITHM, key.bytes(), envelope.iv, { authTagLength: TAG_BYTES })
        decipher.setAAD(aad(resourceId))
        decipher.setAuthTag(envelope.tag)
        return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8')
      } catch {
        // The cipher's own error says nothing useful and must not be chained (no cause).
        throw new KnowHubError(
          'internal_error',
          `Cannot decrypt the secret of resource ${resourceId}: the stored ciphertext was altered, copied from another resource, or the key is wrong`,
          {
            id: resourceId,
            key_id: key.id,
          },
        )
      }
    },
    keyIdOf(text) {
      return parseEnvelope(text)?.keyId
    },
  }
}
