/**
 * Backups of the embedded database (`knowhub backup` / `knowhub restore`, issue 15 item 9).
 *
 * A backup file is one header line, one manifest line (JSON) and the PGlite data folder as a
 * gzipped tarball (`dumpDataDir`, which runs alone on the database's query queue, after a
 * CHECKPOINT: a consistent copy while a server keeps writing):
 *
 * ```
 * KNOWHUB-BACKUP 1\n
 * {"format":"knowhub-backup","version":1,"created_at":…,"migrations":[…],"bytes":…,"sha256":…}\n
 * <gzipped tarball>
 * ```
 *
 * Restoring checks, before anything is replaced: the header and format version, the length
 * and SHA-256 of the tarball (a truncated or damaged file), that every migration the backup
 * holds is one this KnowHub knows (a newer schema is refused in words), then loads the tarball
 * into a new folder beside the target and reads its `knowhub_migrations` — only a folder that
 * opened and holds them is renamed into place.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import { z } from 'zod'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { openPGlite, type Database } from './database.js'
import { lockDirectory, readLock } from './lockfile.js'
import { loadMigrations } from './migrate.js'
import { sql } from './sql.js'

const MAGIC = 'KNOWHUB-BACKUP'
/** The backup format this KnowHub writes and reads. */
export const BACKUP_FORMAT_VERSION = 1

/** The manifest line of a backup file. */
export const BackupManifest = z.object({
  format: z.literal('knowhub-backup'),
  version: z.number().int().positive(),
  created_at: z.string(),
  /** The KnowHub version that wrote it. */
  knowhub_version: z.string(),
  /** Migrations applied in the backed-up database (`knowhub_migrations`), by name. */
  migrations: z.array(z.string()),
  /** Ids of the keys its secrets are encrypted with: restore them with the same key. */
  secret_key_ids: z.array(z.string()),
  /** Length and SHA-256 (hex) of the tarball after the manifest line. */
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
})
export type BackupManifest = z.infer<typeof BackupManifest>

/** What the restored database holds, read from it once it opened. */
export interface BackupCounts {
  knowledge: number
  resources: number
  secrets: number
  tokens: number
}

/**
 * A backup of an open embedded database, as the bytes of a backup file.
 * @example
 * writeFileSync('kh.backup', await createBackup(store.db, { knowhubVersion: '0.1.0' }))
 */
export async function createBackup(db: Database, options: { knowhubVersion: string; now?: Date }): Promise<Uint8Array> {
  if (db.kind !== 'pglite' || !db.dumpDataDir) {
    throw new KnowHubError(
      'validation_error',
      'knowhub backup copies the embedded database; this KnowHub uses a PostgreSQL server: back it up with pg_dump (docs/operations.md, "Backups")',
    )
  }
  const migrations = (await db.query<{ name: string }>(sql`SELECT name FROM knowhub_migrations ORDER BY name`)).map((r) => r.name)
  const keys = (await db.query<{ key_id: string }>(sql`SELECT DISTINCT secret_key_id AS key_id FROM resources WHERE secret_key_id IS NOT NULL ORDER BY 1`)).map(
    (r) => r.key_id,
  )
  await db.query(sql`CHECKPOINT`)
  const tarball = await db.dumpDataDir()
  const manifest: BackupManifest = {
    format: 'knowhub-backup',
    version: BACKUP_FORMAT_VERSION,
    created_at: (options.now ?? new Date()).toISOString(),
    knowhub_version: options.knowhubVersion,
    migrations,
    secret_key_ids: keys,
    bytes: tarball.byteLength,
    sha256: createHash('sha256').update(tarball).digest('hex'),
  }
  const head = Buffer.from(`${MAGIC} ${BACKUP_FORMAT_VERSION}\n${JSON.stringify(manifest)}\n`)
  return Buffer.concat([head, tarball])
}

function refuse(message: string, details: Record<string, unknown> = {}): KnowHubError {
  return new KnowHubError('validation_error', message, details)
}

/**
 * Reads and checks a backup file's bytes: header, format version, manifest, the tarball's
 * length and SHA-256, and that its migrations are all known here. Nothing is written.
 * @example
 * const { manifest, tarball } = await readBackup(readFileSync('kh.backup'))
 */
export async function readBackup(bytes: Uint8Array, knownMigrations?: readonly string[]): Promise<{ manifest: BackupManifest; tarball: Uint8Array }> {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const first = data.indexOf(10)
  const header = first < 0 ? '' : data.subarray(0, first).toString('latin1')
  const match = /^KNOWHUB-BACKUP (\d+)$/.exec(header)
  if (!match) throw refuse('This file is not a KnowHub backup (it does not start with "KNOWHUB-BACKUP"); nothing was changed')
  const version = Number(match[1])
  if (version > BACKUP_FORMAT_VERSION) {
    throw refuse(
      `This backup has format ${version}, newer than this KnowHub reads (${BACKUP_FORMAT_VERSION}): restore it with a newer KnowHub; nothing was changed`,
      {
        format: version,
      },
    )
  }
  const second = data.indexOf(10, first + 1)
  let manifest: BackupManifest
  try {
    if (second < 0) throw new Error('no manifest line')
    manifest = BackupManifest.parse(JSON.parse(data.subarray(first + 1, second).toString('utf8')))
  } catch {
    throw refuse('The backup is damaged: its manifest cannot be read (a truncated file?); nothing was changed')
  }
  const tarball = data.subarray(second + 1)
  if (tarball.byteLength !== manifest.bytes) {
    throw refuse(
      `The backup is ${tarball.byteLength < manifest.bytes ? 'truncated' : 'damaged'}: its database archive has ${tarball.byteLength} bytes, the manifest says ${manifest.bytes}; nothing was changed`,
      { bytes: tarball.byteLength, expected: manifest.bytes },
    )
  }
  if (createHash('sha256').update(tarball).digest('hex') !== manifest.sha256) {
    throw refuse('The backup is damaged: its database archive does not match the checksum in its manifest; nothing was changed')
  }
  const known = new Set(knownMigrations ?? (await loadMigrations()).map((m) => m.name))
  const unknown = manifest.migrations.filter((name) => !known.has(name))
  if (unknown.length > 0) {
    throw refuse(
      `The backup holds a newer schema than this KnowHub knows (migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}; written by KnowHub ${manifest.knowhub_version}): restore it with that version or newer; nothing was changed`,
      { unknown_migrations: unknown, knowhub_version: manifest.knowhub_version },
    )
  }
  return { manifest, tarball: new Uint8Array(tarball.buffer, tarball.byteOffset, tarball.byteLength) }
}

function isEmptyFolder(path: string): boolean {
  return !existsSync(path) || readdirSync(path).length === 0
}

/** Options of {@link restoreBackup}. */
export interface RestoreOptions {
  /** Replace an existing database folder (never one a process holds). */
  force?: boolean
  /** Migrations this KnowHub knows (default: the package's). */
  knownMigrations?: readonly string[]
  /** Progress lines (`checking`, `loading`, `replacing`). */
  onProgress?: (step: 'checked' | 'loaded' | 'replaced', detail: string) => void
  logger?: Logger
}

/**
 * Restores a backup file's bytes into the embedded database folder `dbDir` (`<dataDir>/db`):
 * checks the file, loads it into a new folder beside `dbDir` and opens it, then renames it into
 * place — `dbDir` is replaced only when it is empty or `force` is set, and never while a process
 * holds it (its lock is taken for the swap). A failure leaves `dbDir` as it was.
 * @example
 * const { manifest, counts } = await restoreBackup(readFileSync('kh.backup'), '.knowhub/db', { force: true })
 */
export async function restoreBackup(
  bytes: Uint8Array,
  dbDir: string,
  options: RestoreOptions = {},
): Promise<{ manifest: BackupManifest; counts: BackupCounts }> {
  const holder = readLock(dbDir)
  if (holder) {
    const who = holder.owner
      ? `process ${holder.owner.pid} on ${holder.owner.host}${holder.owner.url ? `, serving ${holder.owner.url}` : ''}`
      : 'another process'
    throw new KnowHubError(
      'database_error',
      `Refusing to restore: the embedded database in ${dbDir} is in use by ${who}. Stop it first (knowhub start stops on Ctrl-C or SIGTERM), or restore into another data folder (--data-dir); nothing was changed`,
      { lockFile: holder.path },
    )
  }
  if (!isEmptyFolder(dbDir) && !options.force) {
    throw new KnowHubError(
      'validation_error',
      `Refusing to restore over the existing database in ${dbDir}: restore into an empty or new data folder, or pass --force to replace it (it is kept until the restored copy has opened); nothing was changed`,
      { dbDir },
    )
  }
  const { manifest, tarball } = await readBackup(bytes, options.knownMigrations)
  options.onProgress?.(
    'checked',
    `${manifest.bytes} bytes, ${manifest.migrations.length} migrations, written ${manifest.created_at} by KnowHub ${manifest.knowhub_version}`,
  )

  const parent = dirname(dbDir)
  mkdirSync(parent, { recursive: true })
  const staging = join(parent, `.${basename(dbDir)}.restore-${process.pid}`)
  const archive = `${staging}.tgz`
  rmSync(staging, { recursive: true, force: true })
  let counts: BackupCounts
  try {
    await assertTarball(tarball)
    writeFileSync(archive, tarball)
    counts = await openAndCount(staging, archive, manifest, options.logger)
    options.onProgress?.('loaded', `${counts.knowledge} entries, ${counts.resources} resources (${counts.secrets} with secrets), ${counts.tokens} tokens`)
    // The swap holds the target's lock: no server opens it half-way.
    const lock = lockDirectory(dbDir)
    try {
      const old = `${staging}.old`
      const had = existsSync(dbDir)
      if (had) renameSync(dbDir, old)
      try {
        renameSync(staging, dbDir)
      } catch (error) {
        if (had) renameSync(old, dbDir)
        throw error
      }
      if (had) rmSync(old, { recursive: true, force: true })
    } finally {
      lock.release()
    }
    options.onProgress?.('replaced', dbDir)
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    throw error
  } finally {
    rmSync(archive, { force: true })
  }
  return { manifest, counts }
}

/**
 * The archive is a gzipped tar (it decompresses to its end, and its first block is a ustar
 * header) — checked here, because PGlite reports a bad archive as an unhandled stream error.
 */
async function assertTarball(tarball: Uint8Array): Promise<void> {
  let head = Buffer.alloc(0)
  let total = 0
  try {
    await pipeline(
      Readable.from([tarball]),
      createGunzip(),
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          if (head.length < 512) head = Buffer.concat([head, chunk.subarray(0, 512 - head.length)])
          total += chunk.length
          done()
        },
      }),
    )
  } catch (error) {
    throw refuse(`The backup's database archive is not a gzipped tarball (${(error as Error).message}); nothing was changed`)
  }
  if (total < 512 || head.subarray(257, 262).toString('latin1') !== 'ustar') {
    throw refuse("The backup's database archive is not a tarball of a database folder; nothing was changed")
  }
}

/** Opens the staged copy (loading the archive into it), checks its migrations and counts what it holds. */
async function openAndCount(staging: string, archive: string, manifest: BackupManifest, logger: Logger | undefined): Promise<BackupCounts> {
  let db: Database
  try {
    db = await openPGlite({ dataDir: staging, template: archive, ...(logger ? { logger } : {}) })
  } catch (error) {
    throw refuse(`The backup's database archive does not open (${(error as Error).message}); nothing was changed`)
  }
  try {
    const applied = await db
      .query<{ name: string }>(sql`SELECT name FROM knowhub_migrations ORDER BY name`)
      .then((rows) => rows.map((r) => r.name))
      .catch(() => undefined)
    if (!applied || applied.length === 0) throw refuse('The backup opens but holds no KnowHub database (no knowhub_migrations); nothing was changed')
    const missing = manifest.migrations.filter((name) => !applied.includes(name))
    if (missing.length > 0) throw refuse(`The backup's database lacks migrations its manifest names (${missing.join(', ')}); nothing was changed`)
    const [row] = await db.query<{ knowledge: number; resources: number; secrets: number; tokens: number }>(sql`SELECT
        (SELECT count(*)::int FROM knowledge) AS knowledge,
        (SELECT count(*)::int FROM resources) AS resources,
        (SELECT count(*)::int FROM resources WHERE secure_body IS NOT NULL) AS secrets,
        (SELECT count(*)::int FROM knowhub_token) AS tokens`)
    return row ?? { knowledge: 0, resources: 0, secrets: 0, tokens: 0 }
  } finally {
    await db.close()
  }
}
