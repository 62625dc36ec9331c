/**
 * The routes of the operations table (src/core/operations.ts), mounted in one loop: each reads its
 * path parameters, its input (the query object or the JSON body) and its options, runs the
 * operation in this process (`invoke`, src/app/operations.ts: its service method as the caller),
 * and answers the declared status, headers and body. Operations the table cannot declare (streams,
 * files, bytes) are written by hand beside it.
 */
import type { Hono } from 'hono'
import { KnowHubError } from '../../core/errors.js'
import { pathParams, type AnyOperation, type OperationGroup, type OperationOption } from '../../core/operation.js'
import { invoke, serviceOf, type ToolServices } from '../../app/operations.js'
import type { ResourceService } from '../../resources/service.js'
import { caller, queryBoolean, queryObject, queryParam, readJson, type AppContext, type AppEnv } from '../http.js'

const EXPANDABLE = ['resources'] as const

/** The `expand` parameter: a comma-separated list of known expansions. */
export function expansions(value: string | undefined): Set<string> {
  const wanted = new Set(
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  for (const name of wanted) {
    if (!(EXPANDABLE as readonly string[]).includes(name)) {
      throw new KnowHubError('validation_error', `Invalid request: expand: unknown expansion "${name}" (expected resources)`, {
        issues: [{ path: 'expand', message: `unknown expansion "${name}" (expected resources)` }],
      })
    }
  }
  return wanted
}

/** The services the routes run operations on; `resources` also adds referenced resources (`expand=resources`). */
export type OperationServices = Omit<ToolServices, 'resources'> & { resources: Pick<ResourceService, 'withResources'> }

type Entry = { id: string; resource_ids: readonly string[] }

/** The answer with the referenced resources added where the operation says. */
async function expanded(services: OperationServices, op: AnyOperation, body: unknown, c: AppContext): Promise<unknown> {
  const { principal } = caller(c)
  const { withResources } = services.resources
  if (op.expand === 'entry') return (await withResources([body as Entry], principal))[0]
  const key = op.expand as 'results' | 'items'
  const page = body as Record<string, Entry[]>
  return { ...page, [key]: await withResources(page[key]!, principal) }
}

/** The options of a request (query parameters read apart from the input). */
function optionsOf(c: AppContext, options: Readonly<Record<string, OperationOption>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, option] of Object.entries(options)) {
    out[key] = option.type === 'boolean' ? queryBoolean(c, option.query, option.default ?? false) : queryParam(c, option.query)
  }
  return out
}

/**
 * A rest parameter (`:id+`): the raw (percent-encoded) rest of the URL path, decoded once and
 * checked by the declaration (so `..` and its encodings are refused).
 */
function restParam(c: AppContext, op: AnyOperation, name: string): string {
  const prefix = op.path.slice(0, op.path.indexOf(`:${name}+`))
  const path = new URL(c.req.url).pathname
  const at = path.indexOf(prefix)
  const raw = at >= 0 ? path.slice(at + prefix.length) : ''
  const decode = op.params?.[name]?.decode
  return decode ? decode(raw) : decodeURIComponent(raw)
}

/** One operation's handler. */
function handler(services: OperationServices, op: AnyOperation) {
  const names = pathParams(op.path)
  const route = `${op.method} ${op.path.replace(/:(\w+)\+?/g, '{$1}')}`
  const rest = /:(\w+)\+$/.exec(op.path)?.[1]
  return async (c: AppContext) => {
    const expand = op.expand ? expansions(queryParam(c, 'expand')) : undefined
    const params = names.map((name) => (rest === name ? restParam(c, op, name) : (c.req.param(name) as string)))
    const args: unknown[] = [...params]
    if (op.input?.from === 'query') args.push(queryObject(c, { lists: op.input.lists, booleans: op.input.booleans }, op.expand ? ['expand'] : []))
    else if (op.input) args.push(await readJson(c, { optional: op.input.optional }))
    if (op.options) args.push(optionsOf(c, op.options as Record<string, OperationOption>))
    const { principal, key } = caller(c)
    const result = await invoke(services as ToolServices, op, args, principal, { local: key === 'local', key, site: { via: 'api', route, caller: key } })
    for (const [name, value] of Object.entries(op.headers?.(result) ?? {})) c.header(name, value)
    const body = op.wire ? op.wire.out(result, params) : result
    const status = typeof op.status === 'function' ? op.status(result) : (op.status ?? 200)
    return c.json((expand?.has('resources') ? await expanded(services, op, body, c) : body) as object, status as 200)
  }
}

/**
 * Mounts a group of operations on `app`, whose paths start with `prefix` (where `app` is mounted):
 * static paths first, so that `/search` is not taken for an `/:id`. An operation whose service this
 * server lacks is left out, unless it is `served: 'always'` (it answers why).
 * @example
 * mountOperations(app, '/api/knowledge', KNOWLEDGE_OPERATIONS, services)
 */
export function mountOperations(app: Hono<AppEnv>, prefix: string, group: OperationGroup, services: OperationServices): void {
  const ops = Object.values(group).filter((op) => op.path.startsWith(prefix))
  const ordered = [...ops.filter((op) => !op.path.includes(':')), ...ops.filter((op) => op.path.includes(':'))]
  for (const op of ordered) {
    if (op.served !== 'always' && serviceOf(services as ToolServices, op) === undefined) continue
    app.on(op.method, op.path.slice(prefix.length).replace(/\/:\w+\+$/, '/*') || '/', handler(services, op))
  }
}
