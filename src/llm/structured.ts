/**
 * Reading a model's structured answer: code fences stripped, JSON parsed, the schema checked.
 * Problems come back as text the repair request can show the model.
 */
import type { z } from 'zod'

/**
 * The JSON inside a model's answer: a fenced block's body, or the text itself.
 * @example
 * stripFences('```json\n{"a":1}\n```') // '{"a":1}'
 */
export function stripFences(text: string): string {
  const trimmed = text.trim()
  const fenced = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/u.exec(trimmed)
  return (fenced?.[1] ?? trimmed).trim()
}

/**
 * The answer parsed and validated, or what is wrong with it (at most 20 problems).
 * @example
 * parseStructured('{"content":"x"}', z.object({ content: z.string() })) // { ok: true, value: { content: 'x' } }
 */
export function parseStructured<T extends z.ZodType>(text: string, schema: T): { ok: true; value: z.output<T> } | { ok: false; problems: string[] } {
  let json: unknown
  try {
    json = JSON.parse(stripFences(text))
  } catch (error) {
    return { ok: false, problems: [`the answer is not JSON (${(error as Error).message})`] }
  }
  const parsed = schema.safeParse(json)
  if (parsed.success) return { ok: true, value: parsed.data }
  return { ok: false, problems: parsed.error.issues.slice(0, 20).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`) }
}
