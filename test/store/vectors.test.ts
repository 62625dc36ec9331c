/**
 * `knowhub reindex --vectors`: a PostgreSQL database that stored its vectors as real[]
 * (no pgvector) is given the extension and converted to vector(N) + HNSW in place, every
 * vector kept and searches unchanged; without the extension the command is refused and
 * nothing changes. Real PostgreSQL, the real CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub } from '../../src/app/open.js'
import { sql } from '../../src/store/sql.js'
import type { Database } from '../../src/store/database.js'
import { runCli } from '../helpers/cli.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const ENV = {
  KNOWHUB_EMBEDDER: 'hashed',
  KNOWHUB_EMBED_DIM: '64',
  KNOWHUB_LOG_LEVEL: 'silent',
  KNOWHUB_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'),
}
const CONFIG = { embedder: { provider: 'hashed', dimension: 64 }, secrets: { key: ENV.KNOWHUB_SECRET_KEY } }
const TOPICS = ['selenium login', 'docker pnpm cache', 'postgres vacuum', 'kubernetes ingress', 'python typing', 'rust borrow checker']

async function column(db: Database): Promise<{ type: string; hnsw: boolean; vectors: number }> {
  const [col] = await db.query<{ type: string }>(
    sql`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'knowledge'::regclass AND attname = 'embedding'`,
  )
  const indexes = await db.query(sql`SELECT 1 FROM pg_indexes WHERE indexname = 'knowledge_embedding_hnsw'`)
  const [count] = await db.query<{ n: number }>(sql`SELECT count(embedding)::int AS n FROM knowledge`)
  return { type: col!.type, hnsw: indexes.length === 1, vectors: count!.n }
}

describe('knowhub reindex --vectors', () => {
  let dir: string
  let database: TestDatabase
  const saved: Record<string, string | undefined> = {}

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-vectors-'))
    for (const name of [...Object.keys(ENV), 'DATABASE_URL', 'KNOWHUB_DATA_DIR']) saved[name] = process.env[name]
    Object.assign(process.env, ENV, { KNOWHUB_DATA_DIR: dir })
  })
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    rmSync(dir, { recursive: true, force: true })
  })
  afterEach(async () => database?.drop())

  /** A database without the extension, with entries saved while it had none. */
  async function seeded(): Promise<{ ids: string[]; before: string[][] }> {
    database = await createTestDatabase('postgres')
    process.env.DATABASE_URL = database.options.databaseUrl
    const hub = await openKnowHub({ ...CONFIG, dataDir: dir, databaseUrl: database.options.databaseUrl })
    try {
      expect(hub.store.pgvector).toBe(false)
      const ids: string[] = []
      for (let i = 0; i < 30; i++) {
        const topic = TOPICS[i % TOPICS.length]!
        ids.push(
          (await hub.knowledge.save({ task: `${topic} case ${i}`, content: `notes about ${topic}, variant ${i}`, types: ['tool'] }, hub.config.principal)).id,
        )
      }
      expect(await column(hub.store.db)).toEqual({ type: 'real[]', hnsw: false, vectors: 30 })
      const before: string[][] = []
      for (const q of TOPICS) before.push((await hub.knowledge.search({ q, top_k: 5, mode: 'vector' }, hub.config.principal)).results.map((r) => r.id))
      return { ids, before }
    } finally {
      await hub.close()
    }
  }

  it('is refused while the server database has no pgvector, and changes nothing', async () => {
    await seeded()
    const run = await runCli('reindex', '--vectors', '--json')
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout).error).toMatchObject({ code: 'config_error', message: expect.stringContaining('CREATE EXTENSION vector') })
    const hub = await openKnowHub({ ...CONFIG, dataDir: dir, databaseUrl: database.options.databaseUrl })
    try {
      expect(await column(hub.store.db)).toEqual({ type: 'real[]', hnsw: false, vectors: 30 })
    } finally {
      await hub.close()
    }
  })

  // Needs a server that offers the extension: every run that lists the pgvector backend (CI does).
  describe.runIf(BACKENDS.includes('pgvector'))('once the extension is created', () => {
    it('converts real[] to vector(64) + HNSW, keeps every vector, and searches find the same entries', async () => {
      const { before } = await seeded()
      const admin = new pg.Client({ connectionString: database.adminUrl })
      await admin.connect()
      await admin.query('CREATE EXTENSION vector')
      await admin.end()

      const run = await runCli('reindex', '--vectors', '--json')
      expect(run.stderr).toBe('')
      expect(JSON.parse(run.stdout)).toEqual({ status: 'converted', vectors: 30 })
      expect(JSON.parse((await runCli('reindex', '--vectors', '--json')).stdout)).toEqual({ status: 'already', vectors: 0 })

      const hub = await openKnowHub({ ...CONFIG, dataDir: dir, databaseUrl: database.options.databaseUrl })
      try {
        expect(hub.store.vectorState()).toMatchObject({ status: 'ready', info: { backend: 'pgvector', dimension: 64 } })
        expect(await column(hub.store.db)).toEqual({ type: 'vector(64)', hnsw: true, vectors: 30 })
        const after: string[][] = []
        for (const q of TOPICS) after.push((await hub.knowledge.search({ q, top_k: 5, mode: 'vector' }, hub.config.principal)).results.map((r) => r.id))
        expect(after).toEqual(before)
        // New entries go into the vector column and are found through the index.
        const fresh = await hub.knowledge.save({ task: 'terraform state lock', content: 'unlock with force-unlock', types: ['tool'] }, hub.config.principal)
        const found = await hub.knowledge.search({ q: 'terraform state lock', top_k: 1, mode: 'vector' }, hub.config.principal)
        expect(found.results.map((r) => r.id)).toEqual([fresh.id])
      } finally {
        await hub.close()
      }
    })
  })
})
