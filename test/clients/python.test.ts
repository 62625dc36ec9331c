/**
 * The Python package (clients/python) under `npm test`: its unittest suite, which starts a real
 * `knowhub start` and compares the Python tools' text with the TypeScript tools' byte for byte,
 * runs as a child process; and the two files generated from the TypeScript side (the tool schemas,
 * the neutraliser's Unicode facts) must match a fresh run of their generators.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const PYTHON = join(ROOT, 'clients', 'python')

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(`${command} is needed to test clients/python (Debian: python3 python3-setuptools)`, { cause: error }) : error),
    )
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('clients/python', () => {
  it.each([
    ['scripts/tool-specs.mjs', 'knowhub/_tool_specs.py'],
    ['scripts/unicode-tables.mjs', 'knowhub/_unicode.py'],
  ])('%s generates the committed %s (run it again after changing the TypeScript tools or the neutraliser)', async (script, file) => {
    const fresh = await run(process.execPath, [join(PYTHON, script)])
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(fresh.stdout === readFileSync(join(PYTHON, file), 'utf8'), `node clients/python/${script} > clients/python/${file}`).toBe(true)
  })

  it('passes its unittest suite against a real knowhub start (python3 -m unittest discover -s clients/python/tests)', { timeout: 900_000 }, async () => {
    const result = await run('python3', ['-m', 'unittest', 'discover', '-s', join(PYTHON, 'tests'), '-v'])
    // unittest reports on stderr: every test's line, then "Ran N tests" and "OK".
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(result.stderr).toMatch(/^Ran \d+ tests in [\d.]+s\n\nOK\s*$/m)
    expect(Number(/^Ran (\d+) tests/m.exec(result.stderr)?.[1])).toBeGreaterThanOrEqual(40)
    expect(result.stderr).not.toMatch(/skipped/)
  })
})
