/**
 * An exclusive lock on an embedded database folder. PGlite is single-process:
 * two processes opening one folder fail in obscure ways or damage it. The lock
 * is a file beside the folder (`<dataDir>.lock`) created with O_EXCL, holding
 * the owner's pid and host; a lock whose process is gone is taken over. A server that
 * holds the folder writes where it listens into its lock (`announce`), with a key that
 * lets a process able to read the lock file act as the server's local principal: the
 * one-shot CLI then talks to that server instead of failing (src/cli/context.ts). The
 * file is readable by its owner only (mode 0600), like the data folder's secret key.
 */
import { hostname } from 'node:os'
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { KnowHubError } from '../core/errors.js'

/** What a lock file says about the process holding it. */
export interface LockOwner {
  pid: number
  host: string
  started_at: string
  /** Where the holder serves the HTTP API, once it listens (`knowhub start`). */
  url?: string
  /** The holder's local key: a bearer credential for the local principal of that server. */
  key?: string
}

/** A held lock; `release()` is idempotent. */
export interface DirectoryLock {
  readonly path: string
  /** Writes the server's address and local key into the lock file (atomically). */
  announce(server: { url: string; key: string }): void
  release(): void
}

/**
 * The folder of the embedded database inside a KnowHub data folder (`<dataDir>/db`).
 * @example
 * lockPath(join(dataDir, EMBEDDED_DB_FOLDER)) // '<dataDir>/db.lock'
 */
export const EMBEDDED_DB_FOLDER = 'db'

/**
 * The lock file of an embedded database folder.
 * @example
 * lockPath('.knowhub/db') // '.knowhub/db.lock'
 */
export function lockPath(dataDir: string): string {
  return `${dataDir.replace(/[\\/]+$/, '')}.lock`
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>
    if (typeof value.pid !== 'number' || typeof value.host !== 'string') return undefined
    return {
      pid: value.pid,
      host: value.host,
      started_at: String(value.started_at ?? ''),
      ...(typeof value.url === 'string' ? { url: value.url } : {}),
      ...(typeof value.key === 'string' ? { key: value.key } : {}),
    }
  } catch {
    return undefined
  }
}

/**
 * Who holds the embedded database in `dataDir`, without taking it: the lock's owner when
 * its process is alive (or on another host, where it cannot be checked), `held: 'unknown'`
 * for a lock file that cannot be read, undefined when the folder is free.
 * @example
 * const holder = readLock('.knowhub/db')
 * if (holder?.owner?.url) console.log(`a server at ${holder.owner.url} holds it`)
 */
export function readLock(dataDir: string): { path: string; owner?: LockOwner } | undefined {
  const path = lockPath(dataDir)
  if (!existsSync(path)) return undefined
  const owner = readOwner(path)
  if (!owner) return { path }
  const held = owner.host !== hostname() || alive(owner.pid)
  return held ? { path, owner } : undefined
}

/**
 * Takes the lock of `dataDir` or throws `database_error` naming the process that holds it.
 * @example
 * const lock = lockDirectory('.knowhub/db')
 * try { … } finally { lock.release() }
 */
export function lockDirectory(dataDir: string): DirectoryLock {
  const path = lockPath(dataDir)
  const me: LockOwner = { pid: process.pid, host: hostname(), started_at: new Date().toISOString() }
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new KnowHubError('database_error', `Cannot create the lock file ${path}: ${(error as Error).message}`, { lockFile: path }, { cause: error })
      }
      const owner = readOwner(path)
      // A lock from another host (a shared folder) cannot be checked: respect it.
      const held = owner !== undefined && (owner.host !== me.host || alive(owner.pid))
      if (held || attempt > 0) {
        const who = owner
          ? `process ${owner.pid} on ${owner.host}${owner.pid === process.pid ? ' (this process)' : ''}, since ${owner.started_at}${owner.url ? `, serving ${owner.url}` : ''}`
          : 'another process'
        throw new KnowHubError(
          'database_error',
          `The embedded database in ${dataDir} is in use by ${who}. The embedded database serves one process at a time: stop the other process, talk to its server over HTTP, or use a PostgreSQL server (DATABASE_URL). If no KnowHub process runs, delete ${path}.`,
          { lockFile: path, ...(owner ? { pid: owner.pid, host: owner.host } : {}) },
        )
      }
      // Stale (its process is gone) or unreadable: take it over.
      try {
        unlinkSync(path)
      } catch {
        // Someone else removed it first; the next attempt decides.
      }
    }
  }
  let released = false
  const release = (): void => {
    if (released) return
    released = true
    process.off('exit', release)
    try {
      if (readOwner(path)?.pid === process.pid) unlinkSync(path)
    } catch {
      // Already gone.
    }
  }
  const announce = (server: { url: string; key: string }): void => {
    if (released) return
    const next = `${path}.${process.pid}.tmp`
    writeFileSync(next, `${JSON.stringify({ ...me, url: server.url, key: server.key })}\n`, { mode: 0o600 })
    renameSync(next, path)
  }
  process.on('exit', release)
  return { path, announce, release }
}
