/** `knowhub packs init NAME [--dir DIR] [--type TYPE] [--language TAG]`: scaffolds a document-first pack that `packs validate` passes, by default where `packs list` finds it. */
import { dirname, relative } from 'node:path'
import { printJson } from '../../output.js'
import type { PacksAction } from './action.js'

/**
 * Writes `<dir>/<name>/` (KNOWLEDGE.md, the primary document, one split) and says what to do next.
 * @example
 * await initAction({ packs, opts: { dir: '.agents/knowledge', type: 'brand-product' }, args: ['acme-brief'], io })
 */
export async function initAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const created = await packs.init({
    name,
    ...(typeof opts.dir === 'string' ? { dir: opts.dir } : {}),
    ...(typeof opts.type === 'string' ? { type: opts.type } : {}),
    ...(typeof opts.language === 'string' ? { language: opts.language } : {}),
  })
  if (opts.json) return printJson(io, created)
  const shown = relative(process.cwd(), created.root) || '.'
  io.out(`Created pack ${created.name} (${created.type}, document-first, status draft) in ${shown}:`)
  for (const file of created.files) io.out(`  ${file}`)
  io.out(`Replace the placeholder text in each file, then check it: knowhub packs validate ${shown}`)
  if (created.discovered === false) {
    const parent = relative(process.cwd(), dirname(created.root)) || '.'
    io.out(`Note: knowhub packs list does not look in ${parent}; move the pack to .agents/knowledge/ or list it with --path ${parent}.`)
  }
}
