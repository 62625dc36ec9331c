/**
 * Limits on the shape of every JSON input, checked before any schema sees it:
 * nesting depth, the number of values, and NUL characters in text. A feedback
 * case nested 4,000 deep, or a `metadata` 10,000 deep, is refused here with a
 * `validation_error` instead of being stored (where clients written in other
 * languages can no longer parse it back) or overflowing the stack; a NUL, which
 * PostgreSQL text cannot hold, is refused naming the field instead of failing
 * in the database; so is a lone surrogate (`"\ud800"`), which no UTF-8 column can hold. The walk is iterative, so no input can exhaust the stack.
 */
import { KnowHubError } from './errors.js'

/** The limits of {@link checkJsonLimits}. */
export interface JsonLimits {
  /** Deepest nesting of objects and arrays (the top-level value is depth 1). */
  maxDepth: number
  /** Most values in all (every object member, array item and the root). */
  maxValues: number
}

/** Deep enough for every KnowHub shape (the deepest, a resource's metadata, rarely passes 5), shallow enough for any JSON parser. */
export const JSON_LIMITS: JsonLimits = { maxDepth: 32, maxValues: 100_000 }

function refusal(path: readonly (string | number)[], message: string): KnowHubError {
  const dotted = path.map(String).join('.') || '(root)'
  return new KnowHubError('validation_error', `Invalid input: ${dotted}: ${message}`, { issues: [{ path: dotted, message }] })
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}

/** A lone UTF-16 surrogate (`"\ud800"` in JSON): not Unicode text, and not storable as UTF-8. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function checkText(value: string, path: readonly (string | number)[], what: string): void {
  if (value.includes('\u0000')) throw refusal(path, `${what} may not contain NUL (\\u0000)`)
  if (LONE_SURROGATE.test(value)) throw refusal(path, `${what} is not valid Unicode (a lone surrogate such as \\ud800)`)
}

/**
 * Throws a `validation_error` naming the offending path when `input` nests deeper
 * than `maxDepth`, holds more than `maxValues` values, or has a NUL character in
 * any string or key, or a lone surrogate (invalid Unicode). Values other than plain objects, arrays and strings pass as they are.
 * @example
 * checkJsonLimits({ task: 'a\u0000b' }) // throws: "Invalid input: task: text may not contain NUL (\u0000)"
 */
export function checkJsonLimits(input: unknown, limits: JsonLimits = JSON_LIMITS): void {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }]
  let values = 0
  while (stack.length > 0) {
    const { value, path } = stack.pop()!
    if (++values > limits.maxValues) throw refusal([], `more than ${limits.maxValues} values`)
    if (typeof value === 'string') {
      checkText(value, path, 'text')
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    const isArray = Array.isArray(value)
    if (!isArray && !isPlainObject(value)) continue
    if (path.length >= limits.maxDepth) throw refusal(path, `nested deeper than ${limits.maxDepth} levels`)
    if (isArray) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] })
      continue
    }
    for (const key of Object.keys(value)) {
      checkText(key, path, 'a field name')
      stack.push({ value: value[key], path: [...path, key] })
    }
  }
}
