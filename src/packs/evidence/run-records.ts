/**
 * The standard's record files as zod schemas — compile runs
 * (`runs/compile-*.json`), context resolutions (`runs/context-*.json`),
 * selection evals (`evals/*.json`) and source maps (`indexes/source-map.json`)
 * — after its published JSON schemas (compile-run, context-resolution,
 * selection-eval, source-map; fields as of v0.6–v0.7.2) — and one checker
 * that tells which schema a file follows and lists every problem with its
 * JSON path. As in the reference CLI, a field the schema does not know is a
 * warning; a missing required field, a wrong type or a value outside an enum
 * is an error.
 */
import { z } from 'zod'
import type { PackDiagnostic } from '../schema.js'

const Severity = z.enum(['info', 'warning', 'error'])
const RunStatus = z.enum(['passed', 'needs-review', 'stale', 'disputed', 'failed'])
const strings = z.array(z.string())

/**
 * A context-resolution record (the standard's `context-resolution` schema): the query,
 * the packs activated with how (`explicit | implicit | resolver-driven`), what each selected.
 * @example
 * ContextResolutionRecord.parse(JSON.parse(await readFile('runs/context-2026-05-06T09-10-00Z.json', 'utf8')))
 */
export const ContextResolutionRecord = z
  .object({
    run_id: z.string().min(1),
    query: z.string().min(1),
    status: RunStatus,
    resolver: z.object({ tool: z.string().optional(), version: z.string().optional(), strategy: z.string().optional() }).strict().optional(),
    activated_packs: z
      .array(
        z
          .object({
            name: z.string().min(1),
            activation: z.enum(['explicit', 'implicit', 'resolver-driven']),
            status: z.enum(['draft', 'ready', 'needs-review', 'stale', 'disputed', 'archived']).optional(),
            trust: z.enum(['unreviewed', 'user-confirmed', 'official', 'external']).optional(),
            grounding: z.enum(['none', 'recommended', 'required']).optional(),
            selected_files: strings,
            source_anchors: strings.optional(),
            warnings: z.array(z.object({ severity: Severity, path: z.string().optional(), message: z.string() }).strict()).optional(),
            profile: z.enum(['document-first', 'wiki-first', 'hybrid']).optional(),
            runtime_mode: z.enum(['data', 'persona']).optional(),
            selected_documents: strings.optional(),
            selected_splits: strings.optional(),
            wrapper_order: z.number().int().optional(),
            builder_skill: z
              .object({ name: z.string().min(1), version: z.string().optional(), digest: z.string().optional() })
              .strict()
              .optional(),
          })
          .strict(),
      )
      .min(1),
    missing: strings.optional(),
    token_estimate: z.number().int().optional(),
    wrapper_order: strings.optional(),
  })
  .strict()
export type ContextResolutionRecord = z.infer<typeof ContextResolutionRecord>

/**
 * How a pack came to be used (runtime standard, Step 3).
 * @example
 * PackActivationMode.parse('resolver-driven')
 */
export const PackActivationMode = z.enum(['explicit', 'implicit', 'resolver-driven'])
export type PackActivationMode = z.infer<typeof PackActivationMode>

const Warning = z.object({ severity: Severity, path: z.string().optional(), message: z.string() }).strict()

/**
 * A compile run (`runs/compile-*.json`, the standard's `compile-run` schema).
 * @example
 * CompileRunRecord.parse({ run_id: 'r1', trigger: 'manual', status: 'passed', inputs: [], outputs: [] })
 */
export const CompileRunRecord = z
  .object({
    run_id: z.string().min(1),
    trigger: z.enum(['ingest', 'source-change', 'manual', 'scheduled', 'migration']),
    status: RunStatus,
    compiler: z.object({ tool: z.string().optional(), version: z.string().optional(), model: z.string().optional() }).strict().optional(),
    inputs: z.array(z.object({ path: z.string(), sha256: z.string().optional() }).strict()),
    outputs: z.array(z.object({ path: z.string(), operation: z.enum(['created', 'updated', 'deleted', 'unchanged']) }).strict()),
    diagnostics: z.array(z.object({ severity: Severity, path: z.string(), message: z.string() }).strict()).optional(),
    review: z.object({ required: z.boolean().optional(), reason: z.string().optional() }).strict().optional(),
    profile: z.enum(['document-first', 'wiki-first', 'hybrid']).optional(),
    runtime_mode: z.enum(['data', 'persona']).optional(),
    primary_document: z.string().optional(),
    builder_skill: z
      .object({ name: z.string().min(1), version: z.string().optional(), digest: z.string().optional(), source: z.string().optional() })
      .strict()
      .optional(),
    documents: z
      .array(
        z
          .object({
            path: z.string(),
            role: z.enum(['primary', 'supporting', 'export']).optional(),
            status: z.enum(['draft', 'ready', 'needs-review', 'stale', 'disputed', 'archived']).optional(),
            sha256: z.string().optional(),
          })
          .strict(),
      )
      .optional(),
    chapters: z
      .array(
        z
          .object({
            id: z.string().min(1),
            title: z.string().min(1),
            document: z.string().optional(),
            path: z.string().optional(),
            coverage: z.enum(['full', 'partial', 'missing', 'conflict']),
            tokens: z.number().int().optional(),
            source_anchors: strings.optional(),
            warnings: z.array(Warning).optional(),
          })
          .strict(),
      )
      .optional(),
    quality_issues: strings.optional(),
    interview_questions: strings.optional(),
  })
  .strict()
export type CompileRunRecord = z.infer<typeof CompileRunRecord>

/**
 * A selection eval suite (`evals/*.json`, the standard's `selection-eval` schema).
 * @example
 * SelectionEvalRecord.parse({ pack_name: 'acme', cases: [{ id: 'c1', prompt: 'Team price?', expected: 'select' }] })
 */
export const SelectionEvalRecord = z
  .object({
    pack_name: z.string().min(1),
    cases: z
      .array(
        z
          .object({
            id: z.string().min(1),
            prompt: z.string().min(1),
            expected: z.enum(['select', 'reject', 'warn']),
            reason: z.string().optional(),
            expected_warnings: strings.optional(),
          })
          .strict(),
      )
      .min(1),
  })
  .strict()
export type SelectionEvalRecord = z.infer<typeof SelectionEvalRecord>

/**
 * A source map (`indexes/source-map.json`, the standard's `source-map` schema), strictly.
 * @example
 * SourceMapRecord.parse({ claims: [{ claim_id: 'c1', text: 'x', status: 'confirmed', source: { path: 'sources/a.md' } }] })
 */
export const SourceMapRecord = z
  .object({
    claims: z.array(
      z
        .object({
          claim_id: z.string().min(1),
          text: z.string().min(1),
          status: z.enum(['confirmed', 'inferred', 'disputed', 'stale', 'missing', 'source-required']),
          source: z.object({ path: z.string(), anchor: z.string().optional() }).strict(),
          compiled_into: strings.optional(),
          document: z.string().optional(),
          section_id: z.string().optional(),
        })
        .strict(),
    ),
    document_sections: z
      .array(
        z
          .object({
            document: z.string(),
            section_id: z.string().min(1),
            title: z.string().min(1),
            source_anchors: strings.optional(),
            compiled_into: strings.optional(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict()
export type SourceMapRecord = z.infer<typeof SourceMapRecord>

/** The record schemas by the standard's names. */
export const RUN_SCHEMAS = {
  'context-resolution': ContextResolutionRecord,
  'compile-run': CompileRunRecord,
  'selection-eval': SelectionEvalRecord,
  'source-map': SourceMapRecord,
} as const
export type RunSchemaName = keyof typeof RUN_SCHEMAS

/**
 * Which schema a record file follows: by its name (`context-*`, `compile-*`,
 * `source-map.json`, a file under `evals/`), else by its keys; undefined when
 * neither tells.
 * @example
 * runSchemaFor('runs/context-2026-05-06.json', {}) // 'context-resolution'
 */
export function runSchemaFor(path: string, data: unknown): RunSchemaName | undefined {
  const name = path.replace(/^.*[\\/]/u, '')
  if (/^context-.*\.jsonl?$/u.test(name)) return 'context-resolution'
  if (/^compile-.*\.json$/u.test(name)) return 'compile-run'
  if (name === 'source-map.json') return 'source-map'
  if (/(^|[\\/])evals[\\/]/u.test(path)) return 'selection-eval'
  const keys = typeof data === 'object' && data !== null && !Array.isArray(data) ? Object.keys(data) : []
  if (keys.includes('activated_packs')) return 'context-resolution'
  if (keys.includes('trigger') || keys.includes('outputs')) return 'compile-run'
  if (keys.includes('cases')) return 'selection-eval'
  if (keys.includes('claims')) return 'source-map'
  return undefined
}

/**
 * Every problem of one record against a schema, as diagnostics with the JSON
 * path in `field`: unknown fields are warnings (`run_unknown_field`), the rest
 * errors (`run_invalid`).
 * @example
 * checkRecord(data, 'compile-run', 'runs/compile-1.json') // [{ severity: 'error', code: 'run_invalid', field: 'trigger', … }]
 */
export function checkRecord(data: unknown, schema: RunSchemaName, path: string): PackDiagnostic[] {
  const parsed = RUN_SCHEMAS[schema].safeParse(data)
  if (parsed.success) return []
  return parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.')
    const unknown = issue.code === 'unrecognized_keys'
    return {
      severity: unknown ? 'warning' : 'error',
      code: unknown ? 'run_unknown_field' : 'run_invalid',
      path,
      ...(field ? { field } : {}),
      message: unknown
        ? `${path}${field ? ` at ${field}` : ''}: fields the ${schema} schema does not define: ${issue.keys.join(', ')}.`
        : `${path}${field ? ` at ${field}` : ''} does not follow the ${schema} schema: ${issue.message}.`,
    }
  })
}

/**
 * Checks the text of a record file: JSON (or JSON Lines for `*.jsonl`, one
 * record a line), the schema it follows (`schema` when given, else told from
 * its name and keys), and every record against it.
 * @example
 * const { schema, issues } = checkRecordText(text, 'runs/context-2026-05-06.json')
 */
export function checkRecordText(text: string, path: string, schema?: RunSchemaName): { schema?: RunSchemaName; records: number; issues: PackDiagnostic[] } {
  const lines = path.endsWith('.jsonl')
    ? text
        .split('\n')
        .map((line, i) => ({ line, at: i + 1 }))
        .filter(({ line }) => line.trim() !== '')
    : [{ line: text, at: 0 }]
  const issues: PackDiagnostic[] = []
  let chosen = schema
  let records = 0
  for (const { line, at } of lines) {
    const where = at > 0 ? `${path}:${at}` : path
    let data: unknown
    try {
      data = JSON.parse(line)
    } catch (error) {
      issues.push({ severity: 'error', code: 'run_invalid', path: where, message: `${where} is not valid JSON (${(error as Error).message}).` })
      continue
    }
    chosen ??= runSchemaFor(path, data)
    if (!chosen) {
      issues.push({
        severity: 'error',
        code: 'run_unknown_schema',
        path: where,
        message: `${where} follows none of the record schemas (compile-run, context-resolution, selection-eval, source-map).`,
      })
      continue
    }
    records++
    issues.push(...checkRecord(data, chosen, where))
  }
  if (lines.length === 0) issues.push({ severity: 'error', code: 'run_invalid', path, message: `${path} is empty.` })
  return { ...(chosen ? { schema: chosen } : {}), records, issues }
}
