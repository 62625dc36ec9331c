/**
 * The validation table of seed 000 applied to parsed frontmatter (pure, no
 * I/O): one check per field group, every problem a diagnostic with its field;
 * required fields that are missing or invalid skip the pack.
 */
import {
  PackGrounding,
  PackProfile,
  PackStatus,
  PackTrust,
  ProducedByKind,
  RuntimeMode,
  STANDARD_PACK_TYPES,
  formatDiagnostic,
  type KnowledgeCatalogItem,
  type PackDiagnostic,
  type PackScope,
  type ProducedBy,
} from '../schema.js'
import { normalisePackPath } from '../files/paths.js'

/** What the validator needs to know about where the file is. */
export interface PackContext {
  /** Absolute path of KNOWLEDGE.md. */
  location: string
  /** Absolute path of the pack folder (as found, symlinks not resolved). */
  packRoot: string
  /** Folder name, compared with `name`. */
  folderName: string
  scope: PackScope
  /** Extra `type` values to accept besides the standard and namespaced ones (`*` accepts all). */
  allowedTypes?: readonly string[]
}

/** Outcome of applying the validation table to one frontmatter. */
export type FrontmatterValidation =
  { outcome: 'loaded'; item: KnowledgeCatalogItem; issues: PackDiagnostic[] } | { outcome: 'skipped'; name?: string; issues: PackDiagnostic[] }

const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/u
const NAMESPACED_TYPE = /^[A-Za-z0-9][A-Za-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._/-]*$/u
const SEMVER = /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/u
const standardTypes = new Set<string>(STANDARD_PACK_TYPES)

function issue(severity: PackDiagnostic['severity'], code: string, field: string | undefined, message: string): PackDiagnostic {
  return field === undefined ? { severity, code, message } : { severity, code, field, message }
}

function optionalString(data: Record<string, unknown>, field: string, issues: PackDiagnostic[]): string | undefined {
  const value = data[field]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value.trim() || undefined
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value instanceof Date) return value.toISOString().slice(0, 10)
  issues.push(issue('warning', 'invalid_field', field, `\`${field}\` should be a string; ignored.`))
  return undefined
}

function enumField<T extends string>(
  value: unknown,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  field: string,
  issues: PackDiagnostic[],
  fallbackNote: string,
): T | undefined {
  if (value === undefined || value === null) return undefined
  const parsed = schema.safeParse(typeof value === 'string' ? value.trim() : value)
  if (parsed.success) return parsed.data
  issues.push(issue('warning', 'invalid_field', field, `\`${field}\` is "${String(value)}", not a known value; ${fallbackNote}.`))
  return undefined
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}

/**
 * True for a standard type, a namespaced type (`custom:x`, `acme:y`) or one the config allows.
 * @example
 * isAcceptedType('custom:acme-playbook') // 'namespaced'
 * isAcceptedType('marketing-notes')      // undefined
 */
export function isAcceptedType(type: string, allowedTypes: readonly string[] = []): 'standard' | 'namespaced' | 'allowed' | undefined {
  if (standardTypes.has(type)) return 'standard'
  if (allowedTypes.includes(type) || allowedTypes.includes('*')) return 'allowed'
  if (NAMESPACED_TYPE.test(type)) return 'namespaced'
  return undefined
}

/** Diagnostics collected while checking one frontmatter, and whether the pack must be skipped. */
interface Checks {
  issues: PackDiagnostic[]
  skip: boolean
}

/** `name`: required; falls back to the folder name so that a pack stays addressable. */
function checkName(data: Record<string, unknown>, context: PackContext, checks: Checks): string {
  const { issues } = checks
  const name = optionalString(data, 'name', issues)
  if (name === undefined) {
    issues.push(issue('error', 'missing_name', 'name', `\`name\` is missing; using the folder name "${context.folderName}".`))
    return context.folderName
  }
  if (name.length > 64) issues.push(issue('warning', 'invalid_name', 'name', `\`name\` is ${name.length} characters; the limit is 64.`))
  if (!NAME_PATTERN.test(name)) {
    issues.push(issue('warning', 'invalid_name', 'name', `\`name\` "${name}" should use only lowercase letters, digits and single hyphens.`))
  }
  if (name !== context.folderName) {
    issues.push(
      issue('warning', 'name_mismatch', 'name', `\`name\` "${name}" does not match the folder name "${context.folderName}"; loaded for compatibility.`),
    )
  }
  return name
}

/** `description`: required; without it catalog activation cannot work. */
function checkDescription(data: Record<string, unknown>, checks: Checks): string | undefined {
  const description = optionalString(data, 'description', checks.issues)
  if (description === undefined) {
    checks.issues.push(
      issue('error', 'missing_description', 'description', '`description` is missing; the pack is skipped because catalog activation cannot work without it.'),
    )
    checks.skip = true
  } else if (description.length > 1024) {
    checks.issues.push(issue('warning', 'invalid_field', 'description', `\`description\` is ${description.length} characters; the limit is 1024.`))
  }
  return description
}

/** `type`: standard, namespaced or allowed by config; anything else skips the pack. */
function checkType(data: Record<string, unknown>, context: PackContext, checks: Checks): string | undefined {
  const { issues } = checks
  const type = optionalString(data, 'type', issues)
  if (type === undefined) {
    issues.push(issue('error', 'missing_type', 'type', '`type` is missing; the pack is skipped.'))
    checks.skip = true
    return undefined
  }
  const accepted = isAcceptedType(type, context.allowedTypes)
  if (accepted === undefined) {
    issues.push(
      issue(
        'error',
        'unknown_type',
        'type',
        `\`type\` "${type}" is neither a standard type nor namespaced (\`custom:<name>\`) nor allowed by config (packs.allowedTypes); the pack is skipped. Standard types: ${STANDARD_PACK_TYPES.join(', ')}.`,
      ),
    )
    checks.skip = true
  } else if (accepted === 'namespaced') {
    issues.push(issue('info', 'namespaced_type', 'type', `\`type\` "${type}" is a namespaced extension type.`))
  } else if (accepted === 'allowed') {
    issues.push(issue('info', 'namespaced_type', 'type', `\`type\` "${type}" is not standard; loaded because config allows it.`))
  }
  return type
}

/** `status`: required (missing → draft); an unknown status is not guessed: the pack is skipped. */
function checkStatus(data: Record<string, unknown>, checks: Checks): PackStatus | undefined {
  const rawStatus = data.status
  if (rawStatus === undefined || rawStatus === null) {
    checks.issues.push(issue('error', 'missing_status', 'status', '`status` is missing; the pack is treated as `draft`.'))
    return 'draft'
  }
  const parsed = PackStatus.safeParse(typeof rawStatus === 'string' ? rawStatus.trim() : rawStatus)
  if (parsed.success) return parsed.data
  checks.issues.push(
    issue('error', 'invalid_status', 'status', `\`status\` "${String(rawStatus)}" is not one of ${PackStatus.options.join(', ')}; the pack is skipped.`),
  )
  checks.skip = true
  return undefined
}

/** `profile` (missing → wiki-first, v0.5 compatibility), `runtime.mode`, `trust`, `grounding`. */
function checkRuntimeFields(data: Record<string, unknown>, issues: PackDiagnostic[]) {
  let profile = enumField(data.profile, PackProfile, 'profile', issues, 'treated as wiki-first')
  if (profile === undefined) {
    if (data.profile === undefined || data.profile === null) {
      issues.push(issue('warning', 'profile_defaulted', 'profile', '`profile` is not declared; treated as `wiki-first` for v0.5 compatibility.'))
    }
    profile = 'wiki-first'
  }
  const runtimeRecord = asRecord(data.runtime)
  if (data.runtime !== undefined && data.runtime !== null && runtimeRecord === undefined) {
    issues.push(issue('warning', 'invalid_field', 'runtime', '`runtime` should be a mapping; ignored.'))
  }
  const mode = enumField(runtimeRecord?.mode, RuntimeMode, 'runtime.mode', issues, 'treated as data') ?? 'data'
  const trust = enumField(data.trust, PackTrust, 'trust', issues, 'treated as unreviewed')
  const grounding = enumField(data.grounding, PackGrounding, 'grounding', issues, 'ignored')
  return { profile, mode, trust, grounding }
}

/** `version` (semver, else info), `language` (a BCP 47 tag, canonicalised), `compatibility` (a short string), `scope`, `updated`. */
function checkDescriptiveFields(
  data: Record<string, unknown>,
  issues: PackDiagnostic[],
): Pick<KnowledgeCatalogItem, 'version' | 'language' | 'compatibility' | 'declaredScope' | 'updated'> {
  const version = optionalString(data, 'version', issues)
  if (version !== undefined && !SEMVER.test(version)) {
    issues.push(issue('info', 'invalid_field', 'version', `\`version\` "${version}" is not semver.`))
  }
  let language = optionalString(data, 'language', issues)
  if (language !== undefined) {
    try {
      language = Intl.getCanonicalLocales(language)[0] ?? language
    } catch {
      issues.push(issue('warning', 'invalid_field', 'language', `\`language\` "${language}" is not a BCP 47 tag; ignored.`))
      language = undefined
    }
  }
  let compatibility: string | undefined
  const rawCompatibility = data.compatibility
  if (rawCompatibility !== undefined && rawCompatibility !== null) {
    if (typeof rawCompatibility !== 'string') {
      issues.push(issue('warning', 'invalid_field', 'compatibility', '`compatibility` should be a string; ignored.'))
    } else if (rawCompatibility.length >= 500) {
      issues.push(issue('warning', 'invalid_field', 'compatibility', `\`compatibility\` is ${rawCompatibility.length} characters; keep it under 500.`))
      compatibility = rawCompatibility.slice(0, 499)
    } else if (rawCompatibility.trim()) compatibility = rawCompatibility.trim()
  }
  const declaredScope = optionalString(data, 'scope', issues)
  const updated = optionalString(data, 'updated', issues)
  if (updated !== undefined && Number.isNaN(Date.parse(updated))) {
    issues.push(issue('info', 'invalid_field', 'updated', `\`updated\` "${updated}" is not an ISO date.`))
  }
  return {
    ...(version ? { version } : {}),
    ...(language ? { language } : {}),
    ...(compatibility ? { compatibility } : {}),
    ...(declaredScope ? { declaredScope } : {}),
    ...(updated ? { updated } : {}),
  }
}

/** A pack-relative path field (`metadata.primaryDocument`, …): lexically checked here, on disk later. */
function packPathField(value: unknown, field: string, issues: PackDiagnostic[]): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') {
    issues.push(issue('warning', 'invalid_field', field, `\`${field}\` should be a string; ignored.`))
    return undefined
  }
  const checked = normalisePackPath(value)
  if (checked.ok) return checked.path
  issues.push(issue('error', 'path_escape', field, `\`${field}\` "${value}" ${checked.reason}; refused.`))
  return undefined
}

/** `metadata`: kept as given, with `primaryDocument` (lexically checked here, on disk later) and `producedBy` checked. */
function checkMetadata(data: Record<string, unknown>, issues: PackDiagnostic[]): KnowledgeCatalogItem['metadata'] {
  const metadataRecord = asRecord(data.metadata)
  if (data.metadata !== undefined && data.metadata !== null && metadataRecord === undefined) {
    issues.push(issue('warning', 'invalid_field', 'metadata', '`metadata` should be a mapping; ignored.'))
  }
  if (!metadataRecord) return undefined
  const metadata: NonNullable<KnowledgeCatalogItem['metadata']> = { ...metadataRecord }
  for (const key of ['primaryDocument', 'primaryOntology', 'primaryAnswers'] as const) {
    delete metadata[key]
    const path = packPathField(metadataRecord[key], `metadata.${key}`, issues)
    if (path !== undefined) metadata[key] = path
  }
  delete metadata.producedBy
  const producedBy = parseProducedBy(metadataRecord.producedBy, issues)
  if (producedBy) metadata.producedBy = producedBy
  return metadata
}

/**
 * Applies seed 000's validation table to parsed frontmatter. Never throws:
 * every problem becomes a diagnostic with its field. Filesystem checks
 * (documents/, primaryDocument, persona boundaries) come later.
 * @example
 * const v = validateFrontmatter({ name: 'a', description: 'd', type: 'brand-product', status: 'ready' },
 *   { location: '/p/a/KNOWLEDGE.md', packRoot: '/p/a', folderName: 'a', scope: 'project' })
 * v.outcome // 'loaded'; v.item.profile === 'wiki-first' (with a compatibility warning)
 */
export function validateFrontmatter(data: Record<string, unknown>, context: PackContext): FrontmatterValidation {
  const checks: Checks = { issues: [], skip: false }
  const { issues } = checks
  const name = checkName(data, context, checks)
  const description = checkDescription(data, checks)
  const type = checkType(data, context, checks)
  const status = checkStatus(data, checks)
  const { profile, mode, trust, grounding } = checkRuntimeFields(data, issues)
  const descriptive = checkDescriptiveFields(data, issues)
  const metadata = checkMetadata(data, issues)
  if (checks.skip) return { outcome: 'skipped', name, issues }
  const item: KnowledgeCatalogItem = {
    name,
    description: description ?? '',
    type: type ?? '',
    status: status ?? 'draft',
    ...(trust ? { trust } : {}),
    profile,
    runtime: { mode },
    ...(metadata ? { metadata } : {}),
    ...descriptive,
    ...(grounding ? { grounding } : {}),
    location: context.location,
    packRoot: context.packRoot,
    scope: context.scope,
    diagnostics: [],
  }
  if (item.status === 'archived')
    issues.push(issue('info', 'archived', 'status', 'The pack is archived: hidden from the catalog unless archived packs are asked for.'))
  if (item.status === 'disputed') issues.push(issue('warning', 'disputed', 'status', 'The pack is disputed: using it needs explicit confirmation.'))
  item.diagnostics = issues.map(formatDiagnostic)
  return { outcome: 'loaded', item, issues }
}

function parseProducedBy(value: unknown, issues: PackDiagnostic[]): ProducedBy | undefined {
  if (value === undefined || value === null) return undefined
  const record = asRecord(value)
  if (!record) {
    issues.push(issue('warning', 'invalid_field', 'metadata.producedBy', '`metadata.producedBy` should be a mapping; ignored.'))
    return undefined
  }
  const out: ProducedBy = {}
  const rawKind = typeof record.kind === 'string' ? record.kind.trim() : record.kind
  if (rawKind !== undefined && rawKind !== null) {
    // Kept as written (the standard's examples say `agent-skill`, seed 000 says `skill`); an unknown kind is noted.
    if (typeof rawKind !== 'string' || rawKind === '') {
      issues.push(issue('warning', 'invalid_field', 'metadata.producedBy.kind', '`metadata.producedBy.kind` should be a string; ignored.'))
    } else {
      out.kind = rawKind
      if (!ProducedByKind.safeParse(rawKind).success)
        issues.push(
          issue(
            'info',
            'invalid_field',
            'metadata.producedBy.kind',
            `\`metadata.producedBy.kind\` "${rawKind}" is not one of ${ProducedByKind.options.join(', ')}; kept as written.`,
          ),
        )
    }
  }
  for (const key of ['name', 'version', 'digest'] as const) {
    const field = record[key]
    if (typeof field === 'string' || typeof field === 'number') out[key] = String(field)
  }
  return out
}
