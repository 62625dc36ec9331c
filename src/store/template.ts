/**
 * The embedded database's template: an initialised PGlite database with every migration applied
 * and the vector extension created, shut down cleanly, kept as a data directory when the package
 * is built (`npm run build`, which `npm install` runs). A new data folder starts as a copy of it instead
 * of running initdb — most of the time of a first start (issue #11). A directory rather than a
 * tarball: PGlite unpacks a tarball file by file through its WebAssembly file system (about 2 s
 * for the 1,080 files here), and a database dumped while it runs must recover at its first start;
 * copying a cleanly shut down directory costs a few hundred milliseconds and starts like a
 * restart. Beside it, a manifest names the migrations it holds with a digest of each: a template
 * is used only while those migrations are unchanged (later ones still run after it); a missing
 * or outdated template only costs time, as `openPGlite` then initialises the folder itself.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { openPGlite } from './database.js'
import { loadMigrations, migrate, type Migration } from './migrate.js'
import { sql } from './sql.js'

/**
 * Where the template lives: the package's dist/store/pglite-template (a directory), whether
 * this module runs compiled (dist/store) or from source (src/store, as the tests do).
 * @example
 * openPGlite({ dataDir, template: TEMPLATE_DIR })
 */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../dist/store/pglite-template', import.meta.url))

/** The manifest beside a template: each migration it holds, with the SHA-256 of its SQL. */
export const TemplateManifest = z.object({ migrations: z.array(z.object({ name: z.string(), sha256: z.string() })) })
export type TemplateManifest = z.infer<typeof TemplateManifest>

function manifestFile(template: string): string {
  return template.replace(/[\\/]+$/, '') + '.json'
}

function digest(migrations: readonly Migration[]): TemplateManifest['migrations'] {
  return migrations.map((m) => ({ name: m.name, sha256: createHash('sha256').update(m.sql).digest('hex') }))
}

/**
 * The template when it exists and every migration it holds is still, unchanged, among
 * `migrations` (the package's own by default); else undefined.
 * @example
 * const template = await usableTemplate()
 * const db = await openPGlite({ dataDir, ...(template ? { template } : {}) })
 */
export async function usableTemplate(file = TEMPLATE_DIR, migrations?: readonly Migration[]): Promise<string | undefined> {
  if (!existsSync(file) || !existsSync(manifestFile(file))) return undefined
  let manifest: TemplateManifest
  try {
    manifest = TemplateManifest.parse(JSON.parse(readFileSync(manifestFile(file), 'utf8')))
  } catch {
    return undefined
  }
  const current = new Map(digest(migrations ?? (await loadMigrations())).map((m) => [m.name, m.sha256]))
  return manifest.migrations.every((m) => current.get(m.name) === m.sha256) ? file : undefined
}

/** Bytes under a directory. */
function sizeOf(path: string): number {
  const stat = statSync(path)
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0) : stat.size
}

/**
 * Builds the template: a new database in a staging folder beside `dir`, every migration, shut
 * down cleanly, then moved to `dir` (replacing an older one) with its manifest, each written
 * atomically.
 * @example
 * await buildTemplate() // dist/store/pglite-template/ and pglite-template.json
 */
export async function buildTemplate(dir = TEMPLATE_DIR, migrations?: Migration[]): Promise<{ dir: string; bytes: number }> {
  const applied = migrations ?? (await loadMigrations())
  const staging = `${dir.replace(/[\\/]+$/, '')}.build-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  try {
    const db = await openPGlite({ dataDir: staging })
    try {
      await migrate(db, { migrations: applied })
      // What every open of the store does next (detectPgvector): ~0.8 s of a first start when left to it.
      await db.query(sql`CREATE EXTENSION IF NOT EXISTS vector`)
    } finally {
      await db.close()
    }
    rmSync(join(staging, 'postmaster.pid'), { force: true })
    rmSync(dir, { recursive: true, force: true })
    renameSync(staging, dir)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  const manifest: TemplateManifest = { migrations: digest(applied) }
  writeFileSync(`${manifestFile(dir)}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`)
  renameSync(`${manifestFile(dir)}.tmp`, manifestFile(dir))
  return { dir, bytes: sizeOf(dir) }
}
