/**
 * Which discovered packs a caller may use now: disabled packs (persisted in
 * the state file) are out of the catalog and of task matching and refused by
 * name; with the trust gate on, project packs (they arrive with a repository)
 * show their metadata in the catalog but are refused for activation and
 * resolution until approved for their current digest (security model).
 */
import { KnowHubError } from '../../core/errors.js'
import type { DiscoveryResult } from '../discover/discover.js'
import type { LoadedPack, PackScope } from '../schema.js'
import type { PackStateFile } from './state.js'

/** A discovery result seen through the state file. */
export interface GatedPacks {
  /** The discovery result without the disabled packs (what the catalog and task matching see). */
  set: DiscoveryResult
  /** Names of disabled packs. */
  disabled: string[]
  /** Names of packs waiting for approval (metadata only until approved). */
  pending: string[]
  /** Every pack found, disabled ones included (to name them in errors). */
  all: DiscoveryResult
}

/** Options of the trust gate. */
export interface TrustGate {
  /** Scopes whose packs need approval before use (default: project). */
  scopes?: readonly PackScope[]
}

/**
 * True when a pack needs an approval it does not have (its scope is gated and
 * no approval matches its current digest).
 * @example
 * needsApproval(pack, state, { scopes: ['project'] })
 */
export function needsApproval(pack: LoadedPack, state: PackStateFile, gate: TrustGate | undefined): boolean {
  if (!gate) return false
  if (!(gate.scopes ?? ['project']).includes(pack.item.scope)) return false
  return state.approvals[pack.item.name]?.digest !== pack.contentHash
}

/**
 * The packs of a discovery result as the state file and trust gate allow them.
 * @example
 * const gated = gatePacks(found, await state.read(), { scopes: ['project'] })
 */
export function gatePacks(found: DiscoveryResult, state: PackStateFile, gate: TrustGate | undefined): GatedPacks {
  const disabled = new Set(state.disabled)
  const keep = (p: LoadedPack): boolean => !disabled.has(p.item.name)
  return {
    set: { ...found, packs: found.packs.filter(keep), archived: found.archived.filter(keep) },
    disabled: [...found.packs, ...found.archived].filter((p) => !keep(p)).map((p) => p.item.name),
    pending: found.packs.filter((p) => keep(p) && needsApproval(p, state, gate)).map((p) => p.item.name),
    all: found,
  }
}

/**
 * Throws unless the pack may enter model context: `forbidden` for a disabled
 * pack or one waiting for approval, with the command that lifts it.
 * @example
 * assertAllowed(pack, gated)
 */
export function assertAllowed(pack: LoadedPack, gated: GatedPacks): void {
  const name = pack.item.name
  if (gated.disabled.includes(name)) {
    throw new KnowHubError('forbidden', `Knowledge pack "${name}" is disabled; enable it first (knowhub packs enable ${name}).`, { pack: name, disabled: true })
  }
  if (gated.pending.includes(name)) {
    throw new KnowHubError(
      'forbidden',
      `Knowledge pack "${name}" comes from the project (${pack.item.location}) and is not approved for its current content; review it and run \`knowhub packs approve ${name}\`.`,
      { pack: name, approval: 'required', digest: pack.contentHash },
    )
  }
}
