/**
 * A data folder KnowHub may not write is said in words (`config_error` naming the folder and the
 * fix), not as a raw EACCES on a temp file inside it. Run for real: the CLI in a child process
 * that may not write the folder — as an unprivileged user when the test runs as root (root
 * ignores permissions), else as this user on a folder made read-only.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const base = mkdtempSync(join(tmpdir(), 'knowhub-data-dir-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

function runAsOther(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const asRoot = process.getuid?.() === 0
  const result = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'src/cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH, HOME: base, ...env },
    encoding: 'utf8',
    timeout: 60_000,
    // nobody/nogroup: a user that owns nothing here.
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('a data folder KnowHub may not write', () => {
  it('answers config_error naming the folder and the fix, and leaves nothing behind', () => {
    chmodSync(base, 0o755)
    const data = join(base, 'data')
    mkdirSync(data)
    chmodSync(data, 0o555)
    const ran = runAsOther(['list', '--json'], { KNOWHUB_DATA_DIR: data, KNOWHUB_EMBEDDER: 'hashed' })
    expect(ran.status, ran.stderr).toBe(1)
    const error = (JSON.parse(ran.stdout) as { error: { code: string; message: string; details: { folder: string; errno: string } } }).error
    expect(error.code).toBe('config_error')
    expect(error.message).toContain(`KnowHub cannot use its data folder ${data}`)
    expect(error.message).toContain('KNOWHUB_DATA_DIR')
    expect(error.details).toMatchObject({ folder: data, errno: 'EACCES' })
    expect(readdirSync(data)).toEqual([])

    const human = runAsOther(['list'], { KNOWHUB_DATA_DIR: data, KNOWHUB_EMBEDDER: 'hashed' })
    expect(human.stderr).toMatch(/^error \[config_error\]: KnowHub cannot use its data folder /m)
    expect(human.stderr).not.toContain('internal_error')
  })
})
