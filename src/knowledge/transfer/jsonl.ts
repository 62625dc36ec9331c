import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import type { Clock } from '../../core/clock.js'
import { newKnowledgeId } from '../../core/ids.js'
import { KnowledgeExportLine, SaveKnowledgeInput, type FeedbackRecord, type ImportReport, type KnowledgeVersion } from '../../core/knowledge.js'
import type { Logger } from '../../core/logger.js'
import { assertWritableScopes, requirePermission, type Principal } from '../../core/principal.js'
import { checkJsonLimits } from '../../core/json-limits.js'
import { toValidationIssues } from '../../core/validate.js'
import type { Embedder } from '../../embed/embedder.js'
import type { ImportItem, KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { entryDate } from '../search/dates.js'
import { embeddingText, searchDocument } from '../search/document.js'
import { newEntryRecord } from '../entries/entries.js'
import { mayNameOwner } from '../../auth/policy.js'

export interface ImportOptions {
  /** `atomic` (default): any bad line imports nothing. `partial`: good lines are imported, bad ones reported. */
  mode?: 'atomic' | 'partial'
  /** What to do with an id that exists already: `error` (default, counts as a bad line), `skip` or `replace`. */
  onConflict?: 'error' | 'skip' | 'replace'
  onProgress?: (done: number, total: number) => void
  batchSize?: number
}

export type { ImportReport }

/** The strict form of an export line: a field we do not know would be lost, so it is an error. */
const ImportLine = KnowledgeExportLine.strict()

export interface ImportDeps {
  store: Store
  embedder: Embedder
  principal: Principal
  maxContentBytes: number
  logger: Logger
  /** The time of entries made from save-shaped lines. */
  clock: Clock
}

/** One checked line, ready to write. `fresh`: made from a save-shaped line, its id new (another is drawn on a clash). */
export interface CheckedLine {
  line: number
  record: KnowledgeRecord
  helpful_history: FeedbackRecord[]
  harmful_history: FeedbackRecord[]
  versions: KnowledgeVersion[]
  fresh: boolean
}

function lineError(line: number, error: unknown): ImportReport['errors'][number] {
  if (isKnowHubError(error)) return { line, code: error.code === 'validation_error' ? 'invalid_import' : error.code, message: error.message }
  return { line, code: 'invalid_import', message: (error as Error).message }
}

function invalid(issuesOf: { error: Parameters<typeof toValidationIssues>[0] }, shape: string): KnowHubError {
  const issues = toValidationIssues(issuesOf.error)
  return new KnowHubError('invalid_import', `${shape}${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues })
}

function checkSize(content: string, deps: ImportDeps): void {
  const bytes = Buffer.byteLength(content, 'utf8')
  if (bytes > deps.maxContentBytes) throw new KnowHubError('too_large', `content is ${bytes} bytes; the limit is ${deps.maxContentBytes}`)
}

/**
 * Parses and checks one line; throws a KnowHubError describing what is wrong. A JSON object
 * with an `id` is a line of the export format (strict: a field we do not know would be lost);
 * one without is the body `POST /api/knowledge` takes (task, content, types, tags, scopes,
 * owner, source, score…), saved as a new entry with the same defaults and checks as a save.
 */
export function checkLine(text: string, line: number, deps: ImportDeps): CheckedLine {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new KnowHubError('invalid_import', `not valid JSON (${(error as Error).message})`)
  }
  checkJsonLimits(json)
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new KnowHubError('invalid_import', 'a line must be a JSON object (an exported entry, or a POST /api/knowledge body)')
  if (!('id' in json)) {
    const parsed = SaveKnowledgeInput.safeParse(json)
    if (!parsed.success) throw invalid(parsed, '(read as a POST /api/knowledge body: the line has no id) ')
    checkSize(parsed.data.content, deps)
    const now = deps.clock.now()
    return {
      line,
      record: { id: newKnowledgeId(now), ...newEntryRecord(parsed.data, deps.principal, now) },
      helpful_history: [],
      harmful_history: [],
      versions: [],
      fresh: true,
    }
  }
  const parsed = ImportLine.safeParse(json)
  if (!parsed.success) throw invalid(parsed, '')
  const entry = parsed.data
  checkSize(entry.content, deps)
  assertWritableScopes(deps.principal, entry.scopes)
  if (!mayNameOwner(deps.principal, entry.owner)) throw new KnowHubError('forbidden', `owner ${entry.owner} is not one of your ids`, { owner: entry.owner })
  if (entry.superseded_by !== null && entry.valid_to === null) {
    throw new KnowHubError('invalid_import', `superseded_by ${entry.superseded_by} needs valid_to (when it was superseded)`)
  }
  if (entry.superseded_by === entry.id || entry.supersedes === entry.id) throw new KnowHubError('invalid_import', `entry ${entry.id} cannot supersede itself`)
  for (const date of [entry.created_at, entry.updated_at]) {
    if (Number.isNaN(new Date(date).getTime())) throw new KnowHubError('invalid_import', `invalid date "${date}"`)
  }
  return {
    line,
    record: toRecord(entry),
    helpful_history: entry.eval.helpful_history,
    harmful_history: entry.eval.harmful_history,
    versions: entry.versions,
    fresh: false,
  }
}

function toRecord(entry: KnowledgeExportLine): KnowledgeRecord {
  return {
    id: entry.id,
    message_id: entry.message_id,
    types: entry.types,
    task: entry.task,
    tags: entry.tags,
    scopes: entry.scopes,
    owner: entry.owner,
    content: entry.content,
    resource_ids: entry.resource_ids,
    source: entry.source,
    score: entry.eval.score,
    helpful: entry.eval.helpful,
    harmful: entry.eval.harmful,
    confidence: entry.eval.confidence,
    status: entry.status,
    merged_into: entry.merged_into,
    version: entry.version,
    created_at: new Date(entry.created_at),
    updated_at: new Date(entry.updated_at),
    // A line exported before validity (issue 31) has none: valid from its source time, as a save.
    valid_from: entry.valid_from !== undefined ? new Date(entry.valid_from) : entryDate({ source: entry.source, created_at: new Date(entry.created_at) }),
    valid_to: entry.valid_to !== null ? new Date(entry.valid_to) : null,
    superseded_by: entry.superseded_by,
    supersedes: entry.supersedes,
    expires_at: entry.expires_at !== null ? new Date(entry.expires_at) : null,
  }
}

/**
 * Checks every line, then imports the accepted ones (see `importEntries` in transfer.ts).
 * @example
 * const report = await importJsonl({ store, embedder, principal, maxContentBytes, logger }, lines, { mode: 'partial' })
 */
export async function importJsonl(deps: ImportDeps, lines: AsyncIterable<string> | Iterable<string>, options: ImportOptions): Promise<ImportReport> {
  requirePermission(deps.principal, 'write')
  const mode = options.mode ?? 'atomic'
  const onConflict = options.onConflict ?? 'error'
  const batchSize = options.batchSize
  const errors: ImportReport['errors'] = []
  const accepted: CheckedLine[] = []
  const seen = new Map<string, number>()
  let lineNo = 0
  for await (const raw of lines) {
    lineNo++
    const text = raw.trim()
    if (text === '') continue
    try {
      const item = checkLine(text, lineNo, deps)
      const first = seen.get(item.record.id)
      if (first !== undefined && !item.fresh) throw new KnowHubError('invalid_import', `duplicate id ${item.record.id} (first on line ${first})`)
      while (seen.has(item.record.id)) item.record.id = newKnowledgeId(item.record.created_at)
      seen.set(item.record.id, lineNo)
      accepted.push(item)
    } catch (error) {
      errors.push(lineError(lineNo, error))
    }
  }
  const existing = new Set<string>()
  for (let i = 0; i < accepted.length; i += 1000) {
    for (const id of await deps.store.knowledge.exists(accepted.slice(i, i + 1000).map((a) => a.record.id))) existing.add(id)
  }
  let skipped = 0
  const toImport = accepted.filter((item) => {
    const { id } = item.record
    if (!existing.has(id)) return true
    if (item.fresh) {
      // A new entry whose drawn id an existing one has (same second, same suffix): draw another.
      while (existing.has(item.record.id) || seen.has(item.record.id)) item.record.id = newKnowledgeId(item.record.created_at)
      seen.set(item.record.id, item.line)
      return true
    }
    if (onConflict === 'skip') {
      skipped++
      return false
    }
    if (onConflict === 'error') {
      errors.push({ line: item.line, code: 'conflict', message: `entry ${id} exists already (use onConflict skip or replace)` })
      return false
    }
    return true
  })
  errors.sort((a, b) => a.line - b.line)
  if (mode === 'atomic' && errors.length > 0) {
    deps.logger.warn('knowledge.import.rejected', { errors: errors.length })
    return { imported: 0, skipped: 0, errors }
  }
  const imported = await writeChecked(deps, toImport, existing, { atomic: mode === 'atomic', batchSize, onProgress: options.onProgress })
  deps.logger.info('knowledge.imported', { imported, skipped, errors: errors.length })
  return { imported, skipped, errors }
}

/**
 * Writes checked lines: embedded a batch at a time (the next batch while the store writes one),
 * inserted (an existing id replaced) in one transaction when `atomic`, else one a batch. Returns
 * how many were written.
 * @example
 * const written = await writeChecked(deps, [checkLine(text, 1, deps)], new Set(), { atomic: true })
 */
export async function writeChecked(
  deps: Pick<ImportDeps, 'store' | 'embedder'>,
  items: readonly CheckedLine[],
  existing: ReadonlySet<string>,
  options: { atomic: boolean; batchSize?: number | undefined; onProgress?: ((done: number, total: number) => void) | undefined },
): Promise<number> {
  const batchSize = options.batchSize ?? 200
  const total = items.length
  if (total > 0) options.onProgress?.(0, total)
  const embed = (start: number): Promise<Float32Array[]> => {
    const vectors = deps.embedder.embed(
      items.slice(start, start + batchSize).map(({ record }) => embeddingText(record.task, record.content)),
      { kind: 'document' },
    )
    // Awaited below; a write that fails first leaves it unawaited, which must not crash the process.
    vectors.catch(() => {})
    return vectors
  }
  async function* batches(): AsyncGenerator<ImportItem[]> {
    let done = 0
    let next = items.length > 0 ? embed(0) : undefined
    for (let i = 0; i < items.length; i += batchSize) {
      const slice = items.slice(i, i + batchSize)
      const vectors = await next!
      // The next batch is embedded (in the embedder's threads, or its server) while the store writes this one.
      next = i + batchSize < items.length ? embed(i + batchSize) : undefined
      yield slice.map((item, j) => ({
        record: item.record,
        doc: searchDocument(item.record.task, item.record.content, item.record.tags),
        embedding: vectors[j],
        helpful_history: item.helpful_history,
        harmful_history: item.harmful_history,
        versions: item.versions,
        replace: !item.fresh && existing.has(item.record.id),
      }))
      // Resumed when the store asks for the next batch: this one is written.
      done += slice.length
      options.onProgress?.(done, total)
    }
  }
  return deps.store.knowledge.importBatches(batches(), options.atomic)
}
