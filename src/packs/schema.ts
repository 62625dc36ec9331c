/**
 * Schemas and types of the knowledge-pack client. A schema and its inferred
 * type share a name. Field sets follow the Agent Knowledge standard's
 * `KnowledgeCatalogItem` (seed 000, Step 2) plus the optional frontmatter the
 * standard defines (grounding, producedBy, …).
 */
import { z } from 'zod'
import { formatDiagnostic, GROUNDING_POLICIES, STANDARD_PACK_TYPES } from './vocabulary.js'

/**
 * Lifecycle status of a pack.
 * @example
 * PackStatus.safeParse('published').success // false
 */
export const PackStatus = z.enum(['draft', 'ready', 'needs-review', 'stale', 'disputed', 'archived'])
export type PackStatus = z.infer<typeof PackStatus>

/**
 * Review level of a pack's content. Missing means unreviewed.
 * @example
 * PackTrust.parse('user-confirmed')
 */
export const PackTrust = z.enum(['unreviewed', 'user-confirmed', 'official', 'external'])
export type PackTrust = z.infer<typeof PackTrust>

/**
 * Which folder is the primary fact source. Missing means `wiki-first` (v0.5 compatibility).
 * @example
 * PackProfile.options // ['document-first', 'wiki-first', 'hybrid']
 */
export const PackProfile = z.enum(['document-first', 'wiki-first', 'hybrid'])
export type PackProfile = z.infer<typeof PackProfile>

/**
 * How a pack is used at run time: facts (`data`) or a voice to adopt (`persona`).
 * @example
 * RuntimeMode.parse('persona')
 */
export const RuntimeMode = z.enum(['data', 'persona'])
export type RuntimeMode = z.infer<typeof RuntimeMode>

/**
 * A pack's own citation policy (frontmatter `grounding`).
 * @example
 * PackGrounding.parse(frontmatter.grounding) // 'none' | 'recommended' | 'required'
 */
export const PackGrounding = z.enum(['none', 'recommended', 'required'])
export type PackGrounding = z.infer<typeof PackGrounding>

/**
 * The resolver's citation policy for one request, in the standard's words
 * (`required | recommended | none`). `off` is the older spelling of `none`:
 * accepted on input, never written (see {@link normaliseGrounding}).
 * @example
 * GroundingPolicy.parse('required')
 */
export const GroundingPolicy = z.enum(GROUNDING_POLICIES)
export type GroundingPolicy = z.infer<typeof GroundingPolicy>

/**
 * A grounding policy in the standard's vocabulary (`off` → `none`).
 * @example
 * normaliseGrounding('off') // 'none'
 */
export function normaliseGrounding(policy: GroundingPolicy): PackGrounding {
  return policy === 'off' ? 'none' : policy
}

/**
 * The kinds of producer the standard names (seed 000 writes `skill`, its examples `agent-skill`).
 * A pack's `metadata.producedBy.kind` is kept as written; others get an info diagnostic.
 * @example
 * ProducedByKind.options // ['skill', 'agent-skill', 'tool', 'manual', 'import']
 */
export const ProducedByKind = z.enum(['skill', 'agent-skill', 'tool', 'manual', 'import'])
export type ProducedByKind = z.infer<typeof ProducedByKind>

/**
 * Where a pack was found. Earlier scopes shadow later ones.
 * @example
 * PackScope.parse('project')
 */
export const PackScope = z.enum(['project', 'user', 'extra', 'builtin'])
export type PackScope = z.infer<typeof PackScope>

/**
 * Scopes from highest to lowest precedence.
 * @example
 * SCOPE_PRECEDENCE.indexOf('project') < SCOPE_PRECEDENCE.indexOf('user') // true
 */
export const SCOPE_PRECEDENCE: readonly PackScope[] = ['project', 'user', 'extra', 'builtin']

export { STANDARD_PACK_TYPES }

/**
 * Provenance of the Skill or tool that produced the pack.
 * @example
 * ProducedBy.parse({ kind: 'skill', name: 'brand-product-knowledge-builder', version: '1.0.0' })
 */
export const ProducedBy = z.object({
  /** As written (`skill`, `agent-skill`, `tool`, …). */
  kind: z.string().optional(),
  name: z.string().optional(),
  version: z.string().optional(),
  digest: z.string().optional(),
})
export type ProducedBy = z.infer<typeof ProducedBy>

/**
 * The catalog record of one pack (seed 000, Step 2), plus `scope`, `grounding`
 * and `trust`. `profile` is always filled (missing → `wiki-first`, with a
 * diagnostic); `runtime.mode` defaults to `data`.
 * @example
 * const item = KnowledgeCatalogItem.parse(JSON.parse(line)) // e.g. from `knowhub packs list --json`
 */
export const KnowledgeCatalogItem = z.object({
  name: z.string().min(1),
  description: z.string().min(1),
  type: z.string().min(1),
  status: PackStatus,
  trust: PackTrust.optional(),
  profile: PackProfile.optional(),
  runtime: z.object({ mode: RuntimeMode.optional() }).optional(),
  metadata: z
    .object({
      primaryDocument: z.string().optional(),
      /** v0.7: the ontology manifest (`ontology/ontology.json`). */
      primaryOntology: z.string().optional(),
      /** v0.7.2: the answer map or manifest (`answers/questions.json`). */
      primaryAnswers: z.string().optional(),
      producedBy: ProducedBy.optional(),
    })
    .catchall(z.unknown())
    .optional(),
  version: z.string().optional(),
  language: z.string().optional(),
  grounding: PackGrounding.optional(),
  /** Frontmatter `scope`: the pack's own statement of where it applies (not where it was found: that is `scope`). */
  declaredScope: z.string().optional(),
  /** Frontmatter `compatibility`: what the pack needs from a client (under 500 characters). */
  compatibility: z.string().optional(),
  /** Frontmatter `updated` (ISO date): when the pack's content last changed. */
  updated: z.string().optional(),
  location: z.string(),
  packRoot: z.string(),
  /** Where discovery found the pack (project, user, extra, builtin). */
  scope: PackScope,
  diagnostics: z.array(z.string()),
})
export type KnowledgeCatalogItem = z.infer<typeof KnowledgeCatalogItem>

/**
 * Severity of a diagnostic. `error` makes `knowhub packs validate` fail.
 * @example
 * DiagnosticSeverity.parse('warning')
 */
export const DiagnosticSeverity = z.enum(['error', 'warning', 'info'])
export type DiagnosticSeverity = z.infer<typeof DiagnosticSeverity>

/**
 * Stable diagnostic codes. Messages may change; codes do not.
 * @example
 * if (issue.code === PackDiagnosticCode.NAME_MISMATCH) rename(folder)
 */
export const PackDiagnosticCode = {
  MISSING_DESCRIPTION: 'missing_description',
  MISSING_NAME: 'missing_name',
  MISSING_TYPE: 'missing_type',
  MISSING_STATUS: 'missing_status',
  MISSING_FRONTMATTER: 'missing_frontmatter',
  INVALID_YAML: 'invalid_yaml',
  YAML_REPAIRED: 'yaml_repaired',
  INVALID_FIELD: 'invalid_field',
  INVALID_NAME: 'invalid_name',
  NAME_MISMATCH: 'name_mismatch',
  UNKNOWN_TYPE: 'unknown_type',
  NAMESPACED_TYPE: 'namespaced_type',
  INVALID_STATUS: 'invalid_status',
  PROFILE_DEFAULTED: 'profile_defaulted',
  DOCUMENT_FIRST_GAP: 'document_first_gap',
  PERSONA_BOUNDARIES: 'persona_boundaries_missing',
  ARCHIVED: 'archived',
  DISPUTED: 'disputed',
  PATH_ESCAPE: 'path_escape',
  PATH_MISSING: 'path_missing',
  FILE_TOO_LARGE: 'file_too_large',
  NOT_A_FILE: 'not_a_file',
  UNREADABLE: 'unreadable',
  SYMLINK_LOOP: 'symlink_loop',
  BROKEN_SYMLINK: 'broken_symlink',
  DEPTH_LIMIT: 'depth_limit',
  DIR_LIMIT: 'dir_limit',
  LOCATION_MISSING: 'location_missing',
  NOT_A_DIRECTORY: 'not_a_directory',
  SHADOWED: 'shadowed',
  DUPLICATE: 'duplicate',
  SOURCE_MAP_INVALID: 'source_map_invalid',
  SOURCE_MISSING: 'source_missing',
  CLAIM_STATUS: 'claim_status',
  COMPILE_RUN: 'compile_run',
} as const
export type PackDiagnosticCode = (typeof PackDiagnosticCode)[keyof typeof PackDiagnosticCode]

/**
 * One problem found while scanning, parsing, activating or resolving, with where it is.
 * @example
 * PackDiagnostic.parse({ severity: 'warning', code: 'name_mismatch', field: 'name', message: '…' })
 */
export const PackDiagnostic = z.object({
  severity: DiagnosticSeverity,
  code: z.string(),
  message: z.string(),
  /** A file or folder: absolute for scan problems, pack-relative inside a pack. */
  path: z.string().optional(),
  /** The frontmatter field concerned, dotted (`metadata.primaryDocument`). */
  field: z.string().optional(),
})
export type PackDiagnostic = z.infer<typeof PackDiagnostic>

/** A pack that parsed and passed the validation table: catalog record plus guide body. */
export interface LoadedPack {
  item: KnowledgeCatalogItem
  /** The KNOWLEDGE.md body after the frontmatter (tier 2: the guide). */
  body: string
  /** The parsed frontmatter as written. */
  frontmatter: Record<string, unknown>
  /** Every diagnostic with severity, code and field; `item.diagnostics` is their text. */
  issues: PackDiagnostic[]
  /** sha256 of KNOWLEDGE.md's bytes, `sha256:<hex>`. */
  contentHash: string
  /** The pack root with symlinks resolved: every path the pack names must stay inside it. */
  realRoot: string
}

/** A KNOWLEDGE.md that did not load. `skipped`: a required field is missing or invalid; `quarantined`: it could not be parsed. */
export interface RejectedPack {
  outcome: 'skipped' | 'quarantined'
  location: string
  packRoot: string
  scope: PackScope
  /** The declared name when it could be read. */
  name?: string
  issues: PackDiagnostic[]
}

export { formatDiagnostic }
