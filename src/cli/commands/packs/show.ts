/** `knowhub packs show NAME`: one pack's metadata, diagnostics and resources. */
import { formatDiagnostic } from '../../../packs/vocabulary.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Prints one pack in detail (`not_found` when unknown).
 * @example
 * await showAction({ packs, opts: {}, args: ['acme-product-brief'], io })
 */
export async function showAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const { item, issues, resources, shadowed } = await packs.show(name)
  if (opts.json) return printJson(io, { pack: item, issues, resources, shadowed })
  io.out(`${item.name} (${item.scope})`)
  io.out(`  ${item.description}`)
  io.out(
    `  type ${item.type}, status ${item.status}, trust ${item.trust ?? 'unreviewed'}, profile ${item.profile ?? 'wiki-first'}, mode ${item.runtime?.mode ?? 'data'}${item.version ? `, version ${item.version}` : ''}${item.language ? `, language ${item.language}` : ''}`,
  )
  if (item.metadata?.primaryDocument) io.out(`  primary document: ${item.metadata.primaryDocument}`)
  if (item.metadata?.producedBy) io.out(`  produced by: ${JSON.stringify(item.metadata.producedBy)}`)
  io.out(`  location: ${item.location}`)
  for (const s of shadowed) io.out(`  shadows: ${s.shadowed.location} (${s.shadowed.scope})`)
  if (issues.length > 0) {
    io.out('diagnostics:')
    for (const d of issues) io.out(`  ${severityMark(d)} ${formatDiagnostic(d)}`)
  }
  io.out(`resources (${resources.length}):`)
  for (const r of resources) io.out(`  ${r.kind.padEnd(8)} ${r.path}`)
}
