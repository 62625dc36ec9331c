/**
 * Commands that only read create nothing (issue 42): `knowhub status` in a folder without data
 * made a 40 MB `.knowhub` with a `secret.key`; now every reading command there says that there is
 * no data yet and leaves the folder as it was. A start that fails (its port in use) removes the
 * data folder it created, or inside an existing folder the database and key it made.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'

const env = useCliEnv('creates-nothing', { KNOWHUB_EMBEDDER: 'hashed' })
const dataDir = () => join(env.dir, 'data')

let busy: Server
let busyPort = 0
beforeAll(async () => {
  busy = createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  busyPort = (busy.address() as { port: number }).port
})
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())))

describe('commands that only read, where there is no data', () => {
  it.each([
    ['status'],
    ['list'],
    ['search', 'selenium login'],
    ['show', 'knowledge-20260101000000-abcd'],
    ['export', '-o', 'out.jsonl'],
    ['token', 'list'],
    ['resource', 'list'],
  ])('knowhub %s creates no data folder', async (...args) => {
    const ran = await runCli(...args)
    expect(ran.code).not.toBe(0)
    expect(ran.stderr).toContain(`No KnowHub data in ${dataDir()} yet, and this command only reads: it created nothing.`)
    expect(existsSync(dataDir())).toBe(false)
  })
})

describe('a start that fails', () => {
  it('on a port in use removes the data folder it created', async () => {
    const ran = await runCli('start', '--port', String(busyPort), '--no-packs')
    expect(ran.code).not.toBe(0)
    expect(ran.stderr).toContain(`Port ${busyPort} on 127.0.0.1 is in use`)
    expect(existsSync(dataDir())).toBe(false)
  }, 120_000)

  it('in a folder of its own keeps the folder and what was there, and removes the database and key it made', async () => {
    mkdirSync(dataDir())
    writeFileSync(join(dataDir(), 'notes.txt'), 'mine')
    const ran = await runCli('start', '--port', String(busyPort), '--no-packs')
    expect(ran.code).not.toBe(0)
    expect(readdirSync(dataDir())).toEqual(['notes.txt'])
  }, 120_000)

  it('on a folder with data keeps all of it', async () => {
    const saved = await runCli('save', '--task', 'Kept task', '--content', 'kept content', '--type', 'tool')
    expect(saved.code, saved.stderr).toBe(0)
    const before = readdirSync(dataDir()).sort()
    const ran = await runCli('start', '--port', String(busyPort), '--no-packs')
    expect(ran.code).not.toBe(0)
    expect(readdirSync(dataDir()).sort()).toEqual(before)
    expect((await runCli('list')).stdout).toContain('Kept task')
  }, 120_000)
})
