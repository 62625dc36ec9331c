/**
 * The shape limits every JSON input passes before its schema (core/json-limits.ts).
 */
import { describe, expect, it } from 'vitest'
import { checkJsonLimits } from '../../src/core/json-limits.js'
import { parseWith } from '../../src/core/validate.js'
import { z } from 'zod'

function nested(depth: number): unknown {
  let value: unknown = 'leaf'
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value]
  return value
}

function messageOf(fn: () => void): string {
  try {
    fn()
  } catch (error) {
    expect((error as { code?: string }).code).toBe('validation_error')
    return (error as Error).message
  }
  throw new Error('expected a validation_error')
}

describe('checkJsonLimits', () => {
  it('accepts 32 levels of objects and arrays and refuses 33, naming where', () => {
    expect(() => checkJsonLimits(nested(32))).not.toThrow()
    expect(messageOf(() => checkJsonLimits(nested(33)))).toMatch(/a\.0\.a\..*nested deeper than 32 levels/)
  })

  it('walks a 200,000-deep value without exhausting the stack', () => {
    expect(messageOf(() => checkJsonLimits(nested(200_000)))).toContain('nested deeper than 32')
  })

  it('refuses NUL in a string or a field name, naming the field', () => {
    expect(messageOf(() => checkJsonLimits({ source: { urls: ['ok', 'b\u0000d'] } }))).toContain('source.urls.1: text may not contain NUL')
    expect(messageOf(() => checkJsonLimits({ tags: { 'do\u0000main': [] } }))).toContain('tags: a field name may not contain NUL')
    expect(messageOf(() => checkJsonLimits('\u0000'))).toContain('(root)')
  })

  it('refuses a lone surrogate (not Unicode, not storable as UTF-8) and accepts paired ones', () => {
    expect(messageOf(() => checkJsonLimits({ case: { note: 'a\ud800b' } }))).toContain('case.note: text is not valid Unicode')
    expect(messageOf(() => checkJsonLimits({ ['k\udfff']: 1 }))).toContain('a field name is not valid Unicode')
    expect(() => checkJsonLimits({ note: '😀 中文 \ud83d\ude00' })).not.toThrow()
  })

  it('refuses more values than the limit and passes non-JSON values as they are', () => {
    expect(
      messageOf(() =>
        checkJsonLimits(
          Array.from({ length: 11 }, () => 1),
          { maxDepth: 32, maxValues: 10 },
        ),
      ),
    ).toContain('more than 10 values')
    expect(() => checkJsonLimits({ at: new Date(), n: 1, b: true, x: null, u: undefined, big: 10n })).not.toThrow()
  })

  it('runs in parseWith before the schema, so every service input is checked', () => {
    const schema = z.object({ task: z.string() })
    expect(() => parseWith(schema, { task: 'a\u0000b' })).toThrow(/task: text may not contain NUL/)
    expect(parseWith(schema, { task: 'fine' })).toEqual({ task: 'fine' })
  })
})
