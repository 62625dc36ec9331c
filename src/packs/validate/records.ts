/**
 * The checks of `knowhub packs validate` that match the standard's reference
 * CLI beyond the frontmatter: record files parse against their schemas
 * (`runs/compile-*.json`, `runs/context-*.json`, `evals/*.json`,
 * `indexes/source-map.json`), every path a source map names resolves, and
 * the profile, runtime mode and primary document fit the folder layout.
 */
import { readdir } from 'node:fs/promises'
import type { PackEvidence } from '../evidence/evidence.js'
import { readBounded, resolvePackPath } from '../files/paths.js'
import type { PackResource } from '../files/resources.js'
import { checkRecordText, runSchemaFor, type RunSchemaName } from '../evidence/run-records.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'

const MAX_RECORD_BYTES = 16 * 2 ** 20
const SOURCE_MAP = 'indexes/source-map.json'

/** The schema a pack's record file follows, when the standard defines one for it. */
function schemaOf(path: string, text: string): RunSchemaName | undefined {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    // Not JSON: checked as its name says, so that the parse error is reported.
    return runSchemaFor(path, undefined) ?? 'compile-run'
  }
  if (path.startsWith('evals/')) {
    const keys = typeof data === 'object' && data !== null ? Object.keys(data) : []
    return /^evals\/discovery\./u.test(path) || keys.includes('cases') || keys.includes('pack_name') ? 'selection-eval' : undefined
  }
  return runSchemaFor(path, data)
}

function parses(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** `evals/*.json`: the folder is not a resource kind, so it is listed here (its own files only, inside the pack). */
async function evalFiles(pack: LoadedPack): Promise<string[]> {
  const evals = await resolvePackPath(pack.realRoot, 'evals')
  if (!evals.ok || !evals.exists) return []
  try {
    const entries = await readdir(evals.absPath, { withFileTypes: true })
    return entries
      .filter((e) => e.isFile() && e.name.endsWith('.json'))
      .map((e) => `evals/${e.name}`)
      .sort()
  } catch {
    return []
  }
}

/** One record file against its schema; files the standard gives no schema get an info. */
async function checkFile(pack: LoadedPack, path: string): Promise<PackDiagnostic[]> {
  const resolved = await resolvePackPath(pack.realRoot, path)
  if (!resolved.ok) return [resolved.diagnostic]
  const read = await readBounded(resolved.absPath, MAX_RECORD_BYTES)
  if (read.truncated) return [{ severity: 'warning', code: 'file_too_large', path, message: `${path} is over ${MAX_RECORD_BYTES} bytes; not checked.` }]
  if (path === SOURCE_MAP && !parses(read.text)) return [] // the evidence loader reports an unreadable source map
  const schema = schemaOf(path, read.text)
  if (!schema) return [{ severity: 'info', code: 'run_not_checked', path, message: `${path} follows none of the standard's record schemas; not checked.` }]
  return checkRecordText(read.text, path, schema).issues
}

/**
 * Record files of a pack against the standard's schemas: every `runs/*.json`
 * (compile runs, context records; others by their keys), `evals/*.json`
 * (selection evals) and `indexes/source-map.json` (strictly).
 * @example
 * issues.push(...(await recordFileChecks(pack, listing.resources)))
 */
export async function recordFileChecks(pack: LoadedPack, resources: readonly PackResource[]): Promise<PackDiagnostic[]> {
  const files = resources.filter((r) => /^runs\/[^/]+\.json$/u.test(r.path) || r.path === SOURCE_MAP).map((r) => r.path)
  const issues: PackDiagnostic[] = []
  for (const path of [...files, ...(await evalFiles(pack))]) {
    try {
      issues.push(...(await checkFile(pack, path)))
    } catch (error) {
      issues.push({ severity: 'warning', code: 'unreadable', path, message: `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).` })
    }
  }
  return issues
}

/**
 * The paths a source map names beyond claim sources (checked when it is
 * loaded): `compiled_into` views and `document` files that do not exist
 * (warnings), section source anchors that do not resolve (errors, as claim sources).
 * @example
 * issues.push(...(await sourceMapPathChecks(pack, evidence, resources)))
 */
export async function sourceMapPathChecks(pack: LoadedPack, evidence: PackEvidence, resources: readonly PackResource[]): Promise<PackDiagnostic[]> {
  const listed = new Set(resources.map((r) => r.path))
  const issues: PackDiagnostic[] = []
  const views = new Set<string>()
  for (const entry of [...evidence.claims, ...evidence.sections]) {
    for (const view of entry.compiled_into ?? []) views.add(view)
    if (entry.document) views.add(entry.document)
  }
  for (const view of [...views].sort()) {
    if (!listed.has(view))
      issues.push({ severity: 'warning', code: 'path_missing', path: SOURCE_MAP, message: `The source map names ${view}, which does not exist.` })
  }
  const anchors = new Set(evidence.sections.flatMap((s) => s.source_anchors ?? []).map((a) => a.split('#')[0] ?? ''))
  for (const path of [...anchors].sort()) {
    const resolved = await resolvePackPath(pack.realRoot, path)
    if (!resolved.ok) issues.push({ ...resolved.diagnostic, path: SOURCE_MAP, message: `A document section's source anchor: ${resolved.diagnostic.message}` })
    else if (!resolved.exists)
      issues.push({ severity: 'error', code: 'source_missing', path: SOURCE_MAP, message: `A document section cites ${resolved.path}, which does not exist.` })
  }
  return issues
}

/**
 * Profile, runtime mode and primary document against the folder layout
 * (beyond the document-first gap and the persona boundaries, checked
 * elsewhere): a hybrid pack with neither documents/ nor wiki/, a primary
 * document that is not Markdown, a wiki-first pack naming a primary document
 * its profile does not read first, a persona pack with no text to read.
 * @example
 * issues.push(...layoutChecks(pack, listing.resources))
 */
export function layoutChecks(pack: LoadedPack, resources: readonly PackResource[]): PackDiagnostic[] {
  const item = pack.item
  const has = (kinds: readonly PackResource['kind'][]): boolean => resources.some((r) => kinds.includes(r.kind))
  const issues: PackDiagnostic[] = []
  const primary = item.metadata?.primaryDocument
  if (item.profile === 'hybrid' && !has(['primary', 'document', 'wiki'])) {
    issues.push({ severity: 'warning', code: 'profile_layout', field: 'profile', message: 'The pack is hybrid but has neither documents/ nor wiki/ pages.' })
  }
  if (primary && !/\.(?:md|markdown|mdx)$/iu.test(primary)) {
    issues.push({
      severity: 'warning',
      code: 'profile_layout',
      field: 'metadata.primaryDocument',
      message: `The primary document ${primary} is not a Markdown file.`,
    })
  }
  if (item.profile === 'wiki-first' && primary) {
    issues.push({
      severity: 'info',
      code: 'profile_layout',
      field: 'metadata.primaryDocument',
      message: `The pack is wiki-first: the resolver reads compiled/ and wiki/ first, ${primary} only as a fallback. Use hybrid or document-first to make it primary.`,
    })
  }
  if (item.runtime?.mode === 'persona' && !has(['runtime', 'primary', 'document', 'wiki'])) {
    issues.push({
      severity: 'warning',
      code: 'profile_layout',
      field: 'runtime.mode',
      message: 'The pack is a persona but has no compiled/, documents/ or wiki/ text.',
    })
  }
  return issues
}
