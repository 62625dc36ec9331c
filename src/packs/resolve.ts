/**
 * Tier 3: the runtime context resolver (seed 001). For a task and the selected
 * packs it picks heading sections per profile and runtime mode, ranks them
 * (lexical BM25 with CJK segmentation, optionally blended with an embedder),
 * fills a token budget it never exceeds, wraps each pack as data, and returns
 * the audit record: selected documents and files, source anchors, compile
 * warnings, missing facts.
 */
import { posix } from 'node:path'
import { z } from 'zod'
import { noopLogger, type Logger } from '../core/logger.js'
import { parseWith } from '../core/validate.js'
import type { Embedder } from '../embed/embedder.js'
import { packUseWarnings } from './activate.js'
import { queryTerms, type WeightedTerm } from './lexical.js'
import { PackIndexCache, type IndexedSection, type PackIndex } from './pack-index.js'
import { normalisePackPath } from './paths.js'
import type { ResourceKind } from './resources.js'
import { GroundingPolicy, type LoadedPack, type PackDiagnostic, type PackProfile, type PackStatus, type PackTrust, type RuntimeMode } from './schema.js'
import { countTokens } from './tokens.js'
import { orderWrappers, wrapKnowledge, wrapperAttributes } from './wrap.js'

/**
 * What the task needs from the packs. `cite`, `verify`, `ingest` and `dispute` unlock `sources/`.
 * @example
 * await resolveContext({ task, packs, intent: ResolveIntent.parse('cite') })
 */
export const ResolveIntent = z.enum(['answer', 'detail', 'cite', 'verify', 'ingest', 'dispute'])
export type ResolveIntent = z.infer<typeof ResolveIntent>

/**
 * Default token budget.
 * @example
 * await resolveContext({ task, packs, budget: DEFAULT_BUDGET / 2 })
 */
export const DEFAULT_BUDGET = 8000

/** Options of {@link resolveContext}. */
export interface ResolveOptions {
  /** The user's task. */
  task: string
  /** The selected (activated) packs. */
  packs: readonly LoadedPack[]
  /** Token budget for the whole wrapped context (default 8000). Never exceeded. */
  budget?: number
  /** Citation policy; default from the packs' `grounding` (required → required, none → off, else recommended). */
  grounding?: GroundingPolicy
  /** Task intent; detected from the task text when absent. */
  intent?: ResolveIntent
  /** Disputed packs confirmed by the user: `true` for all, or their names. */
  confirmed?: boolean | readonly string[]
  /** Blended into relevance when given (the knowledge search's embedder). */
  embedder?: Embedder
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
export type PieceReason = 'persona' | 'runtime' | 'context-map' | 'core' | 'fallback' | 'evidence'

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
  grounding: GroundingPolicy
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
 * - `miss_limit`: never tried: 40 pieces in a row had not fitted, so the resolver stopped.
 */
export type OmittedReason = 'budget' | 'count_limit' | 'miss_limit'

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
  /** Facts the task needs that no pack has. */
  missing: string[]
  recommendation?: 'ask_user_or_mark_unknown'
}

const EVIDENCE_INTENT =
  /\b(?:cite|citations?|sources?|verify|verification|fact[- ]?check|evidence|provenance|ingest|import|dispute[ds]?|contradict\w*)\b|引用|出处|来源|核验|核实|验证|证据|导入|争议|矛盾/iu
const DETAIL_INTENT =
  /\b(?:compare|comparison|versus|vs\.?|relationship|relate[ds]?|between|why|detail(?:s|ed)?|in[- ]depth|history|timeline|across|multi[- ]?hop|explain)\b|比较|对比|关系|为什么|详细|深入|历史|之间|来龙去脉/iu
const PERSONA_WORDS = /voice|tone|persona|values?\b|taboo|boundar|style|personality|expression|语气|口吻|人设|价值观|禁忌|边界|表达|风格|性格/iu
const CORE_VIEWS = new Set(['compiled/briefing.md', 'compiled/facts.md', 'compiled/boundaries.md'])
// Words that describe the task rather than a fact to look up; never reported as missing.
const TASK_WORDS = new Set(
  (
    'write draft reply respond answer explain summar summaris summariz describ list creat make compos help ask question tell say ' +
    'customer user email messag post text short long brief quick new plea thank need want know look find check give provid'
  ).split(' '),
)

/**
 * Detects the task intent from its text.
 * @example
 * detectIntent('Cite the source for the Q1 revenue claim') // 'cite'
 */
export function detectIntent(task: string): ResolveIntent {
  const evidence = EVIDENCE_INTENT.exec(task)
  if (evidence) {
    const word = evidence[0].toLowerCase()
    if (/verif|fact|核|验证/u.test(word)) return 'verify'
    if (/ingest|import|导入/u.test(word)) return 'ingest'
    if (/disput|contradict|争议|矛盾/u.test(word)) return 'dispute'
    return 'cite'
  }
  return DETAIL_INTENT.test(task) ? 'detail' : 'answer'
}

const ResolveInput = z.object({
  task: z.string().min(1, 'the task is empty').max(100_000),
  budget: z.number().int().min(1).max(2_000_000).default(DEFAULT_BUDGET),
  grounding: GroundingPolicy.optional(),
  intent: ResolveIntent.optional(),
})

interface Candidate {
  packIndex: number
  section: IndexedSection
  score: number
  /** Score divided by the pack's best, for merging packs. */
  norm: number
  group: number
  reason: PieceReason
}

interface PackPlan {
  pack: LoadedPack
  index: PackIndex
  grounding: GroundingPolicy
  candidates: Candidate[]
  warnings: CompileWarning[]
  missing: string[]
  uncovered: Set<string>
}

function packGrounding(pack: LoadedPack, policy: GroundingPolicy | undefined): GroundingPolicy {
  if (policy) return policy
  if (pack.item.grounding === 'required') return 'required'
  if (pack.item.grounding === 'none') return 'off'
  return 'recommended'
}

function toWarning(d: PackDiagnostic, fallbackPath: string): CompileWarning {
  return { severity: d.severity, path: d.path ?? fallbackPath, message: d.message, code: d.code }
}

/**
 * Pack-relative paths the KNOWLEDGE.md body names (its context map).
 * @example
 * contextMapPaths('- `documents/brief.md` is primary\n- see [escalation](wiki/escalation.md)') // ['documents/brief.md', 'wiki/escalation.md']
 */
export function contextMapPaths(body: string): string[] {
  const found = new Set<string>()
  const pattern = /(?:`|\]\(|\s|^)((?:documents|wiki|compiled|ontology)\/[^`)\s]*)/gmu
  for (const match of body.matchAll(pattern)) {
    const raw = (match[1] ?? '').replace(/[.,;:]+$/u, '')
    const checked = normalisePackPath(raw)
    if (checked.ok) found.add(checked.path)
  }
  return [...found]
}

function covers(index: PackIndex, term: string, accept: (s: IndexedSection) => boolean): boolean {
  return index.score([{ term, weight: 1, surface: term }], accept).size > 0
}

function planPack(
  pack: LoadedPack,
  packIndex: number,
  index: PackIndex,
  terms: readonly WeightedTerm[],
  intent: ResolveIntent,
  grounding: GroundingPolicy,
): PackPlan {
  const item = pack.item
  const profile = item.profile ?? 'wiki-first'
  const persona = item.runtime?.mode === 'persona'
  const warnings: CompileWarning[] = packUseWarnings(item).map((d) => toWarning(d, 'KNOWLEDGE.md'))
  const missing: string[] = []
  const files = [...index.files.keys()]
  const primary = item.metadata?.primaryDocument

  let tier1: (s: IndexedSection) => boolean
  let tier2: (s: IndexedSection) => boolean
  let tier1Reason: PieceReason = 'runtime'
  let forceFallback = false

  if (profile === 'document-first') {
    const docKey = primary ? posix.basename(primary).replace(/\.[^.]+$/u, '') : undefined
    const hasSplits = docKey !== undefined && files.some((f) => f.startsWith(`compiled/splits/${docKey}/`))
    tier1 = (s) => s.kind === 'runtime'
    // Seed 001: the fallback is the relevant sections of the primary document. Other
    // documents/ files only when there is no usable primary document, or the task needs
    // multi-hop detail (rule 4: related documents/ sections when compiled/ falls short).
    const hasPrimary = primary !== undefined && index.files.has(primary)
    const widen = !hasPrimary || intent !== 'answer'
    tier2 = (s) => s.kind === 'primary' || (widen && s.kind === 'document')
    if (!primary || !index.files.has(primary)) {
      const gap = pack.issues.find((i) => i.code === 'document_first_gap')
      warnings.push({
        severity: 'warning',
        path: primary ?? 'documents/',
        code: 'document_first_gap',
        message: gap?.message ?? `The document-first pack has no usable primary document${primary ? ` (${primary})` : ''}.`,
      })
      missing.push(primary ? `primary document ${primary}` : 'primary document (metadata.primaryDocument)')
    }
    if (!hasSplits) {
      forceFallback = true
      if (primary && index.files.has(primary)) {
        warnings.push({
          severity: 'info',
          path: `compiled/splits/${docKey ?? ''}`,
          code: 'splits_missing',
          message: `No compiled/splits/${docKey}/ views; relevant sections of ${primary} are used instead.`,
        })
      }
    }
  } else if (profile === 'wiki-first') {
    tier1 = (s) => s.kind === 'runtime'
    tier2 = (s) => s.kind === 'wiki' || s.kind === 'primary' || s.kind === 'document'
    if (!files.some((f) => f.startsWith('compiled/'))) forceFallback = true
  } else {
    const named = [...new Set([...(primary ? [primary] : []), ...contextMapPaths(pack.body)])]
    const isNamed = (path: string): boolean => named.some((n) => path === n || path.startsWith(`${n.replace(/\/$/u, '')}/`))
    tier1 = (s) => s.kind !== 'source' && isNamed(s.path)
    tier2 = (s) => s.kind !== 'source' && !isNamed(s.path)
    tier1Reason = 'context-map'
    if (!files.some((f) => isNamed(f))) {
      forceFallback = true
      warnings.push({
        severity: 'info',
        path: 'KNOWLEDGE.md',
        code: 'context_map_missing',
        message: 'The hybrid pack names no primary document or context-map path that exists; sections are chosen by relevance.',
      })
    }
  }

  // Fallback to documents/wiki when the preferred views are missing, do not cover the task, or the task needs detail.
  // Coverage counts whole words only (CJK bigrams are a recall aid, not facts the task names).
  const words = terms.some((t) => t.weight >= 1) ? terms.filter((t) => t.weight >= 1) : terms
  const totalWeight = words.reduce((sum, t) => sum + t.weight, 0)
  const coveredWeight = words.reduce((sum, t) => sum + (covers(index, t.term, tier1) ? t.weight : 0), 0)
  const useFallback = forceFallback || intent !== 'answer' || totalWeight === 0 || coveredWeight / totalWeight < 0.6

  const scores1 = index.score(terms, tier1)
  const scores2 = useFallback ? index.score(terms, tier2) : new Map<number, number>()
  const evidenceIntent = intent === 'cite' || intent === 'verify' || intent === 'ingest' || intent === 'dispute'
  const scores3 = evidenceIntent ? index.score(terms, (s) => s.kind === 'source') : new Map<number, number>()
  const best = Math.max(0, ...scores1.values(), ...scores2.values(), ...scores3.values())
  // Load only the smallest useful context: sections scoring under a third of the best are noise.
  const threshold = best * 0.35

  const candidates = new Map<number, Candidate>()
  const add = (section: IndexedSection, score: number, group: number, reason: PieceReason): void => {
    const existing = candidates.get(section.id)
    if (existing && existing.group <= group) return
    candidates.set(section.id, { packIndex, section, score, norm: best > 0 ? score / best : 0, group, reason })
  }
  for (const [id, score] of scores1) {
    const section = index.sections[id]
    if (section && score >= threshold) add(section, score, 1, tier1Reason)
  }
  for (const [id, score] of scores2) {
    const section = index.sections[id]
    if (section && score >= threshold) add(section, score, 3, 'fallback')
  }
  for (const [id, score] of scores3) {
    const section = index.sections[id]
    if (section && score >= threshold) add(section, score, 4, 'evidence')
  }
  // Core runtime views (briefing, facts, boundaries) come along even without a term match.
  for (const path of CORE_VIEWS) {
    for (const id of index.files.get(path)?.sectionIds ?? []) {
      const section = index.sections[id]
      if (section) add(section, scores1.get(id) ?? 0, 2, 'core')
    }
  }
  // Persona packs: voice, values, taboos and boundaries first, then facts.
  if (persona) {
    const personaTier = index.sections.some((s) => tier1(s) && PERSONA_WORDS.test(`${s.path} ${s.headingPath.join(' ')}`)) ? tier1 : tier2
    for (const section of index.sections) {
      if (section.kind === 'source' || !personaTier(section)) continue
      if (PERSONA_WORDS.test(`${section.path} ${section.headingPath.join(' ')}`)) {
        add(section, scores1.get(section.id) ?? scores2.get(section.id) ?? 0, 0, 'persona')
      }
    }
  }

  // Terms no section of this pack has at all.
  const uncovered = new Set<string>()
  for (const term of terms) if (index.documentFrequency(term.term) === 0) uncovered.add(term.term)

  // Missing claims and chapters that concern the task.
  const taskTerms = new Set(terms.map((t) => t.term))
  const overlaps = (text: string): boolean => queryTerms(text).some((t) => taskTerms.has(t.term) && t.weight >= 1)
  for (const claim of index.evidence.claims) {
    if (claim.status === 'missing' && overlaps(claim.text)) missing.push(claim.text)
  }
  for (const chapter of index.evidence.compileRun?.chapters ?? []) {
    if ((chapter.coverage === 'missing' || chapter.coverage === 'conflict') && overlaps(chapter.title)) {
      missing.push(chapter.coverage === 'conflict' ? `${chapter.title} (conflicting sources)` : chapter.title)
    }
  }

  return { pack, index, grounding, candidates: [...candidates.values()], warnings, missing, uncovered }
}

async function blendEmbeddings(plans: PackPlan[], task: string, embedder: Embedder, logger: Logger): Promise<void> {
  const pending: { plan: PackPlan; candidate: Candidate }[] = []
  for (const plan of plans) for (const candidate of plan.candidates) if (candidate.group !== 0 && candidate.group !== 2) pending.push({ plan, candidate })
  if (pending.length === 0) return
  pending.sort((a, b) => b.candidate.norm - a.candidate.norm)
  const shortlist = pending.slice(0, 128)
  try {
    const missingVectors: { plan: PackPlan; section: IndexedSection }[] = []
    for (const { plan, candidate } of shortlist) {
      const vectors = plan.index.vectors.get(embedder.model)
      if (!vectors?.has(candidate.section.id)) missingVectors.push({ plan, section: candidate.section })
    }
    const texts = [task, ...missingVectors.map(({ section }) => `${section.headingPath.join(' > ')}\n${section.text.slice(0, 2000)}`)]
    const vectors = await embedder.embed(texts)
    const query = vectors[0]
    if (!query) return
    missingVectors.forEach(({ plan, section }, i) => {
      let byModel = plan.index.vectors.get(embedder.model)
      if (!byModel) plan.index.vectors.set(embedder.model, (byModel = new Map()))
      const vector = vectors[i + 1]
      if (vector) byModel.set(section.id, vector)
    })
    for (const { plan, candidate } of shortlist) {
      const vector = plan.index.vectors.get(embedder.model)?.get(candidate.section.id)
      if (!vector || vector.length !== query.length) continue
      let dot = 0
      for (let i = 0; i < query.length; i++) dot += (query[i] ?? 0) * (vector[i] ?? 0)
      candidate.norm = 0.6 * candidate.norm + 0.4 * Math.max(0, dot)
    }
  } catch (error) {
    logger.warn('packs.resolve.embedder_failed', { error: error instanceof Error ? error.message : String(error) })
  }
}

const MAX_COUNTS = 80
const MAX_OMITTED_LISTED = 200
const MAX_MISSES = 40
const MIN_PIECE_TOKENS = 12
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu

/**
 * A cheap token estimate that errs low, so that a piece it puts over the
 * remaining budget is skipped without tokenising it: the pack's own observed
 * characters per token plus 25 % once 2,000 tokens were counted, else 5
 * characters per token (CJK characters half a token).
 */
function estimateTokens(text: string, ratio?: { chars: number; tokens: number }): number {
  if (ratio && ratio.tokens >= 2000) return Math.floor(text.length / ((ratio.chars / ratio.tokens) * 1.25))
  const cjk = text.match(CJK_CHAR)?.length ?? 0
  return Math.floor((text.length - cjk) / 5 + cjk * 0.5)
}

function pieceLabel(section: IndexedSection): string {
  const heading = section.headingPath.length > 0 ? ` § ${section.headingPath.join(' › ')}` : ''
  const part = section.part > 0 ? ` (part ${section.part})` : ''
  return `[${section.path}${heading}${part}]`
}

function renderPiece(section: IndexedSection): string {
  return `${pieceLabel(section)}\n${section.text}`
}

function splitDocumentOf(path: string, plan: PackPlan): string | undefined {
  const match = /^compiled\/splits\/([^/]+)\//u.exec(path)
  if (!match) return undefined
  const key = match[1]
  for (const file of plan.index.files.values()) {
    if ((file.kind === 'primary' || file.kind === 'document') && posix.basename(file.path).replace(/\.[^.]+$/u, '') === key) return file.path
  }
  return undefined
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
  const excluded: ExcludedPack[] = []

  const usable: LoadedPack[] = []
  const seen = new Set<string>()
  for (const pack of options.packs) {
    if (seen.has(pack.realRoot)) continue
    seen.add(pack.realRoot)
    const confirmed = options.confirmed === true || (Array.isArray(options.confirmed) && options.confirmed.includes(pack.item.name))
    if (pack.item.status === 'disputed' && !confirmed) {
      excluded.push({
        pack: pack.item.name,
        code: 'confirmation_required',
        message: `Pack "${pack.item.name}" is disputed; it is used only after explicit confirmation.`,
      })
      continue
    }
    usable.push(pack)
  }

  const indexes = await Promise.all(usable.map((pack) => cache.get(pack)))
  const plans = usable.map((pack, i) => planPack(pack, i, indexes[i] as PackIndex, terms, intent, packGrounding(pack, input.grounding)))
  if (options.embedder) await blendEmbeddings(plans, input.task, options.embedder, logger)

  // Rank across packs: group first (persona, runtime, core, fallback, evidence), then normalised score.
  const ranked = plans.flatMap((plan) => plan.candidates)
  ranked.sort(
    (a, b) =>
      a.group - b.group ||
      b.norm - a.norm ||
      a.packIndex - b.packIndex ||
      (a.section.path < b.section.path ? -1 : a.section.path > b.section.path ? 1 : 0) ||
      a.section.order - b.section.order,
  )

  // Wrapper cost per pack (opening tag, preamble, closing tag) plus the joiner between wrappers.
  const overhead = plans.map((plan) => countTokens(wrapKnowledge(wrapperAttributes(plan.pack.item, plan.grounding), '')) + 2)
  const chosen = plans.map(() => [] as { candidate: Candidate; tokens: number }[])
  const tried = new Map<Candidate, number>()
  let used = 0
  // Tokenising is the expensive step: count only pieces that might fit (a cheap estimate that
  // rather underestimates), at most MAX_COUNTS per call, stop after MAX_MISSES pieces in a row
  // did not fit, and reuse counts kept in the pack index across calls.
  let counts = 0
  let misses = 0
  // Why the loop stopped early: every candidate from there on is left out for that reason.
  let stop: { at: number; reason: OmittedReason } | undefined
  for (let at = 0; at < ranked.length; at++) {
    const candidate = ranked[at] as Candidate
    if (input.budget - used < MIN_PIECE_TOKENS || misses >= MAX_MISSES) {
      stop = { at, reason: misses >= MAX_MISSES ? 'miss_limit' : 'budget' }
      break
    }
    const list = chosen[candidate.packIndex] as { candidate: Candidate; tokens: number }[]
    const remaining = input.budget - used - (list.length === 0 ? (overhead[candidate.packIndex] ?? 0) : 0)
    const index = plans[candidate.packIndex]?.index
    let tokens = index?.tokenCounts.get(candidate.section.id)
    if (tokens === undefined) {
      if (counts >= MAX_COUNTS) {
        stop = { at, reason: 'count_limit' }
        break
      }
      const rendered = renderPiece(candidate.section)
      if (remaining < MIN_PIECE_TOKENS || estimateTokens(rendered, index?.tokenRatio) > remaining) {
        misses++
        continue
      }
      counts++
      tokens = countTokens(rendered) + 1
      if (index) {
        index.tokenCounts.set(candidate.section.id, tokens)
        index.tokenRatio.chars += rendered.length
        index.tokenRatio.tokens += tokens
      }
    }
    tried.set(candidate, tokens)
    if (tokens > remaining) {
      misses++
      continue
    }
    misses = 0
    used += tokens + (list.length === 0 ? (overhead[candidate.packIndex] ?? 0) : 0)
    list.push({ candidate, tokens })
  }

  // Build the context; drop the lowest-ranked piece until the exact count fits (BPE merges at joins).
  const build = (): { context: string; wrappers: { name: string; mode: RuntimeMode; text: string; plan: number }[] } => {
    const wrappers: { name: string; mode: RuntimeMode; text: string; plan: number }[] = []
    plans.forEach((plan, i) => {
      const pieces = (chosen[i] ?? []).map((c) => c.candidate)
      if (pieces.length === 0) return
      pieces.sort(
        (a, b) => a.group - b.group || (a.section.path < b.section.path ? -1 : a.section.path > b.section.path ? 1 : 0) || a.section.order - b.section.order,
      )
      const content = pieces.map((c) => renderPiece(c.section)).join('\n\n')
      wrappers.push({
        name: plan.pack.item.name,
        mode: plan.pack.item.runtime?.mode ?? 'data',
        text: wrapKnowledge(wrapperAttributes(plan.pack.item, plan.grounding), content),
        plan: i,
      })
    })
    const ordered = orderWrappers(wrappers)
    return { context: ordered.map((w) => w.text).join('\n\n'), wrappers: ordered }
  }
  let built = build()
  let tokens = countTokens(built.context)
  while (tokens > input.budget) {
    let worst: { list: { candidate: Candidate; tokens: number }[]; at: number; rank: number } | undefined
    for (const list of chosen) {
      list.forEach((entry, at) => {
        const rank = ranked.indexOf(entry.candidate)
        if (!worst || rank > worst.rank) worst = { list, at, rank }
      })
    }
    if (!worst) break
    const dropped = worst as { list: { candidate: Candidate; tokens: number }[]; at: number; rank: number }
    dropped.list.splice(dropped.at, 1)
    built = build()
    tokens = countTokens(built.context)
  }

  // Every candidate not selected, with why; candidates past an early stop were never tried.
  const selected = new Set(chosen.flatMap((list) => list.map((c) => c.candidate)))
  const omittedAll: { candidate: Candidate; reason: OmittedReason }[] = []
  ranked.forEach((candidate, at) => {
    if (selected.has(candidate)) return
    const reason: OmittedReason = stop && at >= stop.at ? stop.reason : 'budget'
    omittedAll.push({ candidate, reason })
  })
  const omittedReasons: Partial<Record<OmittedReason, number>> = {}
  for (const { reason } of omittedAll) omittedReasons[reason] = (omittedReasons[reason] ?? 0) + 1
  const omitted: OmittedPiece[] = omittedAll.slice(0, MAX_OMITTED_LISTED).map(({ candidate: c, reason }) => {
    const t = tried.get(c)
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

  // A selected pack without a wrapper is reported, never silently dropped.
  plans.forEach((plan, i) => {
    if ((chosen[i] ?? []).length > 0) return
    const name = plan.pack.item.name
    const left = omittedAll.filter((o) => o.candidate.packIndex === i).length
    if (plan.candidates.length === 0) {
      excluded.push({ pack: name, code: 'no_match', message: `No section of pack "${name}" matches the task; it got no wrapper.` })
    } else {
      excluded.push({
        pack: name,
        code: 'budget',
        message: `Nothing of pack "${name}" fit the ${input.budget}-token budget (its wrapper alone takes ${overhead[i] ?? 0} tokens); ${left} candidate sections left out. Raise the budget or resolve it alone.`,
      })
    }
  })

  const wrapperOrder = built.wrappers.map((w) => w.name)
  // Per-pack token counts: the whole context when there is one wrapper, else each wrapper counted.
  const wrapperTokens = (text: string | undefined): number => (text === undefined ? 0 : built.wrappers.length === 1 ? tokens : countTokens(text))
  const resolutions: PackResolution[] = plans.map((plan, i) => {
    const text = built.wrappers.find((w) => w.plan === i)?.text
    return audit(
      plan,
      chosen[i] ?? [],
      built.wrappers.findIndex((w) => w.plan === i),
      wrapperTokens(text),
    )
  })

  // Missing facts: terms no pack covers (grouped into phrases in task order), plus each pack's missing claims.
  const uncoveredEverywhere =
    plans.length === 0 ? new Set<string>() : new Set([...(plans[0]?.uncovered ?? [])].filter((t) => plans.every((p) => p.uncovered.has(t))))
  const missing = [...phrases(terms, uncoveredEverywhere), ...new Set(resolutions.flatMap((r) => r.missing))]
  const uniqueMissing = [...new Set(missing)]
  logger.debug('packs.resolve.done', { packs: plans.length, tokens, budget: input.budget, omitted: omittedAll.length })

  return {
    task: input.task,
    intent,
    budget: input.budget,
    tokens,
    context: built.context,
    wrapper_order: wrapperOrder,
    packs: resolutions,
    excluded,
    omitted,
    omitted_count: omittedAll.length,
    omitted_reasons: omittedReasons,
    missing: uniqueMissing,
    ...(uniqueMissing.length > 0 ? { recommendation: 'ask_user_or_mark_unknown' as const } : {}),
  }
}

/** Groups uncovered task terms into phrases in task order ("enterprise price"), dropping task words. */
function phrases(terms: readonly WeightedTerm[], uncovered: ReadonlySet<string>): string[] {
  const out: string[] = []
  let current: string[] = []
  const flush = (): void => {
    if (current.length > 0) out.push(current.join(/[\u3400-\u9fff]/u.test(current[0] ?? '') ? '' : ' '))
    current = []
  }
  for (const term of terms) {
    const isUncovered = uncovered.has(term.term) && term.weight >= 1 && !TASK_WORDS.has(term.term) && !/^\d+$/u.test(term.term)
    if (isUncovered && (term.surface.length >= 3 || /[\u3400-\u9fff]/u.test(term.surface))) current.push(term.surface)
    else flush()
  }
  flush()
  return out
}

function audit(plan: PackPlan, chosen: readonly { candidate: Candidate; tokens: number }[], order: number, wrapperTokens: number): PackResolution {
  const item = plan.pack.item
  const pieces = chosen.map(({ candidate, tokens }) => ({
    path: candidate.section.path,
    heading: candidate.section.heading,
    headingPath: candidate.section.headingPath,
    kind: candidate.section.kind,
    line: candidate.section.line,
    part: candidate.section.part,
    tokens,
    score: Number(candidate.score.toFixed(4)),
    reason: candidate.reason,
    fileHash: plan.index.files.get(candidate.section.path)?.hash ?? '',
  }))
  const files = [...new Set(pieces.map((p) => p.path))]
  const documents = new Set<string>()
  for (const file of files) {
    const kind = plan.index.files.get(file)?.kind
    if (kind === 'primary' || kind === 'document') documents.add(file)
    const fromSplit = splitDocumentOf(file, plan)
    if (fromSplit) documents.add(fromSplit)
  }

  const warnings = [...plan.warnings]
  const anchors = new Set<string>()
  const anchored = new Set<string>()
  const relevant = (paths: readonly string[] | undefined, document: string | undefined): string[] =>
    files.filter((f) => (paths ?? []).includes(f) || document === f)
  for (const claim of plan.index.evidence.claims) {
    const hits = relevant(claim.compiled_into, claim.document)
    if (hits.length === 0) continue
    if (plan.grounding !== 'off' && claim.sourceState === 'ok') {
      anchors.add(claim.anchor)
      for (const hit of hits) anchored.add(hit)
    }
    const where = hits[0] ?? ''
    if (claim.status === 'stale')
      warnings.push({ severity: 'warning', path: where, code: 'claim_stale', message: `Claim "${claim.claim_id}" is stale: ${claim.text}` })
    else if (claim.status === 'disputed')
      warnings.push({ severity: 'warning', path: where, code: 'claim_disputed', message: `Claim "${claim.claim_id}" is disputed: ${claim.text}` })
    else if (claim.status === 'missing')
      warnings.push({ severity: 'warning', path: where, code: 'claim_missing', message: `Claim "${claim.claim_id}" has no supporting fact: ${claim.text}` })
    else if (claim.status === 'source-required' || claim.status === 'inferred') {
      warnings.push({
        severity: claim.status === 'inferred' ? 'info' : 'warning',
        path: where,
        code: 'claim_unreviewed',
        message: `Claim "${claim.claim_id}" is ${claim.status}, not confirmed by a reviewed source: ${claim.text}`,
      })
    }
    if (claim.sourceState !== 'ok')
      warnings.push({
        severity: 'warning',
        path: where,
        code: 'source_missing',
        message: `Claim "${claim.claim_id}" cites ${claim.source.path}, which is ${claim.sourceState === 'missing' ? 'missing' : 'refused (outside the pack)'}.`,
      })
  }
  for (const section of plan.index.evidence.sections) {
    const hits = relevant(section.compiled_into, section.document)
    if (hits.length === 0 || plan.grounding === 'off') continue
    for (const anchor of section.source_anchors ?? []) {
      const checked = normalisePackPath(anchor.split('#')[0] ?? '')
      if (checked.ok) {
        anchors.add(anchor)
        for (const hit of hits) anchored.add(hit)
      }
    }
  }
  for (const piece of pieces) if (piece.kind === 'source') anchored.add(piece.path)
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
  const gaps = plan.grounding === 'off' ? [] : files.filter((f) => !anchored.has(f))
  if (gaps.length > 0) {
    const severity = plan.grounding === 'required' ? 'warning' : 'info'
    const noMap = plan.index.evidence.claims.length === 0 && plan.index.evidence.sections.length === 0
    if (noMap && plan.grounding === 'required') {
      warnings.push({
        severity,
        path: 'indexes/source-map.json',
        code: 'citation_gap',
        message: 'Grounding is required but the pack has no source map; no selected file can be cited.',
      })
    } else {
      for (const gap of gaps) warnings.push({ severity, path: gap, code: 'citation_gap', message: 'No source anchor supports this file.' })
    }
  }
  const missing = [...new Set(plan.missing)]
  return {
    pack: item.name,
    ...(item.version ? { version: item.version } : {}),
    status: item.status,
    trust: item.trust ?? 'unreviewed',
    profile: item.profile ?? 'wiki-first',
    runtime_mode: item.runtime?.mode ?? 'data',
    grounding: plan.grounding,
    ...(order >= 0 ? { wrapper_order: order } : {}),
    selected_documents: [...documents].sort(),
    selected_files: files,
    source_anchors: [...anchors].sort(),
    compile_warnings: warnings,
    missing,
    ...(missing.length > 0 ? { recommendation: 'ask_user_or_mark_unknown' as const } : {}),
    citation_gaps: gaps,
    pieces,
    tokens: wrapperTokens,
  }
}
