/**
 * Fitting ranked candidates into a token budget the context never exceeds:
 * a greedy fill with cheap estimates (tokenising is the expensive step), the
 * wrapped context built per pack, trimmed until its exact token count fits,
 * and every candidate left out reported with why.
 *
 * Token counts of rendered sections are memoised in each pack's index
 * (`tokenCounts`, and `tokenRatio` for the estimate): a section never changes
 * while it is indexed, so the memo stays valid for the index's lifetime and
 * later calls skip tokenising.
 */
import type { IndexedSection, PackIndex } from '../pack-index/pack-index.js'
import type { RuntimeMode } from '../schema.js'
import { countTokens } from '../../core/text/token-count.js'
import { orderWrappers, wrapKnowledge, wrapperAttributes } from '../wrap/wrap.js'
import { readingOrder } from './rank.js'
import { DEFAULT_PERSONA_SHARE, type BudgetShares, type Candidate, type Chosen, type OmittedPiece, type OmittedReason, type PackPlan } from './types.js'

/** Most pieces tokenised per call. */
const MAX_COUNTS = 80
/** Pieces in a row that did not fit before the fill stops. */
const MAX_MISSES = 40
/** Fewer tokens left than this: the budget is used up. */
const MIN_PIECE_TOKENS = 12
/** Most omitted pieces listed in the result (all are counted). */
const MAX_OMITTED_LISTED = 200
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu

/** The token-count memo a pack index carries (see the file comment). */
type TokenMemo = Pick<PackIndex, 'tokenCounts' | 'tokenRatio'>

/**
 * A cheap token estimate that errs low, so that a piece it puts over the
 * remaining budget is skipped without tokenising it: the pack's own observed
 * characters per token plus 25 % once 2,000 tokens were counted, else 5
 * characters per token (CJK characters half a token).
 * @example
 * estimateTokens('hello world') // 2
 */
export function estimateTokens(text: string, ratio?: { chars: number; tokens: number }): number {
  if (ratio && ratio.tokens >= 2000) return Math.floor(text.length / ((ratio.chars / ratio.tokens) * 1.25))
  const cjk = text.match(CJK_CHAR)?.length ?? 0
  return Math.floor((text.length - cjk) / 5 + cjk * 0.5)
}

function pieceLabel(section: IndexedSection): string {
  const heading = section.headingPath.length > 0 ? ` § ${section.headingPath.join(' › ')}` : ''
  const part = section.part > 0 ? ` (part ${section.part})` : ''
  return `[${section.path}${heading}${part}]`
}

/**
 * A section as it appears in the context: `[path § heading › path (part n)]` and its text.
 * @example
 * renderPiece(section) // '[compiled/facts.md § Pricing]\nTeam: 29 USD'
 */
export function renderPiece(section: IndexedSection): string {
  return `${pieceLabel(section)}\n${section.text}`
}

/** Counts a rendered section (plus its joiner) and records the count in the pack's memo. */
function countPiece(memo: TokenMemo | undefined, section: IndexedSection, rendered: string): number {
  const tokens = countTokens(rendered) + 1
  if (memo) {
    memo.tokenCounts.set(section.id, tokens)
    memo.tokenRatio.chars += rendered.length
    memo.tokenRatio.tokens += tokens
  }
  return tokens
}

/** What the greedy fill decided. */
export interface Fill {
  /** Chosen pieces per plan, in rank order. */
  chosen: Chosen[][]
  /** Token counts of every candidate measured (chosen or not). */
  tried: Map<Candidate, number>
  /** Candidates never tried, with why (`count_limit`, `miss_limit`, or `budget` when it ran out). */
  untried: Map<Candidate, OmittedReason>
  /** Candidates whose text was already chosen (a split and its document section). */
  duplicates: Set<Candidate>
  /** Wrapper cost per plan (opening tag, preamble, closing tag) plus the joiner between wrappers. */
  overhead: number[]
}

/** One pass of the fill: which candidates it takes and the most tokens it may spend per pack (or in total). */
interface Pass {
  accept: (candidate: Candidate) => boolean
  /** Most tokens this pass may add, per pack (`perPack`) or in total. */
  cap?: number
  perPack?: boolean
  /** The final pass: stops early on the count, miss and budget limits. */
  final: boolean
}

/** The running state of a fill. */
interface FillState {
  used: number
  counts: number
  misses: number
  keys: Set<string>
}

/** The text of a section with headings, case, spacing and punctuation removed: equal keys are the same text. */
function textKey(section: IndexedSection): string | undefined {
  const key = section.text
    .replace(/^\s{0,3}#{1,6}[ \t].*$/gmu, '')
    .toLowerCase()
    .replace(/[\s\p{P}\p{S}]+/gu, '')
  return key.length >= 12 ? key : undefined
}

/**
 * The passes of a fill: persona packs up to their share, then data packs up
 * to an equal share each (when there are several packs), then everything in
 * rank order.
 */
function passesFor(plans: readonly PackPlan[], ranked: readonly Candidate[], budget: number, shares: BudgetShares, overhead: readonly number[]): Pass[] {
  const persona = (c: Candidate): boolean => plans[c.packIndex]?.pack.item.runtime?.mode === 'persona'
  const withCandidates = [...new Set(ranked.map((c) => c.packIndex))]
  const personaIndexes = withCandidates.filter((i) => plans[i]?.pack.item.runtime?.mode === 'persona')
  const personaPacks = personaIndexes.length
  const dataPacks = withCandidates.length - personaPacks
  const passes: Pass[] = []
  const share = Math.min(1, Math.max(0, shares.persona ?? DEFAULT_PERSONA_SHARE))
  // A share of 1: no sharing, everything in rank order (persona first).
  if (share >= 1) return [{ accept: () => true, final: true }]
  if (personaPacks > 0 && dataPacks > 0) {
    // The share is of the content: every wrapper's own cost is set aside first.
    const wrappers = withCandidates.reduce((sum, i) => sum + (overhead[i] ?? 0), 0)
    const personaWrappers = personaIndexes.reduce((sum, i) => sum + (overhead[i] ?? 0), 0)
    passes.push({ accept: persona, cap: Math.floor(Math.max(0, budget - wrappers) * share) + personaWrappers, final: false })
  }
  if (dataPacks > 1 || (dataPacks > 0 && personaPacks > 0)) passes.push({ accept: (c) => !persona(c), perPack: true, final: false })
  passes.push({ accept: () => true, final: true })
  return passes
}

/**
 * Fills the budget greedily in rank order, in passes that share it between
 * persona and data packs ({@link BudgetShares}). Only pieces that might fit
 * are tokenised (the estimate rather underestimates), at most 80 per call;
 * the last pass stops after 40 pieces in a row did not fit. A pack's first
 * piece also pays for its wrapper; a piece whose text is already chosen is
 * skipped as a duplicate. Counts are reused from and recorded in the pack indexes.
 * @example
 * const fill = fillBudget(rankCandidates(plans), plans, 8000)
 */
export function fillBudget(ranked: readonly Candidate[], plans: readonly PackPlan[], budget: number, shares: BudgetShares = {}): Fill {
  // The wrapper's own cost with the pack's standing warnings; each selected file adds its path to `selected_files` (paid by its first piece).
  const overhead = plans.map((plan) => {
    const warnings = [...new Set(plan.warnings.filter((w) => w.severity !== 'info').map((w) => w.code ?? 'warning'))]
    return countTokens(wrapKnowledge({ ...wrapperAttributes(plan.pack.item, plan.grounding), warnings, selected_files: ['x'] }, '')) + 2
  })
  const fill: Fill = { chosen: plans.map(() => []), tried: new Map(), untried: new Map(), duplicates: new Set(), overhead }
  const state: FillState = { used: 0, counts: 0, misses: 0, keys: new Set() }
  const chosen = new Set<Candidate>()
  for (const pass of passesFor(plans, ranked, budget, shares, overhead)) {
    const packs = new Set(ranked.filter(pass.accept).map((c) => c.packIndex)).size
    const cap = pass.perPack ? Math.floor((budget - state.used) / Math.max(1, packs)) : (pass.cap ?? budget)
    const spent = new Map<number, number>()
    state.misses = 0
    for (let at = 0; at < ranked.length; at++) {
      const candidate = ranked[at] as Candidate
      if (chosen.has(candidate) || fill.duplicates.has(candidate) || !pass.accept(candidate)) continue
      const key = pass.perPack ? candidate.packIndex : -1
      const room = Math.min(budget - state.used, cap - (spent.get(key) ?? 0))
      const outcome = tryPiece(fill, plans, candidate, room, state, pass.final)
      if (outcome === 'stop') {
        const reason: OmittedReason = state.misses >= MAX_MISSES ? 'miss_limit' : budget - state.used < MIN_PIECE_TOKENS ? 'budget' : 'count_limit'
        for (let rest = at; rest < ranked.length; rest++) {
          const c = ranked[rest] as Candidate
          if (!chosen.has(c) && !fill.duplicates.has(c) && !fill.tried.has(c)) fill.untried.set(c, reason)
        }
        return fill
      }
      if (typeof outcome === 'number') {
        chosen.add(candidate)
        spent.set(key, (spent.get(key) ?? 0) + outcome)
      }
    }
  }
  return fill
}

/**
 * Tries one candidate within `room` tokens: the tokens it took (chosen),
 * `miss` (it did not fit, or the count limit was reached in an early pass),
 * `dup` (its text is already chosen), or `stop` (the final pass hit a limit).
 */
function tryPiece(
  fill: Fill,
  plans: readonly PackPlan[],
  candidate: Candidate,
  room: number,
  state: FillState,
  final: boolean,
): number | 'miss' | 'dup' | 'stop' {
  const key = textKey(candidate.section)
  if (key !== undefined && state.keys.has(key)) {
    fill.duplicates.add(candidate)
    return 'dup'
  }
  if (final && (room < MIN_PIECE_TOKENS || state.misses >= MAX_MISSES)) return 'stop'
  const list = fill.chosen[candidate.packIndex] as Chosen[]
  const path = candidate.section.path
  const pathCost = list.some((c) => c.candidate.section.path === path) ? 0 : countTokens(path) + 1
  const wrapperCost = (list.length === 0 ? (fill.overhead[candidate.packIndex] ?? 0) : 0) + pathCost
  const remaining = room - wrapperCost
  // A layer subgraph is built per task: its count is never memoised.
  const memo = candidate.section.layer ? undefined : plans[candidate.packIndex]?.index
  let tokens = memo?.tokenCounts.get(candidate.section.id)
  if (tokens === undefined) {
    if (state.counts >= MAX_COUNTS) return final ? 'stop' : 'miss'
    const rendered = renderPiece(candidate.section)
    if (remaining < MIN_PIECE_TOKENS || estimateTokens(rendered, plans[candidate.packIndex]?.index.tokenRatio) > remaining) {
      state.misses++
      return 'miss'
    }
    state.counts++
    tokens = countPiece(memo, candidate.section, rendered)
  }
  fill.tried.set(candidate, tokens)
  if (tokens > remaining) {
    state.misses++
    return 'miss'
  }
  state.misses = 0
  state.used += tokens + wrapperCost
  if (key !== undefined) state.keys.add(key)
  list.push({ candidate, tokens })
  return tokens + wrapperCost
}

/** The warning codes a pack's wrapper carries for its selected files (plan index, files). */
export type Annotate = (plan: number, files: readonly string[]) => string[]

/** One pack's wrapper in the context. */
export interface BuiltWrapper {
  name: string
  mode: RuntimeMode
  text: string
  /** Index of the plan it wraps. */
  plan: number
}

/** The wrapped context and its wrappers, persona first. */
export interface BuiltContext {
  context: string
  wrappers: BuiltWrapper[]
}

/**
 * Wraps each pack's chosen pieces (in reading order) and joins the wrappers,
 * persona wrappers first. Packs with nothing chosen get no wrapper.
 * @example
 * const { context, wrappers } = buildContext(plans, fill.chosen)
 */
export function buildContext(plans: readonly PackPlan[], chosen: readonly (readonly Chosen[])[], annotate?: Annotate): BuiltContext {
  const wrappers: BuiltWrapper[] = []
  plans.forEach((plan, i) => {
    const pieces = readingOrder((chosen[i] ?? []).map((c) => c.candidate))
    if (pieces.length === 0) return
    const content = pieces.map((c) => renderPiece(c.section)).join('\n\n')
    const files = [...new Set(pieces.map((c) => c.section.path))]
    const warnings = annotate?.(i, files) ?? []
    wrappers.push({
      name: plan.pack.item.name,
      mode: plan.pack.item.runtime?.mode ?? 'data',
      text: wrapKnowledge({ ...wrapperAttributes(plan.pack.item, plan.grounding), selected_files: files, warnings }, content),
      plan: i,
    })
  })
  const ordered = orderWrappers(wrappers)
  return { context: ordered.map((w) => w.text).join('\n\n'), wrappers: ordered }
}

/**
 * Builds the context and, while its exact token count is over the budget (BPE
 * merges at the joins), drops the lowest-ranked chosen piece (from `chosen`,
 * in place) and builds again.
 * @example
 * const { built, tokens } = fitExactly(plans, fill.chosen, ranked, 8000)
 */
export function fitExactly(
  plans: readonly PackPlan[],
  chosen: Chosen[][],
  ranked: readonly Candidate[],
  budget: number,
  annotate?: Annotate,
): { built: BuiltContext; tokens: number } {
  let built = buildContext(plans, chosen, annotate)
  let tokens = countTokens(built.context)
  while (tokens > budget) {
    let worst: { list: Chosen[]; at: number; rank: number } | undefined
    for (const list of chosen) {
      list.forEach((entry, at) => {
        const rank = ranked.indexOf(entry.candidate)
        if (!worst || rank > worst.rank) worst = { list, at, rank }
      })
    }
    if (!worst) break
    const dropped = worst as { list: Chosen[]; at: number; rank: number }
    dropped.list.splice(dropped.at, 1)
    built = buildContext(plans, chosen, annotate)
    tokens = countTokens(built.context)
  }
  return { built, tokens }
}

/** Every candidate left out, with why. */
export interface Omissions {
  /** All of them, best first. */
  all: { candidate: Candidate; reason: OmittedReason }[]
  /** The first 200, as reported. */
  listed: OmittedPiece[]
  reasons: Partial<Record<OmittedReason, number>>
}

/**
 * Every candidate not in the context, with why: duplicates of chosen text
 * (`duplicate`), candidates never tried after an early stop (`count_limit`,
 * `miss_limit`, or `budget` when it ran out); the others did not fit (`budget`).
 * @example
 * const omitted = omissions(ranked, plans, fill)
 */
export function omissions(
  ranked: readonly Candidate[],
  plans: readonly PackPlan[],
  fill: Pick<Fill, 'chosen' | 'tried' | 'untried' | 'duplicates'>,
): Omissions {
  const selected = new Set(fill.chosen.flatMap((list) => list.map((c) => c.candidate)))
  const all: Omissions['all'] = []
  for (const candidate of ranked) {
    if (selected.has(candidate)) continue
    all.push({ candidate, reason: fill.duplicates.has(candidate) ? 'duplicate' : (fill.untried.get(candidate) ?? 'budget') })
  }
  const reasons: Partial<Record<OmittedReason, number>> = {}
  for (const { reason } of all) reasons[reason] = (reasons[reason] ?? 0) + 1
  const listed: OmittedPiece[] = all.slice(0, MAX_OMITTED_LISTED).map(({ candidate: c, reason }) => {
    const t = fill.tried.get(c)
    return {
      pack: plans[c.packIndex]?.pack.item.name ?? '',
      path: c.section.path,
      heading: c.section.headingPath.join(' › '),
      score: Number(c.score.toFixed(4)),
      role: c.reason,
      ...(t === undefined ? {} : { tokens: t }),
      reason,
    }
  })
  return { all, listed, reasons }
}
