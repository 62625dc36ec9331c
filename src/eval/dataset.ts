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

/** One document of the corpus. */
export const RetrievalDoc = z.object({
  id: z.string().min(1).max(200),
  text: z.string().min(1),
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

/** One query. */
export const RetrievalQuery = z.object({
  id: z.string().min(1).max(200),
  text: z.string().trim().min(1).max(10_000),
  meta: z.looseObject({ conv: Conv.optional() }).default({}),
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
   * Judgements that cannot be honoured as given: an unknown query (ignored), or a
   * document that is missing or in another conversation (kept: relevant, never found).
   */
  warnings: ValidationIssue[]
}

/** The conversation (scope) of a document or query. */
export function convOf(line: { meta: { conv?: string | undefined } }): string {
  return line.meta.conv ?? DEFAULT_CONV
}

async function readJsonl<S extends z.ZodType>(file: string, schema: S, issues: ValidationIssue[]): Promise<Array<z.output<S>>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new KnowHubError('validation_error', `Cannot read ${file}: ${(error as Error).message}`, { file })
  }
  const out: Array<z.output<S>> = []
  const name = basename(file)
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim()
    if (line === '') return
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
  return out
}

/**
 * Reads and checks a retrieval set folder. Bad JSON, a bad field or a duplicate
 * id fail with every diagnostic; judgements that name an unknown query or
 * document are listed in `warnings`, never dropped silently.
 * @example
 * const set = await loadRetrievalSet('../shared/corpus/locomo/turns-dev')
 * set.docs.length // 2760
 */
export async function loadRetrievalSet(dir: string): Promise<RetrievalSet> {
  const issues: ValidationIssue[] = []
  const [docs, queries, qrels] = await Promise.all([
    readJsonl(join(dir, 'corpus.jsonl'), RetrievalDoc, issues),
    readJsonl(join(dir, 'queries.jsonl'), RetrievalQuery, issues),
    readJsonl(join(dir, 'qrels.jsonl'), Qrel, issues),
  ])
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
  const warnings: ValidationIssue[] = []
  for (const qrel of qrels) {
    const conv = queryConv.get(qrel.query_id)
    if (conv === undefined) {
      warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: 'unknown query id: judgement ignored' })
      continue
    }
    const dConv = docConv.get(qrel.doc_id)
    // Kept as relevant (it can never be found), as trec_eval counts a judged document missing from the run.
    if (dConv === undefined)
      warnings.push({ path: `qrels.jsonl: ${qrel.query_id}`, message: `unknown document id ${qrel.doc_id}: counted as relevant and never found` })
    else if (dConv !== conv)
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
  return { name: basename(dir), docs, queries, qrels: judged, warnings }
}
