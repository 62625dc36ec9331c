/**
 * A throwaway PostgreSQL server from the locally installed binaries: initdb in a temp dir,
 * listening on 127.0.0.1 only. Used by the test suite's global setup and by the benchmarks.
 *
 * The binaries: `KNOWHUB_PG_BIN` when set; else the private PostgreSQL 15 + pgvector copy that
 * `.ci/pgvector` builds (Debian's PostgreSQL 15 with the extension beside it), when present;
 * else Debian's own (`/usr/lib/postgresql/<newest>/bin`).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import pg from 'pg'

export interface TempPostgres {
  url: string
  /** The bin folder it was started from. */
  bin: string
  /** Stops the server as an administrator would (fast shutdown: sessions are ended) and starts it again on the same port and data. */
  restart(): Promise<void>
  stop(): Promise<void>
}

/** Where `.ci/pgvector` puts its PostgreSQL + pgvector copy (the same rule as the script). */
export function pgvectorPrefix(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KNOWHUB_PGVECTOR_PREFIX) return env.KNOWHUB_PGVECTOR_PREFIX
  const cache = process.getuid?.() === 0 ? '/var/cache' : (env.XDG_CACHE_HOME ?? join(homedir(), '.cache'))
  return join(cache, 'knowhub', 'pg15-pgvector-0.8.6')
}

/** The bin folder throwaway servers start from (see the file comment), or undefined. */
export function findPgBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.KNOWHUB_PG_BIN) return env.KNOWHUB_PG_BIN
  const prefix = pgvectorPrefix(env)
  if (existsSync(join(prefix, '.knowhub-stamp'))) return join(prefix, 'lib', 'postgresql', '15', 'bin')
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a))
  for (const version of versions) {
    const bin = join(root, version, 'bin')
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin
  }
  return undefined
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** Waits until `url` accepts a connection (30 s at most); throws when `child` exits first. */
export async function waitReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000
  let lastError: unknown
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode}`)
    const client = new pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.end()
      return
    } catch (error) {
      lastError = error
      await client.end().catch(() => {})
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  throw new Error(`postgres did not become ready: ${String(lastError)}`)
}

/** Starts a server; throws a clear error when PostgreSQL is not installed. */
export async function startTempPostgres(): Promise<TempPostgres> {
  const bin = findPgBin()
  if (!bin) {
    throw new Error('PostgreSQL is not installed. Install postgresql-15 (apt-get install postgresql-15; see .ci/run) or point KNOWHUB_TEST_PG_URL at a server.')
  }
  if (!existsSync(join(bin, 'initdb')) || !existsSync(join(bin, 'postgres'))) {
    throw new Error(`No PostgreSQL binaries in ${bin} (KNOWHUB_PG_BIN): initdb and postgres are needed.`)
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'knowhub-pg-'))
  const asRoot = process.getuid?.() === 0
  // initdb refuses to run as root: run the server as the postgres user then.
  const command = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args])
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(dataDir, uid, gid)
  }
  const pgData = join(dataDir, 'data')
  execFileSync(...command(join(bin, 'initdb'), ['-D', pgData, '-A', 'trust', '-U', 'knowhub', '--no-sync', '-E', 'UTF8', '--locale=C']), { stdio: 'pipe' })
  const port = await freePort()
  const launch = (): ChildProcess =>
    spawn(
      ...command(join(bin, 'postgres'), [
        '-D',
        pgData,
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-k',
        dataDir,
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ]),
      // Its own process group, so that stop() reaches postgres even behind runuser.
      { stdio: 'ignore', detached: true },
    )
  let server = launch()
  const url = `postgres://knowhub@127.0.0.1:${port}/postgres`
  try {
    await waitReady(url, server)
  } catch (error) {
    if (server.pid) process.kill(-server.pid, 'SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  // If this process ends without stop() (an interrupted test run), take the server along.
  const orphan = () => {
    try {
      if (server.pid) process.kill(-server.pid, 'SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    } catch {
      // already gone
    }
  }
  process.once('exit', orphan)
  const shutdown = async (): Promise<void> => {
    if (server.exitCode === null && server.pid) {
      const running = server
      const exited = new Promise((resolve) => {
        running.once('exit', resolve)
        setTimeout(resolve, 10_000)
      })
      process.kill(-(running.pid as number), 'SIGINT')
      await exited
    }
  }
  return {
    url,
    bin,
    async restart() {
      await shutdown()
      server = launch()
      await waitReady(url, server)
    },
    async stop() {
      process.off('exit', orphan)
      await shutdown()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
