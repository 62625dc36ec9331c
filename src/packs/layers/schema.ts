/**
 * Records of the v0.7 structured layers: `ontology/` (concepts, relations,
 * claims, evidence, constraints, coverage, decision gates, action types) and
 * `answers/` (questions, answer blocks, citation targets). The standard gives
 * their meaning and a few example fields, not a schema: records are read
 * leniently (unknown fields kept, snake_case keys read as camelCase, a few
 * synonyms accepted), and a record without the fields the resolver needs is a
 * diagnostic.
 */
import { z } from 'zod'

const text = z.string().trim().min(1)
const ids = z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string().min(1))).optional()
/** A source reference: `sources/x.md#L3`, or `{ path, anchor }`. */
const SourceRef = z.union([z.string().min(1), z.object({ path: z.string().min(1), anchor: z.string().optional() }).passthrough()])
export type SourceRef = z.infer<typeof SourceRef>

/**
 * The ontology manifest (`ontology/ontology.json`): name, scope, files, and the review state of the graph.
 * @example
 * OntologyManifest.parse({ name: 'acme', status: 'reviewed', files: ['claims.json'] })
 */
export const OntologyManifest = z
  .object({
    name: z.string().optional(),
    summary: z.string().optional(),
    scope: z.unknown().optional(),
    status: z.string().optional(),
    files: z.array(z.union([z.string(), z.object({ path: z.string() }).passthrough()])).optional(),
  })
  .passthrough()
export type OntologyManifest = z.infer<typeof OntologyManifest>

/**
 * A concept (`concepts.json`): an id, a label and its aliases.
 * @example
 * Concept.parse({ id: 'team-plan', label: 'Team plan', aliases: ['team tier'] })
 */
export const Concept = z
  .object({ id: text, label: text, aliases: z.array(z.string()).optional(), description: z.string().optional(), status: z.string().optional() })
  .passthrough()
export type Concept = z.infer<typeof Concept>

/**
 * A typed relation between two concepts (`relations.json`); generated relations stay `candidate` until reviewed.
 * @example
 * Relation.parse({ from: 'team-plan', to: 'acme-widget', type: 'plan-of' })
 */
export const Relation = z.object({ id: z.string().optional(), from: text, to: text, type: text, status: z.string().optional() }).passthrough()
export type Relation = z.infer<typeof Relation>

/**
 * A claim (`claims.json`) with its evidence state and review state.
 * @example
 * OntologyClaim.parse({ id: 'c1', text: 'Team costs 29 USD', conceptIds: ['team-plan'], evidenceStatus: 'verified', reviewStatus: 'approved', evidenceIds: ['e1'] })
 */
export const OntologyClaim = z
  .object({
    id: text,
    text,
    conceptIds: ids,
    evidenceIds: ids,
    sourceRefs: z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(SourceRef)).optional(),
    evidenceStatus: z.string().optional(),
    reviewStatus: z.string().optional(),
  })
  .passthrough()
export type OntologyClaim = z.infer<typeof OntologyClaim>

/**
 * Evidence (`evidence.json`): a source reference or excerpt and its verification state.
 * `kind: signal | action-log` records are observations, never evidence for a claim.
 * @example
 * EvidenceRecord.parse({ id: 'e1', sourceRef: 'sources/pricing.md#L3', status: 'verified' })
 */
export const EvidenceRecord = z
  .object({
    id: text,
    claimIds: ids,
    sourceRef: SourceRef.optional(),
    excerpt: z.string().optional(),
    status: z.string().optional(),
    kind: z.string().optional(),
  })
  .passthrough()
export type EvidenceRecord = z.infer<typeof EvidenceRecord>

/**
 * A constraint (`constraints.json`): forbidden claims, tone, compliance or channel rules.
 * @example
 * Constraint.parse({ id: 'k1', kind: 'forbidden-claim', text: 'Never call it medically certified', conceptIds: ['acme-widget'] })
 */
export const Constraint = z
  .object({ id: text, text, kind: z.string().optional(), conceptIds: ids, claimIds: ids, severity: z.string().optional() })
  .passthrough()
export type Constraint = z.infer<typeof Constraint>

/**
 * A coverage row (`coverage.json`): a concept for an audience, scenario or channel, and its state
 * (ready, covered, missing-evidence, missing-material, needs-review, blocked).
 * @example
 * CoverageRow.parse({ conceptIds: ['team-plan'], audience: 'buyer', status: 'missing-evidence' })
 */
export const CoverageRow = z
  .object({
    id: z.string().optional(),
    conceptIds: ids,
    status: text,
    audience: z.unknown().optional(),
    scenario: z.unknown().optional(),
    channel: z.unknown().optional(),
  })
  .passthrough()
export type CoverageRow = z.infer<typeof CoverageRow>

/**
 * An operational record (`decision-gates.json`, `action-types.json`): declarative data, never executed.
 * @example
 * OperationalRecord.parse({ id: 'gate-evidence', name: 'Evidence gate', text: 'Claims need verified evidence' })
 */
export const OperationalRecord = z.object({ id: text, name: z.string().optional(), text: z.string().optional(), conceptIds: ids, claimIds: ids }).passthrough()
export type OperationalRecord = z.infer<typeof OperationalRecord>

/**
 * A question of `answers/questions.json` with its wording variants and answer blocks.
 * @example
 * Question.parse({ id: 'q1', question: 'Can Acme Widget work offline?', answerBlockIds: ['a1'] })
 */
export const Question = z
  .object({
    id: text,
    question: text,
    variants: z.array(z.string()).optional(),
    answerBlockIds: ids,
    status: z.string().optional(),
    riskLevel: z.string().optional(),
  })
  .passthrough()
export type Question = z.infer<typeof Question>

/**
 * A reviewed answer unit of `answers/answer-blocks.json`.
 * @example
 * AnswerBlock.parse({ id: 'a1', answer: 'Yes, offline queueing.', evidenceStatus: 'verified', reviewStatus: 'approved' })
 */
export const AnswerBlock = z
  .object({
    id: text,
    answer: text,
    format: z.string().optional(),
    claimIds: ids,
    citationTargetIds: ids,
    evidenceStatus: z.string().optional(),
    reviewStatus: z.string().optional(),
    lastReviewed: z.string().optional(),
  })
  .passthrough()
export type AnswerBlock = z.infer<typeof AnswerBlock>

/**
 * A citation candidate of `answers/citation-targets.json` (not proof that anyone cited it).
 * @example
 * CitationTarget.parse({ id: 't1', sourceRef: 'documents/guide.md#offline', heading: 'Offline mode' })
 */
export const CitationTarget = z
  .object({ id: text, sourceRef: SourceRef.optional(), url: z.string().optional(), heading: z.string().optional(), health: z.string().optional() })
  .passthrough()
export type CitationTarget = z.infer<typeof CitationTarget>

/** Synonyms read as the schema's field names (after snake_case → camelCase). */
const SYNONYMS: Record<string, string> = {
  name: 'label',
  title: 'label',
  claim: 'text',
  statement: 'text',
  rule: 'text',
  description: 'text',
  source: 'from',
  subject: 'from',
  target: 'to',
  object: 'to',
  relation: 'type',
  predicate: 'type',
  concepts: 'conceptIds',
  conceptId: 'conceptIds',
  evidence: 'evidenceIds',
  evidenceId: 'evidenceIds',
  claimId: 'claimIds',
  sources: 'sourceRefs',
  sourceRef: 'sourceRefs',
  review: 'reviewStatus',
  verificationState: 'status',
  answerBlocks: 'answerBlockIds',
  citationTargets: 'citationTargetIds',
  targetKind: 'targetKind',
}

/** The synonyms that apply to one record kind (a claim's `sourceRef` is its `sourceRefs`, an evidence record's stays `sourceRef`). */
const KIND_SYNONYMS: Record<string, readonly string[]> = {
  concept: ['name', 'title'],
  relation: ['source', 'subject', 'target', 'object', 'relation', 'predicate'],
  claim: ['claim', 'statement', 'description', 'concepts', 'conceptId', 'evidence', 'evidenceId', 'sources', 'sourceRef', 'review'],
  evidence: ['claimId', 'verificationState'],
  constraint: ['rule', 'description', 'claim', 'statement', 'concepts', 'conceptId', 'claimId'],
  coverage: ['concepts', 'conceptId'],
  operational: ['description', 'rule', 'concepts', 'conceptId', 'claimId'],
  question: ['answerBlocks'],
  answer: ['claimId', 'citationTargets', 'review'],
  target: [],
}

/** Record kinds with their schema. */
export const RECORD_SCHEMAS = {
  concept: Concept,
  relation: Relation,
  claim: OntologyClaim,
  evidence: EvidenceRecord,
  constraint: Constraint,
  coverage: CoverageRow,
  operational: OperationalRecord,
  question: Question,
  answer: AnswerBlock,
  target: CitationTarget,
} as const
export type RecordKind = keyof typeof RECORD_SCHEMAS

const camel = (key: string): string => key.replace(/[_-]([a-z])/gu, (_, c: string) => c.toUpperCase())

/**
 * A record with snake_case keys as camelCase and the kind's synonyms as the schema's names (a field already present wins).
 * @example
 * normaliseRecord({ claim_id: 'c1', statement: 'x' }, 'claim') // { claimId: 'c1', text: 'x' }
 */
export function normaliseRecord(raw: unknown, kind: RecordKind): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) out[camel(key)] = value
  // `claim_id`, `concept_id`, … as the record's own id.
  const ownId = { claim: 'claimId', concept: 'conceptId', question: 'questionId', answer: 'answerBlockId' }[kind as string]
  if (out.id === undefined && ownId && typeof out[ownId] === 'string') out.id = out[ownId]
  for (const synonym of KIND_SYNONYMS[kind] ?? []) {
    const to = SYNONYMS[synonym]
    if (to && out[to] === undefined && out[synonym] !== undefined) out[to] = out[synonym]
  }
  return out
}
