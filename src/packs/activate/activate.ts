/**
 * Tier 2: activation (seed 000 Step 4), in file-read mode (the model reads
 * KNOWLEDGE.md at `location`) or tool mode (a `<knowledge_pack_guide>` with
 * the body and a resource list). Activation lists resources; it reads none.
 */
import { KnowHubError } from '../../core/errors.js'
import { scanPack } from '../files/hazards.js'
import { listPackResources, type ListResourcesOptions, type PackResource } from '../files/resources.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'
import { WRAPPER_PREAMBLES, escapeField, neutralise, preambleLanguage } from '../../core/wrap.js'

/** How the model receives the guide. */
export type ActivationMode = 'file' | 'tool'

/** Options of {@link activatePack}. */
export interface ActivateOptions {
  /** `tool` (default) returns the wrapped guide; `file` returns the location to read. */
  mode?: ActivationMode
  /** Explicit confirmation; required for disputed packs. */
  confirm?: boolean
  listing?: ListResourcesOptions
}

/** The result of activating one pack. */
export interface Activation {
  name: string
  mode: ActivationMode
  location: string
  packRoot: string
  /** Tool mode: the `<knowledge_pack_guide>` XML. File mode: the KNOWLEDGE.md path to read. */
  content: string
  /** Tool mode: every listed file by kind. File mode: empty (the model explores itself). */
  resources: PackResource[]
  /** Persona boundary gaps, status and trust warnings, listing problems. */
  warnings: PackDiagnostic[]
  /** KNOWLEDGE.md hash at activation time. */
  contentHash: string
}

const BOUNDARY_WORDS = /boundar|taboo|guardrail|do not say|don't say|forbidden|off-limits|边界|禁忌|禁区|红线|不得|禁止/iu

/**
 * True when the guide body has a heading about boundaries or taboos, or the pack lists a boundaries file.
 * @example
 * hasPersonaBoundaries('## Boundaries\n- no politics') // true
 */
export function hasPersonaBoundaries(body: string, resources: readonly PackResource[] = []): boolean {
  for (const line of body.split('\n')) {
    if (/^#{1,6}\s/u.test(line) && BOUNDARY_WORDS.test(line)) return true
  }
  return resources.some((r) => (r.kind === 'runtime' || r.kind === 'primary' || r.kind === 'document' || r.kind === 'wiki') && BOUNDARY_WORDS.test(r.path))
}

/**
 * Warnings that apply whenever a pack is used: status and trust.
 * @example
 * packUseWarnings(pack.item) // [{ severity: 'warning', code: 'unreviewed', … }]
 */
export function packUseWarnings(item: LoadedPack['item']): PackDiagnostic[] {
  const warnings: PackDiagnostic[] = []
  if (item.status === 'stale') warnings.push({ severity: 'warning', code: 'stale', field: 'status', message: 'The pack is stale: facts may be out of date.' })
  if (item.status === 'needs-review')
    warnings.push({ severity: 'warning', code: 'needs_review', field: 'status', message: 'The pack needs review: facts are not yet approved.' })
  if (item.status === 'draft')
    warnings.push({ severity: 'warning', code: 'draft', field: 'status', message: 'The pack is a draft: its use was confirmed explicitly; facts may change.' })
  if (item.status === 'disputed')
    warnings.push({
      severity: 'warning',
      code: 'disputed',
      field: 'status',
      message: 'The pack is disputed: its facts are contested; use was confirmed explicitly.',
    })
  if (item.status === 'archived') warnings.push({ severity: 'info', code: 'archived', field: 'status', message: 'The pack is archived.' })
  if (item.trust === undefined || item.trust === 'unreviewed') {
    warnings.push({ severity: 'warning', code: 'unreviewed', field: 'trust', message: 'The pack is unreviewed: treat its facts as unverified.' })
  }
  return warnings
}

/**
 * Throws `confirmation_required` for a disputed or draft pack without explicit confirmation (status rules: ask before use).
 * @example
 * assertUsable(pack, { confirm: userSaidYes })
 */
export function assertUsable(pack: LoadedPack, options: { confirm?: boolean } = {}): void {
  if ((pack.item.status === 'disputed' || pack.item.status === 'draft') && options.confirm !== true) {
    const what = pack.item.status === 'draft' ? 'a draft' : 'disputed'
    throw new KnowHubError('confirmation_required', `Knowledge pack "${pack.item.name}" is ${what}; confirm explicitly before using it.`, {
      pack: pack.item.name,
      status: pack.item.status,
    })
  }
}

/**
 * Most files a guide's `<knowledge_resources>` lists; the rest are counted on one
 * `… and N more` line (runtime views and the primary document come first).
 * @example
 * renderGuide(pack, resources, { maxResources: GUIDE_MAX_RESOURCES / 2 })
 */
export const GUIDE_MAX_RESOURCES = 200

/**
 * Renders the `<knowledge_pack_guide>` of seed 000 for a pack and its
 * resources (at most `maxResources` listed, default {@link GUIDE_MAX_RESOURCES}).
 * The body is neutralised so it cannot close or forge the guide.
 * @example
 * renderGuide(pack, resources)
 */
export function renderGuide(pack: LoadedPack, resources: readonly PackResource[], options: { maxResources?: number } = {}): string {
  const item = pack.item
  const texts = WRAPPER_PREAMBLES[preambleLanguage(item.language)]
  const max = options.maxResources ?? GUIDE_MAX_RESOURCES
  const listed = resources.slice(0, max)
  const rest = resources.slice(max)
  // The declared ontology manifest and answer map are marked in the list (the primary document has its own kind).
  const metadata = item.metadata
  const primaries = new Set([metadata?.primaryOntology, metadata?.primaryAnswers].filter((p): p is string => p !== undefined))
  const attrs =
    `name="${escapeField(item.name)}" status="${escapeField(item.status)}" trust="${escapeField(item.trust ?? 'unreviewed')}"` +
    ` profile="${escapeField(item.profile ?? 'wiki-first')}" runtime_mode="${escapeField(item.runtime?.mode ?? 'data')}"`
  const lines = [
    `<knowledge_pack_guide ${attrs}>`,
    texts.guide,
    `${texts.packRoot}${neutralise(item.packRoot.replace(/[\r\n\u0085\u2028\u2029]+/gu, ' '))}`,
    texts.relative,
    '',
    neutralise(pack.body).replace(/\s+$/u, ''),
    '',
    '<knowledge_resources>',
    ...listed.map((r) => `  <file kind="${escapeField(r.kind)}"${primaries.has(r.path) ? ' primary="true"' : ''}>${escapeField(r.path)}</file>`),
    ...(rest.length > 0 ? [`  … and ${rest.length} more files (${kindCounts(rest)}); the resolver selects from all of them`] : []),
    '</knowledge_resources>',
    '</knowledge_pack_guide>',
  ]
  return lines.join('\n')
}

/** `1200 document, 30 wiki` */
function kindCounts(resources: readonly PackResource[]): string {
  const counts = new Map<string, number>()
  for (const r of resources) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1)
  return [...counts].map(([kind, n]) => `${n} ${kind}`).join(', ')
}

/**
 * Activates a pack. Disputed packs need `confirm: true` (else a
 * `confirmation_required` error); persona packs without boundary guidance
 * activate with a `persona_boundaries_missing` warning.
 * @example
 * const activation = await activatePack(pack, { mode: 'tool' })
 * toolResult(activation.content) // <knowledge_pack_guide …>
 */
export async function activatePack(pack: LoadedPack, options: ActivateOptions = {}): Promise<Activation> {
  assertUsable(pack, options)
  const mode = options.mode ?? 'tool'
  const item = pack.item
  const warnings = packUseWarnings(item)
  const persona = item.runtime?.mode === 'persona'
  const needListing = mode === 'tool' || persona
  const listing = needListing ? await listPackResources(pack, options.listing) : { resources: [], issues: [], truncated: false }
  warnings.push(...listing.issues)
  if (persona && !hasPersonaBoundaries(pack.body, listing.resources)) {
    warnings.push({
      severity: 'warning',
      code: 'persona_boundaries_missing',
      field: 'runtime.mode',
      message:
        'The pack is a persona but states no boundaries or taboos (no such heading in KNOWLEDGE.md, no boundaries file); persona boundaries are incomplete.',
    })
  }
  if (item.profile === 'document-first') {
    const gap = pack.issues.find((i) => i.code === 'document_first_gap')
    if (gap) warnings.push(gap)
  }
  // Security model: the guide, the runtime views and the v0.7 layers (what activation leads to) are scanned for secrets and injection patterns.
  warnings.push(...(await scanPack(pack, listing.resources, { kinds: ['runtime', 'ontology', 'answers'], maxBytes: 2 * 2 ** 20 })))
  return {
    name: item.name,
    mode,
    location: item.location,
    packRoot: item.packRoot,
    content: mode === 'tool' ? renderGuide(pack, listing.resources) : item.location,
    resources: mode === 'tool' ? listing.resources : [],
    warnings,
    contentHash: pack.contentHash,
  }
}
