/** Runs the `knowhub` CLI in-process with captured output, in a temporary data folder. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { main } from '../../src/cli/main.js'
import type { Io } from '../../src/cli/output.js'

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs `knowhub ...args` through the real entry point (`main`) and returns the exit code and output.
 * @example
 * const { code, stdout } = await runCli('search', 'selenium', '--json')
 */
export async function runCli(...args: string[]): Promise<CliRun> {
  const out: string[] = []
  const err: string[] = []
  const io: Io = { out: (t) => void out.push(t), err: (t) => void err.push(t), interactive: false }
  process.exitCode = 0
  await main(['node', 'knowhub', ...args], io)
  const code = Number(process.exitCode ?? 0)
  process.exitCode = 0
  return { code, stdout: out.join('\n'), stderr: err.join('\n') }
}

/**
 * The environment of in-process CLI runs for the tests around the call: before them, a new
 * temporary folder whose `data` is KNOWHUB_DATA_DIR, no DATABASE_URL or KNOWHUB_URL, and `vars`
 * (undefined removes one); after them, the environment as it was and the folder removed.
 * @example
 * const env = useCliEnv('import', { KNOWHUB_EMBEDDER: 'hashed' })
 * it('…', async () => { await runCli('import', join(env.dir, 'a.jsonl')) })
 */
export function useCliEnv(prefix: string, vars: Record<string, string | undefined> = {}): { readonly dir: string } {
  let dir = ''
  const saved = { ...process.env }
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `knowhub-${prefix}-`))
    process.env.KNOWHUB_DATA_DIR = join(dir, 'data')
    for (const [name, value] of Object.entries({ DATABASE_URL: undefined, KNOWHUB_URL: undefined, ...vars })) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  afterAll(() => {
    process.env = saved
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    get dir() {
      return dir
    },
  }
}
