/**
 * Backups of the embedded database for the entry points: a backup of an open hub (the CLI in
 * this process, or `POST /api/admin/backup` on the server that holds the folder) and a restore
 * into a configured data folder (never through a server: it replaces the folder a server would
 * hold). The file format and every check are in src/store/backup.ts.
 */
import { join } from 'node:path'
import type { KnowHubConfig } from '../core/config.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Principal } from '../core/principal.js'
import type { SecretReadSite } from '../resources/service.js'
import { createBackup, readBackup, restoreBackup, type BackupCounts, type BackupManifest, type RestoreOptions } from '../store/backup.js'
import { EMBEDDED_DB_FOLDER } from '../store/lockfile.js'
import type { KnowHub } from './open.js'
import { packageVersion } from './version.js'

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
 * writeFileSync('kh.backup', await backupHub(hub))
 */
export async function backupHub(
  hub: Pick<KnowHub, 'store' | 'resources'>,
  who: { principal?: Principal | undefined; site?: SecretReadSite | undefined } = {},
): Promise<Uint8Array> {
  if (hub.store.db.kind !== 'pglite') throw new KnowHubError('validation_error', `knowhub backup copies the embedded database; ${PG_DUMP_HINT}`)
  const bytes = await createBackup(hub.store.db, { knowhubVersion: packageVersion() })
  await hub.resources.recordBackup(who.principal, who.site ?? { via: 'backup', route: 'knowhub backup', caller: 'local' })
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
