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

/** A progress reporter: a bar on a terminal, a line every 10% otherwise; nothing while there is nothing to do (never `0/0`). */
export function progress(io: Io, label: string): { update: (done: number, total: number) => void; stop: () => void } {
  if (io.interactive) {
    // Loaded when a bar is shown: most commands never show one.
    const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof CliProgress
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {percentage}% {value}/{total} eta {eta_formatted}`, stream: process.stderr },
      cliProgress.Presets.shades_classic,
    )
    let started = false
    return {
      update(done, total) {
        if (total <= 0) return
        if (!started) {
          bar.start(total, done)
          started = true
        } else bar.update(done)
      },
      stop: () => started && bar.stop(),
    }
  }
  let lastDecile = -1
  return {
    update(done, total) {
      if (total <= 0) return
      const decile = Math.floor((done / total) * 10)
      if (decile !== lastDecile) {
        lastDecile = decile
        io.err(`${label}: ${done}/${total}`)
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
