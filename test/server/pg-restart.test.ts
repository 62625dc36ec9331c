/**
 * #15 item 9: a PostgreSQL restart in the middle of traffic. The server runs on its own
 * throwaway PostgreSQL (the suite's shared one is not restarted under other tests); requests
 * in flight or sent while the database is down answer 503 `database_unavailable`, none hangs,
 * and the pool reconnects once the database is back.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { startServer, type RunningServer } from '../../src/server/serve.js'
import { startTempPostgres, type TempPostgres } from '../helpers/pg-server.js'

/** A request that has not answered by then counts as hung. */
const HANG_MS = 20_000

interface Outcome {
  status: number
  code?: string
  ms: number
}

describe('a PostgreSQL restart mid-traffic (#15 item 9)', () => {
  let pg: TempPostgres
  let hub: KnowHub
  let server: RunningServer
  let dataDir: string

  beforeAll(async () => {
    pg = await startTempPostgres()
    dataDir = mkdtempSync(join(tmpdir(), 'knowhub-pg-restart-'))
    hub = await openKnowHub({
      dataDir,
      databaseUrl: pg.url,
      embedder: { provider: 'hashed', dimension: 64 },
      secrets: { key: Buffer.alloc(32, 7).toString('base64') },
      server: { port: 0, rateLimit: 0 },
    })
    server = await startServer({ hub, host: '127.0.0.1', port: 0 })
  }, 60_000)

  afterAll(async () => {
    await server?.close().catch(() => {})
    await hub?.close().catch(() => {})
    await pg?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function call(path: string, init: RequestInit = {}): Promise<Outcome> {
    const started = Date.now()
    const response = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(HANG_MS) })
    const body = (await response.json().catch(() => ({}))) as { error?: { code?: string } }
    return { status: response.status, ...(body.error?.code ? { code: body.error.code } : {}), ms: Date.now() - started }
  }

  const save = (n: number) =>
    call('/api/knowledge', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task: `restart drill ${n}`, content: `Entry ${n} written during a database restart drill.`, types: ['strategy'] }),
    })

  it('answers 503 database_unavailable while the database is down, never hangs, and recovers', async () => {
    expect((await save(0)).status).toBe(201)
    const outcomes: Outcome[] = []
    let stop = false
    let n = 1
    const worker = async (): Promise<void> => {
      while (!stop) {
        const i = n++
        outcomes.push(await (i % 2 ? save(i) : call(`/api/knowledge/search?q=${encodeURIComponent('restart drill')}`)))
      }
    }
    const workers = Array.from({ length: 4 }, worker)
    await new Promise((r) => setTimeout(r, 500))
    await pg.restart()
    await new Promise((r) => setTimeout(r, 1_000))
    stop = true
    await Promise.all(workers)

    const unexpected = outcomes.filter((o) => !(o.status === 200 || o.status === 201 || (o.status === 503 && o.code === 'database_unavailable')))
    expect(unexpected, JSON.stringify(unexpected.slice(0, 5))).toEqual([])
    // The drill is what it claims: some requests met the database down.
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0)
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(HANG_MS)
    // The pool reconnected: writes and reads work again without restarting KnowHub.
    expect((await save(10_000)).status).toBe(201)
    const search = await call(`/api/knowledge/search?q=${encodeURIComponent('restart drill 10000')}`)
    expect(search.status).toBe(200)
  }, 90_000)
})
