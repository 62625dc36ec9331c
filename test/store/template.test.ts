/**
 * The embedded database's template: built from every migration, a new folder starts from it
 * (no migration left to apply, its tables there), a folder holding a database ignores it, a
 * template whose migrations changed is not used, and a missing template file only means
 * initdb runs as before. A template without its empty folders (as `npm pack` ships it) still starts.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DATA_DIRECTORY_FOLDERS, openPGlite } from '../../src/store/database.js'
import { loadMigrations, migrate } from '../../src/store/migrate.js'
import { sql } from '../../src/store/sql.js'
import { buildTemplate, usableTemplate } from '../../src/store/template.js'

const dir = mkdtempSync(join(tmpdir(), 'knowhub-template-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('embedded database template', () => {
  it('starts a new folder migrated; an existing folder keeps its data', async () => {
    const file = join(dir, 'template')
    const built = await buildTemplate(file)
    expect(built.bytes).toBeGreaterThan(100_000)
    expect(existsSync(join(file, 'PG_VERSION'))).toBe(true)
    // Shut down cleanly, nothing of the build left beside it.
    expect(existsSync(join(file, 'postmaster.pid'))).toBe(false)
    expect(existsSync(`${file}.lock`)).toBe(false)
    expect(existsSync(`${file}.build-${process.pid}`)).toBe(false)
    expect(await usableTemplate(file)).toBe(file)
    expect(await usableTemplate(join(dir, 'missing'))).toBeUndefined()

    const dataDir = join(dir, 'db')
    const db = await openPGlite({ dataDir, template: file })
    try {
      expect(await migrate(db)).toEqual([])
      expect(await db.query(sql`SELECT to_regclass('knowledge') IS NOT NULL AS present`)).toEqual([{ present: true }])
      // A 16MB buffer pool unless told otherwise, not initdb's 128MB (docs/scale.md, "Memory").
      expect(await db.query(sql`SHOW shared_buffers`)).toEqual([{ shared_buffers: '16MB' }])
      await db.query(sql`CREATE TABLE kept (n int)`)
      await db.query(sql`INSERT INTO kept VALUES (7)`)
    } finally {
      await db.close()
    }
    // Opened again with the template: the folder's own database, not a new copy; a
    // buffer pool size of its own (KNOWHUB_SHARED_BUFFERS) changes nothing but the pool.
    const again = await openPGlite({ dataDir, template: file, sharedBuffers: '32MB' })
    try {
      expect(await again.query(sql`SELECT n FROM kept`)).toEqual([{ n: 7 }])
      expect(await again.query(sql`SHOW shared_buffers`)).toEqual([{ shared_buffers: '32MB' }])
    } finally {
      await again.close()
    }
  }, 300_000)

  it('is used while its migrations are unchanged: later ones run after it; a changed one rules it out', async () => {
    const all = await loadMigrations()
    const older = join(dir, 'older')
    await buildTemplate(older, all.slice(0, -1))
    expect(await usableTemplate(older, all)).toBe(older)
    const db = await openPGlite({ dataDir: join(dir, 'from-older'), template: older })
    try {
      expect(await migrate(db, { migrations: all })).toEqual([all.at(-1)!.name])
    } finally {
      await db.close()
    }
    const edited = all.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m))
    expect(await usableTemplate(older, edited)).toBeUndefined()
    expect(await usableTemplate(older, all.slice(1))).toBeUndefined()
  }, 300_000)

  it('runs initdb as before when the template file is missing', async () => {
    const dataDir = join(dir, 'plain')
    const db = await openPGlite({ dataDir, template: join(dir, 'missing') })
    try {
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
      expect((await migrate(db)).length).toBeGreaterThan(0)
    } finally {
      await db.close()
    }
  }, 300_000)

  it('copies the template again into a folder whose copy was cut short', async () => {
    const file = join(dir, 'template')
    if (!existsSync(file)) await buildTemplate(file)
    const dataDir = join(dir, 'cut-short')
    // What a kill during the copy leaves: some of the files, one of them truncated, no PG_VERSION.
    mkdirSync(dataDir, { recursive: true })
    cpSync(join(file, 'global'), join(dataDir, 'global'), { recursive: true })
    writeFileSync(join(dataDir, 'postgresql.conf'), '# trunc')
    const db = await openPGlite({ dataDir, template: file })
    try {
      expect(await migrate(db)).toEqual([])
      expect(await db.query(sql`SELECT count(*)::int AS n FROM knowledge`)).toEqual([{ n: 0 }])
    } finally {
      await db.close()
    }
  }, 300_000)

  it('starts from a template without its empty folders, as npm pack ships it (issue 42)', async () => {
    const file = join(dir, 'template')
    if (!existsSync(file)) await buildTemplate(file)
    const packed = join(dir, 'packed')
    cpSync(file, packed, { recursive: true })
    // What npm keeps of a folder: its files. Every empty folder goes, deepest first.
    const emptied: string[] = []
    const dropEmpty = (folder: string): boolean => {
      const left = readdirSync(folder).filter((name) => !(statSync(join(folder, name)).isDirectory() && dropEmpty(join(folder, name))))
      if (left.length > 0) return false
      rmdirSync(folder)
      emptied.push(relative(packed, folder))
      return true
    }
    dropEmpty(packed)
    expect(emptied).toContain('pg_notify')
    // Every folder the built template holds empty is one the copy makes again.
    expect(emptied.filter((f) => !(DATA_DIRECTORY_FOLDERS as readonly string[]).some((d) => d === f || d.startsWith(`${f}/`)))).toEqual([])
    const db = await openPGlite({ dataDir: join(dir, 'from-packed'), template: packed })
    try {
      expect(await migrate(db)).toEqual([])
      await db.query(sql`CREATE TABLE written (n int)`)
      await db.query(sql`INSERT INTO written VALUES (1)`)
      expect(await db.query(sql`SELECT count(*)::int AS n FROM knowledge`)).toEqual([{ n: 0 }])
    } finally {
      await db.close()
    }
  }, 300_000)
})
