import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { Database } from './database.js'
import { sql } from './sql.js'

/** The folder of plain-SQL migrations shipped with the package. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

export interface Migration {
  name: string
  sql: string
}

/** Reads `NNNN_name.sql` files from a folder, in name order. */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort()
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(new URL(name, `file://${dir.endsWith('/') ? dir : dir + '/'}`), 'utf8') })))
}

/**
 * Applies every migration not yet recorded in `knowhub_migrations`, each in its own
 * transaction, holding an advisory lock: safe to run twice and from two processes at once.
 * @returns the names applied by this call.
 */
export async function migrate(db: Database, options: { logger?: Logger; migrations?: Migration[] } = {}): Promise<string[]> {
  const logger = options.logger ?? noopLogger
  const migrations = options.migrations ?? (await loadMigrations())
  return db.withLock('knowhub:migrate', async (conn) => {
    await conn.exec('CREATE TABLE IF NOT EXISTS knowhub_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    const rows = await conn.query<{ name: string }>(sql`SELECT name FROM knowhub_migrations`)
    const done = new Set(rows.map((row) => row.name))
    const applied: string[] = []
    for (const migration of migrations) {
      if (done.has(migration.name)) continue
      await conn.exec('BEGIN')
      try {
        await conn.exec(migration.sql)
        await conn.query(sql`INSERT INTO knowhub_migrations (name) VALUES (${migration.name})`)
        await conn.exec('COMMIT')
      } catch (error) {
        await conn.exec('ROLLBACK')
        throw error
      }
      logger.info('store.migration.applied', { name: migration.name })
      applied.push(migration.name)
    }
    return applied
  })
}
