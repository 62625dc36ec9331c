/** Runs the `knowhub` CLI in-process with captured output. */
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
