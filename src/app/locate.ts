/**
 * Who holds a KnowHub data folder, found before anything heavy loads: the one-shot CLI
 * reads it to talk to a running server instead of opening the embedded database (which
 * serves one process at a time), and to report a held folder at once.
 */
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { KnowHubConfig } from '../core/config.js'
import { EMBEDDED_DB_FOLDER, readLock, type LockOwner } from '../store/lockfile.js'

/** The process holding an embedded database, from its lock file. */
export interface FolderHolder {
  /** The lock file. */
  lockFile: string
  /** What the lock says (undefined: unreadable, e.g. another account's). */
  owner: LockOwner | undefined
}

/**
 * The holder of the configured embedded database, or undefined when it is free, or when
 * the config names a PostgreSQL server or an in-memory database (nothing is held then).
 * @example
 * const holder = folderHolder(loadConfig())
 * if (holder?.owner?.url) console.error(`a KnowHub server at ${holder.owner.url} holds it`)
 */
export function folderHolder(config: Pick<KnowHubConfig, 'dataDir' | 'databaseUrl'>): FolderHolder | undefined {
  if (config.databaseUrl || config.dataDir.startsWith('memory://')) return undefined
  const held = readLock(join(config.dataDir, EMBEDDED_DB_FOLDER))
  return held ? { lockFile: held.path, owner: held.owner } : undefined
}

/**
 * Whether the configured data folder holds an embedded database already (always true for a
 * PostgreSQL server or an in-memory database): a command that only reads opens nothing where
 * there is nothing, since opening creates the folder, its database and its secret key.
 * @example
 * if (!holdsData(config)) throw new KnowHubError('not_found', `No KnowHub data in ${config.dataDir}`)
 */
export function holdsData(config: Pick<KnowHubConfig, 'dataDir' | 'databaseUrl'>): boolean {
  if (config.databaseUrl || config.dataDir.startsWith('memory://')) return true
  return existsSync(join(config.dataDir, EMBEDDED_DB_FOLDER, 'PG_VERSION'))
}

/**
 * What opening the configured data folder would create and does not exist yet: the folder
 * itself, or inside an existing one the database folder and the secret key file. A start that
 * fails (a port in use) removes them again, so it leaves nothing behind.
 * @example
 * const created = uncreatedDataPaths(config)
 * try { await start() } catch (error) { removePaths(created); throw error }
 */
export function uncreatedDataPaths(
  config: Pick<KnowHubConfig, 'dataDir' | 'databaseUrl'> & { secrets: { key?: string | undefined; keyFile?: string | undefined } },
): string[] {
  if (config.dataDir.startsWith('memory://')) return []
  if (!existsSync(config.dataDir)) return [config.dataDir]
  const keyFile = config.secrets.key ? undefined : (config.secrets.keyFile ?? join(config.dataDir, 'secret.key'))
  const db = join(config.dataDir, EMBEDDED_DB_FOLDER)
  const paths = [...(config.databaseUrl ? [] : [db, `${db}.lock`]), ...(keyFile ? [keyFile] : [])]
  return paths.filter((path) => !existsSync(path))
}

/** Removes `paths` (files or folders), ignoring those already gone. */
export function removePaths(paths: readonly string[]): void {
  for (const path of paths) rmSync(path, { recursive: true, force: true })
}
