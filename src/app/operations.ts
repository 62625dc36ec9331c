/**
 * The in-process binding of the operations table (src/core/operations.ts): an operation runs as
 * its service method (`call`), given the arguments in their places, then the principal and the
 * caller's context. The port's in-process adapter (src/app/backend.ts) and the server's routes
 * (src/server/routes/operations.ts) both call {@link invoke}, so an operation behaves the same in
 * this process and over HTTP.
 */
import { argumentsOf, type AnyOperation, type CallerContext, type OperationGroup, type PortOf } from '../core/operation.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { AgentService } from '../agent/service.js'
import type { AdminService } from '../admin/admin.js'
import type { ErasureService } from '../users/erasure.js'
import type { UsersService } from '../users/profile.js'
import type { ExtractionService } from '../knowledge/extract/extract.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { SlimService } from '../knowledge/slim/slim.js'
import type { ResourceService } from '../resources/service.js'

/**
 * The in-process services a backend calls (the shapes `createApp` takes, so the server's `/mcp`
 * endpoint runs the tools on the same services as its HTTP routes).
 */
export interface ToolServices {
  knowledge: KnowledgeService
  resources: ResourceService
  slim: SlimService
  /** Absent: knowledge_extract answers `llm_not_configured`. */
  extraction?: Pick<ExtractionService, 'extract'> | undefined
  /** Goal trees, agent contexts and compaction (absent: no `goal` tool, no `agent-context` prompt). */
  agent?: Pick<AgentService, 'goal' | 'assembleContext' | 'compact' | 'compactStored'> | undefined
  /** Status, tokens, reown and backups (each checked against the role table); absent: they answer `forbidden`. */
  admin?: AdminService | undefined
  /** Forget and purge (each checked against the role table); absent: they answer `forbidden`. */
  erasure?: ErasureService | undefined
  /** Users' profiles; absent: `not_found`. */
  users?: UsersService | undefined
}

/** Services that a KnowHub may lack, and what an operation of theirs answers then (`where`: `server` over HTTP, else `KnowHub`). */
const ABSENT: Record<string, (params: readonly string[], where: string) => KnowHubError> = {
  extraction: (_, where) => new KnowHubError('llm_not_configured', `Extraction needs an LLM, and this ${where} has none configured`),
  admin: () => new KnowHubError('forbidden', 'This KnowHub offers no administration here: use the CLI on the server machine or the HTTP API'),
  erasure: () => new KnowHubError('forbidden', 'This KnowHub offers no forget or purge here: use the CLI on the server machine or the HTTP API'),
  users: ([id]) => new KnowHubError('not_found', `No user ${id}`, { user: id }),
}

/** The service an operation's `call` names, or undefined when this KnowHub has none (`extraction` without an LLM). */
export function serviceOf(services: ToolServices, op: AnyOperation): unknown {
  return (services as unknown as Record<string, unknown>)[op.call.split('.')[0]!]
}

/** Each `call` split once (`admin.tokens.create` → its path): every call of an operation asks. */
const CALLS = new Map<string, readonly string[]>()

/** The object and the method an operation's `call` names (`admin.tokens.create`). */
function methodOf(services: ToolServices, op: AnyOperation, params: readonly string[], where: string): [object, (...args: unknown[]) => Promise<unknown>] {
  let path = CALLS.get(op.call)
  if (!path) CALLS.set(op.call, (path = op.call.split('.')))
  let target: unknown = services
  for (let i = 0; i < path.length - 1; i++) {
    target = (target as Record<string, unknown> | undefined)?.[path[i]!]
    if (target === undefined) {
      const absent = ABSENT[path[0]!]
      if (absent) throw absent(params, where)
      throw new KnowHubError('internal_error', `No service for ${op.call}`)
    }
  }
  const method = (target as Record<string, unknown>)[path[path.length - 1]!]
  if (typeof method !== 'function') throw new KnowHubError('internal_error', `No service method ${op.call}`)
  return [target as object, method as (...args: unknown[]) => Promise<unknown>]
}

/**
 * Runs one operation as `principal`: its service method with the arguments in their places
 * (parameters, input, options), the principal and the caller's context.
 * @example
 * await invoke(hub, KNOWLEDGE_OPERATIONS.versions, [id], principal, { local: true, key: 'local', site })
 */
export async function invoke(
  services: ToolServices,
  op: AnyOperation,
  args: readonly unknown[],
  principal: Principal,
  context: CallerContext,
): Promise<unknown> {
  const { params, input, options } = argumentsOf(op, args)
  const [target, method] = methodOf(services, op, params, context.site.via === 'api' ? 'server' : 'KnowHub')
  const sent: unknown[] = [...params]
  if (op.input) sent.push(input)
  if (op.optionsAfterPrincipal) sent.push(principal, { ...options, site: context.site })
  else {
    if (op.options) sent.push(options)
    sent.push(principal, context)
  }
  return Reflect.apply(method, target, sent)
}

/**
 * A group of operations as port methods over in-process services, as one principal.
 * @example
 * const knowledge = bindOperations(hub, KNOWLEDGE_OPERATIONS, principal, context)
 * await knowledge.versions(id)
 */
export function bindOperations<G extends OperationGroup>(services: ToolServices, group: G, principal: Principal, context: CallerContext): PortOf<G> {
  const methods: Record<string, unknown> = {}
  for (const [name, op] of Object.entries(group)) methods[name] = (...args: unknown[]) => invoke(services, op, args, principal, context)
  return methods as PortOf<G>
}
