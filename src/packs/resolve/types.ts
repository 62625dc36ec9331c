/**
 * The shapes of the runtime context resolver (seed 001): its options, the
 * audit record of each pack, and what was selected, omitted and excluded.
 * The working records shared by the resolver's steps (candidates, plans)
 * are here too, unexported from the package.
 */
import type { Logger } from '../../core/logger.js'
import type { Embedder } from '../../embed/embedder.js'
import type { IndexedSection, PackIndex, PackIndexCache } from '../pack-index/pack-index.js'
import type { ResourceKind } from '../files/resources.js'
import type { GroundingPolicy, LoadedPack, PackGrounding, PackProfile, PackStatus, PackTrust, RuntimeMode } from '../schema.js'
import type { ResolveIntent } from './intent.js'

/**
 * Default token budget.
 * @example
 * await resolveContext({ task, packs, budget: DEFAULT_BUDGET / 2 })
 */
export const DEFAULT_BUDGET = 8000

/**
 * How the budget is shared when persona and data packs resolve together
 * (lime's split): persona packs first, up to `persona` of the budget, then
 * each data pack up to an equal share of what is left, then whatever still
 * fits, in rank order.
 * @example
 * await resolveContext({ task, packs, shares: { persona: 0.3 } })
 */
export interface BudgetShares {
  /** Most of the content budget (after the wrappers' own cost) persona packs take before data packs had their turn (0…1, default 0.4; 1: no sharing). */
  persona?: number
}

/**
 * Default share of the budget persona packs take before data packs.
 * @example
 * await resolveContext({ task, packs, shares: { persona: DEFAULT_PERSONA_SHARE / 2 } })
 */
export const DEFAULT_PERSONA_SHARE = 0.4

/** Options of {@link resolveContext}. */
export interface ResolveOptions {
  /** The user's task. */
  task: string
  /** The selected (activated) packs. */
  packs: readonly LoadedPack[]
  /** Token budget for the whole wrapped context (default 8000). Never exceeded. */
  budget?: number
  /** Citation policy; default from each pack's `grounding` (else recommended). `off` is read as `none`. */
  grounding?: GroundingPolicy
  /** Task intent; detected from the task text when absent. */
  intent?: ResolveIntent
  /** Disputed and draft packs confirmed by the user: `true` for all, or their names. */
  confirmed?: boolean | readonly string[]
  /** Blended into relevance when given (the knowledge search's embedder). */
  embedder?: Embedder
  /** How persona and data packs share the budget (persona first, data guaranteed a share). */
  shares?: BudgetShares
  /** Reuse indexes across calls (a session keeps one). */
  cache?: PackIndexCache
  logger?: Logger
}

/** One compile warning of the audit record. */
export interface CompileWarning {
  severity: 'info' | 'warning' | 'error'
  path: string
  message: string
  code?: string
}

/** The audit record of seed 001 for one pack. */
export interface ResolutionAudit {
  selected_documents: string[]
  selected_files: string[]
  source_anchors: string[]
  compile_warnings: CompileWarning[]
  missing: string[]
  recommendation?: 'ask_user_or_mark_unknown'
}

/** Why a piece was considered. */
export type PieceReason = 'persona' | 'runtime' | 'context-map' | 'core' | 'fallback' | 'evidence' | 'ontology' | 'answers'

/** A section that made it into the context. */
export interface SelectedPiece {
  path: string
  heading: string
  headingPath: string[]
  kind: ResourceKind
  line: number
  part: number
  tokens: number
  score: number
  reason: PieceReason
  /** sha256 of the file the section came from. */
  fileHash: string
}

/** The resolution of one pack: its audit record plus what was selected. */
export interface PackResolution extends ResolutionAudit {
  pack: string
  version?: string
  status: PackStatus
  trust: PackTrust
  profile: PackProfile
  runtime_mode: RuntimeMode
  /** The citation policy applied, in the standard's words (`none`, never `off`). */
  grounding: PackGrounding
  /** How the resolver chose between the preferred views and the fallback. */
  decision: PlanDecision
  /** Position of this pack's wrapper in the context (0-based); absent when nothing was selected. */
  wrapper_order?: number
  /** Selected files without a source anchor (grounding required or recommended). */
  citation_gaps: string[]
  pieces: SelectedPiece[]
  /** Tokens of this pack's wrapper. */
  tokens: number
}

/**
 * Why a candidate section was left out:
 * - `budget`: it was measured (counted, or estimated at more than what was left) and did not fit,
 *   it was dropped when the exact count of the joined context came out over budget, or the
 *   budget was used up (fewer than 12 tokens left) before it was reached;
 * - `count_limit`: never tried: the resolver had counted the tokens of 80 pieces in this call;
 * - `miss_limit`: never tried: 40 pieces in a row had not fitted, so the resolver stopped;
 * - `duplicate`: its text is already in the context (a split and the document section it was cut from).
 */
export type OmittedReason = 'budget' | 'count_limit' | 'miss_limit' | 'duplicate'

/** A candidate section (relevant, a core view, or a persona section) that is not in the context. */
export interface OmittedPiece {
  pack: string
  path: string
  heading: string
  score: number
  /** Why it was considered (`core` for briefing/facts/boundaries views, `persona`, …). */
  role: PieceReason
  /** Counted tokens, when the piece was counted. */
  tokens?: number
  reason: OmittedReason
}

/**
 * A selected pack that gets no wrapper: disputed and not confirmed
 * (`confirmation_required`), nothing of it fit the budget (`budget`), or no
 * section of it matched the task (`no_match`).
 */
export interface ExcludedPack {
  pack: string
  code: 'confirmation_required' | 'budget' | 'no_match'
  message: string
}

/** Everything the resolver decided. */
export interface ResolveResult {
  task: string
  intent: ResolveIntent
  budget: number
  /** Tokens of `context`, counted with the real tokenizer; ≤ budget. */
  tokens: number
  /** The wrapped context: persona wrappers first, then data wrappers. */
  context: string
  wrapper_order: string[]
  packs: PackResolution[]
  excluded: ExcludedPack[]
  /** Every candidate section left out, with why (best first, at most 200 listed). */
  omitted: OmittedPiece[]
  /** Number of candidate sections left out (all of them, listed or not). */
  omitted_count: number
  /** `omitted_count` by reason. */
  omitted_reasons: Partial<Record<OmittedReason, number>>
  /** Facts the task needs that no selected text supports (see `missing_basis`). */
  missing: string[]
  /** How `missing` was decided. */
  missing_basis: string
  recommendation?: 'ask_user_or_mark_unknown'
}

/** A section the resolver considers for one pack, with its rank inputs. */
export interface Candidate {
  packIndex: number
  section: IndexedSection
  score: number
  /** Score divided by the pack's best, for merging packs (the embedder blends into it). */
  norm: number
  /** Rank group: 0 persona, 1 runtime/context map (and fallback sections that answer more), 2 core views, 3 fallback, 4 evidence. */
  group: number
  reason: PieceReason
  /** Share (0…1) of the task's concepts the section has. */
  coverage: number
  /** Order within the persona group (one section of each persona kind before a second of any). */
  rank: number
}

/**
 * How the resolver decided between a pack's preferred views and its fallback
 * (seed 001 rule 4), at the level of facts: `none` (the preferred views
 * answer the task), `facts` (fallback sections that cover more of the task
 * were added), `forced` (no preferred views), `detail` (a detail or evidence
 * task reads the fallback tier).
 */
export interface PlanDecision {
  fallback: 'none' | 'facts' | 'forced' | 'detail'
  /** Best share of the task's concepts one preferred view covers. */
  preferred_coverage: number
  /** Best share one fallback section covers. */
  fallback_coverage: number
  /** Task concepts no preferred view has. */
  uncovered: string[]
}

/** What the resolver planned for one pack before the budget: candidates, warnings, missing facts. */
export interface PackPlan {
  pack: LoadedPack
  index: PackIndex
  grounding: PackGrounding
  candidates: Candidate[]
  warnings: CompileWarning[]
  missing: string[]
  /** Task terms no section of this pack has. */
  uncovered: Set<string>
  decision: PlanDecision
}

/** A candidate that made it into the context, with its counted tokens. */
export interface Chosen {
  candidate: Candidate
  tokens: number
}
