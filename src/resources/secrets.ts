/**
 * Secrets at rest: AES-256-GCM with a random 12-byte IV and a 16-byte auth tag;
 * the resource id is the additional authenticated data, so a ciphertext copied to
 * another resource does not decrypt. The stored envelope names the key it was made
 * with (a fingerprint, never the key):
 *
 *     kh1.<key id>.<iv>.<tag>.<ciphertext>      (base64url parts)
 *
 * The key comes from config (`KNOWHUB_SECRET_KEY`, 32 bytes in base64 or hex) or
 * from a key file created on first start with mode 0600. No function here puts a
 * key or a plaintext into an error message or a log line.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { inspect } from 'node:util'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'

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

/** Options of {@link loadOrCreateKey}. */
export interface LoadKeyOptions {
  /** The key itself (base64 or hex of 32 bytes), e.g. from `KNOWHUB_SECRET_KEY`. Wins over `keyFile`. */
  key?: string | undefined
  /** A key file: read when it exists, created (mode 0600) when it does not. */
  keyFile?: string | undefined
  /** Create the key file when missing (default true). */
  create?: boolean
  logger?: Logger
}

function readKeyFile(path: string): SecretKey {
  const stats = statSync(path)
  if (!stats.isFile()) throw new KnowHubError('config_error', `The secret key file ${path} is not a regular file`, { path })
  if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
    throw new KnowHubError(
      'config_error',
      `The secret key file ${path} is readable by other users (mode ${(stats.mode & 0o777).toString(8).padStart(3, '0')}); KnowHub refuses to use it. Run \`chmod 600 ${path}\` and check who may have read it.`,
      { path, mode: (stats.mode & 0o777).toString(8) },
    )
  }
  return SecretKey.fromText(readFileSync(path, 'utf8'), `The secret key file ${path}`)
}

/**
 * Writes `key` to a temporary file (mode 0600) next to `path`, flushes it, and moves it
 * into place with an atomic rename (replacing any file there).
 * @example
 * writeKeyFile('.knowhub/secret.key', SecretKey.generate())
 */
export function writeKeyFile(path: string, key: SecretKey): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  writePrivateFile(temp, `${key.toBase64()}\n`)
  try {
    renameSync(temp, path)
  } catch (error) {
    try {
      unlinkSync(temp)
    } catch {
      // already gone
    }
    throw new KnowHubError('config_error', `Cannot write the secret key file ${path}: ${(error as Error).message}`, { path })
  }
}

/** Creates `path` exclusively with mode 0600 and `text`, fsynced. Throws EEXIST as is. */
function writePrivateFile(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Creates a key file for `key` at `path` only if none exists: the key is written to a
 * temp file and hard-linked into place, so two processes starting at once agree on one
 * key. Returns false when a file was there already.
 */
function createKeyFileExclusive(path: string, key: SecretKey): boolean {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  writePrivateFile(temp, `${key.toBase64()}\n`)
  try {
    linkSync(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new KnowHubError('config_error', `Cannot create the secret key file ${path}: ${(error as Error).message}`, { path })
  } finally {
    unlinkSync(temp)
  }
}

/**
 * The key for secrets at rest: `options.key` when given (base64 or hex, 32 bytes);
 * otherwise the key file, created with a new random key and mode 0600 on first start.
 * An existing key file readable by group or others is refused (`config_error`).
 * @example
 * const key = loadOrCreateKey({ keyFile: '.knowhub/secret.key' })
 */
export function loadOrCreateKey(options: LoadKeyOptions): SecretKey {
  const logger = options.logger ?? noopLogger
  if (options.key !== undefined && options.key !== '') return SecretKey.fromText(options.key, 'KNOWHUB_SECRET_KEY')
  const path = options.keyFile
  if (!path) throw new KnowHubError('config_error', 'No secret key configured: set KNOWHUB_SECRET_KEY or a key file')
  if (existsSync(path)) return readKeyFile(path)
  if (options.create === false) throw new KnowHubError('config_error', `The secret key file ${path} does not exist`, { path })
  const key = SecretKey.generate()
  if (createKeyFileExclusive(path, key)) {
    logger.info('secrets.key.created', { path, key_id: key.id })
    return key
  }
  return readKeyFile(path)
}

/** What {@link rotateSecrets} did. */
export interface RotationReport {
  /** Secrets re-encrypted with the new key. */
  rotated: number
  /** Secrets that were already under the new key (a resumed rotation). */
  unchanged: number
  old_key_id: string
  new_key_id: string
}

/** The part of the store that rotation needs (see `Store.resources`). */
export interface SecretRewriter {
  /**
   * In one transaction, passes every stored secret to `transform` and writes back what it
   * returns (undefined: leave the row alone). Any throw rolls everything back.
   */
  rewriteSecrets(
    transform: (id: string, envelope: string) => { envelope: string; keyId: string } | undefined,
  ): Promise<{ rewritten: number; unchanged: number }>
}

/**
 * Re-encrypts every stored secret from `oldKey` to `newKey` in one transaction: all or
 * nothing. Rows already under `newKey` are left alone, so an interrupted rotation can be
 * run again. A row under any third key aborts the rotation with `config_error`.
 * @example
 * const report = await rotateSecrets(store, oldKey, SecretKey.generate())
 */
export async function rotateSecrets(
  store: { resources: SecretRewriter },
  oldKey: SecretKey,
  newKey: SecretKey,
  options: { logger?: Logger } = {},
): Promise<RotationReport> {
  const logger = options.logger ?? noopLogger
  if (oldKey.id === newKey.id) throw new KnowHubError('validation_error', 'The new key is the same as the old one')
  const oldBox = createSecretBox(oldKey)
  const newBox = createSecretBox(newKey)
  const result = await store.resources.rewriteSecrets((id, envelope) => {
    const keyId = oldBox.keyIdOf(envelope)
    if (keyId === newKey.id) {
      newBox.decrypt(envelope, id) // proves it really is readable with the new key
      return undefined
    }
    return { envelope: newBox.encrypt(oldBox.decrypt(envelope, id), id), keyId: newKey.id }
  })
  logger.info('secrets.rotated', { rotated: result.rewritten, unchanged: result.unchanged, old_key_id: oldKey.id, new_key_id: newKey.id })
  return { rotated: result.rewritten, unchanged: result.unchanged, old_key_id: oldKey.id, new_key_id: newKey.id }
}

/** What {@link rotateKeyFile} did. */
export interface KeyFileRotationReport extends RotationReport {
  /** The key file that now holds the new key. */
  key_file: string
  /** True when a pending key from an interrupted rotation was reused. */
  resumed: boolean
}

/**
 * Rotates to a new random key and stores it in `keyFile`, safely against crashes:
 * 1. the new key is written to `<keyFile>.new` (mode 0600) first — or, when that file is
 *    left over from an interrupted rotation, that key is reused;
 * 2. every secret is re-encrypted in one transaction ({@link rotateSecrets});
 * 3. only after the commit, `<keyFile>.new` is renamed over `keyFile` (atomic).
 * At every point one of the two files holds the key the database needs.
 * @example
 * await rotateKeyFile(store, { oldKey, keyFile: '.knowhub/secret.key' })
 */
export async function rotateKeyFile(
  store: { resources: SecretRewriter },
  options: { oldKey: SecretKey; keyFile: string; logger?: Logger },
): Promise<KeyFileRotationReport> {
  const pending = `${options.keyFile}.new`
  let resumed = false
  let newKey: SecretKey
  if (existsSync(pending)) {
    newKey = readKeyFile(pending)
    resumed = true
  } else {
    const candidate = SecretKey.generate()
    newKey = createKeyFileExclusive(pending, candidate) ? candidate : readKeyFile(pending)
  }
  const report = await rotateSecrets(store, options.oldKey, newKey, options.logger ? { logger: options.logger } : {})
  try {
    renameSync(pending, options.keyFile)
  } catch (error) {
    throw new KnowHubError(
      'config_error',
      `The secrets were re-encrypted, but moving ${pending} to ${options.keyFile} failed: ${(error as Error).message}. Move it by hand; ${pending} holds the key the database now needs.`,
      { path: options.keyFile, pending },
    )
  }
  return { ...report, key_file: options.keyFile, resumed }
}

/**
 * Warns when the database holds secrets under keys other than `key` — e.g. two servers
 * on one PostgreSQL with different key files, or a lost key file that was re-created.
 * Those secrets cannot be read until the right key is configured.
 * @returns the key ids (and counts) that differ from `key`.
 * @example
 * const foreign = await checkSecretKey(store, loadOrCreateKey({ keyFile: '.knowhub/secret.key' }), logger)
 * if (foreign.length > 0) console.error('some secrets need another key', foreign)
 */
export async function checkSecretKey(
  store: { resources: { secretKeyIds(): Promise<Array<{ key_id: string; count: number }>> } },
  key: SecretKey,
  logger: Logger = noopLogger,
): Promise<Array<{ key_id: string; count: number }>> {
  const foreign = (await store.resources.secretKeyIds()).filter((row) => row.key_id !== key.id)
  if (foreign.length > 0) {
    logger.warn('secrets.key.mismatch', {
      key_id: key.id,
      other_keys: foreign,
      message:
        'Some stored secrets were encrypted with another key and cannot be read. Servers sharing one database need the same key (KNOWHUB_SECRET_KEY or a shared key file); after an interrupted rotation, use <key file>.new.',
    })
  }
  return foreign
}
