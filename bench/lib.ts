/** Shared helpers for benchmarks: results, percentiles, tables, JSON output. */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import os from 'node:os'
import { KNOWLEDGE_BM25, bm25Bound, bm25Idf } from '../src/core/text/bm25.js'

export interface BenchResult {
  name: string
  value: number
  unit: string
  target?: string
  note?: string
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]!
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export function machine(): Record<string, unknown> {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memory_gb: round(os.totalmem() / 2 ** 30, 1),
  }
}

export function printTable(title: string, results: readonly BenchResult[]): void {
  console.log(`\n${title}`)
  const rows = results.map((r) => [r.name, `${r.value}`, r.unit, r.target ?? '', r.note ?? ''])
  const head = ['benchmark', 'value', 'unit', 'target', 'note']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  console.log(line(head))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const row of rows) console.log(line(row))
}

export function writeResults(name: string, results: readonly BenchResult[], extra: Record<string, unknown> = {}): string {
  const dir = join(import.meta.dirname, 'results')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), machine: machine(), ...extra, results }, null, 2))
  return file
}

/** A small deterministic PRNG (mulberry32; src/core/random.ts). */
export { seededRandom as rng } from '../src/core/random.js'

/**
 * The best BM25 score an entry of a collection of `n` could reach for `terms`: the bounds of the
 * 32 rarest, summed, as the knowledge service computes a query's bound (the ranking labs; `params`
 * default to the service's k1 and b).
 * @example
 * const bound = scoreBound(index.ids.length, index.df, ['selenium', 'login'])
 */
export function scoreBound(n: number, df: ReadonlyMap<string, number>, terms: Iterable<string>, params = KNOWLEDGE_BM25): number {
  return [...terms]
    .map((t) => bm25Idf(n, df.get(t) ?? 0))
    .sort((a, b) => b - a)
    .slice(0, 32)
    .reduce((s, idf) => s + bm25Bound(params, idf), 0)
}

/** utime + stime + cutime + cstime (seconds) and the parent of a process, from /proc/<pid>/stat. */
export function procStat(pid: number | string): { cpu: number; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { cpu: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100, ppid: Number(fields[1]) }
  } catch {
    return undefined
  }
}

/** CPU seconds of a process and its live children (exited ones are in its cutime/cstime). */
export function treeCpu(root: number): number {
  let total = procStat(root)?.cpu ?? 0
  for (const pid of readdirSync('/proc')) if (/^\d+$/.test(pid) && procStat(pid)?.ppid === root) total += procStat(pid)!.cpu
  return total
}
