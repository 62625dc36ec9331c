/**
 * `npm install` needs no compiler and no download (issue 42): no package of the lock file runs
 * an install script that npm 11's `allowScripts` (package.json) does not name, none that it
 * allows builds native code (node-gyp) or fetches, and the benchmark that used a native peer
 * (hnswlib-node) says it skipped it when the package is absent. The real install, with no
 * compiler on PATH, is in test/readme/quick-start.test.ts.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { HNSW_SKIPPED, loadHnswlib } from '../../bench/peers.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  optionalDependencies?: Record<string, string>
  allowScripts?: Record<string, boolean>
}
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean; dev?: boolean; optional?: boolean }>
}
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)

describe('npm install needs no compiler and no download', () => {
  it('every install script in the lock file is named in allowScripts', () => {
    const scripted = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript)
      .map(([path]) => nameOf(path))
    expect(scripted.filter((name) => !(name in (pkg.allowScripts ?? {})))).toEqual([])
  })

  it('none that runs builds native code: no node-gyp, no binding.gyp in dependencies or devDependencies', () => {
    const allowed = Object.entries(pkg.allowScripts ?? {})
      .filter(([, allow]) => allow)
      .map(([name]) => name)
    for (const name of allowed) {
      const manifest = JSON.parse(readFileSync(`${ROOT}node_modules/${name}/package.json`, 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean }
      const scripts = Object.entries(manifest.scripts ?? {}).filter(([script]) => ['preinstall', 'install', 'postinstall'].includes(script))
      expect(scripts.map(([, line]) => line).join(' '), name).not.toMatch(/node-gyp|prebuild|cmake/)
      expect(manifest.gypfile, name).not.toBe(true)
    }
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain('hnswlib-node')
    // A package listed in both is a devDependency to npm: a user's install would lack it.
    expect(Object.keys(pkg.dependencies).filter((name) => name in pkg.devDependencies)).toEqual([])
  })

  it('the peers benchmark skips the native HNSW peer when it is not installed, and says how to add it', async () => {
    expect(await loadHnswlib()).toBeUndefined()
    expect(HNSW_SKIPPED).toMatch(/^skipped: install hnswlib-node/)
  })
})
