/**
 * The pool of embedding threads (issue 32): USE lite throughput on English prose with 1 and 2
 * threads, the CPU time a text costs (the process's, and each thread's own busy time), and the
 * memory a thread adds. Each run is a child process, so that its RSS is its own: one with no
 * thread (the baseline), then one per thread count, each warmed up (the model loaded in every
 * thread) before the timed embedding of the same texts in one call, as an import sends them.
 *
 *   npx tsx bench/embed-threads.ts [--threads 1,2] [--texts 400]
 *   npm run bench -- --only embed-threads
 *
 * On a shared machine read the CPU figures: other load moves the wall-clock ones.
 */
import { fork } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { sentences } from './import.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

interface ChildReport {
  threads: number
  rssBase: number
  rssWarm: number
  rssAfter: number
  wallMs: number
  cpuMs: number
  perThread: Array<{ texts: number; activeMs: number; cpuMs: number }>
  threadMemory: Array<{ heap: number; external: number; arrayBuffers: number; cpuMs: number }>
}

/** English prose like `bench/import.ts` sends: a sentence of the docs and the three after it. */
function proseTexts(count: number): string[] {
  const all = sentences()
  return Array.from({ length: count }, (_, i) => [0, 1, 2, 3].map((k) => all[(i * 7 + k) % all.length]).join(' '))
}

async function child(threads: number, count: number): Promise<void> {
  // A warm-up does not keep a process alive on its own (by design): this does, until the report is sent.
  const alive = setInterval(() => {}, 1000)
  const { UsePool } = await import('../src/embed/use-pool.js')
  const texts = proseTexts(count)
  const rssBase = process.memoryUsage().rss
  const report: ChildReport = { threads, rssBase, rssWarm: rssBase, rssAfter: rssBase, wallMs: 0, cpuMs: 0, perThread: [], threadMemory: [] }
  if (threads > 0) {
    const pool = UsePool.create({ threads })
    await pool.warmUp()
    report.rssWarm = process.memoryUsage().rss
    const active = pool.stats().threads.map((t) => t.activeMs)
    const threadCpu = (await pool.memory()).map((m) => m.cpuMs)
    const cpu = process.cpuUsage()
    const started = performance.now()
    await pool.embed(texts)
    report.wallMs = performance.now() - started
    const used = process.cpuUsage(cpu)
    report.cpuMs = (used.user + used.system) / 1000
    report.threadMemory = await pool.memory()
    report.perThread = pool.stats().threads.map((t, i) => ({
      texts: t.texts,
      activeMs: t.activeMs - (active[i] ?? 0),
      cpuMs: report.threadMemory[i]!.cpuMs - (threadCpu[i] ?? 0),
    }))
    report.rssAfter = process.memoryUsage().rss
    await pool.close()
  }
  process.send!(report, () => clearInterval(alive))
}

function runChild(threads: number, count: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const process_ = fork(fileURLToPath(import.meta.url), ['--child', String(threads), String(count)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    process_.once('message', (report: ChildReport) => resolve(report))
    process_.once('exit', (code) => reject(new Error(`the ${threads}-thread run exited (code ${code}) without a report`)))
  })
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

export async function runEmbedThreadsBench(options: { threads?: number[]; texts?: number } = {}): Promise<BenchResult[]> {
  const counts = options.threads ?? [1, 2]
  const texts = options.texts ?? 400
  const MB = 2 ** 20
  const base = await runChild(0, texts)
  const results: BenchResult[] = []
  const rate: Record<number, number> = {}
  for (const threads of counts) {
    const before = loadavg()
    const report = await runChild(threads, texts)
    const load = `load ${before} -> ${loadavg()}`
    rate[threads] = (texts / report.wallMs) * 1000
    const threadCpu = report.perThread.reduce((sum, t) => sum + t.cpuMs, 0)
    results.push(
      {
        name: `sentence embed, ${threads} thread${threads === 1 ? '' : 's'}`,
        value: round(rate[threads]!, 1),
        unit: 'texts/s',
        note: `${texts} English prose texts (~4 sentences) in one call, batches of 8; ${round(report.wallMs / 1000, 1)} s; ${load}`,
      },
      {
        name: `sentence embed CPU a text, ${threads} thread${threads === 1 ? '' : 's'} (process)`,
        value: round(report.cpuMs / texts, 1),
        unit: 'ms',
        note: 'user + system time of the whole process over the embedding / texts',
      },
      {
        name: `sentence embed CPU a text per thread, ${threads} thread${threads === 1 ? '' : 's'}`,
        value: round(threadCpu / texts, 1),
        unit: 'ms',
        note: `each thread's own CPU time (/proc/thread-self/stat) / the texts it embedded: ${report.perThread.map((t) => `${t.texts} texts, ${round(t.cpuMs / Math.max(1, t.texts), 1)} ms CPU (busy ${round(t.activeMs / Math.max(1, t.texts), 1)} ms wall)`).join('; ')}`,
      },
      {
        name: `sentence embed RSS a thread, ${threads} thread${threads === 1 ? '' : 's'}`,
        value: round((report.rssWarm - base.rssBase) / threads / MB, 0),
        unit: 'MB',
        note: `(RSS with the model loaded in every thread − RSS of a process without threads ${round(base.rssBase / MB, 0)} MB) / threads; after the run ${round((report.rssAfter - base.rssBase) / threads / MB, 0)} MB; each thread's own heap + external ${report.threadMemory.map((m) => `${round(m.heap / MB, 0)} + ${round(m.external / MB, 0)} MB`).join(', ')}`,
      },
    )
    console.error(`${threads} thread(s): ${round(rate[threads]!, 1)} texts/s, CPU ${round(report.cpuMs / texts, 1)} ms a text (${load})`)
  }
  if (rate[1] && rate[2]) results.push({ name: 'sentence embed, 2 threads / 1 thread', value: round(rate[2] / rate[1], 2), unit: '×', target: '≥ 1.7' })
  return results
}

if (process.argv[2] === '--child') {
  child(Number(process.argv[3]), Number(process.argv[4])).catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { threads: { type: 'string' }, texts: { type: 'string' } } })
  const results = await runEmbedThreadsBench({
    ...(values.threads ? { threads: values.threads.split(',').map(Number) } : {}),
    ...(values.texts ? { texts: Number(values.texts) } : {}),
  })
  printTable('Embedding threads', results)
  console.log(`\nwrote ${writeResults('embed-threads', results)}`)
}
