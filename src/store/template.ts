/**
 * The embedded database's template: an initialised PGlite database with pgvector and every
 * migration applied, dumped as a gzipped tarball when the package is built (`npm run build`,
 * which `npm install` runs). A new data folder starts from it instead of running initdb — most
 * of the time of a first start (issue #11). Beside the tarball, a manifest names the
 * migrations it holds with a digest of each: a template is used only while those migrations
 * are unchanged (later ones still run after it); a missing or outdated template only costs
 * time, as `openPGlite` then initialises the folder itself.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { openPGlite } from './database.js'
import { loadMigrations, migrate, type Migration } from './migrate.js'

/**
 * Where the template lives: the package's dist/store/pglite-template.tgz, whether this module
 * runs compiled (dist/store) or from source (src/store, as the tests do).
 * @example
 * openPGlite({ dataDir, template: TEMPLATE_FILE })
 */
export const TEMPLATE_FILE = fileURLToPath(new URL('../../dist/store/pglite-template.tgz', import.meta.url))

/** The manifest beside a template: each migration it holds, with the SHA-256 of its SQL. */
export const TemplateManifest = z.object({ migrations: z.array(z.object({ name: z.string(), sha256: z.string() })) })
export type TemplateManifest = z.infer<typeof TemplateManifest>

function manifestFile(file: string): string {
  return file.replace(/\.tgz$/, '') + '.json'
}

function digest(migrations: readonly Migration[]): TemplateManifest['migrations'] {
  return migrations.map((m) => ({ name: m.name, sha256: createHash('sha256').update(m.sql).digest('hex') }))
}

/**
 * The template file when it exists and every migration it holds is still, unchanged, among
 * `migrations` (the package's own by default); else undefined.
 * @example
 * const template = await usableTemplate()
 * const db = await openPGlite({ dataDir, ...(template ? { template } : {}) })
 */
export async function usableTemplate(file = TEMPLATE_FILE, migrations?: readonly Migration[]): Promise<string | undefined> {
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

/**
 * Builds the template: a fresh in-memory database, every migration, dumped to `file` with its
 * manifest (each written atomically).
 * @example
 * await buildTemplate() // dist/store/pglite-template.tgz and pglite-template.json
 */
export async function buildTemplate(file = TEMPLATE_FILE, migrations?: Migration[]): Promise<{ file: string; bytes: number }> {
  const applied = migrations ?? (await loadMigrations())
  const db = await openPGlite({ dataDir: 'memory://' })
  try {
    await migrate(db, { migrations: applied })
    const tarball = await db.dumpDataDir!()
    writeFileSync(`${file}.tmp`, tarball)
    renameSync(`${file}.tmp`, file)
    const manifest: TemplateManifest = { migrations: digest(applied) }
    writeFileSync(`${manifestFile(file)}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`)
    renameSync(`${manifestFile(file)}.tmp`, manifestFile(file))
    return { file, bytes: tarball.byteLength }
  } finally {
    await db.close()
  }
}
