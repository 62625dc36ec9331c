/** `knowhub packs validate PATH`: strict validation for pack authors; exit code 1 on errors (for CI). */
import { resolve } from 'node:path'
import { agentSkillsHint } from '../../../packs/discover/skills.js'
import { formatDiagnostic } from '../../../packs/vocabulary.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Validates a pack folder, a KNOWLEDGE.md or a folder of packs; sets the exit code 1 on errors or when no pack is found.
 * @example
 * await validateAction({ packs, opts: {}, args: ['./packs'], io })
 */
export async function validateAction({ packs, opts, args: [path = ''], io }: PacksAction): Promise<void> {
  const summary = await packs.validate(path)
  const reports = summary.packs
  if (!summary.ok) process.exitCode = 1
  if (opts.json) return printJson(io, summary)
  if (reports.length === 0) {
    io.out(`No KNOWLEDGE.md found under ${resolve(path)}.`)
    if (summary.agentSkills) io.out(agentSkillsHint(summary.agentSkills))
    return
  }
  for (const report of reports) {
    const verdict = report.errors > 0 ? 'FAIL' : 'ok'
    io.out(`${verdict.padEnd(4)} ${report.name ?? '(unnamed)'} ${report.path} [${report.outcome}] ${report.errors} errors, ${report.warnings} warnings`)
    for (const d of report.issues) io.out(`     ${severityMark(d)} ${formatDiagnostic(d)}`)
  }
  io.out(`${reports.length} packs, ${summary.errors} errors, ${summary.warnings} warnings`)
}
