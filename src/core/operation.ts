/**
 * What one operation of KnowHub's API is, declared once (src/core/operations.ts holds the table):
 * its HTTP method and path, where its input comes from, its zod schemas, its status, how safe it is
 * to repeat, and which service method runs it. Everything else is derived from the declaration:
 * the Hono route (src/server/routes/operations.ts), the OpenAPI path (src/server/openapi.ts), the
 * typed client's method (src/client/operations.ts), and both adapters of the port with its type
 * (src/app/operations.ts in this process, the client over HTTP; `PortOf` below). Like a ts-rest or
 * oRPC contract, hand-rolled in ~200 lines so that the client stays zod-only and portable.
 *
 * An operation's arguments, everywhere: its path parameters in path order, then its input (the
 * query object or the JSON body), then its options (extra query parameters): the service method
 * is called with those, then the principal and the caller's context.
 */
import type { z } from 'zod'
import type { Action } from './actions.js'
import type { Principal } from './principal.js'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/**
 * How safe a call is to repeat (the client's retries): `idempotent` after network errors,
 * timeouts, 429 and 5xx; `unsafe` only after a 429 (the server refused before doing anything).
 */
export type Retryability = 'idempotent' | 'unsafe'

/**
 * The path parameters of a path, in order: `/api/knowledge/:id/versions` → `['id']`. `:name+` is the
 * rest of the path, slashes included (a path-like resource id).
 */
export type PathParams<S extends string> = S extends `${string}:${infer P}/${infer Rest}`
  ? [P, ...PathParams<`/${Rest}`>]
  : S extends `${string}:${infer P}`
    ? [P]
    : []

/** Each path parameter as a string argument. */
type ParamArgs<S extends string> = Strings<PathParams<S>>
type Strings<P extends unknown[]> = P extends [unknown, ...infer Rest] ? [string, ...Strings<Rest>] : []

/** Where an operation's input comes from, and its schema (the service parses it: the adapters pass it as it is). */
export interface OperationInput<S extends z.ZodType = z.ZodType> {
  from: 'query' | 'body'
  schema: S
  /** May be left out: the client sends `{}`, and an empty body reaches the service as `undefined`. */
  optional?: boolean
  /** Query parameters that are lists (comma-separated and/or repeated). */
  lists?: readonly string[]
  /** Query parameters that are booleans (`true`/`false`/`1`/`0`). */
  booleans?: readonly string[]
  /** OpenAPI descriptions of query parameters. */
  describe?: Readonly<Record<string, string>>
}

/** One option: a query parameter the route reads apart from the input (the port's and the client's `options` argument). */
export interface OperationOption {
  /** Its name in the query string. */
  query: string
  type: 'string' | 'boolean'
  /** A boolean's value when the parameter is absent. */
  default?: boolean
  /** Its OpenAPI parameter, beyond name and place. */
  openapi: Readonly<Record<string, unknown>>
}

/** A path parameter's check and documentation. */
export interface OperationParam {
  /** A problem the client refuses to send (`validation_error` with this message and issue at the parameter's name). */
  check?: (value: string) => { message: string; issue: string } | undefined
  /** The OpenAPI parameter beyond name, place and type (`description`, `example`). */
  openapi?: Readonly<Record<string, unknown>>
  /** A rest parameter (`:name+`): the server decodes and checks the raw rest of the path with this (it throws `validation_error`). */
  decode?: (raw: string) => string
}

/** The input's type as callers send it (the schema's input type); `never` without an input. */
type InputOf<I> = I extends OperationInput<infer S> ? z.input<S> : never
/** The options' type: each option optional. */
type OptionsOf<O> = O extends Readonly<Record<string, OperationOption>> ? { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string } : never

/** The arguments of an operation, without the options: its path parameters, then its input. */
export type BaseArgs<S extends string, I, X = unknown> = [I] extends [undefined]
  ? ParamArgs<S>
  : I extends { optional: true }
    ? [...ParamArgs<S>, input?: InputOf<I> & X]
    : [...ParamArgs<S>, input: InputOf<I> & X]

/**
 * What is known of the caller beside its principal: whether it is on this machine (the CLI, a
 * library; over HTTP: the server's local key), and where a secret it reads is recorded.
 */
export interface CallerContext {
  /** The caller is on the server's machine (may mint `hub:admin` tokens). */
  local: boolean
  /** Where a secret read is recorded: `api`, `mcp`, `tools`…, the route or tool, and the caller key. */
  site: { via: string; route: string; caller?: string | undefined }
  /** The caller's key: `local`, or the id of its API token. */
  key: string | undefined
}

/**
 * One operation. `R` is what the service answers (the port's result); `W` the response body's schema.
 */
export interface Operation<
  S extends string = string,
  I extends OperationInput | undefined = OperationInput | undefined,
  O extends Readonly<Record<string, OperationOption>> | undefined = Readonly<Record<string, OperationOption>> | undefined,
  W extends z.ZodType = z.ZodType,
  R = unknown,
> {
  method: HttpMethod
  /** Hono's syntax (`/api/knowledge/:id`); the OpenAPI path writes `{id}`. */
  path: S
  input?: I
  options?: O
  /** The response body's schema (the client validates it; the OpenAPI document names it). */
  output: W
  /**
   * The service method that runs it, as `service.method` of the built services (`knowledge.search`,
   * `admin.tokens.create`): called with the arguments, the principal and the caller's context.
   */
  call: string
  /** The response when it is not the service's answer as it is (`{ id, deleted: true }`), and back. */
  wire?: { out: (result: R, params: readonly string[]) => z.input<W>; back: (body: z.output<W>) => R }
  /** The client answers the service's result (`wire.back` of the body) rather than the body itself. */
  unwrap?: boolean
  /** How long the port's HTTP adapter waits for an answer, in ms (a forget rewrites tables); default the client's. */
  timeoutMs?: number
  /** The success status (default 200), or one chosen by the answer. */
  status?: number | ((result: R) => number)
  /** Response headers chosen by the answer. */
  headers?: (result: R) => Record<string, string> | undefined
  /** How safe a call is to repeat (see {@link Retryability}), or chosen by the arguments. */
  retry: Retryability | ((args: readonly unknown[]) => Retryability)
  /** `expand=resources`: adds the referenced resources to the answer's entries (`results`, `items`, or the entry itself). */
  expand?: 'results' | 'items' | 'entry'
  /** The client's method name when it is not the port's (kept from before the table). */
  client?: string
  /** The row of the role × action table (src/auth/policy.ts) the service checks. */
  action: Action
  /** The OpenAPI summary, and the success response's description (default `OK`). */
  summary: string
  ok?: string
  /** More OpenAPI responses beside the common errors: status → description. */
  responses?: Readonly<Record<number, string>>
  /** Path parameters: a check the client makes before sending, and the OpenAPI parameter beyond name and place. */
  params?: Readonly<Record<string, OperationParam>>
  /**
   * The service takes the options after the principal, the caller's secret-read site among them (the
   * resource service's owner targets): `get(id, principal, { owner, includeSecret, site })`.
   */
  optionsAfterPrincipal?: boolean
  /** The service absent (a server without an LLM, say): the route is still served. Default: the route is left out. */
  served?: 'always'
}

/** Any operation. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<string, any, any, any, any>

/**
 * Declares one operation; its types follow from the declaration.
 * @example
 * const get = operation({ method: 'GET', path: '/api/knowledge/:id', output: KnowledgeEntry, call: 'knowledge.get', retry: 'idempotent', action: 'knowledge.read', summary: 'One entry' })
 */
export function operation<
  const S extends string,
  I extends OperationInput | undefined = undefined,
  const O extends Readonly<Record<string, OperationOption>> | undefined = undefined,
  W extends z.ZodType = z.ZodType,
  R = z.output<W>,
  const C extends string | undefined = undefined,
  const E extends Operation['expand'] = undefined,
  const U extends boolean | undefined = undefined,
>(op: Operation<S, I, O, W, R> & { client?: C; expand?: E; unwrap?: U }): Operation<S, I, O, W, R> & { client?: C; expand?: E; unwrap?: U } {
  return op
}

/** The arguments of an operation for the port (its options last, when it has any). */
export type ArgsOf<Op> =
  Op extends Operation<infer S, infer I, infer O, infer _W, infer _R>
    ? [O] extends [undefined]
      ? BaseArgs<S, I>
      : [...BaseArgs<S, I>, options?: OptionsOf<O>]
    : never

/** The service's answer of an operation (the port's result). */
export type ResultOf<Op> = Op extends Operation<infer _S, infer _I, infer _O, infer _W, infer R> ? R : never

/** The response body of an operation (the client's result). */
export type OutputOf<Op> = Op extends Operation<infer _S, infer _I, infer _O, infer W, infer _R> ? z.output<W> : never

/** The options of an operation, when it has any. */
export type OptionsArg<Op> =
  Op extends Operation<infer _S, infer _I, infer O, infer _W, infer _R> ? ([O] extends [undefined] ? undefined : OptionsOf<O>) : never

/** The arguments before the options (path parameters and input). */
export type BaseArgsOf<Op> = Op extends Operation<infer S, infer I, infer _O, infer _W, infer _R> ? BaseArgs<S, I> : never

/** The arguments before the options, with `X` added to the input's type (the client's `expand`). */
export type BaseArgsWith<Op, X> = Op extends Operation<infer S, infer I, infer _O, infer _W, infer _R> ? BaseArgs<S, I, X> : never

/** A group of operations (`knowledge`, `admin`, …): port method name → operation. */
export type OperationGroup = Readonly<Record<string, AnyOperation>>

/**
 * The port's type of a group of operations: each a method taking the arguments and answering the service's result.
 * @example
 * type Knowledge = PortOf<typeof KNOWLEDGE_OPERATIONS> // { search(query: SearchInput): Promise<SearchResponse>, … }
 */
export type PortOf<G extends OperationGroup> = { [K in keyof G]: (...args: ArgsOf<G[K]>) => Promise<ResultOf<G[K]>> }

/** The names of a path's parameters, in order. */
export function pathParams(path: string): readonly string[] {
  let names = PARAMS.get(path)
  if (!names) PARAMS.set(path, (names = [...path.matchAll(/:([A-Za-z_]\w*)\+?/g)].map((m) => m[1]!)))
  return names
}

/** The parameters of each path seen, worked out once (every call of an operation asks). */
const PARAMS = new Map<string, readonly string[]>()

/**
 * The arguments of a call in their fixed places: parameters, input (`{}` for a query left out), options.
 * @example
 * argumentsOf(KNOWLEDGE_OPERATIONS.list, []) // [{}]
 */
export function argumentsOf(op: AnyOperation, args: readonly unknown[]): { params: string[]; input: unknown; options: Record<string, unknown> } {
  const n = pathParams(op.path).length
  const params = args.slice(0, n) as string[]
  let input: unknown = op.input ? args[n] : undefined
  if (op.input?.from === 'query' && input === undefined) input = {}
  const options = (op.options ? args[n + (op.input ? 1 : 0)] : undefined) ?? {}
  return { params, input, options: options as Record<string, unknown> }
}

/** The principal and context a service method is called with after the arguments. */
export interface Invocation {
  principal: Principal
  context: CallerContext
}
