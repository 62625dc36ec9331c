/**
 * A normalised retrieval set, as in ../shared/corpus/locomo/SOURCE.md: three
 * JSONL files in one folder —
 * - `corpus.jsonl`: `{"id","text","meta":{"conv",…}}`, one document per line;
 * - `queries.jsonl`: `{"id","text","meta":{"conv",…}}`;
 * - `qrels.jsonl`: `{"query_id","doc_id","relevance"}` (relevance > 0 = relevant).
 *
 * A document may carry KnowHub entry fields in `meta` (`task`, `types`, `tags`):
 * then `text` is the entry's content and `meta.task` its task. A plain document
 * (no `meta.task`) is both the task and the content of its entry.
 */
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { z } from 'zod'
import { KnowHubError } from '../core/errors.js'
import { KnowledgeType, Tags } from '../core/knowledge.js'
import { toValidationIssues, type ValidationIssue } from '../core/validate.js'

/** The `conv` a line belongs to when its meta names none. */
export const DEFAULT_CONV = 'default'

const Conv = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,100}$/, 'conv must be letters, digits and . _ @ + - (it becomes a project scope)')

/** One document of the corpus (a blank `text` is skipped with a warning by the loader). */
export const RetrievalDoc = z.object({
  id: z.string().min(1).max(200),
  text: z.string(),
  meta: z
    .looseObject({
      conv: Conv.optional(),
      task: z.string().trim().min(1).max(10_000).optional(),
      types: z.array(KnowledgeType).min(1).max(6).optional(),
      tags: Tags.optional(),
    })
    .default({}),
})
export type RetrievalDoc = z.output<typeof RetrievalDoc>

/**
 * A query's own haystack, as in the format family of ../shared/corpus/locomo/SOURCE.md: the
 * query searches only the documents whose `meta[field]` is one of `in` (instead of its conv).
 */
export const QueryScope = z.strictObject({
  field: z.string().min(1).max(100),
  in: z
    .array(z.union([z.string(), z.number()]))
    .min(1)
    .max(100_000),
})
export type QueryScope = z.output<typeof QueryScope>

/** Longest query text searched (the search API's limit); longer ones are skipped with a warning. */
export const MAX_QUERY_CHARS = 10_000

/**
 * One query (a blank or over-long `text` is skipped with a warning by the loader).
 * `meta.judged: "complete"` says every document of the query's conv was judged: those not in
 * qrels.jsonl are unrelated, and a query with no judgement is about nothing stored (its right
 * answer is the empty list). `meta.lang` groups the precision figures (`en`, `zh`).
 */
export const RetrievalQuery = z.object({
  id: z.string().min(1).max(200),
  text: z.string().trim(),
  meta: z
    .looseObject({
      conv: Conv.optional(),
      scope: QueryScope.optional(),
      judged: z.literal('complete').optional(),
      lang: z.string().min(1).max(20).optional(),
      kind: z.string().min(1).max(40).optional(),
    })
    .default({}),
})
export type RetrievalQuery = z.output<typeof RetrievalQuery>

/** One relevance judgement. */
export const Qrel = z.object({
  query_id: z.string().min(1),
  doc_id: z.string().min(1),
  relevance: z.number().min(0).default(1),
})
export type Qrel = z.output<typeof Qrel>

/** A loaded retrieval set. */
export interface RetrievalSet {
  /** The folder name, e.g. `turns-dev`. */
  name: string
  docs: RetrievalDoc[]
  queries: RetrievalQuery[]
  /** query id → (doc id → relevance). Only queries with at least one judgement appear. */
  qrels: Map<string, Map<string, number>>
  /**
   * Queries with a `meta.scope`, by query id: the name of their scope group (queries with the
   * same field and values share one) — see {@link scopeGroupDocs}.
   */
  scopeGroups: Map<string, ScopeGroup>
  /** Ids of the queries judged completely (`meta.judged: "complete"`), with or without a judgement. */
  complete: Set<string>
  /**
   * Lines skipped (blank lines, blank documents and queries, over-long queries) and judgements
   * that cannot be honoured as given: an unknown query (ignored), or a
   * document that is missing or in another conversation (kept: relevant, never found).
   */
  warnings: ValidationIssue[]
}

/** Queries that search the same haystack: the documents whose `meta[field]` is one of `values`. */
export interface ScopeGroup {
  /** `g1`, `g2`, … in order of first use. */
  name: string
  field: string
  values: ReadonlySet<string>
}

/** A document's values of a meta field, as strings (a list gives each of its items). */
export function metaValues(doc: RetrievalDoc, field: string): string[] {
  const value = (doc.meta as Record<string, unknown>)[field]
  const items = Array.isArray(value) ? value : [value]
  return items.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String)
}

/** True when the document is in the group's haystack. */
export function inScopeGroup(doc: RetrievalDoc, group: ScopeGroup): boolean {
  return metaValues(doc, group.field).some((v) => group.values.has(v))
}

/** The conversation (scope) of a document or query. */
export function convOf(line: { meta: { conv?: string | undefined } }): string {
  return line.meta.conv ?? DEFAULT_CONV
}

async function readJsonl<S extends z.ZodType>(file: string, schema: S, issues: ValidationIssue[], warnings: ValidationIssue[]): Promise<Array<z.output<S>>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new KnowHubError('validation_error', `Cannot read ${file}: ${(error as Error).message}`, { file })
  }
  const out: Array<z.output<S>> = []
  const name = basename(file)
  let blank = 0
  text.split('\n').forEach((raw, index, lines) => {
    const line = raw.trim()
    if (line === '') {
      if (index < lines.length - 1 || raw !== '') blank++
      return
    }
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (error) {
      issues.push({ path: `${name}:${index + 1}`, message: `not valid JSON (${(error as Error).message})` })
      return
    }
    const parsed = schema.safeParse(json)
    if (parsed.success) out.push(parsed.data)
    else for (const issue of toValidationIssues(parsed.error)) issues.push({ path: `${name}:${index + 1}: ${issue.path}`, message: issue.message })
  })
  if (blank > 0) warnings.push({ path: name, message: `${blank} blank line${blank > 1 ? 's' : ''} skipped` })
  return out
}

/** Drops lines whose text cannot be searched or stored, each with a warning. */
function usable<T extends { id: string; text: string }>(lines: T[], file: string, warnings: ValidationIssue[], maxChars = Infinity): T[] {
  return lines.filter((line) => {
    const reason = line.text.trim() === '' ? 'blank text' : line.text.length > maxChars ? `text over ${maxChars} characters` : undefined
    if (reason) warnings.push({ path: `${file}: ${line.id}`, message: `${reason}: skipped` })
    return reason === undefined
  })
}

/** The scope groups of the queries with a `meta.scope` (one per distinct field and values). */
function scopeGroupsOf(queries: readonly RetrievalQuery[]): Map<string, ScopeGroup> {
  const byKey = new Map<string, ScopeGroup>()
  const groups = new Map<string, ScopeGroup>()
  for (const query of queries) {
    const scope = query.meta.scope
    if (!scope) continue
    const values = [...new Set(scope.in.map(String))].sort()
    const key = JSON.stringify([scope.field, values])
    let group = byKey.get(key)
    if (!group) byKey.set(key, (group = { name: `g${byKey.size + 1}`, field: scope.field, values: new Set(values) }))
    groups.set(query.id, group)
  }
  return groups
}

/**
 * Reads and checks a retrieval set folder. Bad JSON, a bad field or a duplicate
 * id fail with every diagnostic; blank lines, blank documents or queries and queries over
 * {@link MAX_QUERY_CHARS} characters are skipped, and judgements that name an unknown query
 * or document are set aside — each listed in `warnings`, never dropped silently.
 * @example
 * const set = await loadRetrievalSet('../shared/corpus/locomo/turns-dev')
 * set.docs.length // 2760
 */
export async function loadRetrievalSet(dir: string): Promise<RetrievalSet> {
  const issues: ValidationIssue[] = []
  const warnings: ValidationIssue[] = []
  const [allDocs, allQueries, qrels] = await Promise.all([
    readJsonl(join(dir, 'corpus.jsonl'), RetrievalDoc, issues, warnings),
    readJsonl(join(dir, 'queries.jsonl'), RetrievalQuery, issues, warnings),
    readJsonl(join(dir, 'qrels.jsonl'), Qrel, issues, warnings),
  ])
  const docs = usable(allDocs, 'corpus.jsonl', warnings)
  const queries = usable(allQueries, 'queries.jsonl', warnings, MAX_QUERY_CHARS)
  const scopeGroups = scopeGroupsOf(queries)
  const docById = new Map(docs.map((doc) => [doc.id, doc]))
  const docConv = new Map<string, string>()
  for (const doc of docs) {
    if (docConv.has(doc.id)) issues.push({ path: `corpus.jsonl: ${doc.id}`, message: 'duplicate document id' })
    docConv.set(doc.id, convOf(doc))
  }
  const queryConv = new Map<string, string>()
  for (const query of queries) {
    if (queryConv.has(query.id)) issues.push({ path: `queries.jsonl: ${query.id}`, message: 'duplicate query id' })
    queryConv.set(query.id, convOf(query))
  }
  const judged = new Map<string, Map<string, number>>()
  for (const qrel of qrels) {
    const conv = queryConv.get(qrel.query_id)
    if (conv === undefined) {
      warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: 'unknown query id: judgement ignored' })
      continue
    }
    const dConv = docConv.get(qrel.doc_id)
    const group = scopeGroups.get(qrel.query_id)
    // Kept as relevant (it can never be found), as trec_eval counts a judged document missing from the run.
    if (dConv === undefined)
      warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: `unknown document id ${qrel.doc_id}: counted as relevant and never found` })
    else if (group) {
      if (!inScopeGroup(docById.get(qrel.doc_id)!, group))
        warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: `document ${qrel.doc_id} is outside the query's meta.scope: it cannot be found` })
    } else if (dConv !== conv)
      warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: `document ${qrel.doc_id} is in conv ${dConv}, the query in ${conv}: it cannot be found` })
    let map = judged.get(qrel.query_id)
    if (!map) judged.set(qrel.query_id, (map = new Map()))
    map.set(qrel.doc_id, Math.max(map.get(qrel.doc_id) ?? 0, qrel.relevance))
  }
  if (issues.length > 0) {
    const first = issues[0]!
    throw new KnowHubError(
      'validation_error',
      `Invalid retrieval set ${dir}: ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`,
      { issues },
    )
  }
  if (docs.length === 0) throw new KnowHubError('validation_error', `Retrieval set ${dir} has no documents`)
  const complete = new Set(queries.filter((q) => q.meta.judged === 'complete').map((q) => q.id))
  return { name: basename(dir), docs, queries, qrels: judged, scopeGroups, complete, warnings }
}
