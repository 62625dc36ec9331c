/**
 * Evidence a pack carries about its own facts: `indexes/source-map.json`
 * (claims → sources) and the latest `runs/compile-*.json`. Both are read
 * leniently: a bad entry is a diagnostic, the rest is used. Every source path
 * must stay inside the pack root.
 */
import { z } from 'zod'
import { readBounded, resolvePackPath } from '../files/paths.js'
import type { PackResource } from '../files/resources.js'
import type { LoadedPack, PackDiagnostic } from '../schema.js'

/**
 * Status of one claim in a source map.
 * @example
 * ClaimStatus.parse('stale')
 */
export const ClaimStatus = z.enum(['confirmed', 'inferred', 'disputed', 'stale', 'missing', 'source-required'])
export type ClaimStatus = z.infer<typeof ClaimStatus>

/**
 * One claim of `indexes/source-map.json` (Agent Knowledge source-map schema).
 * @example
 * SourceMapClaim.parse({ claim_id: 'c1', text: 'Price is 29 USD', status: 'confirmed', source: { path: 'sources/sheet.md', anchor: 'L3' } })
 */
export const SourceMapClaim = z.object({
  claim_id: z.string().min(1),
  text: z.string().min(1),
  status: ClaimStatus,
  source: z.object({ path: z.string(), anchor: z.string().optional() }),
  compiled_into: z.array(z.string()).optional(),
  document: z.string().optional(),
  section_id: z.string().optional(),
})
export type SourceMapClaim = z.infer<typeof SourceMapClaim>

/**
 * One document section entry of a source map.
 * @example
 * SourceMapSection.parse({ document: 'documents/brief.md', section_id: 'pricing', title: 'Pricing' })
 */
export const SourceMapSection = z.object({
  document: z.string(),
  section_id: z.string().min(1),
  title: z.string().min(1),
  source_anchors: z.array(z.string()).optional(),
  compiled_into: z.array(z.string()).optional(),
})
export type SourceMapSection = z.infer<typeof SourceMapSection>

/** A claim with its source checked: `sourceState` says whether the source file is usable. */
export interface CheckedClaim extends SourceMapClaim {
  sourceState: 'ok' | 'missing' | 'refused'
  /** `sources/x.md#L42`, or the path alone. */
  anchor: string
}

/** The latest compile run, as far as the resolver needs it. */
export interface CompileRunSummary {
  path: string
  runId: string
  status: string
  outputs: string[]
  chapters: { title: string; coverage: string; path?: string; document?: string }[]
}

/** Evidence of one pack. */
export interface PackEvidence {
  claims: CheckedClaim[]
  sections: SourceMapSection[]
  compileRun?: CompileRunSummary
  issues: PackDiagnostic[]
  /** Hash of the source map bytes (for session audit), when present. */
  sourceMapHash?: string
}

const SOURCE_MAP = 'indexes/source-map.json'
const MAX_EVIDENCE_BYTES = 16 * 1024 * 1024

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

/**
 * Reads and checks a pack's source map and latest compile run. Never throws
 * for bad content.
 * @example
 * const evidence = await loadEvidence(pack, resources)
 * evidence.claims.filter((c) => c.status === 'stale')
 */
export async function loadEvidence(pack: LoadedPack, resources: readonly PackResource[]): Promise<PackEvidence> {
  const evidence: PackEvidence = { claims: [], sections: [], issues: [] }
  const has = new Set(resources.map((r) => r.path))
  if (has.has(SOURCE_MAP)) await readSourceMap(pack, evidence)
  const runs = resources
    .filter((r) => /^runs\/compile-[^/]*\.json$/u.test(r.path))
    .map((r) => r.path)
    .sort()
  const latest = runs[runs.length - 1]
  if (latest) await readCompileRun(pack, latest, evidence)
  return evidence
}

async function readJson(pack: LoadedPack, path: string, evidence: PackEvidence): Promise<{ data: unknown; hash: string } | undefined> {
  const resolved = await resolvePackPath(pack.realRoot, path)
  if (!resolved.ok) {
    evidence.issues.push(resolved.diagnostic)
    return undefined
  }
  try {
    const read = await readBounded(resolved.absPath, MAX_EVIDENCE_BYTES, pack.realRoot)
    if (read.truncated) {
      evidence.issues.push({
        severity: 'warning',
        code: 'file_too_large',
        path,
        message: `${path} is ${read.size} bytes, over the ${MAX_EVIDENCE_BYTES}-byte limit; not used.`,
      })
      return undefined
    }
    return { data: JSON.parse(read.text) as unknown, hash: read.hash }
  } catch (error) {
    evidence.issues.push({
      severity: 'error',
      code: 'source_map_invalid',
      path,
      message: `${path} is not readable JSON (${error instanceof Error ? error.message : String(error)}).`,
    })
    return undefined
  }
}

async function readSourceMap(pack: LoadedPack, evidence: PackEvidence): Promise<void> {
  const json = await readJson(pack, SOURCE_MAP, evidence)
  if (!json) return
  evidence.sourceMapHash = json.hash
  const root = json.data as { claims?: unknown; document_sections?: unknown } | null
  if (typeof root !== 'object' || root === null || !Array.isArray(root.claims)) {
    evidence.issues.push({ severity: 'error', code: 'source_map_invalid', path: SOURCE_MAP, message: 'The source map has no `claims` array.' })
    return
  }
  const checked = new Map<string, CheckedClaim['sourceState']>()
  const claims = asArray(root.claims)
  for (let i = 0; i < claims.length; i++) {
    const parsed = SourceMapClaim.safeParse(claims[i])
    if (!parsed.success) {
      const first = parsed.error.issues[0]
      evidence.issues.push({
        severity: 'warning',
        code: 'source_map_invalid',
        path: SOURCE_MAP,
        field: `claims.${i}${first?.path.length ? `.${first.path.join('.')}` : ''}`,
        message: `Claim ${i} is invalid (${first?.message ?? 'bad shape'}); ignored.`,
      })
      continue
    }
    const claim = parsed.data
    let state = checked.get(claim.source.path)
    if (state === undefined) {
      const resolved = await resolvePackPath(pack.realRoot, claim.source.path, `claims.${i}.source.path`)
      if (!resolved.ok) {
        evidence.issues.push({ ...resolved.diagnostic, path: SOURCE_MAP })
        state = 'refused'
      } else if (!resolved.exists) {
        evidence.issues.push({
          severity: 'error',
          code: 'source_missing',
          path: SOURCE_MAP,
          field: `claims.${i}.source.path`,
          message: `Claim "${claim.claim_id}" cites ${resolved.path}, which does not exist.`,
        })
        state = 'missing'
      } else {
        if (!resolved.path.startsWith('sources/')) {
          evidence.issues.push({
            severity: 'warning',
            code: 'source_missing',
            path: SOURCE_MAP,
            field: `claims.${i}.source.path`,
            message: `Claim "${claim.claim_id}" cites ${resolved.path}, outside sources/.`,
          })
        }
        state = 'ok'
      }
      checked.set(claim.source.path, state)
    }
    const anchor = claim.source.anchor ? `${claim.source.path}#${claim.source.anchor.replace(/^#/u, '')}` : claim.source.path
    evidence.claims.push({ ...claim, sourceState: state, anchor })
  }
  const sections = asArray(root.document_sections)
  for (let i = 0; i < sections.length; i++) {
    const parsed = SourceMapSection.safeParse(sections[i])
    if (parsed.success) evidence.sections.push(parsed.data)
    else
      evidence.issues.push({
        severity: 'warning',
        code: 'source_map_invalid',
        path: SOURCE_MAP,
        field: `document_sections.${i}`,
        message: `Document section ${i} is invalid; ignored.`,
      })
  }
}

async function readCompileRun(pack: LoadedPack, path: string, evidence: PackEvidence): Promise<void> {
  const json = await readJson(pack, path, evidence)
  if (!json || typeof json.data !== 'object' || json.data === null) return
  const run = json.data as Record<string, unknown>
  const outputs = asArray(run.outputs)
    .map((o) => (typeof o === 'object' && o !== null ? (o as { path?: unknown }).path : undefined))
    .filter((p): p is string => typeof p === 'string')
  const chapters = asArray(run.chapters).flatMap((c) => {
    if (typeof c !== 'object' || c === null) return []
    const chapter = c as Record<string, unknown>
    if (typeof chapter.title !== 'string' || typeof chapter.coverage !== 'string') return []
    return [
      {
        title: chapter.title,
        coverage: chapter.coverage,
        ...(typeof chapter.path === 'string' ? { path: chapter.path } : {}),
        ...(typeof chapter.document === 'string' ? { document: chapter.document } : {}),
      },
    ]
  })
  evidence.compileRun = {
    path,
    runId: typeof run.run_id === 'string' ? run.run_id : path,
    status: typeof run.status === 'string' ? run.status : 'unknown',
    outputs,
    chapters,
  }
}
