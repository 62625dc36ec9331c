/**
 * Who holds a KnowHub data folder, found before anything heavy loads: the one-shot CLI
 * reads it to talk to a running server instead of opening the embedded database (which
 * serves one process at a time), and to report a held folder at once.
 */
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
