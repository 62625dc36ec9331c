/**
 * Read replicas (docs/scale.md, "Read replicas"): a real primary and a real streaming replica
 * (pg_basebackup -R) that this test starts on 127.0.0.1, two real `knowhub start` processes on
 * them (DATABASE_URL + DATABASE_REPLICA_URLS), every request over HTTP. Reads go to the replica
 * while it is fresh (the metrics say so, and a paused replica shows its stale view to others);
 * a writer reads its own writes at once, through either process; a replica lagging past the
 * bound is skipped; a killed replica leaves no request unanswered.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub } from '../../src/app/open.js'
import { loadConfig } from '../../src/cli/config.js'
import { runCli } from '../helpers/cli.js'
import { rejection } from '../helpers/errors.js'
import { startKnowHubProcess, type KnowHubProcess } from '../helpers/knowhub-process.js'
import { startPrimaryWithReplica, type PrimaryWithReplica } from '../helpers/pg-replica.js'
import { tempDataDir } from '../helpers/stores.js'

const SECRET_KEY = Buffer.alloc(32, 5).toString('base64')
const MAX_LAG_MS = 2_500
const POLL_MS = 100

// Response bodies are checked field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

async function call(server: KnowHubProcess, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

async function sql<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(text)).rows
  } finally {
    await client.end()
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('read replicas: a primary and a streaming replica', () => {
  let cluster: PrimaryWithReplica
  let a: KnowHubProcess
  let b: KnowHubProcess
  let alice: string
  let bob: string
  let operator: string
  let replicaLabel: string
  let serverEnv: Record<string, string>
  const saved: Record<string, string | undefined> = {}

  /** The value of one series of a process's /metrics (0 when absent). */
  async function metric(server: KnowHubProcess, name: string, labels: Record<string, string>): Promise<number> {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${operator}` } })).text()
    const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
      if (want.every((pair) => line.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    return 0
  }
  const replicaReads = (server: KnowHubProcess) => metric(server, 'knowhub_db_reads_total', { target: replicaLabel, reason: 'replica' })

  /** Waits until the replica has replayed everything the primary has written so far. */
  async function caughtUp(): Promise<void> {
    const [primary] = await sql<{ lsn: string }>(cluster.primaryUrl, 'SELECT pg_current_wal_insert_lsn()::text AS lsn')
    for (let i = 0; i < 100; i++) {
      const [row] = await sql<{ ok: boolean }>(cluster.replicaUrl, `SELECT pg_last_wal_replay_lsn() >= '${primary!.lsn}'::pg_lsn AS ok`)
      if (row?.ok) return
      await sleep(50)
    }
    throw new Error('the replica did not catch up within 5 s')
  }

  beforeAll(async () => {
    cluster = await startPrimaryWithReplica()
    replicaLabel = `${new URL(cluster.replicaUrl).hostname}:${new URL(cluster.replicaUrl).port}/postgres`
    const env = (serverEnv = {
      DATABASE_URL: cluster.primaryUrl,
      DATABASE_REPLICA_URLS: cluster.replicaUrl,
      KNOWHUB_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      KNOWHUB_REPLICA_POLL_MS: String(POLL_MS),
      KNOWHUB_EMBEDDER: 'hashed',
      KNOWHUB_SECRET_KEY: SECRET_KEY,
      KNOWHUB_RATE_LIMIT: '0',
    })
    for (const name of [...Object.keys(env), 'KNOWHUB_LOG_LEVEL']) saved[name] = process.env[name]
    // The tokens first, through the CLI on the primary (it migrates the database): the servers start in token mode.
    Object.assign(process.env, env, { KNOWHUB_LOG_LEVEL: 'silent' })
    const token = async (...args: string[]) => {
      const run = await runCli('token', 'create', ...args)
      expect(run.code, run.stderr).toBe(0)
      return run.stdout.trim()
    }
    alice = await token('--user', 'alice', '--org', 'acme', '--perm', 'read', '--perm', 'write')
    bob = await token('--user', 'bob', '--org', 'acme', '--perm', 'read', '--perm', 'write')
    operator = await token('--user', 'prometheus', '--hub-admin')
    ;[a, b] = await Promise.all([
      startKnowHubProcess({ env: { ...env, KNOWHUB_LOG_LEVEL: 'warn' } }),
      startKnowHubProcess({ env: { ...env, KNOWHUB_LOG_LEVEL: 'warn' } }),
    ])
    await caughtUp()
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await cluster?.stop()
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })

  it('sends reads to the replica while it is fresh, and a writer reads its own writes at once through either process', async () => {
    const first = await call(a, alice, 'POST', '/api/knowledge', {
      task: 'Rotate the staging TLS certificate',
      content: 'certbot renew',
      types: ['tool'],
      scopes: ['org:acme'],
    })
    expect(first.status).toBe(201)
    await caughtUp()
    await sleep(3 * POLL_MS)
    const before = await replicaReads(b)
    for (let i = 0; i < 5; i++) {
      expect((await call(b, bob, 'GET', `/api/knowledge/${first.body.id}`)).status).toBe(200)
      const found = await call(b, bob, 'GET', `/api/knowledge/search?q=${encodeURIComponent('staging TLS certificate')}&top_k=5&min_score=0`)
      expect(found.body.results.map((r: { id: string }) => r.id)).toEqual([first.body.id])
    }
    // Each get and search reads through the replica (a search: its candidate and record statements).
    expect((await replicaReads(b)) - before).toBeGreaterThanOrEqual(10)

    // Replay paused: the replica keeps its view from before the next write.
    await sql(cluster.replicaUrl, 'SELECT pg_wal_replay_pause()')
    const second = await call(a, alice, 'POST', '/api/knowledge', {
      task: 'Renew the staging DNS delegation',
      content: 'ask the registrar',
      types: ['tool'],
      scopes: ['org:acme'],
    })
    expect(second.status).toBe(201)
    const id = second.body.id as string
    // The writer, through the process it wrote with and through the other one: at once.
    for (const server of [a, b]) {
      expect((await call(server, alice, 'GET', `/api/knowledge/${id}`)).body).toMatchObject({ id, content: 'ask the registrar' })
      const found = await call(server, alice, 'GET', `/api/knowledge/search?q=${encodeURIComponent('staging DNS delegation')}&top_k=5&min_score=0`)
      expect(found.body.results.map((r: { id: string }) => r.id)).toContain(id)
    }
    // Another caller reads from the (fresh enough) replica: not there yet.
    expect((await call(b, bob, 'GET', `/api/knowledge/${id}`)).status).toBe(404)
    // The gauge is the health poll's: it says so by the next polls (one poll may have begun before the pause).
    let paused = 0
    for (let i = 0; i < 20 && paused !== 1; i++) {
      paused = await metric(b, 'knowhub_replica_replay_paused', { replica: replicaLabel })
      if (paused !== 1) await sleep(POLL_MS)
    }
    expect(paused).toBe(1)
  })

  it('skips a replica that lags past the bound, and shows the write to others once replicated', async () => {
    const listed = async (server: KnowHubProcess) => (await call(server, bob, 'GET', '/api/knowledge?limit=50')).body.items.map((e: { task: string }) => e.task)
    // Still paused: past the bound the replica is skipped, and bob reads the primary.
    await sleep(MAX_LAG_MS + 4 * POLL_MS)
    expect(await metric(b, 'knowhub_replica_usable', { replica: replicaLabel })).toBe(0)
    expect(await metric(b, 'knowhub_replica_lag_seconds', { replica: replicaLabel })).toBeGreaterThan(MAX_LAG_MS / 1000)
    const skippedBefore = await metric(b, 'knowhub_replica_skipped_total', { replica: replicaLabel, reason: 'lagging' })
    expect(await listed(b)).toContain('Renew the staging DNS delegation')
    expect(await metric(b, 'knowhub_replica_skipped_total', { replica: replicaLabel, reason: 'lagging' })).toBeGreaterThan(skippedBefore)

    // Replay resumed: the replica catches up and takes the reads again, the write included.
    await sql(cluster.replicaUrl, 'SELECT pg_wal_replay_resume()')
    await caughtUp()
    await sleep(3 * POLL_MS)
    const before = await replicaReads(b)
    expect(await listed(b)).toContain('Renew the staging DNS delegation')
    expect(await replicaReads(b)).toBeGreaterThan(before)
    expect(await metric(b, 'knowhub_replica_usable', { replica: replicaLabel })).toBe(1)
  })

  it('answers every request when the replica is killed', async () => {
    cluster.killReplica()
    // At once (before a poll notices) and after: every read falls back to the primary.
    const requests = Array.from({ length: 10 }, (_, i) => [
      call(i % 2 ? a : b, bob, 'GET', `/api/knowledge/search?q=${encodeURIComponent('staging certificate')}&top_k=5&min_score=0`),
      call(i % 2 ? b : a, bob, 'GET', '/api/knowledge?limit=10'),
    ]).flat()
    const answers = await Promise.all(requests)
    expect(answers.map((r) => r.status)).toEqual(Array(answers.length).fill(200))
    for (const answer of answers.filter((r) => r.body.results)) expect(answer.body.results.length).toBeGreaterThan(0)
    await sleep(4 * POLL_MS)
    const saved = await call(a, alice, 'POST', '/api/knowledge', {
      task: 'After the replica died',
      content: 'still writable',
      types: ['tool'],
      scopes: ['org:acme'],
    })
    expect(saved.status).toBe(201)
    expect((await call(b, bob, 'GET', `/api/knowledge/${saved.body.id}`)).status).toBe(200)
    for (const server of [a, b]) expect(await metric(server, 'knowhub_replica_up', { replica: replicaLabel })).toBe(0)
    expect(await metric(b, 'knowhub_db_reads_total', { target: 'primary', reason: 'no_fresh_replica' })).toBeGreaterThan(0)

    // A process started while the replica is down starts, and reads from the primary.
    const c = await startKnowHubProcess({ env: { ...serverEnv, KNOWHUB_LOG_LEVEL: 'warn' } })
    try {
      expect((await call(c, bob, 'GET', `/api/knowledge/${saved.body.id}`)).status).toBe(200)
      expect(await metric(c, 'knowhub_replica_up', { replica: replicaLabel })).toBe(0)
    } finally {
      await c.stop()
    }
  })
})

describe('read replica settings', () => {
  it('reads DATABASE_REPLICA_URLS as a list with its bounds, and refuses replicas on the embedded database', async () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://knowhub@127.0.0.1:1/knowhub',
      DATABASE_REPLICA_URLS: 'postgres://r1:5432/knowhub, postgres://r2:5432/knowhub',
      KNOWHUB_REPLICA_MAX_LAG_MS: '2000',
    })
    expect(config.replicas).toEqual({ urls: ['postgres://r1:5432/knowhub', 'postgres://r2:5432/knowhub'], maxLagMs: 2000, pollMs: 250 })
    const embedded = loadConfig({ KNOWHUB_DATA_DIR: tempDataDir('replicas'), DATABASE_REPLICA_URLS: 'postgres://r1:5432/knowhub', KNOWHUB_EMBEDDER: 'hashed' })
    const error = await rejection(openKnowHub(embedded, { packs: false }))
    expect(error.code).toBe('config_error')
    expect(error.message).toMatch(/Read replicas \(DATABASE_REPLICA_URLS\) need a PostgreSQL primary \(DATABASE_URL\)/)
  })
})
