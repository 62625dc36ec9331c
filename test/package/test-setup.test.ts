/**
 * `npm test`'s first step (scripts/test-setup.sh) says what it will install before installing
 * anything, and KNOWHUB_TEST_NO_INSTALL=1 stops after saying so (issue 42: it ran `apt-get install`
 * as root without saying so first). Run for real: a PATH on which one tool the suite needs
 * (cmake) is missing and `apt-get` is a stand-in that records its calls, and a pgvector copy that
 * is due (an empty prefix).
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/readme.js'

const dir = mkdtempSync(join(tmpdir(), 'knowhub-test-setup-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A PATH with every command of this machine's PATH but `missing`, and a recording `apt-get` (and `sudo`) first. */
function pathWithout(missing: string): { path: string; log: string } {
  const bin = join(dir, 'bin')
  const log = join(dir, 'apt-get.log')
  mkdirSync(bin, { recursive: true })
  for (const folder of (process.env.PATH ?? '').split(':').filter((f) => f && existsSync(f))) {
    for (const name of readdirSync(folder)) {
      if (name === missing || existsSync(join(bin, name))) continue
      symlinkSync(join(folder, name), join(bin, name))
    }
  }
  for (const name of ['apt-get', 'sudo']) rmSync(join(bin, name), { force: true })
  writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\necho "apt-get $*" >> '${log}'\necho "RECORDED apt-get $*"\n`)
  writeFileSync(join(bin, 'sudo'), '#!/bin/sh\n[ "$1" = "-n" ] && shift\nexec "$@"\n')
  chmodSync(join(bin, 'apt-get'), 0o755)
  chmodSync(join(bin, 'sudo'), 0o755)
  return { path: bin, log }
}

function setup(env: NodeJS.ProcessEnv): { code: number | null; out: string } {
  const ran = spawnSync('bash', [join(ROOT, 'scripts', 'test-setup.sh')], { env: { HOME: dir, ...env }, encoding: 'utf8', timeout: 120_000 })
  return { code: ran.status, out: `${ran.stdout}${ran.stderr}` }
}

describe('npm test says what it installs first', () => {
  it('with KNOWHUB_TEST_NO_INSTALL=1 lists what is missing and installs none of it', () => {
    const prefix = join(dir, 'pgvector')
    mkdirSync(prefix)
    const { path, log } = pathWithout('cmake')
    const venv = join(dir, 'venv-integrations')
    const ran = setup({
      PATH: path,
      KNOWHUB_TEST_NO_INSTALL: '1',
      KNOWHUB_PGVECTOR_PREFIX: prefix,
      KNOWHUB_TEST_MODELS: 'skip',
      KNOWHUB_INTEGRATIONS_VENV: venv,
    })
    expect(ran.code, ran.out).toBe(0)
    expect(ran.out).toContain('test-setup: npm test needs what this machine lacks:')
    expect(ran.out).toMatch(/^ {2}- Debian packages: cmake \(apt-get install, (as root|through sudo)\)$/m)
    expect(ran.out).toContain('  - pgvector 0.8.6 built from vendor/')
    expect(ran.out).toContain(`  - the Python integrations' frameworks (LangGraph, LangChain) from PyPI into ${venv} `)
    expect(ran.out).toContain('KNOWHUB_TEST_NO_INSTALL=1: installing none of it')
    expect(existsSync(log)).toBe(false)
    expect(readdirSync(prefix)).toEqual([])
    expect(existsSync(venv)).toBe(false)
  })

  it('says it before the first install command runs', () => {
    const { path, log } = pathWithout('cmake')
    const pgBin = '/usr/lib/postgresql/15/bin'
    const ran = setup({ PATH: path, KNOWHUB_PG_BIN: pgBin, KNOWHUB_TEST_MODELS: 'skip', KNOWHUB_TEST_INTEGRATIONS: 'skip' })
    expect(ran.code, ran.out).toBe(0)
    const said = ran.out.indexOf('  - Debian packages: cmake')
    const installed = ran.out.indexOf('RECORDED apt-get')
    expect(said).toBeGreaterThanOrEqual(0)
    expect(installed).toBeGreaterThan(said)
    expect(ran.out).toContain('test-setup: installing it now (KNOWHUB_TEST_NO_INSTALL=1 says this and installs nothing)')
    expect(readFileSync(log, 'utf8')).toMatch(/^apt-get install -y -qq --no-install-recommends cmake$/m)
  })
})
