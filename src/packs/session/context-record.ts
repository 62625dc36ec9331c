/**
 * Context-resolution records (runtime standard, Step 6): one record per
 * resolve in the standard's `context-resolution` shape — the query, each
 * activated pack with how it was activated (`explicit | implicit |
 * resolver-driven`), its status, trust, grounding, profile, mode, selected
 * documents, files and splits, anchors, warnings, wrapper order and builder
 * Skill, the missing facts and the token estimate. Written by the usage log:
 * a line of `<dir>/context-resolutions.jsonl`, and `runs/context-<run_id>.json`
 * in each pack only when writing into packs is configured.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { resolvePackPath } from '../files/paths.js'
import type { ResolveResult } from '../resolve/index.js'
import { ContextResolutionRecord, type PackActivationMode } from '../evidence/run-records.js'
import type { LoadedPack } from '../schema.js'

/**
 * File name of the context records in the log folder (JSON Lines).
 * @example
 * const lines = (await readFile(join(logDir, CONTEXT_LOG_FILE), 'utf8')).trim().split('\n')
 */
export const CONTEXT_LOG_FILE = 'context-resolutions.jsonl'

/** What a record is built from: the resolve result and how each pack was activated. */
export type RecordedResult = Pick<ResolveResult, 'task' | 'intent' | 'tokens' | 'context' | 'packs' | 'missing' | 'wrapper_order'>

/**
 * The run status of a resolve: `failed` (no context), `disputed` or `stale`
 * (a pack is), `needs-review` (a pack needs review or is a draft, or facts are
 * missing), else `passed`.
 * @example
 * runStatus(result) // 'passed'
 */
export function runStatus(result: Pick<RecordedResult, 'context' | 'packs' | 'missing'>): ContextResolutionRecord['status'] {
  if (result.context === '') return 'failed'
  const statuses = new Set(result.packs.map((p) => p.status))
  if (statuses.has('disputed')) return 'disputed'
  if (statuses.has('stale')) return 'stale'
  if (statuses.has('needs-review') || statuses.has('draft') || result.missing.length > 0) return 'needs-review'
  return 'passed'
}

/**
 * A run id after the standard's example (`context-2026-05-06T09-10-00Z`) plus 6 random hex digits, unique per resolve.
 * @example
 * contextRunId(new Date('2026-05-06T09:10:00Z')) // 'context-2026-05-06T09-10-00Z-3fa91c'
 */
export function contextRunId(at: Date): string {
  return `context-${at
    .toISOString()
    .replace(/\.\d{3}Z$/u, 'Z')
    .replace(/:/gu, '-')}-${randomBytes(3).toString('hex')}`
}

/** The builder Skill of a pack's provenance (`metadata.producedBy` naming a Skill), if any. */
function builderSkill(pack: LoadedPack | undefined): ContextResolutionRecord['activated_packs'][number]['builder_skill'] {
  const produced = pack?.item.metadata?.producedBy
  if (!produced?.name || (produced.kind !== undefined && !/skill/iu.test(produced.kind))) return undefined
  return { name: produced.name, ...(produced.version ? { version: produced.version } : {}), ...(produced.digest ? { digest: produced.digest } : {}) }
}

/**
 * The context-resolution record of one resolve; undefined when no pack was
 * resolved (the schema needs at least one). `activation` tells how each pack
 * was activated (default `explicit`).
 * @example
 * const record = contextRecord(result, packs, { at: new Date(), activation: () => 'implicit' })
 * record?.activated_packs[0]?.activation // 'implicit'
 */
export function contextRecord(
  result: RecordedResult,
  packs: readonly LoadedPack[],
  options: { at: Date; activation?: (pack: string) => PackActivationMode; runId?: string },
): ContextResolutionRecord | undefined {
  if (result.packs.length === 0) return undefined
  const record: ContextResolutionRecord = {
    run_id: options.runId ?? contextRunId(options.at),
    query: result.task,
    status: runStatus(result),
    resolver: { tool: 'knowhub', strategy: `profile tiers, BM25 sections, v0.7 subgraphs; intent ${result.intent}` },
    activated_packs: result.packs.map((p) => {
      const builder = builderSkill(packs.find((pack) => pack.item.name === p.pack))
      const splits = p.selected_files.filter((f) => f.startsWith('compiled/splits/'))
      return {
        name: p.pack,
        activation: options.activation?.(p.pack) ?? 'explicit',
        status: p.status,
        trust: p.trust,
        grounding: p.grounding,
        profile: p.profile,
        runtime_mode: p.runtime_mode,
        selected_documents: p.selected_documents,
        selected_files: p.selected_files,
        ...(splits.length > 0 ? { selected_splits: splits } : {}),
        source_anchors: p.source_anchors,
        warnings: p.compile_warnings.map((w) => ({ severity: w.severity, path: w.path, message: w.message })),
        ...(p.wrapper_order === undefined ? {} : { wrapper_order: p.wrapper_order + 1 }),
        ...(builder ? { builder_skill: builder } : {}),
      }
    }),
    missing: result.missing,
    token_estimate: result.tokens,
    wrapper_order: result.wrapper_order,
  }
  // What is written must follow the schema it claims.
  return ContextResolutionRecord.parse(record)
}

/**
 * Writes a record as `runs/<run_id>.json` in a pack, atomically (a temporary
 * file renamed); refused (false) when `runs/` would leave the pack.
 * @example
 * await writePackRunRecord(pack, record)
 */
export async function writePackRunRecord(pack: LoadedPack, record: ContextResolutionRecord): Promise<boolean> {
  const runs = await resolvePackPath(pack.realRoot, 'runs')
  if (!runs.ok) return false
  await mkdir(runs.absPath, { recursive: true })
  const target = join(runs.absPath, `${record.run_id}.json`)
  const temporary = `${target}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { encoding: 'utf8', flag: 'wx' })
  await rename(temporary, target)
  return true
}
