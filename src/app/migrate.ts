/**
 * `knowhub migrate --to URL` for the entry points: copies an open hub's database into an empty
 * PostgreSQL database and checks both sides (the copy and its checks are in src/store/copy.ts).
 */
import type { Logger } from '../core/logger.js'
import { copyToServer, type CopyProgress, type CopyReport } from '../store/copy.js'
import type { KnowHub } from './open.js'

/**
 * Copies `hub`'s database into the PostgreSQL database at `databaseUrl` (migrated first).
 * @example
 * const report = await copyHubToServer(hub, 'postgres://knowhub@db/knowhub')
 */
export function copyHubToServer(
  hub: Pick<KnowHub, 'store'>,
  databaseUrl: string,
  options: { onProgress?: (progress: CopyProgress) => void; logger?: Logger } = {},
): Promise<CopyReport> {
  return copyToServer(hub.store, databaseUrl, options)
}
