/**
 * #15 item 9: graceful shutdown. `close()` (what `knowhub start` calls on SIGTERM/SIGINT before
 * closing the database) stops accepting connections at once, lets requests in flight finish,
 * and cuts them only after the shutdown timeout.
 */
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import type { AppEnv } from '../../src/server/http.js'
import { openTestHub, type TestHub } from './helpers.js'

let t: TestHub | undefined

afterEach(async () => {
  await t?.close()
  t = undefined
})

let started: Promise<void>

/** A server whose dashboard has one public route that answers after `ms`; `started` resolves when a request reached it. */
async function slowServer(ms: number) {
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
  const routes = new Hono<AppEnv>()
  let arrived = (): void => {}
  started = new Promise<void>((resolve) => (arrived = resolve))
  routes.get('/slow', async (c) => {
    arrived()
    await new Promise((r) => setTimeout(r, ms))
    return c.text('done')
  })
  const hub = t.hub
  return t.start({
    dashboard: { routes, authenticate: async () => hub.config.principal as never, isPublic: () => true },
  })
}

describe('graceful shutdown (#15 item 9)', () => {
  it('stops accepting at once, and a request in flight finishes with its answer', async () => {
    const server = await slowServer(1_500)
    const slow = fetch(`${server.url}/slow`)
    await started
    const closing = server.close()
    await new Promise((r) => setTimeout(r, 100))
    // New connections are refused while the old request runs.
    await expect(fetch(`${server.url}/healthz`, { headers: { connection: 'close' } })).rejects.toThrow()
    const response = await slow
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('done')
    await closing
    // The database is still open for the caller to close after the server.
    expect((await t!.hub.status()).entries).toBe(0)
  })

  it('cuts a request that outlives the shutdown timeout, and close() resolves soon after', async () => {
    const server = await slowServer(30_000)
    const slow = fetch(`${server.url}/slow`).then(
      (r) => r.status,
      () => 'cut',
    )
    await started
    const t0 = Date.now()
    await server.close({ timeoutMs: 300 })
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(await slow).toBe('cut')
    expect(t!.logs.some((line) => JSON.parse(line).message === 'server.shutdown_timeout')).toBe(true)
  })
})
