/**
 * Reading a model's structured answer: code fences stripped, JSON parsed, the schema checked.
 * Small models wrap their JSON in prose, leave a trailing comma or stop mid-answer; what can be
 * read without guessing is read here (the first balanced JSON value in the text, trailing commas
 * dropped), the rest comes back as problems the repair request can show the model, each with the
 * reason it is counted under.
 */
import type { z } from 'zod'

/** Why an answer could not be used: not JSON at all, JSON that breaks the schema, or cut at the token cap. */
export type AnswerProblem = 'not_json' | 'schema' | 'truncated'

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
 * The first balanced JSON object or array in a text (strings and escapes respected), or
 * undefined when none closes.
 * @example
 * firstJsonValue('Sure! {"a": [1, 2]} Hope this helps.') // '{"a": [1, 2]}'
 */
export function firstJsonValue(text: string): string | undefined {
  const start = text.search(/[[{]/u)
  if (start < 0) return undefined
  const closers: string[] = []
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') closers.push('}')
    else if (c === '[') closers.push(']')
    else if (c === '}' || c === ']') {
      if (closers.pop() !== c) return undefined
      if (closers.length === 0) return text.slice(start, i + 1)
    }
  }
  return undefined
}

/** JSON.parse, else the same without trailing commas (`[1, 2,]`, `{"a": 1,}`); undefined when neither parses. */
function parseLoose(text: string): { value: unknown } | undefined {
  for (const candidate of [text, text.replace(/,(\s*[}\]])/gu, '$1')]) {
    try {
      return { value: JSON.parse(candidate) }
    } catch {
      // try the next reading
    }
  }
  return undefined
}

/**
 * The JSON value of a model's answer: the text itself, a fenced block, or the first balanced
 * value inside prose; undefined when there is none.
 * @example
 * readJson('Here you go:\n{"ids": ["a"],}') // { value: { ids: ['a'] } }
 */
export function readJson(text: string): { value: unknown } | undefined {
  const stripped = stripFences(text)
  const whole = parseLoose(stripped)
  if (whole) return whole
  const inner = firstJsonValue(stripped)
  return inner === undefined ? undefined : parseLoose(inner)
}

/**
 * The answer parsed and validated, or what is wrong with it (at most 20 problems) and why.
 * @example
 * parseStructured('{"content":"x"}', z.object({ content: z.string() })) // { ok: true, value: { content: 'x' } }
 */
export function parseStructured<T extends z.ZodType>(
  text: string,
  schema: T,
): { ok: true; value: z.output<T> } | { ok: false; reason: AnswerProblem; problems: string[] } {
  const json = readJson(text)
  if (!json) {
    const excerpt = text.trim().slice(0, 80)
    return { ok: false, reason: 'not_json', problems: [`the answer is not JSON (it starts ${JSON.stringify(excerpt)})`] }
  }
  const parsed = schema.safeParse(json.value)
  if (parsed.success) return { ok: true, value: parsed.data }
  return {
    ok: false,
    reason: 'schema',
    problems: parsed.error.issues.slice(0, 20).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  }
}
