/**
 * `knowhub start --workers N` (docs/scale.md): on PostgreSQL, N real server processes share one
 * port and both answer; a worker killed with SIGKILL is reported and replaced, and the port
 * keeps answering; SIGTERM to the supervisor stops every worker. On the embedded database
 * `--workers 2` is refused with the reason before anything starts.
 */
import { get } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, useCliEnv } from '../helpers/cli.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { SERVER_BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

/** A GET on a new connection each time (no keep-alive), so the supervisor hands each to the next worker. */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      response.resume()
      response.once('end', () => resolve(response.statusCode ?? 0))
    }).once('error', reject)
  })
}

/** The JSON log lines of one message, from the process's stderr. */
function logged(server: KnowHubProcess, message: string): Array<Record<string, unknown>> {
  return server.stderr.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>
      return entry.msg === message ? [entry] : []
    } catch {
      return []
    }
  })
}

async function until<T>(what: string, read: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const start = Date.now()
  for (;;) {
    const value = read()
    if (value !== undefined) return value
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('knowhub start --workers on the embedded database', () => {
  useCliEnv('workers', { KNOWHUB_EMBEDDER: 'hashed' })
  it('is refused with the reason (one writer), and nothing listens', async () => {
    const run = await runCli('start', '--port', '0', '--workers', '2')
    expect(run.code).not.toBe(0)
    expect(run.stderr).toMatch(/--workers 2 needs PostgreSQL \(DATABASE_URL\): the embedded database \(PGlite\) runs inside one process, its only writer/)
    expect(run.stdout).not.toContain('listening')
  })
})

// One PostgreSQL backend is enough: the workers share nothing but the port and the database.
describe.each(SERVER_BACKENDS.slice(0, 1))('knowhub start --workers 2 on PostgreSQL (%s)', (backend) => {
  let database: TestDatabase
  let server: KnowHubProcess

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    server = await startKnowHubProcess({
      env: { DATABASE_URL: database.options.databaseUrl!, KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_LOG_LEVEL: 'info', KNOWHUB_RATE_LIMIT: '0' },
      args: ['--workers', '2'],
      timeoutMs: 120_000,
    })
  }, 150_000)
  afterAll(async () => {
    await server?.stop()
    await database?.drop()
  })

  const workerPids = (): number[] => logged(server, 'server.worker_started').map((e) => e.worker as number)
  const answeringPids = (): Set<number> => new Set(logged(server, 'http.request').map((e) => e.pid as number))

  it('runs two workers on one port, both answering', async () => {
    const pids = await until('two workers', () => (workerPids().length >= 2 ? workerPids() : undefined))
    expect(new Set(pids).size).toBe(2)
    expect(pids).not.toContain(server.child.pid)
    const statuses = await Promise.all(Array.from({ length: 12 }, () => freshGet(`${server.url}/healthz`)))
    expect(statuses).toEqual(Array(12).fill(200))
    // /healthz is logged too: both workers served some of the requests.
    const served = await until('both workers answering', () => (pids.every((pid) => answeringPids().has(pid)) ? answeringPids() : undefined), 10_000)
    expect([...served].sort()).toEqual([...pids].sort())
  })

  it('reports a killed worker and starts another; the port keeps answering', async () => {
    const [victim, survivor] = await until('two workers', () => (workerPids().length >= 2 ? workerPids() : undefined))
    process.kill(victim!, 'SIGKILL')
    const exited = await until('the exit report', () => logged(server, 'server.worker_exited').find((e) => e.worker === victim))
    expect(exited).toMatchObject({ level: 50, signal: 'SIGKILL' })
    const replacement = await until('a replacement', () => workerPids().find((pid) => pid !== victim && pid !== survivor))
    const statuses = await Promise.all(Array.from({ length: 12 }, () => freshGet(`${server.url}/healthz`)))
    expect(statuses).toEqual(Array(12).fill(200))
    await until('the replacement answering', () => (answeringPids().has(replacement) ? true : undefined), 10_000)
  })

  it('stops every worker on SIGTERM', async () => {
    const pids = workerPids()
    await server.stop()
    expect(server.child.exitCode).toBe(0)
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    })
    expect(alive).toEqual([])
  })
})
