/**
 * What every `knowhub packs` subcommand action receives, and the small text
 * helpers they share. Each action makes one call into the packs service and
 * prints the answer (human text, or JSON with `--json`).
 */
import type { PackDiagnostic } from '../../../packs/schema.js'
import type { PackService } from '../../../packs/service.js'
import type { Io } from '../../output.js'

/** The parsed options of a subcommand (its own and the `packs` command's). */
export type PacksOptions = Record<string, unknown> & { json?: boolean }

/** One subcommand invocation: the packs service built from the flags and config, the options, the positional arguments, where to print. */
export interface PacksAction {
  packs: PackService
  opts: PacksOptions
  args: string[]
  io: Io
}

/**
 * `E`, `W` or `i` for a diagnostic's severity.
 * @example
 * severityMark({ severity: 'warning' }) // 'W'
 */
export function severityMark(d: Pick<PackDiagnostic, 'severity'>): string {
  return d.severity === 'error' ? 'E' : d.severity === 'warning' ? 'W' : 'i'
}

/**
 * Rows as aligned columns (the last column is not padded).
 * @example
 * table([['NAME', 'SCOPE'], ['acme', 'project']]) // ['NAME  SCOPE', 'acme  project']
 */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? []
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  )
}
