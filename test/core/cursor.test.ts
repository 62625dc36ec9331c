import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from '../../src/core/cursor.js'
import { isKnowHubError } from '../../src/core/errors.js'

const idOf = (parts: unknown[]) => (parts.length === 2 && parts[0] === 't' && typeof parts[1] === 'string' ? { id: parts[1] } : undefined)

function refusal(run: () => unknown): { message: string; details: unknown } {
  try {
    run()
  } catch (error) {
    if (isKnowHubError(error, 'validation_error')) return { message: error.message, details: error.details }
    throw error
  }
  throw new Error('expected a validation_error')
}

describe('cursors', () => {
  it('round-trip a position through an opaque url-safe string', () => {
    const cursor = encodeCursor(['t', 'code/selenium/login?x=1&y=ü'])
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor(cursor, idOf)).toEqual({ id: 'code/selenium/login?x=1&y=ü' })
  })

  it("refuse what does not decode, is not an array, or has the wrong shape, with the caller's message at path cursor", () => {
    const bad = ['garbage', '', encodeCursor(['u', 'x']), Buffer.from('{"t":1}').toString('base64url'), Buffer.from('[1,').toString('base64url')]
    for (const cursor of bad) {
      const error = refusal(() => decodeCursor(cursor, idOf))
      expect(error.message, cursor).toBe('Invalid cursor: pass the next_cursor of a previous page')
      expect(error.details).toEqual({ issues: [{ path: 'cursor', message: 'invalid cursor' }] })
    }
    expect(refusal(() => decodeCursor('garbage', idOf, 'Invalid run: cursor')).message).toBe('Invalid run: cursor')
  })
})
