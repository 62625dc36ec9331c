/**
 * Migration 0007 (resource ids namespaced by owner) keeps the resources stored
 * before it, on both backends: a database migrated to 0006 with rows in it is
 * migrated on, and every row reads back the same, now keyed by (owner, id).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { openPGlite, openPostgres, type Database } from '../../src/store/database.js'
import { loadMigrations, migrate } from '../../src/store/migrate.js'
import { resourceStore } from '../../src/store/resources/resources.js'
import { sql } from '../../src/store/sql.js'
import { BACKENDS, createTestDatabase } from '../helpers/stores.js'

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function open(backend: (typeof BACKENDS)[number]): Promise<Database> {
  if (backend === 'pglite') {
    const db = await openPGlite({ dataDir: 'memory://' })
    cleanups.push(() => db.close())
    return db
  }
  const database = await createTestDatabase('postgres')
  const db = await openPostgres({ connectionString: database.options.databaseUrl! })
  cleanups.push(
    () => database.drop(),
    () => db.close(),
  )
  return db
}

describe.each(BACKENDS)('migration 0007 on %s', (backend) => {
  it('keeps existing resources and lets a second owner use the same id', async () => {
    const db = await open(backend)
    const all = await loadMigrations()
    const before = all.filter((m) => m.name < '0007')
    expect(before.length).toBeLessThan(all.length)
    await migrate(db, { migrations: before })
    const at = '2026-03-06T12:00:00.000Z'
    for (const [id, owner, scopes] of [
      ['credentials/website_a', 'user:alice', ['org:acme']],
      ['code/x', 'user:bob', ['public']],
    ] as const) {
      await db.query(sql`INSERT INTO resources (id, title, body, secure_body, secret_key_id, content_type, metadata, scopes, owner, version, created_at, updated_at)
        VALUES (${id}, ${'t ' + id}, 'b', 'kh1.k.iv.tag.ct', 'k', 'credential', '{"language":"x"}'::jsonb, ${[...scopes]}::text[], ${owner}, 3, ${at}, ${at})`)
    }
    const snapshot = await db.query(sql`SELECT * FROM resources ORDER BY id`)
    expect(await migrate(db)).toEqual(all.filter((m) => m.name >= '0007').map((m) => m.name))
    expect(await db.query(sql`SELECT * FROM resources ORDER BY id`)).toEqual(snapshot)

    const store = resourceStore(db)
    const access = { visible: ['user:carol', 'org:acme', 'public'], own: ['user:carol'] }
    expect((await store.get('credentials/website_a', access))?.owner).toBe('user:alice')
    const inserted = await store.insert({
      id: 'credentials/website_a',
      title: 'carol',
      body: '',
      secret: null,
      content_type: 'text',
      metadata: {},
      scopes: ['user:carol'],
      owner: 'user:carol',
      created_at: new Date(at),
    })
    expect(inserted).toBe(true)
    expect((await store.get('credentials/website_a', access))?.owner).toBe('user:carol')
    expect(
      await store.insert({
        id: 'credentials/website_a',
        title: 'again',
        body: '',
        secret: null,
        content_type: 'text',
        metadata: {},
        scopes: ['user:carol'],
        owner: 'user:carol',
        created_at: new Date(at),
      }),
    ).toBe(false)
  })
})
