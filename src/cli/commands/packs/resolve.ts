/** `knowhub packs resolve "task" [--pack NAME]… [--budget N] [--grounding P] [--intent I] [--confirm]`. */
import type { GroundingPolicy } from '../../../packs/schema.js'
import type { ResolveIntent } from '../../../packs/resolve/index.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Resolves the context for a task: the wrapped context on stdout, the audit summary on stderr (all of it with `--json`).
 * @example
 * await resolveAction({ packs, opts: { pack: ['acme-product-brief'], budget: 4000 }, args: ['What does the Team plan cost?'], io })
 */
export async function resolveAction({ packs, opts, args: [task = ''], io }: PacksAction): Promise<void> {
  const { result } = await packs.resolve({
    task,
    packs: (opts.pack as string[] | undefined) ?? [],
    budget: opts.budget as number,
    ...(opts.grounding ? { grounding: opts.grounding as GroundingPolicy } : {}),
    ...(opts.intent ? { intent: opts.intent as ResolveIntent } : {}),
    confirmed: opts.confirm === true,
  })
  if (opts.json) return printJson(io, result)
  if (result.context) io.out(result.context)
  else io.err('No context selected.')
  io.err(`tokens ${result.tokens}/${result.budget}, intent ${result.intent}, packs ${result.wrapper_order.join(', ') || '(none)'}`)
  for (const p of result.packs) {
    io.err(`${p.pack}: ${p.selected_files.length} files${p.source_anchors.length ? `, ${p.source_anchors.length} source anchors` : ''}`)
    for (const w of p.compile_warnings) io.err(`  ${severityMark(w)} ${w.path}: ${w.message}`)
  }
  for (const e of result.excluded) io.err(`excluded ${e.pack}: ${e.message}${e.code === 'confirmation_required' ? ' (use --confirm)' : ''}`)
  if (result.omitted_count > 0) {
    const reasons = Object.entries(result.omitted_reasons)
      .map(([reason, n]) => `${n} ${reason}`)
      .join(', ')
    io.err(`${result.omitted_count} candidate sections left out (${reasons}; see --json omitted)`)
  }
  if (result.missing.length > 0) io.err(`missing: ${result.missing.join('; ')} → ${result.recommendation ?? ''}`)
}
