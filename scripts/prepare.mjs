#!/usr/bin/env node
/**
 * `npm install`'s prepare step: runs `npm run build` unless dist/ was built from exactly the files
 * that are here now.
 *
 * Why: npm 11's `npx knowhub` in this folder installs the folder into its own cache as a linked
 * package and runs `prepare` again — the full build (tsc, the dashboard, the CLI bundle, the
 * template database: ~1 minute on 2 busy cores) before the first answer, while `npm start` already
 * serves from dist/. The build writes a fingerprint of its inputs (the SHA-256 of every file under
 * src/, web/, scripts/, migrations/, agent-defaults/ and the package and TypeScript files, with
 * their paths) to dist/.build-stamp; when it matches, this step says so in one line and ends.
 * `npm run build` always builds, and ends with `--stamp` (writes the fingerprint only).
 * KNOWHUB_FORCE_BUILD=1 builds here too.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, URL } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const STAMP = join(ROOT, 'dist', '.build-stamp')
const INPUT_DIRS = ['src', 'web', 'scripts', 'migrations', 'agent-defaults']
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']

/** Every input file under `dir`, depth first, in a fixed order. */
function filesUnder(dir) {
  const out = []
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) out.push(path)
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

/** The fingerprint of the build's inputs. */
export function buildFingerprint(root = ROOT) {
  const hash = createHash('sha256')
  const files = [...INPUT_DIRS.flatMap((dir) => filesUnder(join(root, dir))), ...INPUT_FILES.map((file) => join(root, file)).filter((file) => existsSync(file))]
  for (const file of files) {
    hash.update(relative(root, file).split('\\').join('/'))
    hash.update('\0')
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  return `sha256:${hash.digest('hex')} (${files.length} files)`
}

function main() {
  const fingerprint = buildFingerprint()
  if (process.argv.includes('--stamp')) {
    writeFileSync(STAMP, `${fingerprint}\n`)
    return
  }
  if (!process.env.KNOWHUB_FORCE_BUILD && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === fingerprint) {
    console.log('knowhub: dist/ is up to date with the sources (npm run build rebuilds it)')
    return
  }
  const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' })
  if (built.status !== 0) process.exitCode = built.status ?? 1
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main()
