/** `knowhub packs validate-run FILE`: a record file against the standard's schemas; exit code 1 on errors (for CI). */
import { formatDiagnostic } from '../../../packs/vocabulary.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Checks a compile run, context resolution, selection eval or source map file; sets the exit code 1 on errors.
 * @example
 * await validateRunAction({ packs, opts: {}, args: ['packs/acme/runs/compile-2026-05-01.json'], io })
 */
export async function validateRunAction({ packs, opts, args: [path = ''], io }: PacksAction): Promise<void> {
  const report = await packs.validateRun(path)
  if (!report.ok) process.exitCode = 1
  if (opts.json) return printJson(io, report)
  const verdict = report.ok ? 'ok' : 'FAIL'
  io.out(
    `${verdict.padEnd(4)} ${report.path} [${report.schema ?? 'unknown schema'}] ${report.records} records, ${report.errors} errors, ${report.warnings} warnings`,
  )
  for (const d of report.issues) io.out(`     ${severityMark(d)} ${formatDiagnostic(d)}`)
}
