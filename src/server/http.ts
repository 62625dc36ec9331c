/**
 * HTTP-level parsing shared by the routes: JSON bodies and query strings, shaped
 * for the services' schemas (which do the validation).
 */
import type { Context } from 'hono'
import { KnowHubError } from '../core/errors.js'
import type { Caller } from '../auth/authenticate.js'

/** Hono's context variables of this server. */
export interface AppEnv {
  Variables: {
    requestId: string
    caller: Caller
  }
}

export type AppContext = Context<AppEnv>

/**
 * The adapter's view of a request: the client address (for the failed-authentication
 * limit) and the request target exactly as received, before URL parsing resolved `.` and
 * `..` segments. `serve.ts` reads them from Node's request; in-process requests have none.
 */
export type Connection = (env: unknown) => { address?: string | undefined; rawTarget?: string | undefined }

function invalid(path: string, message: string): KnowHubError {
  return new KnowHubError('validation_error', `Invalid request: ${path}: ${message}`, { issues: [{ path, message }] })
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/**
 * The request body as text. Bytes that are not UTF-8 are a `validation_error` at path
 * `(body)`: they would otherwise be stored as U+FFFD, silently losing what was sent.
 * @example
 * const lines = (await readText(c)).split('\n')
 */
export async function readText(c: AppContext): Promise<string> {
  const bytes = await c.req.arrayBuffer()
  try {
    return utf8.decode(bytes)
  } catch {
    throw invalid('(body)', 'the body is not valid UTF-8')
  }
}

/**
 * The request body parsed as JSON. An empty or malformed body (or one that is not UTF-8) is a
 * `validation_error` at path `(body)` (an empty one is `undefined` when `optional`). The parser's message is not repeated: it quotes the input, which
 * may hold a secret.
 */
export async function readJson(c: AppContext, options: { optional?: boolean } = {}): Promise<unknown> {
  const text = await readText(c)
  if (text.trim() === '') {
    if (options.optional) return undefined
    throw invalid('(body)', 'a JSON body is required')
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw invalid('(body)', 'malformed JSON')
  }
}

export interface QueryShape {
  /** Parameters that are lists: given comma-separated (`types=tool,plan`) and/or repeated (`types=tool&types=plan`). */
  lists?: readonly string[]
  /** Parameters that are booleans: `true`/`false`/`1`/`0` (anything else is left for the schema to reject). */
  booleans?: readonly string[]
}

/**
 * The query string as an object for a service schema: empty values are dropped (an
 * agent sending `types=` means no filter), lists split, booleans converted; the
 * service's strict schema then rejects unknown or malformed parameters.
 * @example
 * queryObject(c, { lists: ['types'] }) // ?q=x&types=tool,plan → { q: 'x', types: ['tool', 'plan'] }
 */
export function queryObject(c: AppContext, shape: QueryShape = {}, omit: readonly string[] = []): Record<string, unknown> {
  const url = new URL(c.req.url)
  const out: Record<string, unknown> = {}
  for (const key of new Set(url.searchParams.keys())) {
    if (omit.includes(key)) continue
    const values = url.searchParams.getAll(key).filter((v) => v !== '')
    if (values.length === 0) continue
    if (shape.lists?.includes(key)) {
      out[key] = values
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean)
    } else if (shape.booleans?.includes(key) && values.length === 1 && /^(true|false|1|0)$/i.test(values[0]!)) {
      out[key] = /^(true|1)$/i.test(values[0]!)
    } else {
      out[key] = values.length === 1 ? values[0] : values
    }
  }
  return out
}

/** One query parameter (the last non-empty value), or undefined. */
export function queryParam(c: AppContext, name: string): string | undefined {
  const values = new URL(c.req.url).searchParams.getAll(name).filter((v) => v !== '')
  return values[values.length - 1]
}

/** A boolean query parameter (`true`/`1`/`false`/`0`), or `fallback` when absent. */
export function queryBoolean(c: AppContext, name: string, fallback: boolean): boolean {
  const value = queryParam(c, name)
  if (value === undefined) return fallback
  if (/^(true|1)$/i.test(value)) return true
  if (/^(false|0)$/i.test(value)) return false
  throw invalid(name, 'expected true or false')
}

/** The caller of this request (set by the auth middleware). */
export function caller(c: AppContext): Caller {
  return c.get('caller')
}
