/** `knowhub packs list [--xml [--lang en|zh|auto]] [--json]`: the catalog. */
import { oneLine, printJson } from '../../output.js'
import { table, type PacksAction } from './action.js'

/**
 * Prints the catalog: a table, the items with `--json`, or the instruction and
 * `<available_knowledge_packs>` with `--xml`.
 * @example
 * await listAction({ packs, opts: { xml: true, lang: 'auto' }, args: [], io })
 */
export async function listAction({ packs, opts, io }: PacksAction): Promise<void> {
  const catalog = await packs.catalog({ language: opts.lang as 'en' | 'zh' | 'auto' | undefined })
  if (opts.xml) {
    if (catalog.xml === undefined) io.err('No knowledge packs available: no catalog.')
    else io.out(`${catalog.instruction}\n\n${catalog.xml}`)
    return
  }
  const items = catalog.items
  if (opts.json) return printJson(io, { packs: items, archived: catalog.archived, rejected: catalog.rejected, shadowed: catalog.shadowed })
  if (items.length === 0) {
    io.out('No knowledge packs found. Run `knowhub packs doctor` to see where they were looked for.')
    return
  }
  io.out(
    table([
      ['NAME', 'SCOPE', 'STATUS', 'PROFILE', 'MODE', 'TYPE', 'DESCRIPTION'],
      ...items.map((i) => [i.name, i.scope, i.status, i.profile ?? 'wiki-first', i.runtime?.mode ?? 'data', i.type, oneLine(i.description, 60)]),
    ]).join('\n'),
  )
  const notes = [
    catalog.archived.length > 0 ? `${catalog.archived.length} archived (--include-archived)` : '',
    catalog.rejected > 0 ? `${catalog.rejected} not loaded` : '',
    catalog.shadowed.length > 0 ? `${catalog.shadowed.length} shadowed` : '',
  ].filter(Boolean)
  if (notes.length > 0) io.err(`${notes.join(', ')}: see \`knowhub packs doctor\``)
}
