/**
 * Key rotation: every stored secret re-encrypted from the old key to a new one in one
 * transaction, the key file replaced only after the commit ({@link rotateSecretKey}
 * decides how, from where the key comes from); the status of the key; and the check
 * that warns when the database holds secrets under another key.
 */
import { existsSync, renameSync } from 'node:fs'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { createKeyFileExclusive, readKeyFile, type SecretKeyring } from './key-file.js'
import type { SecretTransform } from '../store/resources/resources.js'
import { SecretKey, createSecretBox } from './secrets.js'

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
  rewriteSecrets(transform: SecretTransform): Promise<{ rewritten: number; unchanged: number }>
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
  const result = await store.resources.rewriteSecrets(({ id, owner }, envelope) => {
    const keyId = oldBox.keyIdOf(envelope)
    if (keyId === newKey.id) {
      newBox.decrypt(envelope, id, owner) // proves it really is readable with the new key
      return undefined
    }
    return { envelope: newBox.encrypt(oldBox.decrypt(envelope, id, owner), id, owner), keyId: newKey.id }
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

/** What the key services need of the store (see `Store.resources`). */
export interface SecretKeyStore {
  resources: SecretRewriter & { secretKeyIds(): Promise<Array<{ key_id: string; count: number }>> }
}

/** The key service's dependencies: the store and the keyring the hub was opened with. */
export interface SecretKeyDeps {
  store: SecretKeyStore
  keyring: SecretKeyring
  logger?: Logger
}

/** Where the key comes from, its id, and how many stored secrets each key protects. */
export interface SecretKeyStatus {
  source: SecretKeyring['source']
  key_file: string | null
  key_id: string
  secrets_by_key: Array<{ key_id: string; count: number }>
}

/**
 * The key's source and id, and the stored secrets counted by the key they are under.
 * @example
 * const status = await secretKeyStatus({ store: hub.store, keyring: hub.secrets })
 * status.secrets_by_key // [{ key_id: status.key_id, count: 3 }]
 */
export async function secretKeyStatus(deps: SecretKeyDeps): Promise<SecretKeyStatus> {
  const { keyring } = deps
  return { source: keyring.source, key_file: keyring.keyFile ?? null, key_id: keyring.key.id, secrets_by_key: await deps.store.resources.secretKeyIds() }
}

/** How to rotate. With a key file, give neither key option: the file is replaced. */
export interface RotateKeyRequest {
  /** The new key, base64 or hex of 32 bytes: for a key from config (KNOWHUB_SECRET_KEY / `secrets.key`). */
  newKey?: string | undefined
  /** Generate the new key: for a key from config. */
  generate?: boolean | undefined
  /**
   * Called with the new key of a config-key rotation before any secret changes hands, so
   * a generated key can be shown and is never lost, however the rotation ends.
   */
  onNewKey?: (key: SecretKey) => void
}

/** What {@link rotateSecretKey} did, and where the new key lives. */
export type SecretKeyRotation = (KeyFileRotationReport & { key_source: 'file' }) | (RotationReport & { key_source: 'config' })

const CONFIG_KEY_NEEDS_NEW_KEY =
  'The secret key comes from KNOWHUB_SECRET_KEY (or secrets.key in the config file), which KnowHub cannot change: rotating to a key it made up would leave the ' +
  'variable holding the old key, and every secret unreadable at the next start. Give the new key with --new-key - (read from stdin; e.g. `openssl rand -base64 32`), ' +
  'or let KnowHub generate one and print it once with --print-new-key; then set KNOWHUB_SECRET_KEY to it.'

/** The new key of a config-key rotation: given, or generated. */
function configNewKey(request: RotateKeyRequest): SecretKey {
  if (request.newKey === undefined && !request.generate) throw new KnowHubError('config_error', CONFIG_KEY_NEEDS_NEW_KEY)
  return request.newKey !== undefined ? SecretKey.fromText(request.newKey, 'The new key (--new-key)') : SecretKey.generate()
}

/**
 * Rotates the key of secrets at rest the way its source allows:
 * - key file: a new random key, written to the file crash-safely ({@link rotateKeyFile});
 * - config (KNOWHUB_SECRET_KEY): KnowHub cannot change the variable, so the caller gives
 *   the new key (`newKey`) or asks for one (`generate`, handed to `onNewKey` first); the
 *   operator sets the variable to it before the next start;
 * - ephemeral (in-memory database): nothing to rotate (`config_error`).
 * @example
 * const report = await rotateSecretKey({ store: hub.store, keyring: hub.secrets }, {})
 * report.new_key_id // the key now in the key file
 */
export async function rotateSecretKey(deps: SecretKeyDeps, request: RotateKeyRequest): Promise<SecretKeyRotation> {
  const { keyring } = deps
  const logger = deps.logger ? { logger: deps.logger } : {}
  if (request.newKey !== undefined && request.generate) throw new KnowHubError('validation_error', 'use --new-key or --print-new-key, not both')
  if (keyring.source === 'ephemeral') throw new KnowHubError('config_error', 'The key is ephemeral (in-memory database): there is nothing to rotate')
  if (keyring.source === 'config') {
    const newKey = configNewKey(request)
    request.onNewKey?.(newKey)
    return { ...(await rotateSecrets(deps.store, keyring.key, newKey, logger)), key_source: 'config' }
  }
  if (request.newKey !== undefined || request.generate) {
    throw new KnowHubError(
      'validation_error',
      '--new-key and --print-new-key are for a key from KNOWHUB_SECRET_KEY; this key is in a key file, which rotate replaces itself',
    )
  }
  if (!keyring.keyFile) throw new KnowHubError('config_error', 'No key file is configured: there is nothing to rotate')
  return { ...(await rotateKeyFile(deps.store, { oldKey: keyring.key, keyFile: keyring.keyFile, ...logger })), key_source: 'file' }
}
