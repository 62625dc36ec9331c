/**
 * The embedded database's data folder as the operating system lets KnowHub use it. A folder that
 * KnowHub may not read or write (another owner, a read-only mount) is said in words, with the
 * folder and the fix, as `config_error` — not as a raw `EACCES` on some file inside it.
 */
import { accessSync, constants, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { KnowHubError } from '../core/errors.js'

const DENIED = new Set(['EACCES', 'EPERM', 'EROFS'])

/**
 * The coded error for a file-system failure at `path` inside the data folder `folder`, when the
 * cause is a permission or a read-only file system; undefined for any other cause.
 * @example
 * throw dataDirAccessError(error, '/srv/kh/secret.key', '/srv/kh') ?? error
 */
export function dataDirAccessError(error: unknown, path: string, folder: string = dirname(path)): KnowHubError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (!code || !DENIED.has(code)) return undefined
  const why = code === 'EROFS' ? 'it is on a read-only file system' : 'permission denied'
  return new KnowHubError(
    'config_error',
    `KnowHub cannot use its data folder ${folder} (${why}: ${code}${path === folder ? '' : ` on ${path}`}). Run KnowHub as the user that owns the folder, ` +
      `give that user read and write access to it (e.g. chown -R "$(id -un)" ${folder}), or choose another folder with KNOWHUB_DATA_DIR.`,
    { path, folder, errno: code },
  )
}

/**
 * Creates the data folder when missing and checks that this process may read, write and enter it.
 * @example
 * prepareDataDir('.knowhub')
 */
export function prepareDataDir(folder: string): void {
  try {
    mkdirSync(folder, { recursive: true })
    accessSync(folder, constants.R_OK | constants.W_OK | constants.X_OK)
  } catch (error) {
    throw dataDirAccessError(error, folder, folder) ?? error
  }
}
