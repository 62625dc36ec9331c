/** `knowhub packs doctor`: every location scanned, and every pack found, shadowed, rejected or archived. */
import { formatDiagnostic } from '../../../packs/vocabulary.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Prints where discovery looked and what it found.
 * @example
 * await doctorAction({ packs, opts: { json: true }, args: [], io })
 */
export async function doctorAction({ packs, opts, io }: PacksAction): Promise<void> {
  const report = await packs.doctor()
  if (opts.json) return printJson(io, report)
  io.out('locations:')
  for (const l of report.locations) {
    const state = l.exists
      ? `${l.packsFound} packs, ${l.dirsScanned} folders read, ${l.skippedDirs} skipped${l.limited ? `, stopped by ${l.limited} limit` : ''}`
      : 'missing'
    io.out(`  ${l.scope.padEnd(8)} ${l.path} (${state})`)
  }
  io.out(
    `packs: ${report.packs.length} available, ${report.archived.length} archived, ${report.rejected.length} not loaded, ${report.shadowed.length} shadowed`,
  )
  for (const p of report.packs) {
    const notable = p.issues.filter((i) => i.severity !== 'info')
    if (notable.length === 0) continue
    io.out(`  ${p.name}:`)
    for (const d of notable) io.out(`    ${severityMark(d)} ${formatDiagnostic(d)}`)
  }
  for (const a of report.archived) io.out(`  archived ${a.name} ${a.location}`)
  for (const r of report.rejected) {
    io.out(`  ${r.outcome} ${r.location}`)
    for (const d of r.issues) io.out(`    ${severityMark(d)} ${formatDiagnostic(d)}`)
  }
  for (const s of report.shadowed) io.out(`  shadowed ${s.name}: ${s.shadowed.location} (${s.shadowed.scope}) by ${s.kept.location} (${s.kept.scope})`)
  const scan = report.diagnostics.filter((d) => d.code !== 'shadowed' && d.code !== 'archived')
  if (scan.length > 0) {
    io.out('scan:')
    for (const d of scan) io.out(`  ${severityMark(d)} ${formatDiagnostic(d)}`)
  }
}
