/**
 * The in-process adapter of the one port (`KnowHubBackend`, src/core/backend.ts): each method is
 * one call of a built service, as one principal. The other adapter is the HTTP client
 * (src/client/backend.ts). It lives in the composition root: the CLI, the tools and MCP only
 * know the port, never the services behind it.
 */
import { storedAgentWithFiles, type AgentBackend, type KnowHubBackend } from '../core/backend.js'
import type { CallerContext } from '../core/operation.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { SecretReadSite } from '../resources/audit.js'
import { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from '../core/operations.js'
import type { KnowHub } from './open.js'
import { bindOperations, type ToolServices } from './operations.js'

export type { ToolServices } from './operations.js'

/** Options of {@link servicesBackend}. */
export interface ServicesBackendOptions {
  /**
   * For a caller over HTTP (`/mcp`): its agents are the ones stored in its org, its agent
   * context shows only the packs it may see, by pack-relative paths; nothing of this machine's files.
   * Otherwise the caller is on this machine (the CLI, a library): the role table may let it mint `hub:admin` tokens.
   */
  remote?: boolean
  /** Where a secret read through this backend is recorded (the audit of secret reads); default the tools': `tools`, `resource_get`, `local`. */
  site?: Partial<SecretReadSite>
}

/** The agent operations as `principal`: the stored agent (remote callers, `stored`), or the agent folder on this machine. */
function agentMethods(agent: NonNullable<ToolServices['agent']>, principal: Principal, remote: boolean, context: CallerContext): AgentBackend {
  const storedWhere = (stored: boolean | undefined): boolean => {
    if (remote && stored === false) throw new KnowHubError('validation_error', 'A remote caller has no agent folder on this machine: its agents are stored')
    return stored ?? remote
  }
  return {
    ...bindOperations({ agent } as ToolServices, AGENT_OPERATIONS, principal, context),
    context: async ({ stored, ...input }) => agent.assembleContext({ ...input, principal, ...(storedWhere(stored) ? { remote: true } : {}) }),
    compact: async ({ stored, ...input }) => {
      if (!storedWhere(stored)) return agent.compact(input, principal)
      const { agent: name, home, ...rest } = input
      if (home !== undefined) throw storedAgentWithFiles(undefined)
      return agent.compactStored(name, rest, principal)
    },
  }
}

/** The backup as `principal` (its bytes are no table operation); the admin service checks the role table. */
function backupOf(services: ToolServices, principal: Principal, local: boolean): () => Promise<Uint8Array> {
  return async () => {
    if (!services.admin) throw new KnowHubError('forbidden', 'This KnowHub offers no administration here: use the CLI on the server machine or the HTTP API')
    return services.admin.backup(principal, 'local', local ? 'knowhub backup' : undefined)
  }
}

/** The caller's context of a backend's calls: on this machine unless remote; where its secret reads are recorded. */
function callerContext(options: ServicesBackendOptions): CallerContext & { site: SecretReadSite } {
  const site: SecretReadSite = { via: options.site?.via ?? 'tools', route: options.site?.route ?? 'resource_get', caller: options.site?.caller ?? 'local' }
  return { local: options.remote !== true, key: site.caller, site }
}

/**
 * A backend over in-process services, acting as `principal`.
 * @example
 * const backend = servicesBackend({ knowledge: hub.knowledge, resources: hub.resources, slim: hub.slim }, principal)
 * await backend.knowledge.search({ q: 'selenium login' })
 */
export function servicesBackend(services: ToolServices, principal: Principal, options: ServicesBackendOptions = {}): KnowHubBackend {
  const { knowledge, resources } = services
  const me = principal
  const context = callerContext(options)
  return {
    url: undefined,
    knowledge: {
      ...bindOperations(services, KNOWLEDGE_OPERATIONS, me, context),
      supersede: (id, input) => knowledge.supersede(id, input, me),
      exportJsonl: () => knowledge.exportJsonl(me),
      importJsonl: (lines, options) => knowledge.importJsonl(lines, me, options),
    },
    folder: {
      export: () => knowledge.exportFolder(me),
      import: (files, query) => knowledge.importFolder(files, me, query),
      sync: (input) => knowledge.syncFolder(input, me),
    },
    resources: {
      ...bindOperations(services, RESOURCE_OPERATIONS, me, context),
      delete: (id, target = {}) => resources.delete(id, me, target),
    },
    ...(services.agent ? { agent: agentMethods(services.agent, me, options.remote === true, context) } : {}),
    users: bindOperations(services, USER_OPERATIONS, me, context),
    admin: {
      ...bindOperations(services, ADMIN_OPERATIONS, me, context),
      backup: backupOf(services, me, options.remote !== true),
      tokens: bindOperations(services, TOKEN_OPERATIONS, me, context),
    },
  }
}

/**
 * A backend over the in-process services of an open hub, acting as `principal` (default the
 * hub's configured principal, the hub operator on its machine).
 * @example
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * const kit = createToolkit({ backend: localBackend(hub, hub.config.principal) })
 */
export function localBackend(
  hub: KnowHub,
  principal: Principal = hub.config.principal,
  options: ServicesBackendOptions = {},
): KnowHubBackend & { readonly agent: AgentBackend } {
  return { ...servicesBackend(hub, principal, options), agent: agentMethods(hub.agent, principal, options.remote === true, callerContext(options)) }
}
