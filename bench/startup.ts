/**
 * Start-up benchmarks of the built CLI (`npm run build` first), each in a new process, as a
 * user meets them:
 *
 * - `startup`: `knowhub start` on a new data folder until the first search is answered over
 *   HTTP, then the same on a restart (same folder). Goals ≤ 3 s and ≤ 1.5 s (issue #11).
 * - `cli`: one-shot commands on a folder with a few entries — `--help` (≤ 300 ms),
 *   `list`, `show`, `status` (≤ 700 ms), `search` (≤ 1.5 s); the same beside a running server
 *   (the README's order: the commands run on it over HTTP). Then the README's CLI form as typed
 *   in this checkout: the first `./knowhub --version` and `./knowhub list` beside the server
 *   (issue #29: ≤ 2 s first call, ≤ 0.5 s later calls), and `npx knowhub --version` with a
 *   fresh npm cache, first and second call (npm 11 links the checkout into its cache first).
 *
 * - `oneshot`: `search` (English and Chinese) and `list` with no server on a folder of 1,000
 *   entries (issue 42: ≤ 0.8 s median on a quiet machine, ≤ 0.6 s of CPU a call), each with the
 *   breakdown the CLI prints with KNOWHUB_TIMING=1: process start (Node and the CLI's modules),
 *   configuration, open (the embedded database and the services), model (the embedder ready, from
 *   the open), the command (for a search: its stages) and close; CPU is the process's own, less
 *   sensitive to a loaded machine than wall time.
 *
 * Each figure is the median of `runs` (wall time); the note gives the load average, since the
 * machine may be shared. `KNOWHUB_BENCH_BIN=/other/checkout/bin/knowhub.js` measures another
 * build (a baseline) with the same script.
 *
 *   npx tsx bench/startup.ts [--runs 3] [--only oneshot]
 *   npm run bench -- --only startup,cli,oneshot
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const BIN = process.env.KNOWHUB_BENCH_BIN ?? fileURLToPath(new URL('../bin/knowhub.js', import.meta.url))

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

/** The environment of every measured process: a fresh folder, nothing inherited that changes the outcome. */
function envFor(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dataDir, KNOWHUB_DATA_DIR: join(dataDir, 'data') }
  return env
}

/** Starts `knowhub start` and resolves with the ms until a search is answered, and a stop function. */
async function timeToFirstSearch(dataDir: string): Promise<{ ms: number; listenMs: number; stop: () => Promise<void> }> {
  const started = performance.now()
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--no-packs'], { env: envFor(dataDir), stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM')
    await exited
  }
  let out = ''
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const match = /listening on (http:\/\/\S+?)[ ,;)]/.exec(out)
      if (match) resolve(match[1]!)
    })
    child.once('exit', (code) => reject(new Error(`knowhub start exited (${code}):\n${err}${out}`)))
  })
  const listenMs = performance.now() - started
  const response = await fetch(`${url}/api/knowledge/search?q=${encodeURIComponent('selenium login blocked')}`)
  if (!response.ok) throw new Error(`search answered ${response.status}: ${await response.text()}`)
  await response.text()
  return { ms: performance.now() - started, listenMs, stop }
}

/**
 * `knowhub start` to the first answered search: on a new folder, then on a restart.
 * @example
 * const results = await runStartupBench({ runs: 3 })
 */
export async function runStartupBench(options: { runs?: number } = {}): Promise<BenchResult[]> {
  const runs = options.runs ?? 3
  const fresh: number[] = []
  const freshListen: number[] = []
  const restart: number[] = []
  const restartListen: number[] = []
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'knowhub-bench-startup-'))
    try {
      const first = await timeToFirstSearch(dir)
      await first.stop()
      fresh.push(first.ms)
      freshListen.push(first.listenMs)
      const second = await timeToFirstSearch(dir)
      await second.stop()
      restart.push(second.ms)
      restartListen.push(second.listenMs)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const note = `median of ${runs}; ${load()}`
  return [
    { name: 'start → first search, new folder', value: round(median(fresh)), unit: 'ms', target: '≤ 3000', note },
    { name: 'start → listening, new folder', value: round(median(freshListen)), unit: 'ms', note },
    { name: 'start → first search, restart', value: round(median(restart)), unit: 'ms', target: '≤ 1500', note },
    { name: 'start → listening, restart', value: round(median(restartListen)), unit: 'ms', note },
  ]
}

function runCli(dataDir: string, args: string[]): { ms: number; stdout: string } {
  const started = performance.now()
  const result = spawnSync(process.execPath, [BIN, ...args], { env: envFor(dataDir), encoding: 'utf8' })
  const ms = performance.now() - started
  if (result.status !== 0) throw new Error(`knowhub ${args.join(' ')} failed (${result.status}):\n${result.stderr}`)
  return { ms, stdout: result.stdout }
}

const CHECKOUT = fileURLToPath(new URL('../', import.meta.url))

/** Runs a command line as the README types it, in this checkout, on `dataDir`; its wall time in ms. */
function readmeCommand(dataDir: string, command: string, extraEnv: NodeJS.ProcessEnv = {}): number {
  const started = performance.now()
  const result = spawnSync('bash', ['-c', command], { cwd: CHECKOUT, env: { ...envFor(dataDir), ...extraEnv }, encoding: 'utf8' })
  const ms = performance.now() - started
  if (result.status !== 0) throw new Error(`${command} failed (${result.status}):\n${result.stderr}`)
  return ms
}

/** The README's CLI form on a first call, and npx with a fresh npm cache (first and second call). */
function readmeForm(dataDir: string, label: string): BenchResult[] {
  const cache = mkdtempSync(join(tmpdir(), 'knowhub-bench-npm-cache-'))
  try {
    const launcher = readmeCommand(dataDir, './knowhub --version')
    const npxFirst = readmeCommand(dataDir, 'npx knowhub --version', { npm_config_cache: cache })
    const npxSecond = readmeCommand(dataDir, 'npx knowhub --version', { npm_config_cache: cache })
    const note = `one run each; ${load()}`
    return [
      { name: `./knowhub --version (README form), ${label} call`, value: round(launcher), unit: 'ms', target: '≤ 2000', note },
      { name: 'npx knowhub --version, fresh npm cache, first call', value: round(npxFirst), unit: 'ms', note },
      { name: 'npx knowhub --version, second call', value: round(npxSecond), unit: 'ms', note },
    ]
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
}

/**
 * One-shot commands in new processes on a folder with three entries.
 * @example
 * const results = await runCliBench({ runs: 5 })
 */
export async function runCliBench(options: { runs?: number } = {}): Promise<BenchResult[]> {
  const runs = options.runs ?? 5
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-bench-cli-'))
  try {
    const ids: string[] = []
    for (const [task, content] of [
      ['Log in to site A with Selenium', 'undetected_chromedriver avoids most bot checks; add random delays'],
      ['Deploy with pnpm in Docker', 'Use corepack enable before pnpm install'],
      ['Parse PDF tables', 'camelot lattice mode for ruled tables, stream mode otherwise'],
    ] as const) {
      const saved = runCli(dir, ['save', '--task', task, '--content', content, '--type', 'tool', '--json'])
      ids.push((JSON.parse(saved.stdout) as { id: string }).id)
    }
    const commands: Array<[string, string[], string]> = [
      ['knowhub --help', ['--help'], '≤ 300'],
      ['knowhub list', ['list'], '≤ 700'],
      ['knowhub show ID', ['show', ids[0]!], '≤ 700'],
      ['knowhub status', ['status'], '≤ 700'],
      ['knowhub search', ['search', 'selenium login blocked as a bot'], '≤ 1500'],
    ]
    const results: BenchResult[] = []
    for (const [name, args, target] of commands) {
      const times: number[] = []
      for (let i = 0; i < runs; i++) times.push(runCli(dir, args).ms)
      results.push({ name, value: round(median(times)), unit: 'ms', target, note: `median of ${runs}; ${load()}` })
    }
    results.push(...readmeForm(dir, 'first'))
    // The README's order: `npm start`, then the commands, which run on that server over HTTP.
    const server = await timeToFirstSearch(dir)
    try {
      for (const [name, args, target] of commands.slice(1)) {
        const times: number[] = []
        for (let i = 0; i < runs; i++) times.push(runCli(dir, args).ms)
        results.push({ name: `${name}, beside a running server`, value: round(median(times)), unit: 'ms', target, note: `median of ${runs}; ${load()}` })
      }
      const times: number[] = []
      for (let i = 0; i < runs; i++) times.push(readmeCommand(dir, './knowhub list'))
      results.push({
        name: './knowhub list (README form), beside a running server',
        value: round(median(times)),
        unit: 'ms',
        target: '≤ 500',
        note: `median of ${runs}; ${load()}`,
      })
    } finally {
      await server.stop()
    }
    return results
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** What `KNOWHUB_TIMING=1` prints (src/cli/timing.ts). */
interface Timing {
  start?: Phase
  config?: Phase
  open?: Phase
  model?: Phase
  command?: Phase
  close?: Phase
  search_stages_ms: Record<string, number>
  total: Phase
}
interface Phase {
  wall_ms: number
  cpu_ms: number
}

/** One one-shot command with KNOWHUB_TIMING=1: its wall time as measured here, and its own breakdown. */
function timedCli(dataDir: string, args: string[]): { ms: number; timing: Timing } {
  const started = performance.now()
  const result = spawnSync(process.execPath, [BIN, ...args], { env: { ...envFor(dataDir), KNOWHUB_TIMING: '1' }, encoding: 'utf8' })
  const ms = performance.now() - started
  if (result.status !== 0) throw new Error(`knowhub ${args.join(' ')} failed (${result.status}):\n${result.stderr}`)
  const line = result.stderr.split('\n').find((l) => l.startsWith('{"knowhub_timing"'))
  if (!line) throw new Error(`knowhub ${args.join(' ')} printed no timing (a build without KNOWHUB_TIMING?)`)
  return { ms, timing: (JSON.parse(line) as { knowhub_timing: Timing }).knowhub_timing }
}

/** A folder of `count` generated entries (an import, as a user would make one). */
function folderOf(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-bench-oneshot-'))
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      task: `Task ${i} about topic ${i % 37} and tool ${i % 11}`,
      content: `Use approach ${i % 13} with option ${i % 7}; step ${i % 5} first`,
      types: ['tool'],
    }),
  )
  lines.push(JSON.stringify({ task: '记录用户的编码偏好', content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全', types: ['user_profile'] }))
  writeFileSync(join(dir, 'entries.jsonl'), `${lines.join('\n')}\n`)
  runCli(dir, ['import', join(dir, 'entries.jsonl')])
  return dir
}

/**
 * One-shot commands with no server on a folder of 1,000 entries, with their breakdown.
 * @example
 * const results = await runOneShotBench({ runs: 5 })
 */
export async function runOneShotBench(options: { runs?: number } = {}): Promise<BenchResult[]> {
  const runs = options.runs ?? 5
  const dir = folderOf(1000)
  try {
    const results: BenchResult[] = []
    for (const [name, args] of [
      ['search (English), 1,000 entries, no server', ['search', 'approach 3 with option 2']],
      ['search (Chinese), 1,000 entries, no server', ['search', '用户喜欢什么样的编码风格']],
      ['list, 1,000 entries, no server', ['list']],
    ] as const) {
      const measured = Array.from({ length: runs }, () => timedCli(dir, [...args]))
      const med = (pick: (t: Timing) => number | undefined) => round(median(measured.map((m) => pick(m.timing) ?? NaN)))
      const note = `median of ${runs}; ${load()}`
      const phases = (['start', 'config', 'open', 'model', 'command', 'close'] as const)
        .map((phase) => `${phase} ${med((t) => t[phase]?.wall_ms)}/${med((t) => t[phase]?.cpu_ms)}`)
        .join(', ')
      const stages = Object.keys(measured[0]!.timing.search_stages_ms)
        .map((stage) => `${stage} ${med((t) => t.search_stages_ms[stage])}`)
        .join(', ')
      results.push({ name: `${name}: wall`, value: round(median(measured.map((m) => m.ms))), unit: 'ms', target: '≤ 800 (quiet machine)', note })
      results.push({ name: `${name}: CPU`, value: med((t) => t.total.cpu_ms), unit: 'ms', target: '≤ 600', note })
      results.push({
        name: `${name}: breakdown`,
        value: med((t) => t.total.wall_ms),
        unit: 'ms',
        note: `wall/CPU ms: ${phases}${stages ? `; search stages ${stages}` : ''}`,
      })
    }
    return results
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, only: { type: 'string' } } })
  const runs = values.runs ? Number(values.runs) : undefined
  const only = values.only?.split(',')
  for (const [name, run] of [
    ['startup', runStartupBench],
    ['cli', runCliBench],
    ['oneshot', runOneShotBench],
  ] as const) {
    if (only && !only.includes(name)) continue
    const results = await run(runs ? { runs } : {})
    printTable(name, results)
    writeResults(name, results)
  }
}
