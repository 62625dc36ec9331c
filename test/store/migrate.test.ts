/**
 * Migrations: applied in order, recorded, safe to run twice and from two
 * connections (processes) at once; a failing migration leaves nothing behind.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { openPGlite, openPostgres } from '../../src/store/database.js'
import { loadMigrations, migrate } from '../../src/store/migrate.js'
import { sql } from '../../src/store/sql.js'
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js'

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function pgDatabase(): Promise<TestDatabase & { url: string }> {
  const database = await createTestDatabase('postgres')
  cleanups.push(() => database.drop())
  return { ...database, url: database.options.databaseUrl! }
}

describe('migrations', () => {
  it('ships numbered SQL files in order', async () => {
    const migrations = await loadMigrations()
    expect(migrations.length).toBeGreaterThan(0)
    expect(migrations.map((m) => m.name)).toEqual([...migrations.map((m) => m.name)].sort())
    expect(migrations[0]!.name).toMatch(/^0001_/)
  })

  it('applies once and records it; a second run applies nothing (PGlite)', async () => {
    const db = await openPGlite({ dataDir: 'memory://' })
    cleanups.push(() => db.close())
    const first = await migrate(db)
    expect(first.length).toBe((await loadMigrations()).length)
    expect(await migrate(db)).toEqual([])
    const rows = await db.query<{ name: string }>(sql`SELECT name FROM knowhub_migrations ORDER BY name`)
    expect(rows.map((r) => r.name)).toEqual(first)
  })

  it('is safe from two processes at once on a PostgreSQL server', async () => {
    const { url } = await pgDatabase()
    const a = await openPostgres({ connectionString: url })
    const b = await openPostgres({ connectionString: url })
    cleanups.push(
      () => a.close(),
      () => b.close(),
    )
    const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
    const all = (await loadMigrations()).map((m) => m.name)
    // exactly one of them applied everything; the other found nothing to do
    expect([...ra, ...rb].sort()).toEqual(all)
    expect(ra.length === 0 || rb.length === 0).toBe(true)
    const rows = await a.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowhub_migrations`)
    expect(rows[0]?.n).toBe(all.length)
  })

  it('rolls back a failing migration and reports it', async () => {
    const { url } = await pgDatabase()
    const db = await openPostgres({ connectionString: url })
    cleanups.push(() => db.close())
    const migrations = [
      { name: '0001_ok.sql', sql: 'CREATE TABLE t_ok (id int)' },
      { name: '0002_bad.sql', sql: 'CREATE TABLE t_bad (id int); SELECT no_such_function()' },
    ]
    await expect(migrate(db, { migrations })).rejects.toMatchObject({ message: expect.stringMatching(/no_such_function/) })
    const applied = await db.query<{ name: string }>(sql`SELECT name FROM knowhub_migrations`)
    expect(applied.map((r) => r.name)).toEqual(['0001_ok.sql'])
    const tables = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 't_bad'`)
    expect(tables[0]?.n).toBe(0)
  })
})
