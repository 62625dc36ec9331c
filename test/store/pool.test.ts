/**
 * openPostgres runs its `onConnect` statements on every new pooled connection before
 * handing it out: awaited one after another, never overlapping a query (node-postgres
 * deprecates queueing a query on a busy client; pg@9 refuses it). A failing statement is
 * logged and the connection still serves queries. Against the suite's PostgreSQL server.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgres, type Database } from '../../src/store/database.js'
import { sql } from '../../src/store/sql.js'
import { createTestDatabase, type TestDatabase } from '../helpers/stores.js'
import { recordingLogger } from '../server/helpers.js'

const opened: Database[] = []
const databases: TestDatabase[] = []
const warnings: Error[] = []
const onWarning = (warning: Error) => void warnings.push(warning)
process.on('warning', onWarning)

afterAll(async () => {
  process.off('warning', onWarning)
  for (const db of opened) await db.close()
  for (const database of databases) await database.drop()
})

async function open(onConnect: string[]) {
  const database = await createTestDatabase('postgres')
  databases.push(database)
  const logger = recordingLogger()
  const db = await openPostgres({ connectionString: database.options.databaseUrl!, max: 4, onConnect, logger })
  opened.push(db)
  return { db, logger }
}

describe('openPostgres onConnect', () => {
  it('applies the statements to every new connection before its first query, without queueing on a busy client', async () => {
    const { db } = await open(["SET statement_timeout = '12345ms'", "SET application_name = 'knowhub_pool_test'"])
    // Four at once: the pool opens new connections for them.
    const rows = await Promise.all(
      Array.from({ length: 4 }, () =>
        db.query<{ timeout: string; app: string }>(
          sql`SELECT current_setting('statement_timeout') AS timeout, current_setting('application_name') AS app, pg_sleep(0.05)`,
        ),
      ),
    )
    for (const [row] of rows) expect(row).toMatchObject({ timeout: '12345ms', app: 'knowhub_pool_test' })
    await db.transaction(async (tx) => expect((await tx.query<{ t: string }>(sql`SELECT current_setting('statement_timeout') AS t`))[0]?.t).toBe('12345ms'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(warnings.map((w) => w.message).filter((m) => m.includes('already executing a query'))).toEqual([])
  })

  it('logs a failing statement and keeps the connection usable', async () => {
    const { db, logger } = await open(['SET no_such_setting_at_all = 1', "SET statement_timeout = '2222ms'"])
    expect((await db.query<{ t: string }>(sql`SELECT current_setting('statement_timeout') AS t`))[0]?.t).toBe('2222ms')
    expect(logger.lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ level: 'warn', statement: 'SET no_such_setting_at_all = 1' }),
    )
  })
})
