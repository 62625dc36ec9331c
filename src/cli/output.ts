/** Printing for the CLI: human text by default, JSON with --json, errors with their code. */
import { createRequire } from 'node:module'
import type CliProgress from 'cli-progress'
import { isKnowHubError } from '../core/errors.js'

export interface Io {
  out: (text: string) => void
  err: (text: string) => void
  /** Whether stderr is a terminal (progress bars) */
  interactive: boolean
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  interactive: Boolean(process.stderr.isTTY),
}

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2))
}

/** Prints an error for a person: `error [code]: message` and the field issues, if any. */
export function printError(io: Io, error: unknown): void {
  if (isKnowHubError(error)) {
    io.err(`error [${error.code}]: ${error.message}`)
    const issues = (error.details as { issues?: Array<{ path: string; message: string }> } | undefined)?.issues
    if (issues && issues.length > 1) for (const issue of issues) io.err(`  - ${issue.path}: ${issue.message}`)
    return
  }
  io.err(`error: ${(error as Error)?.message ?? String(error)}`)
}

/**
 * Prints an error for a program (commands run with `--json`): `{ "error": { code, message, details } }`
 * on stdout, where the JSON output goes. Errors that are not KnowHub errors get code `internal_error`.
 * @example
 * if (opts.json) printJsonError(io, error) // {"error":{"code":"not_found","message":"No knowledge pack named \"x\"","details":{"pack":"x"}}}
 */
export function printJsonError(io: Io, error: unknown): void {
  const body = isKnowHubError(error)
    ? { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) }
    : { code: 'internal_error', message: (error as Error)?.message ?? String(error) }
  printJson(io, { error: body })
}

/** A duration for people: `42 s`, `3 min 05 s`, `1 h 02 min`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}

/** Items per second since `started` and the time left at that rate (undefined before anything is done). */
function pace(done: number, total: number, started: number, now: number): { rate: number; left: number } | undefined {
  const seconds = (now - started) / 1000
  if (done <= 0 || seconds <= 0) return undefined
  const rate = done / seconds
  return { rate, left: (total - done) / rate }
}

/** A rate for people: `1,520/s`, `12.5/s`. */
function formatRate(rate: number): string {
  return `${rate >= 100 ? Math.round(rate).toLocaleString('en-US') : rate.toFixed(1)}/s`
}

/**
 * A progress reporter: a bar on a terminal, a line every 10% otherwise, each with the rate so
 * far and the time left at that rate (`importing: 5000/10000 (1,520/s, 3 s left)`); nothing
 * while there is nothing to do (never `0/0`). `now` (milliseconds) is for tests.
 */
export function progress(
  io: Io,
  label: string,
  now: () => number = () => performance.now(),
): { update: (done: number, total: number) => void; stop: () => void } {
  let started: number | undefined
  const figures = (done: number, total: number) => {
    started ??= now()
    const p = pace(done, total, started, now())
    return p ? { rate: formatRate(p.rate), left: formatDuration(p.left) } : undefined
  }
  if (io.interactive) {
    // Loaded when a bar is shown: most commands never show one.
    const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof CliProgress
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {percentage}% {value}/{total} {rate} {left} left`, stream: process.stderr },
      cliProgress.Presets.shades_classic,
    )
    let shown = false
    return {
      update(done, total) {
        if (total <= 0) return
        const f = figures(done, total)
        const payload = { rate: f?.rate ?? '-/s', left: f?.left ?? '?' }
        if (!shown) {
          bar.start(total, done, payload)
          shown = true
        } else bar.update(done, payload)
      },
      stop: () => shown && bar.stop(),
    }
  }
  let lastDecile = -1
  return {
    update(done, total) {
      if (total <= 0) return
      const f = figures(done, total)
      const decile = Math.floor((done / total) * 10)
      if (decile !== lastDecile) {
        lastDecile = decile
        io.err(`${label}: ${done}/${total}${f ? ` (${f.rate}, ${f.left} left)` : ''}`)
      }
    },
    stop() {},
  }
}

/** One line, shortened to `max` characters. */
export function oneLine(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
