/**
 * An exclusive lock on an embedded database folder. PGlite is single-process:
 * two processes opening one folder fail in obscure ways or damage it. The lock
 * is a file beside the folder (`<dataDir>.lock`) created with O_EXCL, holding
 * the owner's pid and host; a lock whose process is gone is taken over.
 */
import { hostname } from 'node:os'
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { KnowHubError } from '../core/errors.js'

interface LockOwner {
  pid: number
  host: string
  started_at: string
}

/** A held lock; `release()` is idempotent. */
export interface DirectoryLock {
  readonly path: string
  release(): void
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
    return typeof value.pid === 'number' && typeof value.host === 'string'
      ? { pid: value.pid, host: value.host, started_at: String(value.started_at ?? '') }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Takes the lock of `dataDir` or throws `database_error` naming the process that holds it.
 * @example
 * const lock = lockDirectory('.knowhub/db')
 * try { … } finally { lock.release() }
 */
export function lockDirectory(dataDir: string): DirectoryLock {
  const path = `${dataDir.replace(/[\\/]+$/, '')}.lock`
  const me: LockOwner = { pid: process.pid, host: hostname(), started_at: new Date().toISOString() }
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o644 })
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
          ? `process ${owner.pid} on ${owner.host}${owner.pid === process.pid ? ' (this process)' : ''}, since ${owner.started_at}`
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
  process.on('exit', release)
  return { path, release }
}
