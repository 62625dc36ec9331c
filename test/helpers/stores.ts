/**
 * Real databases for tests: PGlite in a temp dir, and a fresh database on the
 * PostgreSQL server started by global-setup.ts. No mocks.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { inject } from 'vitest'
import { openStore, type OpenStoreOptions, type Store } from '../../src/store/store.js'
import { sql } from '../../src/store/sql.js'

export const BACKENDS = ['pglite', 'postgres'] as const
export type Backend = (typeof BACKENDS)[number]

export interface TestDatabase {
  /** Options for openStore that point at this database. */
  options: { dataDir?: string; databaseUrl?: string }
  drop(): Promise<void>
}

/** A new empty database of the given kind. */
export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-test-'))
    return { options: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const serverUrl = inject('pgUrl')
  const name = `knowhub_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    options: { databaseUrl: url.toString() },
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
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

/** Empties every knowledge table (fast reset between tests). */
export async function truncateKnowledge(store: Store): Promise<void> {
  await store.db.query(sql`TRUNCATE knowledge, knowledge_feedback, knowledge_version CASCADE`)
}
