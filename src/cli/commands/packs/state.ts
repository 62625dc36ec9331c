/** `knowhub packs enable|disable|approve NAME`: the packs' persisted choices (state file). */
import { printJson } from '../../output.js'
import type { PacksAction } from './action.js'

/**
 * Enables a pack (by name or path).
 * @example
 * await enableAction({ packs, opts: {}, args: ['acme-product-brief'], io })
 */
export async function enableAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const result = await packs.setEnabled(name, true)
  if (opts.json) return printJson(io, result)
  io.out(`enabled ${result.name}`)
}

/**
 * Disables a pack (by name or path): out of the catalog and task matching, refused by name.
 * @example
 * await disableAction({ packs, opts: {}, args: ['acme-product-brief'], io })
 */
export async function disableAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const result = await packs.setEnabled(name, false)
  if (opts.json) return printJson(io, result)
  io.out(`disabled ${result.name}`)
}

/**
 * Approves a project pack's current content (trust gate), recorded with its digest.
 * @example
 * await approveAction({ packs, opts: {}, args: ['acme-product-brief'], io })
 */
export async function approveAction({ packs, opts, args: [name = ''], io }: PacksAction): Promise<void> {
  const result = await packs.approve(name)
  if (opts.json) return printJson(io, result)
  io.out(`approved ${result.name} (${result.digest})`)
}
