/**
 * A throwaway PostgreSQL primary with one streaming replica, both on 127.0.0.1, from the same
 * binaries as the suite's server (`KNOWHUB_PG_BIN`, see pg-server.ts): initdb for the primary
 * (`wal_level = replica`), `pg_basebackup -R` into a second data folder for the standby. For
 * the read-replica test (test/scale/replicas.test.ts). Fails with a clear message when a binary
 * is missing: nothing is skipped.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findPgBin, freePort, waitReady } from './pg-server.js'

export interface PrimaryWithReplica {
  primaryUrl: string
  replicaUrl: string
  /** Kills the replica's processes at once (SIGKILL to its process group): a crash, not a shutdown. */
  killReplica(): void
  stop(): Promise<void>
}

/** Starts a primary and a streaming replica of it; throws when the binaries are not there. */
export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const bin = findPgBin()
  const needed = ['initdb', 'postgres', 'pg_basebackup']
  const missing = bin ? needed.filter((name) => !existsSync(join(bin, name))) : needed
  if (!bin || missing.length > 0) {
    throw new Error(
      `The read-replica test needs PostgreSQL's ${missing.join(', ')} (KNOWHUB_PG_BIN=${bin ?? 'unset'}): install postgresql-15 or build .ci/pgvector.`,
    )
  }
  const base = mkdtempSync(join(tmpdir(), 'knowhub-replica-'))
  const asRoot = process.getuid?.() === 0
  // initdb and postgres refuse to run as root: run them as the postgres user then (as pg-server.ts).
  const command = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args])
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(base, uid, gid)
  }
  const children: ChildProcess[] = []
  const launch = (data: string, port: number, extra: string[]): ChildProcess => {
    const child = spawn(
      ...command(join(bin, 'postgres'), [
        '-D',
        data,
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-k',
        base,
        '-c',
        'fsync=off',
        '-c',
        'max_connections=100',
        ...extra,
      ]),
      // Its own process group, so that a kill reaches postgres even behind runuser.
      { stdio: 'ignore', detached: true },
    )
    children.push(child)
    return child
  }
  const kill = (child: ChildProcess): void => {
    try {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  const cleanup = (): void => {
    for (const child of children) kill(child)
    rmSync(base, { recursive: true, force: true })
  }
  process.once('exit', cleanup)
  try {
    const primaryData = join(base, 'primary')
    const replicaData = join(base, 'replica')
    execFileSync(...command(join(bin, 'initdb'), ['-D', primaryData, '-A', 'trust', '-U', 'knowhub', '--no-sync', '-E', 'UTF8', '--locale=C']), {
      stdio: 'pipe',
    })
    const primaryPort = await freePort()
    const primary = launch(primaryData, primaryPort, [
      '-c',
      'wal_level=replica',
      '-c',
      'max_wal_senders=4',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ])
    const primaryUrl = `postgres://knowhub@127.0.0.1:${primaryPort}/postgres`
    await waitReady(primaryUrl, primary)
    // initdb's trust rules include replication connections from 127.0.0.1.
    execFileSync(
      ...command(join(bin, 'pg_basebackup'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(primaryPort),
        '-U',
        'knowhub',
        '-D',
        replicaData,
        '-R',
        '-X',
        'stream',
        '-c',
        'fast',
        '--no-sync',
      ]),
      { stdio: 'pipe' },
    )
    const replicaPort = await freePort()
    const replica = launch(replicaData, replicaPort, ['-c', 'hot_standby=on'])
    const replicaUrl = `postgres://knowhub@127.0.0.1:${replicaPort}/postgres`
    await waitReady(replicaUrl, replica)
    return {
      primaryUrl,
      replicaUrl,
      killReplica: () => kill(replica),
      async stop() {
        process.off('exit', cleanup)
        for (const child of [replica, primary]) {
          if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue
          const exited = new Promise((resolve) => {
            child.once('exit', resolve)
            setTimeout(resolve, 10_000)
          })
          try {
            process.kill(-child.pid, 'SIGINT')
          } catch {
            continue
          }
          await exited
        }
        cleanup()
      },
    }
  } catch (error) {
    process.off('exit', cleanup)
    cleanup()
    throw error
  }
}
