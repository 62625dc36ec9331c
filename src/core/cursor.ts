/**
 * Opaque pagination cursors: a JSON array in base64url. Each list encodes the position
 * of its last item; decoding checks the shape with the caller's `accept` and turns
 * anything else — not base64url, not JSON, the wrong shape — into one `validation_error`.
 */
import { KnowHubError } from './errors.js'

/**
 * The cursor of a position given as JSON-able parts.
 * @example
 * encodeCursor(['r', 'code/login', 'user:alice']) // 'WyJyIiwiY29kZS9sb2dpbiIsInVzZXI6YWxpY2UiXQ'
 */
export function encodeCursor(parts: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

/**
 * The position of a cursor: `accept` gets its parts and returns the position, or
 * undefined when they are not one; then (as for a cursor that does not decode at all)
 * a `validation_error` at path `cursor` with `message`.
 * @example
 * decodeCursor(cursor, (p) => (p.length === 2 && typeof p[1] === 'string' ? { id: p[1] } : undefined))
 */
export function decodeCursor<T>(
  cursor: string,
  accept: (parts: unknown[]) => T | undefined,
  message = 'Invalid cursor: pass the next_cursor of a previous page',
): T {
  let position: T | undefined
  try {
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(parts)) position = accept(parts)
  } catch {
    // not base64url JSON: refused below
  }
  if (position === undefined) throw new KnowHubError('validation_error', message, { issues: [{ path: 'cursor', message: 'invalid cursor' }] })
  return position
}
