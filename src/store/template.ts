/**
 * The embedded database's template: an initialised PGlite database with pgvector and every
 * migration applied, dumped as a gzipped tarball next to this module when the package is
 * built (`npm run build`, which `npm install` runs). A new data folder starts from it instead
 * of running initdb — most of the time of a first start (issue #11). A missing template only
 * costs time: `openPGlite` then initialises the folder itself, and `migrate` always runs after.
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { openPGlite } from './database.js'
import { migrate } from './migrate.js'

/**
 * Where the template lives: beside the compiled store (dist/store/pglite-template.tgz).
 * @example
 * openPGlite({ dataDir, template: TEMPLATE_FILE })
 */
export const TEMPLATE_FILE = fileURLToPath(new URL('./pglite-template.tgz', import.meta.url))

/**
 * The template file when it exists, else undefined.
 * @example
 * const template = existingTemplate()
 */
export function existingTemplate(file = TEMPLATE_FILE): string | undefined {
  return existsSync(file) ? file : undefined
}

/**
 * Builds the template: a fresh in-memory database, every migration, dumped to `file` (atomically).
 * @example
 * await buildTemplate() // dist/store/pglite-template.tgz
 */
export async function buildTemplate(file = TEMPLATE_FILE): Promise<{ file: string; bytes: number }> {
  const db = await openPGlite({ dataDir: 'memory://' })
  try {
    await migrate(db)
    const tarball = await db.dumpDataDir!()
    writeFileSync(`${file}.tmp`, tarball)
    renameSync(`${file}.tmp`, file)
    return { file, bytes: tarball.byteLength }
  } finally {
    await db.close()
  }
}
