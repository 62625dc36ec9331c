/**
 * Planning one pack for a task (seed 001): which sections its profile prefers
 * (document-first, wiki-first, hybrid), when to fall back to documents/ and
 * wiki/, which sections are candidates (scored, core views, persona
 * sections, evidence), and which facts the pack lacks. Reads the pack index;
 * writes nothing.
 */
import { posix } from 'node:path'
import { packUseWarnings } from '../activate/activate.js'
import { queryTerms, type WeightedTerm } from '../pack-index/lexical.js'
import type { IndexedSection, PackIndex } from '../pack-index/pack-index.js'
import { normalisePackPath } from '../files/paths.js'
import { normaliseGrounding, type GroundingPolicy, type LoadedPack, type PackDiagnostic, type PackGrounding } from '../schema.js'
import { isEvidenceIntent, type ResolveIntent } from './intent.js'
import { layerCandidates } from './layers.js'
import { expandTerms, termSet, type TaskConcept } from './terms.js'
import type { Candidate, CompileWarning, PackPlan, PieceReason, PlanDecision } from './types.js'

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

/**
 * Persona sections by kind, in the order a persona is read (seed 001: voice,
 * values, taboos, expression boundaries, usage guides; then the rest of the
 * persona): the resolver takes one of each kind before a second of any.
 */
const PERSONA_KINDS: readonly RegExp[] = [
  /voice|tone|style|expression|语气|口吻|表达|风格|说话/iu,
  /values?\b|belief|principle|价值观|信念|原则/iu,
  /taboo|forbidden|never|禁忌|禁区|红线/iu,
  /boundar|limit|边界|界限/iu,
  /usage|guide|how to use|application|应用指南|使用指南|用法|应用/iu,
  /persona|personality|character|人设|性格|人物/iu,
]
const CORE_VIEWS = new Set(['compiled/briefing.md', 'compiled/facts.md', 'compiled/boundaries.md'])
/** Sections scoring under this share of the pack's best are noise: load only the smallest useful context. */
const RELEVANCE_FLOOR = 0.35

/**
 * The citation policy for a pack in the standard's words (`required |
 * recommended | none`): the caller's (`off` read as `none`), else the pack's
 * `grounding`, else recommended.
 */
export function packGrounding(pack: LoadedPack, policy: GroundingPolicy | undefined): PackGrounding {
  if (policy) return normaliseGrounding(policy)
  return pack.item.grounding ?? 'recommended'
}

/** A pack diagnostic as a compile warning of the audit record. */
export function toWarning(d: PackDiagnostic, fallbackPath: string): CompileWarning {
  return { severity: d.severity, path: d.path ?? fallbackPath, message: d.message, code: d.code }
}

/**
 * Characters a context-map path can hold: letters and digits of any script,
 * `_ - . / ~ @ + %` and `#` (anchors). Anything else ends it: spaces,
 * backticks, quotes, brackets, and ASCII or full-width punctuation (`；`,
 * `。`, `，`, `）`, `》`…), so a path written inside Chinese text is read as
 * the path alone.
 */
const PATH_CHARS = /[\p{L}\p{N}\p{M}_\-./~@+%#]/u
// A path starts after anything but a Latin letter, digit or path character (Chinese text may run straight into it).
const PATH_START = /(?<![A-Za-z0-9_\-./])(?:documents|wiki|compiled|ontology|answers)\//gu

/**
 * Pack-relative paths the KNOWLEDGE.md body names (its context map), read as
 * paths: each ends at the first character a path cannot hold, trailing dots
 * and anchors dropped.
 * @example
 * contextMapPaths('- `documents/brief.md` is primary\n- see [escalation](wiki/escalation.md)') // ['documents/brief.md', 'wiki/escalation.md']
 * contextMapPaths('退款见 documents/refund.md；升级流程见wiki/escalation.md。') // ['documents/refund.md', 'wiki/escalation.md']
 */
export function contextMapPaths(body: string): string[] {
  const found = new Set<string>()
  for (const match of body.matchAll(PATH_START)) {
    let end = (match.index ?? 0) + match[0].length
    while (end < body.length) {
      const ch = String.fromCodePoint(body.codePointAt(end) ?? 0)
      if (!PATH_CHARS.test(ch)) break
      end += ch.length
    }
    const raw = body.slice(match.index, end).replace(/#.*$/u, '').replace(/[.]+$/u, '')
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

/** BM25 scores of a pack's sections by tier, the concept coverage of each section, and the fallback decision. */
interface TierScores {
  preferred: Map<number, number>
  fallback: Map<number, number>
  evidence: Map<number, number>
  /** Fallback sections used because they answer more of the task than any preferred view. */
  promoted: Set<number>
  coverage: Map<number, number>
  decision: PlanDecision
}

function bestOf(ids: Iterable<number>, coverage: ReadonlyMap<number, number>): number {
  let best = 0
  for (const id of ids) best = Math.max(best, coverage.get(id) ?? 0)
  return best
}

/**
 * Scores the tiers and decides on the fallback per section (fact level): the
 * preferred views answer the task when one of them covers as much of the
 * task's concepts as the best fallback section. Otherwise the fallback
 * sections that cover more than every preferred view are used (and ranked
 * with the runtime views); missing views, detail and evidence intents use the
 * whole fallback tier as before.
 */
function scoreTiers(
  index: PackIndex,
  terms: readonly WeightedTerm[],
  concepts: readonly TaskConcept[],
  intent: ResolveIntent,
  tiers: ProfileTiers,
): TierScores {
  const expanded = expandTerms(terms)
  const coverage = index.conceptCoverage(concepts)
  const preferred = index.score(expanded, tiers.preferred)
  const fallbackAll = index.score(expanded, tiers.fallback)
  const bestPreferred = bestOf(preferred.keys(), coverage)
  const bestFallback = bestOf(fallbackAll.keys(), coverage)
  const whole = tiers.forceFallback || intent !== 'answer'
  const promoted = new Set<number>()
  if (!whole && bestFallback > bestPreferred) for (const id of fallbackAll.keys()) if ((coverage.get(id) ?? 0) > bestPreferred) promoted.add(id)
  const fallback = whole ? fallbackAll : new Map([...fallbackAll].filter(([id]) => promoted.has(id)))
  const uncovered = concepts.filter((c) => !c.terms.some((t) => index.score([{ term: t, weight: 1, surface: t }], tiers.preferred).size > 0))
  return {
    preferred,
    fallback,
    evidence: isEvidenceIntent(intent) ? index.score(expanded, (s) => s.kind === 'source') : new Map(),
    promoted,
    coverage,
    decision: {
      fallback: whole ? (tiers.forceFallback ? 'forced' : 'detail') : promoted.size > 0 ? 'facts' : 'none',
      preferred_coverage: Number(bestPreferred.toFixed(3)),
      fallback_coverage: Number(bestFallback.toFixed(3)),
      uncovered: uncovered.map((c) => c.surface),
    },
  }
}

/** The persona kind of a section (index in {@link PERSONA_KINDS}), or -1. */
function personaKind(section: IndexedSection): number {
  // The file name and headings, not the folders: every split under compiled/splits/founder-voice/ is not a voice section.
  const text = `${posix.basename(section.path)} ${section.headingPath.join(' ')}`
  return PERSONA_KINDS.findIndex((kind) => kind.test(text))
}

/** The candidates of one pack: relevant sections per tier, core views, persona sections; one per section, best group kept. */
function collectCandidates(packIndex: number, pack: LoadedPack, index: PackIndex, tiers: ProfileTiers, scores: TierScores): Candidate[] {
  const best = Math.max(0, ...scores.preferred.values(), ...scores.fallback.values(), ...scores.evidence.values())
  const threshold = best * RELEVANCE_FLOOR
  const candidates = new Map<number, Candidate>()
  const add = (section: IndexedSection, score: number, group: number, reason: PieceReason, rank = 0): void => {
    const existing = candidates.get(section.id)
    if (existing && existing.group <= group) return
    const coverage = scores.coverage.get(section.id) ?? 0
    candidates.set(section.id, { packIndex, section, score, norm: best > 0 ? score / best : 0, group, reason, coverage, rank })
  }
  const addScored = (scored: Map<number, number>, group: number, reason: PieceReason): void => {
    for (const [id, score] of scored) {
      const section = index.sections[id]
      // A promoted fallback section answers more of the task than any preferred view: it ranks with them, whatever its BM25 score.
      if (section && scores.promoted.has(id)) add(section, score, 1, reason)
      else if (section && score >= threshold) add(section, score, group, reason)
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
  if (pack.item.runtime?.mode === 'persona') addPersona(index, tiers, scores, add, (section) => candidates.delete(section.id))
  return [...candidates.values()]
}

/**
 * Persona packs: voice, values, taboos, boundaries, usage guides (one of each
 * kind before a second of any). Each kind comes from the preferred views
 * when they have it, else from the fallback tier (a persona whose splits
 * cover only its voice still brings its values and taboos from the
 * document), never from both.
 */
function addPersona(
  index: PackIndex,
  tiers: ProfileTiers,
  scores: TierScores,
  add: (section: IndexedSection, score: number, group: number, reason: PieceReason, rank?: number) => void,
  drop: (section: IndexedSection) => void,
): void {
  const byKind = new Map<number, { preferred: IndexedSection[]; fallback: IndexedSection[] }>()
  for (const section of index.sections) {
    if (section.kind === 'source') continue
    const tier = tiers.preferred(section) ? 'preferred' : tiers.fallback(section) ? 'fallback' : undefined
    const kind = tier ? personaKind(section) : -1
    if (!tier || kind < 0) continue
    let entry = byKind.get(kind)
    if (!entry) byKind.set(kind, (entry = { preferred: [], fallback: [] }))
    entry[tier].push(section)
  }
  for (const [kind, entry] of byKind) {
    const [used, unused] = entry.preferred.length > 0 ? [entry.preferred, entry.fallback] : [entry.fallback, entry.preferred]
    used.forEach((section, nth) => {
      add(section, scores.preferred.get(section.id) ?? scores.fallback.get(section.id) ?? 0, 0, 'persona', nth * PERSONA_KINDS.length + kind)
    })
    // The same kind from the other tier (the document section a split was cut from) is not a candidate at all.
    for (const section of unused) drop(section)
  }
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

/**
 * A needs-review pack surfaces its gaps whatever the task (status rules): every
 * claim its source map marks missing and every chapter its compile run marks
 * missing or conflicting, as warnings.
 */
function reviewGaps(pack: LoadedPack, index: PackIndex): CompileWarning[] {
  if (pack.item.status !== 'needs-review') return []
  const gaps: CompileWarning[] = []
  for (const claim of index.evidence.claims) {
    if (claim.status === 'missing')
      gaps.push({ severity: 'warning', path: 'indexes/source-map.json', code: 'review_gap', message: `Gap under review: ${claim.text}` })
  }
  for (const chapter of index.evidence.compileRun?.chapters ?? []) {
    if (chapter.coverage === 'missing' || chapter.coverage === 'conflict') {
      gaps.push({
        severity: 'warning',
        path: chapter.path ?? index.evidence.compileRun?.path ?? 'runs/',
        code: 'review_gap',
        message: `Gap under review: chapter "${chapter.title}" is ${chapter.coverage === 'conflict' ? 'in conflict' : 'missing'}.`,
      })
    }
  }
  return gaps
}

/** Task terms no section of the pack has at all. */
function uncoveredTerms(index: PackIndex, terms: readonly WeightedTerm[]): Set<string> {
  const uncovered = new Set<string>()
  for (const term of terms) if (index.documentFrequency(term.term) === 0) uncovered.add(term.term)
  return uncovered
}

/**
 * The concepts that tell a pack's sections apart: those its name and guide
 * title do not name (every section of an Acme Widget pack is about the
 * widget, and a document's title heading sits over each of its sections).
 * All of them when the task names nothing else.
 * @example
 * decisiveConcepts(acmeWidgetPack, taskConcepts(queryTerms('Acme Widget price'))).map((c) => c.surface) // ['price']
 */
export function decisiveConcepts(pack: LoadedPack, concepts: readonly TaskConcept[]): TaskConcept[] {
  const title = /^#[ \t]+(.+)$/mu.exec(pack.body)?.[1] ?? ''
  const subject = termSet(`${pack.item.name.replace(/-/gu, ' ')} ${title}`)
  const decisive = concepts.filter((c) => !c.terms.some((t) => subject.has(t)))
  return decisive.length > 0 ? decisive : [...concepts]
}

/** An info warning when the fallback was used because the preferred views do not answer the task. */
function decisionWarnings(decision: PlanDecision, pack: LoadedPack): CompileWarning[] {
  if (decision.fallback !== 'facts') return []
  const what = pack.item.profile === 'document-first' ? (pack.item.metadata?.primaryDocument ?? 'documents/') : 'the fallback pages'
  return [
    {
      severity: 'info',
      path: what,
      code: 'fallback_used',
      message:
        `The runtime views cover ${Math.round(decision.preferred_coverage * 100)} % of what the task asks` +
        `${decision.uncovered.length > 0 ? ` (not: ${decision.uncovered.join(', ')})` : ''}; sections of ${what} that cover more are used.`,
    },
  ]
}

/**
 * Plans one pack: its candidates for the task, its warnings (status, trust,
 * profile gaps) and the facts it lacks. `packIndex` is the pack's position
 * among the resolved packs.
 * @example
 * const terms = queryTerms(task)
 * const plan = planPack(pack, 0, await cache.get(pack), terms, taskConcepts(terms), 'answer', 'recommended')
 * plan.candidates.length
 */
export function planPack(
  pack: LoadedPack,
  packIndex: number,
  index: PackIndex,
  terms: readonly WeightedTerm[],
  concepts: readonly TaskConcept[],
  intent: ResolveIntent,
  grounding: PackGrounding,
): PackPlan {
  const tiers = profileTiers(pack, index, intent)
  const decisive = decisiveConcepts(pack, concepts)
  const scores = scoreTiers(index, terms, decisive, intent, tiers)
  return {
    pack,
    index,
    grounding,
    // v0.7 layers: the task's ontology subgraph and answer records, ranked with the runtime views.
    candidates: [...collectCandidates(packIndex, pack, index, tiers, scores), ...layerCandidates(packIndex, index, decisive)],
    warnings: [
      ...packUseWarnings(pack.item).map((d) => toWarning(d, 'KNOWLEDGE.md')),
      ...tiers.warnings,
      ...decisionWarnings(scores.decision, pack),
      ...reviewGaps(pack, index),
    ],
    decision: scores.decision,
    missing: [...tiers.missing, ...missingForTask(index, terms)],
    uncovered: uncoveredTerms(index, terms),
  }
}
