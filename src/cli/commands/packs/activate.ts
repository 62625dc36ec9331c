/** `knowhub packs activate NAME [--mode tool|file] [--confirm]`. */
import { formatDiagnostic } from '../../../packs/vocabulary.js'
import { printJson } from '../../output.js'
import { severityMark, type PacksAction } from './action.js'

/**
 * Prints the wrapped guide (tool mode) or the KNOWLEDGE.md location (file mode); warnings on stderr.
 * @example
 * await activateAction({ packs, opts: { mode: 'tool' }, args: ['acme-product-brief'], io })
 */
export async function activateAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const activation = await packs.activate(name, { mode: opts.mode as 'tool' | 'file', confirm: opts.confirm === true })
  if (opts.json) return printJson(io, activation)
  io.out(activation.content)
  for (const w of activation.warnings) io.err(`${severityMark(w)} ${formatDiagnostic(w)}`)
}
