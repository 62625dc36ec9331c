/**
 * The Python integrations (clients/python/knowhub/integrations: LangGraph's store, LangChain's tools
 * and retriever) under `npm test`: their unittest suite (clients/python/integration_tests), which
 * starts a real `knowhub start` and runs against the real framework packages, pinned in
 * clients/python/requirements-integrations.txt and installed into .cache/venv-integrations by
 * scripts/integrations-setup.sh (`npm test`'s pretest). Without that venv the file is skipped with one
 * line in the run's summary; in CI (`.ci/run`: KNOWHUB_TEST_REQUIRE_INTEGRATIONS=1) it fails instead.
 */
import { spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MODEL_SKIPS_DIR } from '../helpers/models.js'

const ROOT = join(import.meta.dirname, '..', '..')
const PYTHON = join(ROOT, 'clients', 'python')
const VENV = process.env.KNOWHUB_INTEGRATIONS_VENV ?? join(ROOT, '.cache', 'venv-integrations')
const VENV_PYTHON = join(VENV, 'bin', 'python')
const REQUIRED = process.env.KNOWHUB_TEST_REQUIRE_INTEGRATIONS === '1'
const FILE = 'test/clients/python-integrations.test.ts'

const missing = existsSync(VENV_PYTHON) ? undefined : `no venv at ${VENV}: run bash scripts/integrations-setup.sh (npm test does)`
if (missing && !REQUIRED) {
  mkdirSync(MODEL_SKIPS_DIR, { recursive: true })
  appendFileSync(join(MODEL_SKIPS_DIR, `${process.pid}.txt`), `integrations\t${FILE}\t${missing}\n`)
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: PYTHON }
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe.skipIf(missing !== undefined && !REQUIRED)('clients/python integrations (LangGraph, LangChain)', () => {
  it('pass their unittest suite against a real knowhub start and the pinned frameworks', { timeout: 600_000 }, async () => {
    if (missing) throw new Error(`The integrations' frameworks cannot be had: ${missing}`)
    const result = await run(VENV_PYTHON, ['-m', 'unittest', 'discover', '-s', join(PYTHON, 'integration_tests'), '-v'])
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(result.stderr).toMatch(/^Ran \d+ tests in [\d.]+s\n\nOK\s*$/m)
    expect(Number(/^Ran (\d+) tests/m.exec(result.stderr)?.[1])).toBeGreaterThanOrEqual(60)
    expect(result.stderr).not.toMatch(/skipped/)
  })
})
