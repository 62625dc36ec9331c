/**
 * What the CLI prints: `--json` errors as JSON for every command, `--json` on reindex,
 * export and the lifecycle commands, no JSON log line beside a human message at the default
 * log level, a quiet end when stdout's reader goes away (EPIPE), and `npm run dev`
 * (`tsx src/cli/main.ts`) running the CLI. In-process through `main`, and as real processes
 * where the process itself is what is tested.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

const ROOT = join(import.meta.dirname, '..', '..')
const RUN_CLI = join(ROOT, 'test', 'mcp', 'run-cli.ts')
const TSX_CLI = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs')

interface Spawned {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a real process; `closeStdout` closes our end of its stdout at once, like `| head` does. */
function runProcess(args: string[], options: { env?: Record<string, string>; closeStdout?: boolean } = {}): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    if (options.closeStdout) child.stdout.destroy()
    else child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

interface JsonError {
  error: { code: string; message: string; details?: Record<string, unknown> }
}

describe('knowhub output', () => {
  const saved = { ...process.env }
  let dir: string
  let id: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knowhub-output-'))
    process.env.KNOWHUB_DATA_DIR = join(dir, 'data')
    process.env.KNOWHUB_EMBEDDER = 'hashed'
    process.env.KNOWHUB_USER = 'dev'
    for (const name of ['DATABASE_URL', 'KNOWHUB_ORG', 'KNOWHUB_CONFIG', 'KNOWHUB_LOG_LEVEL']) delete process.env[name]
    const save = await runCli('save', '--task', 'Log in to site A', '--content', 'use the test account', '--type', 'tool', '--json')
    expect(save.code, save.stderr).toBe(0)
    id = (JSON.parse(save.stdout) as { id: string }).id
  })
  afterAll(() => {
    process.env = saved
    rmSync(dir, { recursive: true, force: true })
  })

  it('prints every failure as {"error":{code,message,details}} on stdout with --json, exit code 1', async () => {
    const missing = await runCli('show', 'knowledge-20990101000000-zzzz', '--json')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe('')
    expect(JSON.parse(missing.stdout)).toEqual({
      error: { code: 'not_found', message: expect.stringContaining('knowledge-20990101000000-zzzz'), details: expect.any(Object) },
    })

    const invalid = JSON.parse((await runCli('save', '--task', 't', '--content', 'c', '--type', 'magic', '--json')).stdout) as JsonError
    expect(invalid.error.code).toBe('validation_error')
    expect(JSON.stringify(invalid.error.details)).toContain('types.0')

    // An option value refused before the action runs, and a usage error found by commander.
    const badNumber = await runCli('search', 'x', '--top-k', 'many', '--json')
    expect(badNumber.code).toBe(1)
    expect((JSON.parse(badNumber.stdout) as JsonError).error).toMatchObject({ code: 'validation_error', message: '--top-k must be an integer, got "many"' })
    const usage = await runCli('show', '--json')
    expect(usage.code).toBe(1)
    expect((JSON.parse(usage.stdout) as JsonError).error).toMatchObject({
      code: 'validation_error',
      message: "missing required argument 'id'",
      details: { reason: 'commander.missingArgument' },
    })
    expect(usage.stderr).not.toContain('error: missing required argument')

    // Without --json: words on stderr, nothing on stdout.
    const human = await runCli('show', 'knowledge-20990101000000-zzzz')
    expect(human).toMatchObject({ code: 1, stdout: '' })
    expect(human.stderr).toMatch(/^error \[not_found\]/)
    expect((await runCli('show')).stderr).toContain("error: missing required argument 'id'")
  })

  it('has --json on reindex, export and the lifecycle commands', async () => {
    const reindex = await runCli('reindex', '--json')
    expect(reindex.code, reindex.stderr).toBe(0)
    expect(JSON.parse(reindex.stdout)).toEqual({ reindexed: 1, embedder: { model: expect.stringMatching(/^hashed/), dimension: 512 } })

    const file = join(dir, 'out.jsonl')
    const exported = await runCli('export', '-o', file, '--json')
    expect(JSON.parse(exported.stdout)).toEqual({ exported: 1, file })
    expect(readFileSync(file, 'utf8')).toContain(id)

    expect(JSON.parse((await runCli('archive', id, '--json')).stdout)).toMatchObject({ id, status: 'archived' })
    expect(JSON.parse((await runCli('restore', id, '--json')).stdout)).toMatchObject({ id, status: 'active' })
    const again = (await runCli('save', '--task', 'Throwaway', '--content', 'x', '--type', 'plan', '--json')).stdout
    const other = (JSON.parse(again) as { id: string }).id
    expect(JSON.parse((await runCli('delete', other, '--json')).stdout)).toEqual({ id: other, deleted: true })
    expect((JSON.parse((await runCli('delete', other, '--json')).stdout) as JsonError).error.code).toBe('not_found')
  })

  it('reports a rejected import in words only at the default log level (no JSON log line beside it)', async () => {
    const bad = join(dir, 'bad.jsonl')
    writeFileSync(bad, 'not json\n')
    const quiet = await runProcess(['--import', 'tsx', RUN_CLI, 'import', bad])
    expect(quiet.code).toBe(1)
    expect(quiet.stderr).toContain('line 1: [invalid_import]')
    expect(quiet.stderr).not.toContain('knowledge.import.rejected')
    const verbose = await runProcess(['--import', 'tsx', RUN_CLI, 'import', bad], { env: { KNOWHUB_LOG_LEVEL: 'warn' } })
    expect(verbose.stderr).toContain('"msg":"knowledge.import.rejected"')
  })

  it('ends quietly when the reader of stdout goes away (`knowhub --help | head`, `knowhub export | head`)', async () => {
    for (const args of [['--help'], ['export']]) {
      const result = await runProcess(['--import', 'tsx', RUN_CLI, ...args], { closeStdout: true })
      expect(result.stderr, args.join(' ')).not.toMatch(/EPIPE|Unhandled/)
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0)
    }
  })

  it('runs as `npm run dev` does (tsx src/cli/main.ts)', async () => {
    const result = await runProcess([TSX_CLI, 'src/cli/main.ts', '--help'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('Usage: knowhub [options] [command]')
  })
})
