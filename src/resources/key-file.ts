/**
 * Where the key of secrets at rest comes from: `KNOWHUB_SECRET_KEY` (config), a key file
 * (created on first start with mode 0600, refused when others may read it), or — for an
 * in-memory database — an ephemeral key. Key files are written atomically; two processes
 * creating one at once agree on one key.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { KnowHubError } from '../core/errors.js'
import { dataDirAccessError } from '../store/data-dir.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { SecretKey } from './secrets.js'

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

/**
 * Reads a key file, refusing one that is not a regular file or that group or others may read.
 * @example
 * const key = readKeyFile('.knowhub/secret.key')
 */
export function readKeyFile(path: string): SecretKey {
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
 * @example
 * if (!createKeyFileExclusive(path, key)) key = readKeyFile(path) // someone else was first
 */
export function createKeyFileExclusive(path: string, key: SecretKey): boolean {
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

/** The key of secrets at rest and where it came from. */
export interface SecretKeyring {
  readonly key: SecretKey
  /** The key file; undefined when the key comes from config or is ephemeral. */
  readonly keyFile: string | undefined
  /** `config`: KNOWHUB_SECRET_KEY / `secrets.key`; `file`: the key file; `ephemeral`: in memory only (memory:// databases). */
  readonly source: 'config' | 'file' | 'ephemeral'
}

/** Where the key comes from, as the config says it. */
export interface KeyringOptions {
  /** The key itself (`secrets.key`, from KNOWHUB_SECRET_KEY). Wins over every file. */
  key?: string | undefined
  /** `secrets.keyFile`; default `<dataDir>/secret.key`. */
  keyFile?: string | undefined
  /** The data folder; `memory://…` without a key or key file gets an ephemeral key. */
  dataDir: string
  logger?: Logger
}

/**
 * The key file a config names: `secrets.keyFile`, else `<dataDir>/secret.key`; none when
 * the key comes from config, or for an in-memory database without a key file.
 * @example
 * keyFilePath({ dataDir: '.knowhub' }) // '.knowhub/secret.key'
 */
export function keyFilePath(options: Omit<KeyringOptions, 'logger'>): string | undefined {
  if (options.key) return undefined
  return options.keyFile ?? (options.dataDir.startsWith('memory://') ? undefined : join(options.dataDir, 'secret.key'))
}

/**
 * Loads the key of secrets at rest as the config says: from `key`, else from the key file
 * (created with a new random key on first start), else — in-memory database — a new
 * ephemeral key.
 * @example
 * const keyring = openKeyring({ dataDir: '.knowhub' }) // { key, keyFile: '.knowhub/secret.key', source: 'file' }
 */
export function openKeyring(options: KeyringOptions): SecretKeyring {
  const keyFile = keyFilePath(options)
  if (options.key) return { key: loadOrCreateKey({ key: options.key }), keyFile, source: 'config' }
  if (keyFile) {
    try {
      return { key: loadOrCreateKey({ keyFile, ...(options.logger ? { logger: options.logger } : {}) }), keyFile, source: 'file' }
    } catch (error) {
      // The key file lives in the data folder unless configured elsewhere: a folder KnowHub may not use is said in words.
      const folder = options.keyFile ? dirname(keyFile) : options.dataDir
      throw dataDirAccessError(error, keyFile, folder) ?? error
    }
  }
  return { key: SecretKey.generate(), keyFile, source: 'ephemeral' }
}
