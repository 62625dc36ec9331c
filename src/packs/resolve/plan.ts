/**
 * Planning one pack for a task (seed 001): which sections its profile prefers
 * (document-first, wiki-first, hybrid), when to fall back to documents/ and
 * wiki/, which sections are candidates (scored, core views, persona
 * sections, evidence), and which facts the pack lacks. Reads the pack index;
 * writes nothing.
 */
import { posix } from 'node:path'
import { packUseWarnings } from '../activate.js'
import { queryTerms, type WeightedTerm } from '../lexical.js'
import type { IndexedSection, PackIndex } from '../pack-index.js'
import { normalisePackPath } from '../paths.js'
import type { GroundingPolicy, LoadedPack, PackDiagnostic } from '../schema.js'
import { isEvidenceIntent, type ResolveIntent } from './intent.js'
import type { Candidate, CompileWarning, PackPlan, PieceReason } from './types.js'

type Accept = (section: IndexedSection) => boolean

/** The sections a pack's profile prefers, what it falls back to, and what the profile check found. */
export interface ProfileTiers {
  /** Preferred sections: runtime views (document-first, wiki-first) or the context map (hybrid). */
  preferred: Accept
  preferredReason: PieceReason
  /** Sections used when the preferred ones are missing or fall short. */
  fallback: Accept
  /** True when the preferred views are missing: the fallback is always used. */
  forceFallback: boolean
  warnings: CompileWarning[]
  missing: string[]
}

const PERSONA_WORDS = /voice|tone|persona|values?\b|taboo|boundar|style|personality|expression|语气|口吻|人设|价值观|禁忌|边界|表达|风格|性格/iu
const CORE_VIEWS = new Set(['compiled/briefing.md', 'compiled/facts.md', 'compiled/boundaries.md'])
/** Share of the task's word weight the preferred views must cover to skip the fallback. */
const COVERAGE = 0.6
/** Sections scoring under this share of the pack's best are noise: load only the smallest useful context. */
const RELEVANCE_FLOOR = 0.35

/**
 * The citation policy for a pack: the caller's, else from the pack's `grounding`
 * (required → required, none → off, else recommended).
 */
export function packGrounding(pack: LoadedPack, policy: GroundingPolicy | undefined): GroundingPolicy {
  if (policy) return policy
  if (pack.item.grounding === 'required') return 'required'
  if (pack.item.grounding === 'none') return 'off'
  return 'recommended'
}

/** A pack diagnostic as a compile warning of the audit record. */
export function toWarning(d: PackDiagnostic, fallbackPath: string): CompileWarning {
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

/** The file name of a path without its extension: the key of `compiled/splits/<key>/`. */
function documentKey(path: string): string {
  return posix.basename(path).replace(/\.[^.]+$/u, '')
}

/**
 * document-first: compiled/ views (splits of the primary document first); the
 * relevant sections of the primary document as the fallback (seed 001). Other
 * documents/ files only without a usable primary document, or when the task
 * needs multi-hop detail (rule 4: related documents/ sections when compiled/
 * falls short).
 */
function documentFirstTiers(pack: LoadedPack, index: PackIndex, intent: ResolveIntent): ProfileTiers {
  const primary = pack.item.metadata?.primaryDocument
  const docKey = primary ? documentKey(primary) : undefined
  const hasSplits = docKey !== undefined && [...index.files.keys()].some((f) => f.startsWith(`compiled/splits/${docKey}/`))
  const hasPrimary = primary !== undefined && index.files.has(primary)
  const widen = !hasPrimary || intent !== 'answer'
  const tiers: ProfileTiers = {
    preferred: (s) => s.kind === 'runtime',
    preferredReason: 'runtime',
    fallback: (s) => s.kind === 'primary' || (widen && s.kind === 'document'),
    forceFallback: false,
    warnings: [],
    missing: [],
  }
  if (!hasPrimary) {
    const gap = pack.issues.find((i) => i.code === 'document_first_gap')
    tiers.warnings.push({
      severity: 'warning',
      path: primary ?? 'documents/',
      code: 'document_first_gap',
      message: gap?.message ?? `The document-first pack has no usable primary document${primary ? ` (${primary})` : ''}.`,
    })
    tiers.missing.push(primary ? `primary document ${primary}` : 'primary document (metadata.primaryDocument)')
  }
  if (!hasSplits) {
    tiers.forceFallback = true
    if (hasPrimary) {
      tiers.warnings.push({
        severity: 'info',
        path: `compiled/splits/${docKey ?? ''}`,
        code: 'splits_missing',
        message: `No compiled/splits/${docKey}/ views; relevant sections of ${primary} are used instead.`,
      })
    }
  }
  return tiers
}

/** wiki-first: compiled/ views; wiki/ pages (and documents) when compiled/ is missing or falls short. */
function wikiFirstTiers(index: PackIndex): ProfileTiers {
  return {
    preferred: (s) => s.kind === 'runtime',
    preferredReason: 'runtime',
    fallback: (s) => s.kind === 'wiki' || s.kind === 'primary' || s.kind === 'document',
    forceFallback: ![...index.files.keys()].some((f) => f.startsWith('compiled/')),
    warnings: [],
    missing: [],
  }
}

/** hybrid: the primary document and the paths the KNOWLEDGE.md body names (its context map), then the rest. */
function hybridTiers(pack: LoadedPack, index: PackIndex): ProfileTiers {
  const primary = pack.item.metadata?.primaryDocument
  const named = [...new Set([...(primary ? [primary] : []), ...contextMapPaths(pack.body)])]
  const isNamed = (path: string): boolean => named.some((n) => path === n || path.startsWith(`${n.replace(/\/$/u, '')}/`))
  const tiers: ProfileTiers = {
    preferred: (s) => s.kind !== 'source' && isNamed(s.path),
    preferredReason: 'context-map',
    fallback: (s) => s.kind !== 'source' && !isNamed(s.path),
    forceFallback: false,
    warnings: [],
    missing: [],
  }
  if (![...index.files.keys()].some((f) => isNamed(f))) {
    tiers.forceFallback = true
    tiers.warnings.push({
      severity: 'info',
      path: 'KNOWLEDGE.md',
      code: 'context_map_missing',
      message: 'The hybrid pack names no primary document or context-map path that exists; sections are chosen by relevance.',
    })
  }
  return tiers
}

/**
 * The preferred and fallback sections of a pack by its profile (default wiki-first).
 * @example
 * const tiers = profileTiers(pack, index, 'answer')
 * index.score(terms, tiers.preferred)
 */
export function profileTiers(pack: LoadedPack, index: PackIndex, intent: ResolveIntent): ProfileTiers {
  const profile = pack.item.profile ?? 'wiki-first'
  if (profile === 'document-first') return documentFirstTiers(pack, index, intent)
  if (profile === 'wiki-first') return wikiFirstTiers(index)
  return hybridTiers(pack, index)
}

function covers(index: PackIndex, term: string, accept: Accept): boolean {
  return index.score([{ term, weight: 1, surface: term }], accept).size > 0
}

/**
 * True when the preferred sections cover at least 60 % of the task's word weight.
 * Coverage counts whole words only (CJK bigrams are a recall aid, not facts the task names).
 */
export function coversTask(index: PackIndex, terms: readonly WeightedTerm[], accept: Accept): boolean {
  const words = terms.some((t) => t.weight >= 1) ? terms.filter((t) => t.weight >= 1) : terms
  const totalWeight = words.reduce((sum, t) => sum + t.weight, 0)
  const coveredWeight = words.reduce((sum, t) => sum + (covers(index, t.term, accept) ? t.weight : 0), 0)
  return totalWeight > 0 && coveredWeight / totalWeight >= COVERAGE
}

/** BM25 scores of a pack's sections by tier: preferred, fallback (when used), sources (evidence intents). */
interface TierScores {
  preferred: Map<number, number>
  fallback: Map<number, number>
  evidence: Map<number, number>
}

function scoreTiers(index: PackIndex, terms: readonly WeightedTerm[], intent: ResolveIntent, tiers: ProfileTiers): TierScores {
  // Fall back to documents/wiki when the preferred views are missing, do not cover the task, or the task needs detail.
  const useFallback = tiers.forceFallback || intent !== 'answer' || !coversTask(index, terms, tiers.preferred)
  return {
    preferred: index.score(terms, tiers.preferred),
    fallback: useFallback ? index.score(terms, tiers.fallback) : new Map(),
    evidence: isEvidenceIntent(intent) ? index.score(terms, (s) => s.kind === 'source') : new Map(),
  }
}

/** The candidates of one pack: relevant sections per tier, core views, persona sections; one per section, best group kept. */
function collectCandidates(packIndex: number, pack: LoadedPack, index: PackIndex, tiers: ProfileTiers, scores: TierScores): Candidate[] {
  const best = Math.max(0, ...scores.preferred.values(), ...scores.fallback.values(), ...scores.evidence.values())
  const threshold = best * RELEVANCE_FLOOR
  const candidates = new Map<number, Candidate>()
  const add = (section: IndexedSection, score: number, group: number, reason: PieceReason): void => {
    const existing = candidates.get(section.id)
    if (existing && existing.group <= group) return
    candidates.set(section.id, { packIndex, section, score, norm: best > 0 ? score / best : 0, group, reason })
  }
  const addScored = (scored: Map<number, number>, group: number, reason: PieceReason): void => {
    for (const [id, score] of scored) {
      const section = index.sections[id]
      if (section && score >= threshold) add(section, score, group, reason)
    }
  }
  addScored(scores.preferred, 1, tiers.preferredReason)
  addScored(scores.fallback, 3, 'fallback')
  addScored(scores.evidence, 4, 'evidence')
  // Core runtime views (briefing, facts, boundaries) come along even without a term match.
  for (const path of CORE_VIEWS) {
    for (const id of index.files.get(path)?.sectionIds ?? []) {
      const section = index.sections[id]
      if (section) add(section, scores.preferred.get(id) ?? 0, 2, 'core')
    }
  }
  // Persona packs: voice, values, taboos and boundaries first, then facts.
  if (pack.item.runtime?.mode === 'persona') {
    const isPersona = (s: IndexedSection): boolean => PERSONA_WORDS.test(`${s.path} ${s.headingPath.join(' ')}`)
    const personaTier = index.sections.some((s) => tiers.preferred(s) && isPersona(s)) ? tiers.preferred : tiers.fallback
    for (const section of index.sections) {
      if (section.kind === 'source' || !personaTier(section) || !isPersona(section)) continue
      add(section, scores.preferred.get(section.id) ?? scores.fallback.get(section.id) ?? 0, 0, 'persona')
    }
  }
  return [...candidates.values()]
}

/** Missing claims and missing or conflicting chapters of the pack's evidence that concern the task. */
export function missingForTask(index: PackIndex, terms: readonly WeightedTerm[]): string[] {
  const missing: string[] = []
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
  return missing
}

/** Task terms no section of the pack has at all. */
function uncoveredTerms(index: PackIndex, terms: readonly WeightedTerm[]): Set<string> {
  const uncovered = new Set<string>()
  for (const term of terms) if (index.documentFrequency(term.term) === 0) uncovered.add(term.term)
  return uncovered
}

/**
 * Plans one pack: its candidates for the task, its warnings (status, trust,
 * profile gaps) and the facts it lacks. `packIndex` is the pack's position
 * among the resolved packs.
 * @example
 * const plan = planPack(pack, 0, await cache.get(pack), queryTerms(task), 'answer', 'recommended')
 * plan.candidates.length
 */
export function planPack(
  pack: LoadedPack,
  packIndex: number,
  index: PackIndex,
  terms: readonly WeightedTerm[],
  intent: ResolveIntent,
  grounding: GroundingPolicy,
): PackPlan {
  const tiers = profileTiers(pack, index, intent)
  const scores = scoreTiers(index, terms, intent, tiers)
  return {
    pack,
    index,
    grounding,
    candidates: collectCandidates(packIndex, pack, index, tiers, scores),
    warnings: [...packUseWarnings(pack.item).map((d) => toWarning(d, 'KNOWLEDGE.md')), ...tiers.warnings],
    missing: [...tiers.missing, ...missingForTask(index, terms)],
    uncovered: uncoveredTerms(index, terms),
  }
}
