/**
 * The embedded database serves one process at a time: a second process gets a
 * clear error naming the first; a lock left by a dead process is taken over.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/store.js'
import { sql } from '../../src/store/sql.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-lock-'))
  dirs.push(dir)
  return dir
}

const TSX = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname
const STORE = new URL('../../src/store/store.js', import.meta.url).pathname

describe('embedded database lock', () => {
  it('refuses a second process with a message naming the holder, and frees the folder on close', async () => {
    const dataDir = tempDataDir()
    const store = await openStore({ dataDir })
    const lockFile = join(dataDir, 'db.lock')
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() })
    const probe = join(dataDir, 'probe.mts')
    writeFileSync(
      probe,
      `import { openStore } from ${JSON.stringify(STORE)}\ntry { const s = await openStore({ dataDir: process.argv[2] }); console.log('opened'); await s.close() } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }\n`,
    )
    const second = spawnSync(TSX, [probe, dataDir], { encoding: 'utf8' })
    const answer = JSON.parse(second.stdout.trim().split('\n').pop() ?? '{}') as { code?: string; message?: string }
    expect(answer.code).toBe('database_error')
    expect(answer.message).toContain(`in use by process ${process.pid}`)
    expect(answer.message).toContain('DATABASE_URL')

    // The first process still works, and closing frees the folder for the next one.
    expect(await store.db.query(sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
    await store.close()
    expect(existsSync(lockFile)).toBe(false)
    const third = spawnSync(TSX, [probe, dataDir], { encoding: 'utf8' })
    expect(third.stdout).toContain('opened')
  }, 120_000)

  it('refuses a second open in the same process', async () => {
    const dataDir = tempDataDir()
    const store = await openStore({ dataDir })
    try {
      await expect(openStore({ dataDir })).rejects.toMatchObject({ code: 'database_error', message: expect.stringContaining('(this process)') })
    } finally {
      await store.close()
    }
  }, 60_000)

  it('takes over a lock whose process is gone', async () => {
    const dataDir = tempDataDir()
    const dead = spawn(process.execPath, ['-e', '0'])
    const pid = dead.pid!
    await new Promise((resolve) => dead.once('exit', resolve))
    writeFileSync(join(dataDir, 'db.lock'), JSON.stringify({ pid, host: hostname(), started_at: '2026-01-01T00:00:00Z' }))
    const store = await openStore({ dataDir })
    expect(JSON.parse(readFileSync(join(dataDir, 'db.lock'), 'utf8'))).toMatchObject({ pid: process.pid })
    await store.close()
  }, 60_000)
})
