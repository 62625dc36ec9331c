/**
 * Real databases for tests: PGlite in a temp dir, and a fresh database on the PostgreSQL
 * server started by global-setup.ts, with or without the vector extension (backends.ts).
 * No mocks.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'
import { openStore, type OpenStoreOptions, type Store } from '../../src/store/store.js'
import { sql } from '../../src/store/sql.js'
import { NO_EXTENSION_ROLE, serverBackends, testBackends, type Backend } from './backends.js'

export type { Backend } from './backends.js'

/** The backends of this run (KNOWHUB_TEST_BACKENDS; default all three). */
export const BACKENDS: readonly Backend[] = testBackends()
/** The PostgreSQL server backends of this run. */
export const SERVER_BACKENDS = serverBackends(BACKENDS)

export interface TestDatabase {
  /** Options for openStore that point at this database. */
  options: { dataDir?: string; databaseUrl?: string }
  /** A superuser connection string for this database (server backends only). */
  adminUrl?: string
  drop(): Promise<void>
}

async function admin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** A new empty database of the given kind. */
export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-test-'))
    return { options: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const serverUrl = inject('pgUrl')
  const name = `knowhub_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  // template0: nothing an administrator put in template1 (such as the vector extension) comes along.
  const owner = backend === 'postgres' ? ` OWNER ${NO_EXTENSION_ROLE.name}` : ''
  await admin(serverUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE template0${owner}`))
  const adminUrl = new URL(serverUrl)
  adminUrl.pathname = `/${name}`
  const url = new URL(adminUrl)
  if (backend === 'postgres') {
    url.username = NO_EXTENSION_ROLE.name
    url.password = NO_EXTENSION_ROLE.password
  }
  return {
    options: { databaseUrl: url.toString() },
    adminUrl: adminUrl.toString(),
    drop: () => admin(serverUrl, async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  }
}

/** Opens a migrated store on a new test database; `cleanup` closes and drops it. */
export async function openTestStore(
  backend: Backend,
  options: Pick<OpenStoreOptions, 'fulltext'> = {},
): Promise<{ store: Store; database: TestDatabase; cleanup: () => Promise<void> }> {
  const database = await createTestDatabase(backend)
  const store = await openStore({ ...database.options, ...options })
  return {
    store,
    database,
    cleanup: async () => {
      await store.close()
      await database.drop()
    },
  }
}

/**
 * A migrated store on a new test database for one `describe` block: opened in a `beforeAll`
 * registered here (so before the block's own hooks run) and dropped after the block.
 * `store` is valid inside hooks and tests.
 * @example
 * const db = useTestStore(backend, { fulltext: 'sql' })
 * it('counts', async () => expect(await db.store.knowledge.count()).toBe(0))
 */
export function useTestStore(backend: Backend, options: Pick<OpenStoreOptions, 'fulltext'> = {}): { readonly store: Store } {
  let opened: Awaited<ReturnType<typeof openTestStore>> | undefined
  beforeAll(async () => {
    opened = await openTestStore(backend, options)
  }, 120_000)
  afterAll(async () => opened?.cleanup())
  return {
    get store() {
      if (!opened) throw new Error('useTestStore: the store is open only inside hooks and tests')
      return opened.store
    },
  }
}

/**
 * A new temporary folder for a hub's data, removed when the test process exits. A hub on a
 * folder starts from the database template `npm run build` makes (a copy), where `memory://`
 * runs initdb and every migration: 3-4 s against 8-22 s per open at load ~25 on this machine.
 * @example
 * const hub = await openKnowHub({ dataDir: tempDataDir('extract'), embedder: { provider: 'hashed' } })
 */
export function tempDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `knowhub-${prefix}-`))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Empties every knowledge table (fast reset between tests). */
export async function truncateKnowledge(store: Store): Promise<void> {
  await store.db.query(sql`TRUNCATE knowledge, knowledge_feedback, knowledge_version CASCADE`)
}
