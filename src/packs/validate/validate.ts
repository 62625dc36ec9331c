/**
 * Strict validation for pack authors (`knowhub packs validate PATH`): the
 * validation table plus resource listing, path containment, source map and
 * compile run, persona boundaries, document-first completeness, the v0.7
 * ontology and answer layers, and the reference CLI's checks (record files
 * against their schemas, source-map paths, profile and layout). Errors
 * make the command exit non-zero.
 */
import { stat } from 'node:fs/promises'
import { KnowHubError } from '../../core/errors.js'
import { join, resolve } from 'node:path'
import { noopLogger, type Logger } from '../../core/logger.js'
import { hasPersonaBoundaries } from '../activate/activate.js'
import { discoverPacks } from '../discover/discover.js'
import { loadEvidence } from '../evidence/evidence.js'
import { hasLayers, loadLayers } from '../layers/load.js'
import { loadPack } from '../load/load.js'
import { DEFAULT_MAX_FILE_BYTES, readBounded, resolvePackPath } from '../files/paths.js'
import { checkRecordText, type RunSchemaName } from '../evidence/run-records.js'
import { layoutChecks, recordFileChecks, sourceMapPathChecks } from './records.js'
import { scanPack } from '../files/hazards.js'
import { listPackResources, type PackResource } from '../files/resources.js'
import { contextMapPaths } from '../resolve/index.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'

/** The validation report of one pack folder. */
export interface PackValidationReport {
  /** The pack folder. */
  path: string
  outcome: 'loaded' | 'skipped' | 'quarantined'
  name?: string
  issues: PackDiagnostic[]
  errors: number
  warnings: number
}

/** Options of {@link validatePath}. */
export interface ValidateOptions {
  allowedTypes?: readonly string[]
  maxFileBytes?: number
  logger?: Logger
}

function count(report: Omit<PackValidationReport, 'errors' | 'warnings'>): PackValidationReport {
  return {
    ...report,
    errors: report.issues.filter((i) => i.severity === 'error').length,
    warnings: report.issues.filter((i) => i.severity === 'warning').length,
  }
}

/**
 * The v0.7 layers: `ontology/` and `answers/` records (JSON, shapes,
 * references, sources inside the pack), the declared manifests in their
 * folders, and a `content-ontology` pack that has an ontology.
 */
async function layerChecks(pack: LoadedPack, resources: readonly PackResource[]): Promise<PackDiagnostic[]> {
  const issues: PackDiagnostic[] = []
  const metadata = pack.item.metadata
  for (const [key, folder] of [
    ['primaryOntology', 'ontology/'],
    ['primaryAnswers', 'answers/'],
  ] as const) {
    const path = metadata?.[key]
    if (path && !path.startsWith(folder))
      issues.push({ severity: 'warning', code: 'invalid_field', field: `metadata.${key}`, message: `\`metadata.${key}\` "${path}" is outside ${folder}.` })
  }
  if (pack.item.type === 'content-ontology' && !resources.some((r) => r.kind === 'ontology')) {
    issues.push({
      severity: 'warning',
      code: 'ontology_missing',
      field: 'type',
      message: 'A content-ontology pack without ontology/ files: add ontology/ontology.json and its records, or use another type.',
    })
  }
  if (hasLayers(pack, resources)) issues.push(...(await loadLayers(pack, resources)).issues)
  return issues
}

/**
 * Deep checks of a loaded pack (everything beyond the frontmatter).
 * @example
 * const issues = await deepCheck(pack)
 */
export async function deepCheck(pack: LoadedPack, options: { maxFileBytes?: number } = {}): Promise<PackDiagnostic[]> {
  const issues: PackDiagnostic[] = []
  const listing = await listPackResources(pack)
  issues.push(...listing.issues)
  const evidence = await loadEvidence(pack, listing.resources)
  // The strict source-map check (recordFileChecks) reports bad claims and sections as errors: the loader's lenient per-record warnings would repeat them.
  issues.push(...evidence.issues.filter((i) => !(i.code === 'source_map_invalid' && i.field !== undefined)))
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES
  for (const resource of listing.resources) {
    if (resource.size > maxBytes && resource.kind !== 'source') {
      issues.push({
        severity: 'warning',
        code: 'file_too_large',
        path: resource.path,
        message: `${resource.path} is ${resource.size} bytes; the resolver reads only the first ${maxBytes}.`,
      })
    }
  }
  const item = pack.item
  if (item.runtime?.mode === 'persona' && !hasPersonaBoundaries(pack.body, listing.resources)) {
    issues.push({
      severity: 'warning',
      code: 'persona_boundaries_missing',
      field: 'runtime.mode',
      message: 'Persona pack without boundary guidance: add a "Boundaries" or "Taboos" section to KNOWLEDGE.md or a compiled/boundaries.md.',
    })
  }
  const primary = item.metadata?.primaryDocument
  if (item.profile === 'document-first' && primary) {
    const key = primary.replace(/^.*\//u, '').replace(/\.[^.]+$/u, '')
    if (!listing.resources.some((r) => r.path.startsWith(`compiled/splits/${key}/`))) {
      issues.push({
        severity: 'info',
        code: 'splits_missing',
        path: `compiled/splits/${key}/`,
        message: `No compiled/splits/${key}/ views; the resolver falls back to sections of ${primary}.`,
      })
    }
    if (!primary.startsWith('documents/')) {
      issues.push({
        severity: 'warning',
        code: 'invalid_field',
        field: 'metadata.primaryDocument',
        message: `\`metadata.primaryDocument\` "${primary}" is outside documents/.`,
      })
    }
  }
  if (item.profile === 'wiki-first' && !listing.resources.some((r) => r.kind === 'wiki' || r.kind === 'runtime')) {
    issues.push({ severity: 'warning', code: 'path_missing', path: 'wiki/', message: 'The wiki-first pack has neither wiki/ pages nor compiled/ views.' })
  }
  issues.push(...(await layerChecks(pack, listing.resources)))
  // Parity with the reference CLI: record files parse against their schemas, source maps resolve, the profile fits the layout.
  issues.push(...(await recordFileChecks(pack, listing.resources)))
  issues.push(...(await sourceMapPathChecks(pack, evidence, listing.resources)), ...layoutChecks(pack, listing.resources))
  // Security model: obvious secrets and injection patterns anywhere in the pack.
  issues.push(...(await scanPack(pack, listing.resources)))
  for (const path of contextMapPaths(pack.body)) {
    const resolved = await resolvePackPath(pack.realRoot, path)
    if (!resolved.ok) issues.push(resolved.diagnostic)
    else if (!resolved.exists) issues.push({ severity: 'warning', code: 'path_missing', path, message: `KNOWLEDGE.md names ${path}, which does not exist.` })
  }
  return issues
}

/**
 * Validates a pack folder, a KNOWLEDGE.md file, or a folder of packs.
 * @example
 * const reports = await validatePath('./packs/acme-product-brief')
 * const failed = reports.some((r) => r.errors > 0)
 */
export async function validatePath(path: string, options: ValidateOptions = {}): Promise<PackValidationReport[]> {
  const logger = options.logger ?? noopLogger
  let target = resolve(path)
  const info = await stat(target)
  if (info.isFile()) target = resolve(target, '..')
  let isPack = false
  try {
    await stat(join(target, 'KNOWLEDGE.md'))
    isPack = true
  } catch {
    isPack = false
  }
  const folders: string[] = []
  const reports: PackValidationReport[] = []
  if (isPack) {
    folders.push(target)
  } else {
    const found = await discoverPacks(
      { extraPaths: [target], includeArchived: true, ...(options.allowedTypes ? { allowedTypes: [...options.allowedTypes] } : {}) },
      logger,
    )
    for (const rejected of found.rejected) {
      reports.push(count({ path: rejected.packRoot, outcome: rejected.outcome, ...(rejected.name ? { name: rejected.name } : {}), issues: rejected.issues }))
    }
    folders.push(...found.packs.map((p) => p.item.packRoot), ...found.archived.map((p) => p.item.packRoot))
    for (const shadow of found.shadowed) {
      reports.push(
        count({
          path: resolve(shadow.shadowed.location, '..'),
          outcome: 'loaded',
          name: shadow.name,
          issues: [
            {
              severity: 'error',
              code: 'shadowed',
              path: shadow.shadowed.location,
              message: `Two packs are named "${shadow.name}": ${shadow.kept.location} and ${shadow.shadowed.location}.`,
            },
          ],
        }),
      )
    }
  }
  for (const folder of folders) {
    const loaded = await loadPack(folder, { scope: 'extra', ...(options.allowedTypes ? { allowedTypes: options.allowedTypes } : {}) })
    if (!loaded.ok) {
      reports.push(
        count({
          path: folder,
          outcome: loaded.rejected.outcome,
          ...(loaded.rejected.name ? { name: loaded.rejected.name } : {}),
          issues: loaded.rejected.issues,
        }),
      )
      continue
    }
    const deep = await deepCheck(loaded.pack, options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes })
    reports.push(count({ path: folder, outcome: 'loaded', name: loaded.pack.item.name, issues: [...loaded.pack.issues, ...deep] }))
  }
  reports.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return reports
}

/** The check of one record file (`knowhub packs validate-run FILE`). */
export interface RunValidationReport {
  /** No error. */
  ok: boolean
  path: string
  /** The schema the file follows (told from its name, else its keys). */
  schema?: RunSchemaName
  /** Records checked (one, or one a line for `*.jsonl`). */
  records: number
  errors: number
  warnings: number
  issues: PackDiagnostic[]
}

const MAX_RUN_BYTES = 16 * 2 ** 20

/**
 * Checks a record file against the standard's schemas: a compile run, a
 * context resolution (`runs/context-*.json`, or the log folder's
 * `context-resolutions.jsonl`), a selection eval or a source map. Unknown
 * fields are warnings, the rest errors. `not_found` for a missing file,
 * `too_large` over 16 MiB.
 * @example
 * const report = await validateRunFile('packs/acme/runs/context-2026-05-06T09-10-00Z.json')
 * if (!report.ok) process.exitCode = 1
 */
export async function validateRunFile(path: string, options: { schema?: RunSchemaName } = {}): Promise<RunValidationReport> {
  const target = resolve(path)
  let read
  try {
    if (!(await stat(target)).isFile()) throw new KnowHubError('validation_error', `${target} is not a file.`, { path: target })
    read = await readBounded(target, MAX_RUN_BYTES)
  } catch (error) {
    if (error instanceof KnowHubError) throw error
    throw new KnowHubError('not_found', `No record file at ${target}.`, { path: target })
  }
  if (read.truncated) throw new KnowHubError('too_large', `${target} is ${read.size} bytes, over the ${MAX_RUN_BYTES}-byte limit.`, { path: target })
  const checked = checkRecordText(read.text, target, options.schema)
  const errors = checked.issues.filter((i) => i.severity === 'error').length
  return {
    ok: errors === 0,
    path: target,
    ...(checked.schema ? { schema: checked.schema } : {}),
    records: checked.records,
    errors,
    warnings: checked.issues.filter((i) => i.severity === 'warning').length,
    issues: checked.issues,
  }
}
