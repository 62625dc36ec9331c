/**
 * Export and import of knowledge entries as JSONL (lossless: histories and versions included).
 */
import { ImportQuery } from '../../core/knowledge.js'
import { requirePermission, visibleScopes, type Principal } from '../../core/principal.js'
import { parseWith } from '../../core/validate.js'
import { ANY_VALIDITY } from '../../store/knowledge/knowledge.js'
import type { KnowledgeContext } from '../context.js'
import { importJsonl, type ImportOptions, type ImportReport } from './jsonl.js'
import { toEntries } from '../entries/view.js'

/**
 * Every visible entry (any status, superseded and expired ones too) with histories and versions, one JSON object per line.
 * @example
 * for await (const line of exportEntries(ctx, principal)) process.stdout.write(line + '\n')
 */
export async function* exportEntries(ctx: KnowledgeContext, principal: Principal, options: { batchSize?: number } = {}): AsyncGenerator<string> {
  requirePermission(principal, 'read')
  const visible = visibleScopes(principal)
  const batchSize = options.batchSize ?? 500
  let after: { created_at: Date; id: string } | undefined
  for (;;) {
    const records = await ctx.store.knowledge.list({ visible, status: ['active', 'merged', 'archived'], validity: ANY_VALIDITY }, batchSize, after)
    if (records.length === 0) return
    for (const entry of await toEntries(ctx.store, records, visible)) {
      yield JSON.stringify({ ...entry, versions: await ctx.store.knowledge.versions(entry.id, visible) })
    }
    const last = records[records.length - 1]!
    after = { created_at: last.created_at, id: last.id }
  }
}

/**
 * How a JSONL import runs: the query of `POST /api/knowledge/import` (`mode`, `on_conflict`,
 * checked here), plus what only an in-process caller passes (progress, batch size).
 * @example
 * const options: ImportJsonlOptions = { mode: 'partial', on_conflict: 'skip', onProgress: (done, total) => bar.update(done, total) }
 */
export type ImportJsonlOptions = ImportQuery & Pick<ImportOptions, 'onProgress' | 'batchSize'>

/**
 * Imports JSONL written by {@link exportEntries} (lossless round trip), or lines in the shape
 * `POST /api/knowledge` takes (no `id`: each becomes a new entry, as a save would make it),
 * detected line by line. Every line is checked
 * first; in `atomic` mode (default) one bad line imports nothing, in `partial` mode the
 * good lines are imported. Bad lines are reported by line number.
 * @example
 * const report = await importEntries(ctx, lines, principal, { on_conflict: 'skip' })
 */
export async function importEntries(
  ctx: KnowledgeContext,
  lines: AsyncIterable<string> | Iterable<string>,
  principal: Principal,
  options: ImportJsonlOptions = {},
): Promise<ImportReport> {
  const { onProgress, batchSize, ...query } = options
  const { mode, on_conflict: onConflict } = parseWith(ImportQuery, query, 'import query')
  ctx.requireVectors()
  const report = await importJsonl(
    { store: ctx.store, embedder: ctx.embedder, principal, maxContentBytes: ctx.maxContentBytes, logger: ctx.logger, clock: ctx.clock },
    lines,
    { mode, onConflict, ...(onProgress ? { onProgress } : {}), ...(batchSize !== undefined ? { batchSize } : {}) },
  )
  await ctx.noteWrites(report.imported)
  return report
}
