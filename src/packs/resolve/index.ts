/**
 * Tier 3: the runtime context resolver (seed 001). For a task and the selected
 * packs it plans each pack by profile and runtime mode (plan.ts), ranks the
 * candidates across packs, optionally blending in an embedder (rank.ts), fills
 * a token budget it never exceeds and wraps each pack as data (budget.ts), and
 * returns the audit record: selected documents and files, source anchors,
 * compile warnings, missing facts (audit.ts, missing.ts).
 */
import { z } from 'zod'
import { noopLogger } from '../../core/logger.js'
import { parseWith } from '../../core/validate.js'
import { queryTerms } from '../pack-index/lexical.js'
import { PackIndexCache, type PackIndex } from '../pack-index/pack-index.js'
import { GroundingPolicy, type LoadedPack } from '../schema.js'
import { countTokens } from '../../core/text/token-count.js'
import { audit, unwrappedPacks, wrapperWarnings } from './audit.js'
import { fillBudget, fitExactly, omissions, type BuiltContext } from './budget.js'
import { ResolveIntent, detectIntent } from './intent.js'
import { MISSING_BASIS, missingFacts } from './missing.js'
import { packGrounding, planPack } from './plan.js'
import { blendEmbeddings, rankCandidates } from './rank.js'
import { taskConcepts } from './terms.js'
import { DEFAULT_BUDGET, type Chosen, type ExcludedPack, type PackPlan, type PackResolution, type ResolveOptions, type ResolveResult } from './types.js'

export { ResolveIntent, detectIntent } from './intent.js'
export { contextMapPaths } from './plan.js'
export { DEFAULT_BUDGET, DEFAULT_PERSONA_SHARE } from './types.js'
export type {
  BudgetShares,
  CompileWarning,
  ExcludedPack,
  OmittedPiece,
  OmittedReason,
  PackResolution,
  PlanDecision,
  PieceReason,
  ResolutionAudit,
  ResolveOptions,
  ResolveResult,
  SelectedPiece,
} from './types.js'

const ResolveInput = z.object({
  task: z.string().min(1, 'the task is empty').max(100_000),
  budget: z.number().int().min(1).max(2_000_000).default(DEFAULT_BUDGET),
  grounding: GroundingPolicy.optional(),
  intent: ResolveIntent.optional(),
})

/**
 * The packs the resolver may use, each real root once; disputed and draft
 * packs only when confirmed (`true` for all, or by name), the others excluded
 * with `confirmation_required`.
 */
function admitPacks(packs: readonly LoadedPack[], confirmed: ResolveOptions['confirmed']): { usable: LoadedPack[]; excluded: ExcludedPack[] } {
  const usable: LoadedPack[] = []
  const excluded: ExcludedPack[] = []
  const seen = new Set<string>()
  for (const pack of packs) {
    if (seen.has(pack.realRoot)) continue
    seen.add(pack.realRoot)
    const isConfirmed = confirmed === true || (Array.isArray(confirmed) && confirmed.includes(pack.item.name))
    // Status rules: disputed packs are confirmed before use, and so are drafts (ask before use).
    if ((pack.item.status === 'disputed' || pack.item.status === 'draft') && !isConfirmed) {
      excluded.push({
        pack: pack.item.name,
        code: 'confirmation_required',
        message: `Pack "${pack.item.name}" is ${pack.item.status === 'draft' ? 'a draft' : 'disputed'}; it is used only after explicit confirmation.`,
      })
      continue
    }
    usable.push(pack)
  }
  return { usable, excluded }
}

/** Each plan's audit, with its wrapper position and tokens (the whole context when there is one wrapper, else its own count). */
function resolutions(plans: readonly PackPlan[], chosen: readonly (readonly Chosen[])[], built: BuiltContext, tokens: number): PackResolution[] {
  const wrapperTokens = (text: string | undefined): number => (text === undefined ? 0 : built.wrappers.length === 1 ? tokens : countTokens(text))
  return plans.map((plan, i) => {
    const text = built.wrappers.find((w) => w.plan === i)?.text
    return audit(
      plan,
      chosen[i] ?? [],
      built.wrappers.findIndex((w) => w.plan === i),
      wrapperTokens(text),
    )
  })
}

/**
 * Resolves the runtime context for a task over the selected packs.
 * @example
 * const result = await resolveContext({ task: 'What is the enterprise price?', packs: [pack], budget: 8000 })
 * prompt += result.context // <knowledge_pack name="…" …>…</knowledge_pack>
 * result.packs[0].compile_warnings // stale, disputed, missing, unreviewed…
 */
export async function resolveContext(options: ResolveOptions): Promise<ResolveResult> {
  const input = parseWith(ResolveInput, { task: options.task, budget: options.budget, grounding: options.grounding, intent: options.intent }, 'resolve request')
  const logger = options.logger ?? noopLogger
  const cache = options.cache ?? new PackIndexCache({ logger })
  const intent = input.intent ?? detectIntent(input.task)
  const terms = queryTerms(input.task)
  const { usable, excluded } = admitPacks(options.packs, options.confirmed)

  const indexes = await Promise.all(usable.map((pack) => cache.get(pack)))
  const concepts = taskConcepts(terms)
  const plans = usable.map((pack, i) => planPack(pack, i, indexes[i] as PackIndex, terms, concepts, intent, packGrounding(pack, input.grounding)))
  if (options.embedder) await blendEmbeddings(plans, input.task, options.embedder, logger)
  const ranked = rankCandidates(plans)
  const fill = fillBudget(ranked, plans, input.budget, options.shares)
  const { built, tokens } = fitExactly(plans, fill.chosen, ranked, input.budget, (i, files) => wrapperWarnings(plans[i] as PackPlan, files))
  const omitted = omissions(ranked, plans, fill)
  excluded.push(...unwrappedPacks(plans, fill, omitted, input.budget))
  const packs = resolutions(plans, fill.chosen, built, tokens)
  const missing = missingFacts(input.task, plans, fill.chosen, packs)
  logger.debug('packs.resolve.done', { packs: plans.length, tokens, budget: input.budget, omitted: omitted.all.length })

  return {
    task: input.task,
    intent,
    budget: input.budget,
    tokens,
    context: built.context,
    wrapper_order: built.wrappers.map((w) => w.name),
    packs,
    excluded,
    omitted: omitted.listed,
    omitted_count: omitted.all.length,
    omitted_reasons: omitted.reasons,
    missing,
    missing_basis: MISSING_BASIS,
    ...(missing.length > 0 ? { recommendation: 'ask_user_or_mark_unknown' as const } : {}),
  }
}
