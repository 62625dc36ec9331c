import type { z } from 'zod'
import { KnowHubError } from './errors.js'
import { checkJsonLimits } from './json-limits.js'

/** One validation problem, with the path to the offending field. */
export interface ValidationIssue {
  path: string
  message: string
}

/**
 * Turns zod issues into `{ path, message }` pairs with dotted paths (`source.urls.0`). An
 * unknown field is reported at its own path (`source.surprise`), one issue per field.
 */
export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  const dotted = (path: readonly PropertyKey[]) => path.map(String).join('.') || '(root)'
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: dotted([...issue.path, key]), message: `unknown field "${key}"` }))
      : [{ path: dotted(issue.path), message: issue.message }],
  )
}

/**
 * Parses `input` with `schema`, throwing a `validation_error` that lists every issue.
 * The input's shape is checked first ({@link checkJsonLimits}: nesting depth, size, NUL in text).
 * @example
 * const input = parseWith(SaveKnowledgeInput, body, 'knowledge entry')
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, what = 'input'): z.output<S> {
  checkJsonLimits(input)
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const issues = toValidationIssues(result.error)
  const first = issues[0]
  const summary = first ? `${first.path}: ${first.message}` : 'invalid'
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  throw new KnowHubError('validation_error', `Invalid ${what}: ${summary}${more}`, { issues })
}

/**
 * An optional input field that also takes `null` as absent: seed agents are Python, and a
 * tool parameter declared `Optional[...] = None` arrives as JSON `null`.
 * @example
 * z.strictObject({ owner: nullAsAbsent(Owner) }).parse({ owner: null }) // { owner: undefined }
 */
export function nullAsAbsent<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined)
}

/**
 * An input field with a default that also takes `null` as absent (so: the default).
 * @example
 * z.strictObject({ tags: nullAsDefault(Tags, () => ({})) }).parse({ tags: null }) // { tags: {} }
 */
export function nullAsDefault<T extends z.ZodType>(schema: T, fallback: () => z.output<T>) {
  return schema.nullish().transform((value): z.output<T> => value ?? fallback())
}
