/**
 * `knowhub migrate --to postgres://…`: an embedded store (entries with versions and feedback
 * histories, an archived entry, resources with encrypted secrets, tokens active and revoked)
 * moves to an empty PostgreSQL database on each server backend (vector → vector, and
 * vector → real[]); everything reads back the same there, and a second run or a bad URL is
 * refused without changing anything. The real CLI, real databases.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { Principal } from '../../src/core/principal.js'
import { runCli } from '../helpers/cli.js'
import { SERVER_BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const KEY = Buffer.alloc(32, 5).toString('base64')
const ENV = { KNOWHUB_EMBEDDER: 'hashed', KNOWHUB_EMBED_DIM: '64', KNOWHUB_LOG_LEVEL: 'silent', KNOWHUB_SECRET_KEY: KEY }
const CONFIG = { embedder: { provider: 'hashed', dimension: 64 }, secrets: { key: KEY } }
const ALICE = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write', 'secrets:read', 'admin'] })

async function lines(hub: KnowHub): Promise<string[]> {
  const out: string[] = []
  for await (const line of hub.knowledge.exportJsonl(ALICE)) out.push(line)
  return out.sort()
}

async function snapshot(hub: KnowHub) {
  const search = async (q: string) => (await hub.knowledge.search({ q, top_k: 5, min_score: 0 }, ALICE)).results.map((r) => [r.id, r.eval.helpful])
  return {
    export: await lines(hub),
    secret: (await hub.resources.get('credentials/site_a', ALICE, { includeSecret: true })).secure_body,
    tokens: (await hub.tokens.list()).map((t) => [t.id, t.status, t.principal]),
    searches: [await search('selenium login'), await search('docker cache'), await search('部署 文档')],
  }
}

describe('knowhub migrate --to', () => {
  let dir: string
  let before: Awaited<ReturnType<typeof snapshot>>
  let activeToken: string
  const saved: Record<string, string | undefined> = {}

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-copy-'))
    for (const name of [...Object.keys(ENV), 'DATABASE_URL', 'KNOWHUB_DATA_DIR']) saved[name] = process.env[name]
    Object.assign(process.env, ENV, { KNOWHUB_DATA_DIR: dir })
    delete process.env.DATABASE_URL
    const hub = await openKnowHub({ ...CONFIG, dataDir: dir })
    try {
      const ids: string[] = []
      for (let i = 0; i < 40; i++) {
        const topic = ['selenium login', 'docker cache', '部署 文档 流程'][i % 3]!
        ids.push(
          (await hub.knowledge.save({ task: `${topic} ${i}`, content: `how to handle ${topic}, case ${i}`, types: ['tool'], scopes: ['org:acme'] }, ALICE)).id,
        )
      }
      await hub.knowledge.edit(ids[0]!, { content: 'undetected_chromedriver, random delays' }, ALICE)
      await hub.knowledge.edit(ids[0]!, { content: 'undetected_chromedriver, random delays, rotate proxies' }, ALICE)
      for (let i = 0; i < 5; i++) await hub.knowledge.feedback(ids[1]!, { add_helpful_case: { task: `t${i}`, outcome: 'ok' } }, ALICE)
      await hub.knowledge.feedback(ids[2]!, { add_harmful_case: { task: 'bad', outcome: 'broke the build' } }, ALICE)
      await hub.knowledge.archive(ids[3]!, ALICE)
      await hub.resources.save(
        {
          id: 'credentials/site_a',
          title: 'Site A',
          body: 'test account',
          secure_body: 'password: Hunter-2',
          content_type: 'credential',
          scopes: ['org:acme'],
        },
        ALICE,
      )
      await hub.resources.save({ id: 'code/login', title: 'login script', body: 'driver.get(url)', content_type: 'code', scopes: ['org:acme'] }, ALICE)
      activeToken = (await hub.tokens.create({ user: 'alice', org: 'acme', permissions: ['read'] })).token
      const revoked = await hub.tokens.create({ user: 'bob', permissions: ['read'] })
      await hub.tokens.revoke(revoked.id)
      before = await snapshot(hub)
    } finally {
      await hub.close()
    }
  })
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('refuses a target that is not a PostgreSQL connection string', async () => {
    const run = await runCli('migrate', '--to', 'mysql://db/knowhub', '--json')
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).error).toMatchObject({ code: 'validation_error', message: expect.stringContaining('postgres://') })
  })

  describe.each(SERVER_BACKENDS)('to a %s database', (backend) => {
    let target: TestDatabase
    beforeAll(async () => {
      target = await createTestDatabase(backend)
    })
    afterAll(async () => target.drop())

    it('copies everything, verifies counts and a sample, and the server reads it all back the same', async () => {
      const run = await runCli('migrate', '--to', target.options.databaseUrl!, '--json')
      expect(run.code, run.stdout + run.stderr).toBe(0)
      const report = JSON.parse(run.stdout)
      const rows = Object.fromEntries(report.tables.map((t: { name: string; rows: number }) => [t.name, t.rows]))
      expect(rows).toMatchObject({ knowledge: 40, knowledge_version: 2, knowledge_feedback: 6, resources: 2, knowhub_token: 2 })
      expect(report.rows).toBe(Object.values(rows).reduce((a: number, b) => a + (b as number), 0))
      expect(report.sampled).toBeGreaterThan(25)

      const hub = await openKnowHub({ ...CONFIG, dataDir: dir, databaseUrl: target.options.databaseUrl })
      try {
        expect(hub.store.vectorState()).toMatchObject({ status: 'ready', info: { backend: backend === 'postgres' ? 'array' : 'pgvector', dimension: 64 } })
        expect(await snapshot(hub)).toEqual(before)
        expect(await hub.tokens.authenticate(activeToken)).toMatchObject({ user: 'alice', org: 'acme' })
        // New writes go on after the copied rows (sequences moved past them).
        const entry = (await lines(hub)).map((l) => JSON.parse(l)).find((e) => e.eval.helpful === 5)
        await hub.knowledge.feedback(entry.id, { add_helpful_case: { task: 'after', outcome: 'ok' } }, ALICE)
        expect((await hub.knowledge.get(entry.id, ALICE)).eval.helpful).toBe(6)
      } finally {
        await hub.close()
      }
    })

    it('refuses a target that holds data already, and changes nothing', async () => {
      const run = await runCli('migrate', '--to', target.options.databaseUrl!, '--json')
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stdout).error).toMatchObject({ code: 'conflict', message: expect.stringContaining('not empty') })
      const hub = await openKnowHub({ ...CONFIG, dataDir: dir, databaseUrl: target.options.databaseUrl })
      try {
        expect(await hub.store.knowledge.count()).toBe(40)
      } finally {
        await hub.close()
      }
    })
  })
})
