/**
 * Import benchmark (issue 18, ingest): `knowhub import` of export-format lines into a new
 * embedded database folder, as a person runs it (the built CLI in a child process), once with
 * the `hashed` embedder and once with the default `sentence` embedder (USE lite in a worker
 * thread). Reports entries a second (wall time of the whole command: start, checks, embedding,
 * inserts, statistics, commit), the command's CPU time an entry (all its threads) and the load
 * average beside them: the machine may be shared.
 *
 *   npx tsx bench/import.ts [--hashed 10000] [--sentence 500]
 *
 * The text is English prose (sentences of docs/*.md), so that the sentence model sees the kind
 * of text it is made for; `KNOWHUB_BENCH_BIN` measures another checkout's build.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { printTable, round, writeResults, type BenchResult } from './lib.js'
import { exportLine } from './store.js'

const BIN = process.env.KNOWHUB_BENCH_BIN ?? fileURLToPath(new URL('../bin/knowhub.js', import.meta.url))
const DOCS = fileURLToPath(new URL('../docs/', import.meta.url))
const TYPES = ['strategy', 'tool', 'usecase', 'definition', 'plan'] as const

/** Sentences of 8-40 words from the docs, in file order. */
export function sentences(): string[] {
  const text = readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => readFileSync(join(DOCS, name), 'utf8'))
    .join('\n')
    .replace(/```[\s\S]*?```/g, ' ')
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => /^[A-Z]/.test(s) && s.split(' ').length >= 8 && s.split(' ').length <= 40)
}

/** `count` export lines owned by the CLI's local user: a sentence as the task, three as the content. */
export function importLines(count: number): string[] {
  const all = sentences()
  return Array.from({ length: count }, (_, i) => {
    const line = JSON.parse(
      exportLine(i, all[i % all.length]!, [0, 1, 2].map((k) => all[(i * 7 + k) % all.length]).join(' '), TYPES[i % TYPES.length]!, 'user:local'),
    ) as Record<string, unknown>
    return JSON.stringify({ ...line, owner: 'user:local' })
  })
}

/** Prints the process's CPU time (all threads, µs) on stderr as it exits. */
const CPU_PROBE = `data:text/javascript,process.on('exit',()=>{const c=process.cpuUsage();process.stderr.write('\\nbench-cpu '+(c.user+c.system)+'\\n')})`

function loadavg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
}

/** Runs `knowhub import FILE` into a new folder; wall seconds and CPU milliseconds of the command. */
async function runImport(file: string, embedder: string, threads?: number): Promise<{ seconds: number; cpuMs: number; output: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'knowhub-bench-import-'))
  try {
    const start = performance.now()
    const child = spawn(process.execPath, ['--import', CPU_PROBE, BIN, 'import', file], {
      env: {
        ...process.env,
        KNOWHUB_DATA_DIR: dataDir,
        KNOWHUB_EMBEDDER: embedder,
        KNOWHUB_URL: '',
        ...(threads ? { KNOWHUB_EMBED_THREADS: String(threads) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    const seconds = (performance.now() - start) / 1000
    if (code !== 0) throw new Error(`knowhub import (${embedder}) exited with ${code}: ${output.slice(-2000)}`)
    const cpu = /bench-cpu (\d+)/.exec(output)
    return { seconds, cpuMs: cpu ? Number(cpu[1]) / 1000 : NaN, output }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export async function runImportBench(options: { hashed?: number; sentence?: number } = {}): Promise<BenchResult[]> {
  const runs: Array<{ embedder: string; count: number; target: string; threads?: number }> = [
    { embedder: 'hashed', count: options.hashed ?? 10_000, target: '≥ 1,500/s' },
    // The sentence model's threads (issue 32): one, then two (the default is the cores minus one).
    { embedder: 'sentence', count: options.sentence ?? 500, target: '≥ 200/s', threads: 1 },
    { embedder: 'sentence', count: options.sentence ?? 500, target: '≥ 1.7 × 1 thread', threads: 2 },
  ]
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-bench-lines-'))
  const results: BenchResult[] = []
  try {
    for (const run of runs) {
      if (run.count <= 0) continue
      const file = join(dir, `${run.count}.jsonl`)
      writeFileSync(file, importLines(run.count).join('\n') + '\n')
      const before = loadavg()
      const { seconds, cpuMs, output } = await runImport(file, run.embedder, run.threads)
      if (!output.includes(`imported ${run.count},`)) throw new Error(`unexpected import output: ${output.slice(-500)}`)
      const note = `${run.count} entries, new folder, ${round(seconds, 1)} s; CPU ${round(cpuMs / run.count, 2)} ms an entry (all threads); load ${before} -> ${loadavg()}`
      const label = run.threads ? `${run.embedder}, ${run.threads} thread${run.threads === 1 ? '' : 's'}` : run.embedder
      console.error(`import ${label}: ${round(run.count / seconds, 1)} entries/s (${note})`)
      results.push({ name: `embedded import (${label})`, value: round(run.count / seconds, 1), unit: 'entries/s', target: run.target, note })
      results.push({ name: `embedded import CPU (${label})`, value: round(cpuMs / run.count, 2), unit: 'ms/entry' })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { hashed: { type: 'string' }, sentence: { type: 'string' } } })
  const results = await runImportBench({
    ...(values.hashed ? { hashed: Number(values.hashed) } : {}),
    ...(values.sentence ? { sentence: Number(values.sentence) } : {}),
  })
  printTable('Import', results)
  console.log(`\nwrote ${writeResults('import', results)}`)
}
