/**
 * The typed client's methods, derived from the operations table (src/core/operations.ts): one
 * generic method per declaration, typed by mapped types. A method takes the operation's path
 * parameters, its input and its options (see src/core/operation.ts), then the call's options.
 */
import {
  argumentsOf,
  pathParams,
  type AnyOperation,
  type BaseArgsOf,
  type BaseArgsWith,
  type OperationGroup,
  type OperationOption,
  type OptionsArg,
  type OutputOf,
  type ResultOf,
} from '../core/operation.js'
import { KnowHubClientError } from './errors.js'
import type { CallOptions, QueryValue, RequestSpec } from './http.js'

/** Sends one call over a transport, validated with its response schema. */
export type Call = <T>(spec: RequestSpec<T>, opts?: CallOptions) => Promise<T>

/** Ask for referenced resources along with entries (never their secrets). */
export interface ExpandOption {
  expand?: 'resources'
}

/** Operations with `expand` take it in their query (search, list), else in the call's options (get). */
type Expands<Op> = Op extends { expand?: infer E } ? ([NonNullable<E>] extends [never] ? false : true) : false
type HasQuery<Op> = Op extends { input?: infer In }
  ? [NonNullable<In>] extends [never]
    ? false
    : NonNullable<In> extends { from: 'query' }
      ? true
      : false
  : false
type ExpandsQuery<Op> = Expands<Op> extends true ? HasQuery<Op> : false
type CallOptionsOf<Op> = Expands<Op> extends true ? (ExpandsQuery<Op> extends true ? CallOptions : CallOptions & ExpandOption) : CallOptions

/** A client method's arguments: the operation's, then the call's options (an operation's options double as them). */
export type ClientArgs<Op> =
  OptionsArg<Op> extends undefined
    ? [...BaseArgsWith<Op, ExpandsQuery<Op> extends true ? ExpandOption : unknown>, opts?: CallOptionsOf<Op>]
    : [...BaseArgsOf<Op>, options?: OptionsArg<Op> & CallOptions, opts?: CallOptions]

/** The client's method name of an operation: its `client` name, else the port's. */
type ClientName<Op, K> = Op extends { client?: infer C } ? ([NonNullable<C>] extends [never] ? K : NonNullable<C>) : K

/**
 * The client's methods of a group of operations.
 * @example
 * type Knowledge = ClientOf<typeof KNOWLEDGE_OPERATIONS> // { versions(id, opts?): Promise<KnowledgeVersions>, … }
 */
export type ClientOf<G extends OperationGroup> = {
  [K in keyof G as ClientName<G[K], K>]: (...args: ClientArgs<G[K]>) => Promise<ClientResult<G[K]>>
}

/** What a client method answers: the response body, or the service's result for an operation that unwraps it. */
type ClientResult<Op> = Op extends { unwrap?: infer U } ? (true extends NonNullable<U> ? ResultOf<Op> : OutputOf<Op>) : OutputOf<Op>

/** The encoded path of a call, each parameter checked first. */
function pathOf(op: AnyOperation, names: readonly string[], params: readonly string[]): string {
  let path: string = op.path
  names.forEach((name, i) => {
    const value = params[i] ?? ''
    const problem = op.params?.[name]?.check?.(value)
    if (problem) throw new KnowHubClientError('validation_error', problem.message, { details: { issues: [{ path: name, message: problem.issue }] } })
    // A rest parameter (`:id+`) keeps its slashes: each segment is encoded.
    path = path.includes(`:${name}+`)
      ? path.replace(`:${name}+`, value.split('/').map(encodeURIComponent).join('/'))
      : path.replace(`:${name}`, encodeURIComponent(value))
  })
  return path
}

/** One operation as a client method over `call`. */
function clientMethod(call: Call, op: AnyOperation): (...args: unknown[]) => Promise<unknown> {
  const names = pathParams(op.path)
  const slots = names.length + (op.input ? 1 : 0)
  return async (...args) => {
    const { params, input, options } = argumentsOf(op, args)
    const opts = (op.options ? (args[slots + 1] ?? args[slots]) : args[slots]) as (CallOptions & ExpandOption) | undefined
    const path = pathOf(op, names, params)
    const query: Record<string, QueryValue> = {}
    if (op.input?.from === 'query') Object.assign(query, input)
    for (const [key, option] of Object.entries((op.options ?? {}) as Record<string, OperationOption>)) {
      const value = options[key]
      if (value !== undefined && value !== option.default) query[option.query] = value as QueryValue
    }
    if (op.expand && op.input?.from !== 'query') query.expand = opts?.expand
    const retry = typeof op.retry === 'function' ? op.retry(args) : op.retry
    const body = op.input?.from === 'body' ? (input ?? (op.input.optional ? {} : undefined)) : undefined
    const answer = await call({ method: op.method, path, query, ...(body !== undefined ? { body } : {}), retry, schema: op.output }, opts)
    return op.unwrap && op.wire ? op.wire.back(answer) : answer
  }
}

/**
 * The client's methods of a group of operations over one transport.
 * @example
 * const knowledge = clientCalls(call, KNOWLEDGE_OPERATIONS)
 * await knowledge.versions('knowledge-20260306120000-abcd')
 */
export function clientCalls<G extends OperationGroup>(call: Call, group: G): ClientOf<G> {
  const methods: Record<string, unknown> = {}
  for (const [name, op] of Object.entries(group)) methods[op.client ?? name] = clientMethod(call, op)
  return methods as ClientOf<G>
}
