/**
 * The audit record of seed 001 for each resolved pack: selected documents and
 * files, source anchors, compile warnings (evidence, index, compile run,
 * citation gaps), missing facts; and the packs that got no wrapper, with why.
 */
import { posix } from 'node:path'
import type { CheckedClaim } from '../evidence/evidence.js'
import { normalisePackPath } from '../files/paths.js'
import type { Fill, Omissions } from './budget.js'
import { layerWarnings } from './layers.js'
import { toWarning } from './plan.js'
import type { Chosen, CompileWarning, ExcludedPack, PackPlan, PackResolution, SelectedPiece } from './types.js'

/** The selected pieces of a pack as the audit reports them. */
function selectedPieces(plan: PackPlan, chosen: readonly Chosen[]): SelectedPiece[] {
  return chosen.map(({ candidate, tokens }) => ({
    path: candidate.section.path,
    heading: candidate.section.heading,
    headingPath: candidate.section.headingPath,
    kind: candidate.section.kind,
    line: candidate.section.line,
    part: candidate.section.part,
    tokens,
    score: Number(candidate.score.toFixed(4)),
    reason: candidate.reason,
    fileHash: candidate.section.layer?.fileHash ?? plan.index.files.get(candidate.section.path)?.hash ?? '',
  }))
}

/** The document a `compiled/splits/<key>/…` view was split from, when the pack has it. */
function splitDocumentOf(path: string, plan: PackPlan): string | undefined {
  const match = /^compiled\/splits\/([^/]+)\//u.exec(path)
  if (!match) return undefined
  const key = match[1]
  for (const file of plan.index.files.values()) {
    if ((file.kind === 'primary' || file.kind === 'document') && posix.basename(file.path).replace(/\.[^.]+$/u, '') === key) return file.path
  }
  return undefined
}

/** Documents behind the selected files: selected documents/ files and the documents splits came from. */
function selectedDocuments(plan: PackPlan, files: readonly string[]): string[] {
  const documents = new Set<string>()
  for (const file of files) {
    const kind = plan.index.files.get(file)?.kind
    if (kind === 'primary' || kind === 'document') documents.add(file)
    const fromSplit = splitDocumentOf(file, plan)
    if (fromSplit) documents.add(fromSplit)
  }
  return [...documents].sort()
}

/** What the pack's evidence says about the selected files: anchors, the files they support, warnings. */
interface EvidenceFindings {
  anchors: Set<string>
  /** Selected files some usable source anchor supports. */
  anchored: Set<string>
  warnings: CompileWarning[]
}

/** The warning a claim's status calls for, if any. */
function claimStatusWarning(claim: CheckedClaim, path: string): CompileWarning | undefined {
  const id = claim.claim_id
  if (claim.status === 'stale') return { severity: 'warning', path, code: 'claim_stale', message: `Claim "${id}" is stale: ${claim.text}` }
  if (claim.status === 'disputed') return { severity: 'warning', path, code: 'claim_disputed', message: `Claim "${id}" is disputed: ${claim.text}` }
  if (claim.status === 'missing') return { severity: 'warning', path, code: 'claim_missing', message: `Claim "${id}" has no supporting fact: ${claim.text}` }
  if (claim.status === 'source-required' || claim.status === 'inferred') {
    return {
      severity: claim.status === 'inferred' ? 'info' : 'warning',
      path,
      code: 'claim_unreviewed',
      message: `Claim "${id}" is ${claim.status}, not confirmed by a reviewed source: ${claim.text}`,
    }
  }
  return undefined
}

/**
 * Source-map claims and document sections that concern the selected files:
 * their anchors (unless grounding is off), and warnings for claims that are
 * stale, disputed, missing or unconfirmed, or whose source is missing or refused.
 */
function evidenceFindings(plan: PackPlan, files: readonly string[]): EvidenceFindings {
  const found: EvidenceFindings = { anchors: new Set(), anchored: new Set(), warnings: [] }
  const relevant = (paths: readonly string[] | undefined, document: string | undefined): string[] =>
    files.filter((f) => (paths ?? []).includes(f) || document === f)
  for (const claim of plan.index.evidence.claims) {
    const hits = relevant(claim.compiled_into, claim.document)
    if (hits.length === 0) continue
    if (plan.grounding !== 'none' && claim.sourceState === 'ok') {
      found.anchors.add(claim.anchor)
      for (const hit of hits) found.anchored.add(hit)
    }
    const where = hits[0] ?? ''
    const status = claimStatusWarning(claim, where)
    if (status) found.warnings.push(status)
    if (claim.sourceState !== 'ok')
      found.warnings.push({
        severity: 'warning',
        path: where,
        code: 'source_missing',
        message: `Claim "${claim.claim_id}" cites ${claim.source.path}, which is ${claim.sourceState === 'missing' ? 'missing' : 'refused (outside the pack)'}.`,
      })
  }
  for (const section of plan.index.evidence.sections) {
    const hits = relevant(section.compiled_into, section.document)
    if (hits.length === 0 || plan.grounding === 'none') continue
    for (const anchor of section.source_anchors ?? []) {
      const checked = normalisePackPath(anchor.split('#')[0] ?? '')
      if (checked.ok) {
        found.anchors.add(anchor)
        for (const hit of hits) found.anchored.add(hit)
      }
    }
  }
  return found
}

/** Problems met while indexing (a too-large file only when it was selected), and views built by a compile run that did not pass. */
function indexAndRunWarnings(plan: PackPlan, files: readonly string[]): CompileWarning[] {
  const warnings: CompileWarning[] = []
  for (const issue of plan.index.issues) {
    if (issue.code === 'file_too_large' && issue.path && !files.includes(issue.path)) continue
    warnings.push(toWarning(issue, 'indexes/source-map.json'))
  }
  const run = plan.index.evidence.compileRun
  if (run && run.status !== 'passed') {
    for (const file of files) {
      if (run.outputs.includes(file))
        warnings.push({
          severity: 'warning',
          path: file,
          code: 'compile_run',
          message: `This runtime view depends on a ${run.status} compile run (${run.runId}).`,
        })
    }
  }
  return warnings
}

/** Selected files no source anchor supports (grounding required or recommended), with their warnings. */
function citationGaps(plan: PackPlan, files: readonly string[], anchored: ReadonlySet<string>): { gaps: string[]; warnings: CompileWarning[] } {
  const gaps = plan.grounding === 'none' ? [] : files.filter((f) => !anchored.has(f))
  if (gaps.length === 0) return { gaps, warnings: [] }
  const severity = plan.grounding === 'required' ? 'warning' : 'info'
  // No source map, and nothing else (a layer's evidence) anchors a selected file.
  const noMap = plan.index.evidence.claims.length === 0 && plan.index.evidence.sections.length === 0 && anchored.size === 0
  if (noMap && plan.grounding === 'required') {
    const message = 'Grounding is required but the pack has no source map; no selected file can be cited.'
    return { gaps, warnings: [{ severity, path: 'indexes/source-map.json', code: 'citation_gap', message }] }
  }
  return { gaps, warnings: gaps.map((gap) => ({ severity, path: gap, code: 'citation_gap', message: 'No source anchor supports this file.' })) }
}

/**
 * Codes of the warnings (not infos) that apply to a pack's selected files, for
 * its wrapper: status and trust, profile gaps, claims of the selected files,
 * index problems and compile runs.
 * @example
 * wrapperWarnings(plan, ['compiled/facts.md']) // ['unreviewed', 'claim_stale']
 */
export function wrapperWarnings(plan: PackPlan, files: readonly string[]): string[] {
  const warnings = [...plan.warnings, ...evidenceFindings(plan, files).warnings, ...indexAndRunWarnings(plan, files), ...layerWarnings(plan.candidates, files)]
  return [...new Set(warnings.filter((w) => w.severity !== 'info').map((w) => w.code ?? 'warning'))]
}

/**
 * The resolution of one pack: the audit record of seed 001 plus what was
 * selected. `order` is the position of its wrapper (-1: none);
 * `wrapperTokens` its counted tokens.
 * @example
 * const resolution = audit(plan, fill.chosen[0], 0, tokens)
 * resolution.source_anchors // ['sources/pricing.md#L3']
 */
export function audit(plan: PackPlan, chosen: readonly Chosen[], order: number, wrapperTokens: number): PackResolution {
  const item = plan.pack.item
  const pieces = selectedPieces(plan, chosen)
  const files = [...new Set(pieces.map((p) => p.path))]
  const evidence = evidenceFindings(plan, files)
  for (const piece of pieces) if (piece.kind === 'source') evidence.anchored.add(piece.path)
  // A layer subgraph cites the evidence of the facts it states (claims under a warning cite nothing).
  for (const { candidate } of chosen) {
    const layer = candidate.section.layer
    if (!layer || plan.grounding === 'none') continue
    for (const anchor of layer.anchors) evidence.anchors.add(anchor)
    if (layer.anchors.length > 0) evidence.anchored.add(candidate.section.path)
  }
  const gaps = citationGaps(plan, files, evidence.anchored)
  const warnings = [...plan.warnings, ...evidence.warnings, ...indexAndRunWarnings(plan, files), ...layerWarnings(plan.candidates, files), ...gaps.warnings]
  const missing = [...new Set(plan.missing)]
  return {
    pack: item.name,
    ...(item.version ? { version: item.version } : {}),
    status: item.status,
    trust: item.trust ?? 'unreviewed',
    profile: item.profile ?? 'wiki-first',
    runtime_mode: item.runtime?.mode ?? 'data',
    grounding: plan.grounding,
    decision: plan.decision,
    ...(order >= 0 ? { wrapper_order: order } : {}),
    selected_documents: selectedDocuments(plan, files),
    selected_files: files,
    source_anchors: [...evidence.anchors].sort(),
    compile_warnings: warnings,
    missing,
    ...(missing.length > 0 ? { recommendation: 'ask_user_or_mark_unknown' as const } : {}),
    citation_gaps: gaps.gaps,
    pieces,
    tokens: wrapperTokens,
  }
}

/**
 * The selected packs that got no wrapper, with why: `no_match` (no candidate)
 * or `budget` (nothing of it fit). Never dropped silently.
 * @example
 * excluded.push(...unwrappedPacks(plans, fill, omitted, 8000))
 */
export function unwrappedPacks(plans: readonly PackPlan[], fill: Pick<Fill, 'chosen' | 'overhead'>, omitted: Omissions, budget: number): ExcludedPack[] {
  const excluded: ExcludedPack[] = []
  plans.forEach((plan, i) => {
    if ((fill.chosen[i] ?? []).length > 0) return
    const name = plan.pack.item.name
    if (plan.candidates.length === 0) {
      excluded.push({ pack: name, code: 'no_match', message: `No section of pack "${name}" matches the task; it got no wrapper.` })
      return
    }
    const left = omitted.all.filter((o) => o.candidate.packIndex === i).length
    excluded.push({
      pack: name,
      code: 'budget',
      message: `Nothing of pack "${name}" fit the ${budget}-token budget (its wrapper alone takes ${fill.overhead[i] ?? 0} tokens); ${left} candidate sections left out. Raise the budget or resolve it alone.`,
    })
  })
  return excluded
}
