/**
 * Backups of the embedded database: a backup of an open hub (the CLI in this process, or
 * `POST /api/admin/backup` on the server that holds the folder, through the admin service) and a
 * restore into a configured data folder (never through a server: it replaces the folder a server
 * would hold). The file format and every check are in src/store/backup.ts.
 */
import { join } from 'node:path'
import type { KnowHubConfig } from '../core/config.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Principal } from '../core/principal.js'
import type { ResourceService, SecretReadSite } from '../resources/service.js'
import { createBackup, readBackup, restoreBackup, type BackupCounts, type BackupManifest, type RestoreOptions } from '../store/backup.js'
import { EMBEDDED_DB_FOLDER } from '../store/lockfile.js'
import type { Store } from '../store/store.js'

/** What a backup reads and records to: the store, the resources' audit, and the version written into the manifest. */
export interface BackupDeps {
  store: Pick<Store, 'db'>
  resources: Pick<ResourceService, 'recordBackup'>
  /** KnowHub's version (package.json), kept in the backup's manifest. */
  version: string
}

/** What `knowhub backup` says about PostgreSQL. */
export const PG_DUMP_HINT =
  'this KnowHub uses a PostgreSQL server (DATABASE_URL): back it up with PostgreSQL\'s own tools, e.g. pg_dump --format=custom --file=knowhub.dump "$DATABASE_URL", and restore with pg_restore (docs/operations.md, "Backups")'

/** What `knowhub restore` says about PostgreSQL. */
export const PG_RESTORE_HINT =
  'knowhub restore fills the embedded database; this KnowHub uses a PostgreSQL server (DATABASE_URL): restore a pg_dump file with pg_restore (docs/operations.md, "Backups")'

/**
 * A backup file of the hub's embedded database (see src/store/backup.ts); a `validation_error`
 * naming pg_dump on a PostgreSQL server. A backup carries every secret (encrypted): the audit of
 * secret reads gets one row per resource with a secret, naming who took it (`who`; default the
 * local CLI).
 * @example
 * writeFileSync('kh.backup', await backupHub({ store, resources, version: '0.1.0' }))
 */
export async function backupHub(deps: BackupDeps, who: { principal?: Principal | undefined; site?: SecretReadSite | undefined } = {}): Promise<Uint8Array> {
  if (deps.store.db.kind !== 'pglite') throw new KnowHubError('validation_error', `knowhub backup copies the embedded database; ${PG_DUMP_HINT}`)
  const bytes = await createBackup(deps.store.db, { knowhubVersion: deps.version })
  await deps.resources.recordBackup(who.principal, who.site ?? { via: 'backup', route: 'knowhub backup', caller: 'local' })
  return bytes
}

/**
 * The manifest of a backup file's bytes (what `knowhub backup` reports after writing one),
 * checked as a restore would check it.
 * @example
 * const { migrations, created_at } = await backupManifest(bytes)
 */
export async function backupManifest(bytes: Uint8Array): Promise<BackupManifest> {
  return (await readBackup(bytes)).manifest
}

/**
 * Restores a backup file's bytes into the embedded database of `config.dataDir`
 * (`<dataDir>/db`): refused on PostgreSQL, on a held folder, and over an existing database
 * without `force`; checked and loaded before anything is replaced (src/store/backup.ts).
 * @example
 * const { counts } = await restoreDataFolder(config, readFileSync('kh.backup'), { force: false })
 */
export async function restoreDataFolder(
  config: Pick<KnowHubConfig, 'dataDir' | 'databaseUrl'>,
  bytes: Uint8Array,
  options: Omit<RestoreOptions, 'logger'> & { logger?: Logger } = {},
): Promise<{ manifest: BackupManifest; counts: BackupCounts; dbDir: string }> {
  if (config.databaseUrl) throw new KnowHubError('validation_error', PG_RESTORE_HINT)
  if (config.dataDir.startsWith('memory://')) throw new KnowHubError('validation_error', 'An in-memory database cannot be restored into: set a data folder')
  const dbDir = join(config.dataDir, EMBEDDED_DB_FOLDER)
  return { ...(await restoreBackup(bytes, dbDir, options)), dbDir }
}
