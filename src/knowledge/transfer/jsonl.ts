import { KnowHubError, isKnowHubError } from '../../core/errors.js'
import type { Clock } from '../../core/clock.js'
import { newKnowledgeId } from '../../core/ids.js'
import { KnowledgeExportLine, SaveKnowledgeInput, type EvalInput, type FeedbackRecord, type ImportReport, type KnowledgeVersion } from '../../core/knowledge.js'
import { liftRecord } from '../../core/seed-record.js'
import { checkVisibility } from '../../core/visibility.js'
import type { Logger } from '../../core/logger.js'
import { assertWritableScopes, defaultOwnerOf, defaultWriteScopes, requirePermission, type Principal, type WriteAccess } from '../../core/principal.js'
import { checkJsonLimits } from '../../core/json-limits.js'
import { toValidationIssues } from '../../core/validate.js'
import type { Embedder } from '../../embed/embedder.js'
import type { IdClaim, ImportItem, KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { entryDate } from '../search/dates.js'
import { embeddingText, searchDocument } from '../search/document.js'
import { newEntryRecord } from '../entries/entries.js'
import { mayNameOwner, writeAccess } from '../../auth/policy.js'

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
 * with an `id` is a line of the export format (strict: a field we do not know would be lost), or
 * one of the seeds' records (seed 002's, seed 003's: `liftRecord` in src/core/seed-record.ts
 * fills what they leave out, keeping the `eval` fields they give); one without is the body
 * `POST /api/knowledge` takes (task, content, types, tags, scopes, owner, source, score…), saved as
 * a new entry with the same defaults and checks as a save, its `eval` counts and histories kept.
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
  if (!('id' in json)) return checkSaveLine(json as Record<string, unknown>, line, deps)
  const entry = parseExportLine(json as Record<string, unknown>, deps)
  checkSize(entry.content, deps)
  assertWritableScopes(deps.principal, entry.scopes)
  if (!mayNameOwner(deps.principal, entry.owner)) throw new KnowHubError('forbidden', `owner ${entry.owner} is not one of your ids`, { owner: entry.owner })
  checkVisibility(entry.visibility, entry.scopes, entry.owner)
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

/**
 * A record with an id as an export line, parsed strictly (a field KnowHub does not know would be
 * lost: an error): the seeds' records lifted first (see `liftRecord`), with the importer's
 * defaults for scopes and owner. The caller checks a given `visibility` (after its permissions).
 * @example
 * const entry = parseExportLine({ id: 'profile_001', type: 'user_profile', task: 't', content: 'c', scopes: ['user:123'], owner: 'user:123' }, deps)
 */
export function parseExportLine(json: Record<string, unknown>, deps: Pick<ImportDeps, 'principal' | 'clock'>): KnowledgeExportLine {
  const lifted = liftRecord(json, {
    now: deps.clock.now(),
    scopes: () => defaultWriteScopes(deps.principal),
    owner: () => defaultOwnerOf(deps.principal) ?? 'user:unknown',
  })
  const parsed = ImportLine.safeParse(lifted)
  if (!parsed.success) throw invalid(parsed, '')
  return parsed.data
}

/** A line without an id: a save's body, as a new entry; the `eval` counts and histories it gives are kept (an import trusts its file). */
function checkSaveLine(json: Record<string, unknown>, line: number, deps: ImportDeps): CheckedLine {
  const parsed = SaveKnowledgeInput.safeParse(json)
  if (!parsed.success) throw invalid(parsed, '(read as a POST /api/knowledge body: the line has no id) ')
  checkSize(parsed.data.content, deps)
  const now = deps.clock.now()
  const record = { id: newKnowledgeId(now), ...newEntryRecord(parsed.data, deps.principal, now) }
  checkVisibility(parsed.data.visibility, record.scopes, record.owner)
  const given = (json.eval ?? {}) as EvalInput
  return {
    line,
    record: { ...record, helpful: given.helpful ?? 0, harmful: given.harmful ?? 0 },
    helpful_history: given.helpful_history ?? [],
    harmful_history: given.harmful_history ?? [],
    versions: [],
    fresh: true,
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
  const access = writeAccess(deps.principal)
  const claims = await claimsOf(deps.store, access, accepted)
  const renamed = await renameHidden(deps.store, access, accepted, claims, seen)
  let skipped = 0
  const toImport = accepted.filter((item) => {
    const problem = referenceProblem(item, seen, claims, renamed)
    if (problem) {
      errors.push({ line: item.line, code: 'invalid_import', message: problem })
      return false
    }
    const { id } = item.record
    const claim = claims.get(id)
    if (claim === undefined) return true
    if (onConflict === 'skip') {
      skipped++
      return false
    }
    if (onConflict === 'error') {
      errors.push({ line: item.line, code: 'conflict', message: `entry ${id} exists already (use onConflict skip or replace)` })
      return false
    }
    if (claim === 'see') {
      const message = `entry ${id} is not yours to replace: only its owner or an admin of its scopes may (use onConflict skip to keep it)`
      errors.push({ line: item.line, code: 'forbidden', message })
      return false
    }
    return true
  })
  errors.sort((a, b) => a.line - b.line)
  const notes = renamed.size > 0 ? { renamed: [...renamed.values()].sort((a, b) => a.line - b.line) } : {}
  if (mode === 'atomic' && errors.length > 0) {
    deps.logger.warn('knowledge.import.rejected', { errors: errors.length })
    return { imported: 0, skipped: 0, errors }
  }
  const manageable = new Set([...claims].flatMap(([id, claim]) => (claim === 'manage' ? [id] : [])))
  const imported = await writeChecked(deps, toImport, manageable, { atomic: mode === 'atomic', batchSize, onProgress: options.onProgress })
  deps.logger.info('knowledge.imported', { imported, skipped, errors: errors.length, renamed: renamed.size })
  return { imported, skipped, errors, ...notes }
}

/** The ids entries of an import refer to: other entries (merge, supersession). */
const REFERENCES = ['merged_into', 'superseded_by', 'supersedes'] as const

/** What each id of the import, and each id its lines refer to, is to the importer (see `claims`). */
async function claimsOf(store: ImportDeps['store'], access: WriteAccess, items: readonly CheckedLine[]): Promise<Map<string, IdClaim>> {
  const ids = new Set<string>()
  for (const item of items) {
    ids.add(item.record.id)
    for (const field of REFERENCES) if (item.record[field]) ids.add(item.record[field])
  }
  const claims = new Map<string, IdClaim>()
  const all = [...ids]
  for (let i = 0; i < all.length; i += 1000) for (const [id, claim] of await store.knowledge.claims(all.slice(i, i + 1000), access)) claims.set(id, claim)
  return claims
}

/**
 * Gives a new id to every line whose id is taken by an entry the importer cannot see (an unknown
 * id to it: its line is a new entry, as on a hub without that id) and to every save-shaped line
 * whose drawn id is taken. Returns the renames of exported lines, which the report lists.
 */
async function renameHidden(
  store: ImportDeps['store'],
  access: WriteAccess,
  items: readonly CheckedLine[],
  claims: Map<string, IdClaim>,
  seen: Map<string, number>,
): Promise<Map<string, { line: number; id: string; new_id: string }>> {
  const renamed = new Map<string, { line: number; id: string; new_id: string }>()
  let pending = items.filter((item) => claims.has(item.record.id) && (item.fresh || claims.get(item.record.id) === 'hidden'))
  for (let round = 0; pending.length > 0 && round < 8; round++) {
    for (const item of pending) {
      const old = item.record.id
      if (claims.get(old) === 'hidden') claims.delete(old)
      do item.record.id = newKnowledgeId(item.record.created_at)
      while (seen.has(item.record.id) || claims.has(item.record.id))
      seen.set(item.record.id, item.line)
      if (!item.fresh) renamed.set(renamed.get(old)?.id ?? old, { line: item.line, id: renamed.get(old)?.id ?? old, new_id: item.record.id })
    }
    // A drawn id may be taken too (same second, same suffix): look the new ones up and draw again.
    const taken = await store.knowledge.claims(
      pending.map((item) => item.record.id),
      access,
    )
    pending = pending.filter((item) => taken.has(item.record.id))
    for (const item of pending) claims.set(item.record.id, 'hidden')
  }
  if (pending.length > 0) throw new KnowHubError('conflict', 'Could not allocate unique knowledge ids for the import; try again')
  return renamed
}

/**
 * What is wrong with the entries a line refers to (merged_into, superseded_by, supersedes), after
 * pointing references to a renamed line at its new id: each must be in this import or an entry
 * the importer can see; an entry it cannot see is an unknown id.
 */
function referenceProblem(
  item: CheckedLine,
  inImport: ReadonlyMap<string, number>,
  claims: ReadonlyMap<string, IdClaim>,
  renamed: ReadonlyMap<string, { new_id: string }>,
): string | undefined {
  if (item.fresh) return undefined
  for (const field of REFERENCES) {
    const ref = item.record[field]
    if (!ref) continue
    const moved = renamed.get(ref)
    if (moved) {
      item.record[field] = moved.new_id
      continue
    }
    if (inImport.has(ref)) continue
    const claim = claims.get(ref)
    if (claim === 'see' || claim === 'manage') continue
    return `${field}: no entry ${ref} in this import or among the entries you can see`
  }
  return undefined
}

/**
 * Writes checked lines: embedded a batch at a time (the next batch while the store writes one),
 * inserted (an existing id replaced) in one transaction when `atomic`, else one a batch. Returns
 * how many were written.
 * @example
 * const written = await writeChecked(deps, [checkLine(text, 1, deps)], new Set(), { atomic: true })
 */
export async function writeChecked(
  deps: Pick<ImportDeps, 'store' | 'embedder' | 'principal'>,
  items: readonly CheckedLine[],
  replaceable: ReadonlySet<string>,
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
        replace: !item.fresh && replaceable.has(item.record.id),
      }))
      // Resumed when the store asks for the next batch: this one is written.
      done += slice.length
      options.onProgress?.(done, total)
    }
  }
  return deps.store.knowledge.importBatches(batches(), options.atomic, writeAccess(deps.principal))
}
