/**
 * Loading a pack's v0.7 layers (`ontology/`, `answers/`) into one graph:
 * records read leniently (a bad file or record is a diagnostic, the rest is
 * used), references between records checked, and every source reference
 * kept inside the pack. Nothing in these folders is ever executed.
 */
import { posix } from 'node:path'
import { normalisePackPath, readBounded, resolvePackPath } from '../files/paths.js'
import type { PackResource } from '../files/resources.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'
import {
  OntologyManifest,
  RECORD_SCHEMAS,
  normaliseRecord,
  type AnswerBlock,
  type CitationTarget,
  type Concept,
  type Constraint,
  type CoverageRow,
  type EvidenceRecord,
  type OntologyClaim,
  type OperationalRecord,
  type Question,
  type RecordKind,
  type Relation,
  type SourceRef,
} from './schema.js'

/** The records of a pack's ontology and answer layers, by id where they have one. */
export interface LayerGraph {
  /** The ontology manifest, when the pack has one. */
  manifest?: { path: string; name?: string; status?: string }
  concepts: Map<string, Concept>
  relations: Relation[]
  claims: Map<string, OntologyClaim>
  evidence: Map<string, EvidenceRecord>
  constraints: Constraint[]
  coverage: CoverageRow[]
  /** Decision gates and action types: declarative data, never executed. */
  operational: (OperationalRecord & { file: string })[]
  questions: Question[]
  answers: Map<string, AnswerBlock>
  targets: Map<string, CitationTarget>
  /** Ids of signals and action logs (observations: never evidence for a claim). */
  observations: Set<string>
  /** The file each record kind came from. */
  files: Partial<Record<RecordKind, string>>
  /** sha256 of each file read. */
  hashes: Map<string, string>
  issues: PackDiagnostic[]
}

/** Files of the layers and the record kind each holds (`null`: parsed and checked, never put in context). */
const LAYER_FILES: Record<string, RecordKind | 'observation' | null> = {
  'ontology/concepts.json': 'concept',
  'ontology/relations.json': 'relation',
  'ontology/claims.json': 'claim',
  'ontology/evidence.json': 'evidence',
  'ontology/constraints.json': 'constraint',
  'ontology/coverage.json': 'coverage',
  'ontology/decision-gates.json': 'operational',
  'ontology/action-types.json': 'operational',
  'ontology/signals.json': 'observation',
  'ontology/action-logs.json': 'observation',
  'ontology/objectives.json': null,
  'ontology/resources.json': null,
  'ontology/feedback.json': null,
  'answers/questions.json': 'question',
  'answers/answer-blocks.json': 'answer',
  'answers/citation-targets.json': 'target',
  'answers/source-surfaces.json': null,
  'answers/structured-data.json': null,
  'answers/monitoring-runs.json': null,
}
const MAX_LAYER_BYTES = 8 * 2 ** 20
const DEFAULT_MANIFEST = 'ontology/ontology.json'

/**
 * True when a pack has v0.7 layers: an `ontology/` or `answers/` file, or a declared manifest.
 * @example
 * if (hasLayers(pack, resources)) graph = await loadLayers(pack, resources)
 */
export function hasLayers(pack: LoadedPack, resources: readonly PackResource[]): boolean {
  return (
    pack.item.metadata?.primaryOntology !== undefined ||
    pack.item.metadata?.primaryAnswers !== undefined ||
    resources.some((r) => r.kind === 'ontology' || r.kind === 'answers')
  )
}

function emptyGraph(): LayerGraph {
  return {
    concepts: new Map(),
    relations: [],
    claims: new Map(),
    evidence: new Map(),
    constraints: [],
    coverage: [],
    operational: [],
    questions: [],
    answers: new Map(),
    targets: new Map(),
    observations: new Set(),
    files: {},
    hashes: new Map(),
    issues: [],
  }
}

/** The records of a layer file: an array, or an object holding one (under the file's own name, `items`, `records`, `entries`, or its only array). */
function recordsOf(data: unknown, path: string): unknown[] | undefined {
  if (Array.isArray(data)) return data
  if (typeof data !== 'object' || data === null) return undefined
  const record = data as Record<string, unknown>
  const stem = posix.basename(path, '.json').replace(/-([a-z])/gu, (_, c: string) => c.toUpperCase())
  for (const key of [stem, posix.basename(path, '.json'), 'items', 'records', 'entries']) if (Array.isArray(record[key])) return record[key] as unknown[]
  const arrays = Object.values(record).filter(Array.isArray)
  return arrays.length === 1 ? (arrays[0] as unknown[]) : undefined
}

async function readJson(pack: LoadedPack, path: string, graph: LayerGraph, field?: string): Promise<unknown> {
  const resolved = await resolvePackPath(pack.realRoot, path, field)
  if (!resolved.ok) {
    graph.issues.push(resolved.diagnostic)
    return undefined
  }
  if (!resolved.exists) {
    graph.issues.push({
      severity: 'error',
      code: 'path_missing',
      path,
      ...(field ? { field } : {}),
      message: `${field ?? path} names ${path}, which does not exist.`,
    })
    return undefined
  }
  try {
    const read = await readBounded(resolved.absPath, MAX_LAYER_BYTES)
    if (read.truncated) {
      graph.issues.push({
        severity: 'warning',
        code: 'file_too_large',
        path,
        message: `${path} is ${read.size} bytes, over the ${MAX_LAYER_BYTES}-byte limit; not used.`,
      })
      return undefined
    }
    graph.hashes.set(path, read.hash)
    return JSON.parse(read.text) as unknown
  } catch (error) {
    graph.issues.push({ severity: 'error', code: 'layer_invalid', path, message: `${path} is not readable JSON (${(error as Error).message}).` })
    return undefined
  }
}

/** Parses the records of one file into the graph; invalid records are warnings. */
function addRecords(graph: LayerGraph, path: string, kind: RecordKind, list: readonly unknown[]): void {
  graph.files[kind] ??= path
  list.forEach((raw, i) => {
    const parsed = RECORD_SCHEMAS[kind].safeParse(normaliseRecord(raw, kind))
    if (!parsed.success) {
      const first = parsed.error.issues[0]
      graph.issues.push({
        severity: 'warning',
        code: 'layer_invalid',
        path,
        field: `${i}${first?.path.length ? `.${first.path.join('.')}` : ''}`,
        message: `Record ${i} of ${path} is invalid (${first?.message ?? 'bad shape'}); ignored.`,
      })
      return
    }
    const r = parsed.data as Record<string, unknown> & { id?: string }
    if (kind === 'concept') graph.concepts.set(r.id as string, r as Concept)
    else if (kind === 'relation') graph.relations.push(r as Relation)
    else if (kind === 'claim') graph.claims.set(r.id as string, r as OntologyClaim)
    else if (kind === 'evidence') {
      graph.evidence.set(r.id as string, r as EvidenceRecord)
      if (/signal|action-?log/iu.test(String(r.kind ?? ''))) graph.observations.add(r.id as string)
    } else if (kind === 'constraint') graph.constraints.push(r as Constraint)
    else if (kind === 'coverage') graph.coverage.push(r as CoverageRow)
    else if (kind === 'operational') graph.operational.push({ ...(r as OperationalRecord), file: path })
    else if (kind === 'question') graph.questions.push(r as Question)
    else if (kind === 'answer') graph.answers.set(r.id as string, r as AnswerBlock)
    else graph.targets.set(r.id as string, r as CitationTarget)
  })
}

async function readManifest(pack: LoadedPack, resources: readonly PackResource[], graph: LayerGraph): Promise<void> {
  const declared = pack.item.metadata?.primaryOntology
  const path = declared ?? (resources.some((r) => r.path === DEFAULT_MANIFEST) ? DEFAULT_MANIFEST : undefined)
  if (!path) return
  const data = await readJson(pack, path, graph, declared ? 'metadata.primaryOntology' : undefined)
  if (data === undefined) return
  const parsed = OntologyManifest.safeParse(data)
  if (!parsed.success) {
    graph.issues.push({ severity: 'warning', code: 'layer_invalid', path, message: `The ontology manifest ${path} is not an object; ignored.` })
    return
  }
  graph.manifest = { path, ...(parsed.data.name ? { name: parsed.data.name } : {}), ...(parsed.data.status ? { status: parsed.data.status } : {}) }
  const listed = resources.map((r) => r.path)
  for (const entry of parsed.data.files ?? []) {
    const raw = typeof entry === 'string' ? entry : entry.path
    const inFolder = raw.includes('/') ? raw : `${posix.dirname(path)}/${raw}`
    const checked = normalisePackPath(inFolder)
    if (!checked.ok) {
      graph.issues.push({ severity: 'error', code: 'path_escape', path, field: 'files', message: `The manifest lists "${raw}", which ${checked.reason}.` })
    } else if (!listed.includes(checked.path)) {
      graph.issues.push({
        severity: 'warning',
        code: 'path_missing',
        path,
        field: 'files',
        message: `The manifest lists ${checked.path}, which does not exist.`,
      })
    }
  }
}

/**
 * Reads a pack's ontology and answer layers (only the files listed in
 * `resources`, bounded) and checks them: JSON, record shapes, references
 * between records, source references inside the pack. Never throws for bad content.
 * @example
 * const graph = await loadLayers(pack, listing.resources)
 * graph.claims.get('claim-team-price')?.reviewStatus // 'approved'
 */
export async function loadLayers(pack: LoadedPack, resources: readonly PackResource[]): Promise<LayerGraph> {
  const graph = emptyGraph()
  await readManifest(pack, resources, graph)
  const primaryAnswers = pack.item.metadata?.primaryAnswers
  if (primaryAnswers && !resources.some((r) => r.path === primaryAnswers)) {
    graph.issues.push({
      severity: 'error',
      code: 'path_missing',
      field: 'metadata.primaryAnswers',
      path: primaryAnswers,
      message: `\`metadata.primaryAnswers\` names ${primaryAnswers}, which does not exist.`,
    })
  }
  for (const resource of resources) {
    if (!(resource.path in LAYER_FILES) && resource.path !== primaryAnswers) continue
    const kind = LAYER_FILES[resource.path] ?? (resource.path === primaryAnswers ? 'question' : null)
    const data = await readJson(pack, resource.path, graph)
    if (data === undefined || kind === null) continue
    const list = recordsOf(data, resource.path)
    if (!list) {
      graph.issues.push({ severity: 'warning', code: 'layer_invalid', path: resource.path, message: `${resource.path} holds no list of records; ignored.` })
      continue
    }
    if (kind === 'observation') {
      for (const r of list)
        if (typeof r === 'object' && r !== null && typeof (r as { id?: unknown }).id === 'string') graph.observations.add((r as { id: string }).id)
      continue
    }
    addRecords(graph, resource.path, kind, list)
  }
  checkReferences(graph)
  await checkSourceRefs(pack, graph)
  return graph
}

/** Ids a record names that the graph lacks, as warnings (`layer_ref_missing`). */
function checkReferences(graph: LayerGraph): void {
  const dangling = (path: string | undefined, owner: string, what: string, named: readonly string[] | undefined, known: (id: string) => boolean): void => {
    const missing = (named ?? []).filter((id) => !known(id))
    if (missing.length > 0)
      graph.issues.push({
        severity: 'warning',
        code: 'layer_ref_missing',
        path: path ?? 'ontology/',
        message: `${owner} names unknown ${what}: ${missing.join(', ')}.`,
      })
  }
  const concept = (id: string): boolean => graph.concepts.size === 0 || graph.concepts.has(id)
  for (const claim of graph.claims.values()) {
    dangling(graph.files.claim, `Claim "${claim.id}"`, 'concepts', claim.conceptIds, concept)
    dangling(graph.files.claim, `Claim "${claim.id}"`, 'evidence', claim.evidenceIds, (id) => graph.evidence.has(id) || graph.observations.has(id))
    const observed = (claim.evidenceIds ?? []).filter((id) => graph.observations.has(id))
    if (observed.length > 0)
      graph.issues.push({
        severity: 'warning',
        code: 'observation_as_evidence',
        path: graph.files.claim ?? 'ontology/claims.json',
        message: `Claim "${claim.id}" cites signals or action logs (${observed.join(', ')}) as evidence; they are observations, not proof.`,
      })
  }
  for (const relation of graph.relations)
    dangling(graph.files.relation, `Relation ${relation.from} → ${relation.to}`, 'concepts', [relation.from, relation.to], concept)
  for (const constraint of graph.constraints) {
    dangling(graph.files.constraint, `Constraint "${constraint.id}"`, 'concepts', constraint.conceptIds, concept)
    dangling(graph.files.constraint, `Constraint "${constraint.id}"`, 'claims', constraint.claimIds, (id) => graph.claims.has(id))
  }
  for (const question of graph.questions)
    dangling(graph.files.question, `Question "${question.id}"`, 'answer blocks', question.answerBlockIds, (id) => graph.answers.has(id))
  for (const block of graph.answers.values()) {
    dangling(graph.files.answer, `Answer block "${block.id}"`, 'claims', block.claimIds, (id) => graph.claims.size === 0 || graph.claims.has(id))
    dangling(graph.files.answer, `Answer block "${block.id}"`, 'citation targets', block.citationTargetIds, (id) => graph.targets.has(id))
  }
}

/**
 * `sources/x.md#L3` or `{ path, anchor }` as `path` and `path#anchor`; undefined for a URL.
 * @example
 * sourceRefParts('sources/pricing.md#L3') // { path: 'sources/pricing.md', anchor: 'sources/pricing.md#L3' }
 */
export function sourceRefParts(ref: SourceRef): { path: string; anchor: string } | undefined {
  const [path = '', hash] = typeof ref === 'string' ? ref.split('#', 2) : [ref.path, ref.anchor?.replace(/^#/u, '')]
  if (/^[a-z][a-z0-9+.-]*:/iu.test(path)) return undefined
  return { path, anchor: hash ? `${path}#${hash}` : path }
}

/** Every source reference of claims, evidence and citation targets resolves inside the pack (errors otherwise, as for source maps). */
async function checkSourceRefs(pack: LoadedPack, graph: LayerGraph): Promise<void> {
  const refs: { ref: SourceRef; path: string; owner: string }[] = []
  for (const c of graph.claims.values()) for (const ref of c.sourceRefs ?? []) refs.push({ ref, path: graph.files.claim ?? '', owner: `Claim "${c.id}"` })
  for (const e of graph.evidence.values()) if (e.sourceRef) refs.push({ ref: e.sourceRef, path: graph.files.evidence ?? '', owner: `Evidence "${e.id}"` })
  for (const t of graph.targets.values()) if (t.sourceRef) refs.push({ ref: t.sourceRef, path: graph.files.target ?? '', owner: `Citation target "${t.id}"` })
  const checked = new Map<string, boolean>()
  for (const { ref, path, owner } of refs) {
    const parts = sourceRefParts(ref)
    if (!parts || checked.has(parts.path)) continue
    const resolved = await resolvePackPath(pack.realRoot, parts.path)
    checked.set(parts.path, resolved.ok && resolved.exists)
    if (!resolved.ok) graph.issues.push({ ...resolved.diagnostic, path, message: `${owner}: ${resolved.diagnostic.message}` })
    else if (!resolved.exists)
      graph.issues.push({ severity: 'error', code: 'source_missing', path, message: `${owner} cites ${parts.path}, which does not exist.` })
  }
}
