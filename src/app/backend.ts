/**
 * The in-process adapter of the one port (`KnowHubBackend`, src/core/backend.ts): each method is
 * one call of a built service, as one principal. The other adapter is the HTTP client
 * (src/client/backend.ts). It lives in the composition root: the CLI, the tools and MCP only
 * know the port, never the services behind it.
 */
import { storedAgentWithFiles, type AgentBackend, type KnowHubBackend } from '../core/backend.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { SecretReadSite } from '../resources/audit.js'
import { KNOWLEDGE_OPERATIONS } from '../core/operations.js'
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
function agentMethods(agent: NonNullable<ToolServices['agent']>, principal: Principal, remote: boolean): AgentBackend {
  const storedWhere = (stored: boolean | undefined): boolean => {
    if (remote && stored === false) throw new KnowHubError('validation_error', 'A remote caller has no agent folder on this machine: its agents are stored')
    return stored ?? remote
  }
  return {
    goal: (body) => agent.goal(body, principal),
    context: async ({ stored, ...input }) => agent.assembleContext({ ...input, principal, ...(storedWhere(stored) ? { remote: true } : {}) }),
    compact: async ({ stored, ...input }) => {
      if (!storedWhere(stored)) return agent.compact(input, principal)
      const { agent: name, home, ...rest } = input
      if (home !== undefined) throw storedAgentWithFiles(undefined)
      return agent.compactStored(name, rest, principal)
    },
  }
}

/** The admin operations as `principal`: the admin service checks each against the role table. */
function adminMethods(services: ToolServices, principal: Principal, local: boolean): KnowHubBackend['admin'] {
  const admin = (): NonNullable<ToolServices['admin']> => {
    if (!services.admin) throw new KnowHubError('forbidden', 'This KnowHub offers no administration here: use the CLI on the server machine or the HTTP API')
    return services.admin
  }
  const erasure = (): NonNullable<ToolServices['erasure']> => {
    if (!services.erasure) throw new KnowHubError('forbidden', 'This KnowHub offers no forget or purge here: use the CLI on the server machine or the HTTP API')
    return services.erasure
  }
  return {
    status: async () => admin().status(principal),
    backup: async () => admin().backup(principal, 'local', local ? 'knowhub backup' : undefined),
    reown: async (input) => admin().reown(input, principal),
    forget: async (subject, options = {}) => erasure().forget(principal, subject, options),
    purge: async (input) => erasure().purge(principal, input),
    tokens: {
      create: async (input) => admin().tokens.create(input, principal, { local }),
      list: async () => admin().tokens.list(principal),
      revoke: async (id) => admin().tokens.revoke(id, principal),
    },
  }
}

/**
 * A backend over in-process services, acting as `principal`.
 * @example
 * const backend = servicesBackend({ knowledge: hub.knowledge, resources: hub.resources, slim: hub.slim }, principal)
 * await backend.knowledge.search({ q: 'selenium login' })
 */
export function servicesBackend(services: ToolServices, principal: Principal, options: ServicesBackendOptions = {}): KnowHubBackend {
  const site: SecretReadSite = { via: options.site?.via ?? 'tools', route: options.site?.route ?? 'resource_get', caller: options.site?.caller ?? 'local' }
  const { knowledge, resources, slim } = services
  const me = principal
  const context = { local: options.remote !== true, key: site.caller, site }
  return {
    url: undefined,
    knowledge: {
      ...bindOperations(services, KNOWLEDGE_OPERATIONS, me, context),
      search: (query) => knowledge.search(query, me),
      save: (body) => knowledge.save(body, me),
      list: (query) => knowledge.list(query, me),
      get: (id) => knowledge.get(id, me),
      feedback: (id, body) => knowledge.feedback(id, body, me),
      supersede: (id, input) => knowledge.supersede(id, input, me),
      batchFeedback: (body) => knowledge.batchFeedback(body, me),
      edit: (id, body) => knowledge.edit(id, body, me),
      archive: (id) => knowledge.archive(id, me),
      restore: (id) => knowledge.restore(id, me),
      delete: (id) => knowledge.delete(id, me),
      slim: (body) => slim.slim(body, me),
      unmerge: (id) => slim.unmerge(id, me),
      extract: async (body) => {
        if (!services.extraction) throw new KnowHubError('llm_not_configured', 'Extraction needs an LLM, and this KnowHub has none configured')
        return services.extraction.extract(body, me)
      },
      exportJsonl: () => knowledge.exportJsonl(me),
      importJsonl: (lines, options) => knowledge.importJsonl(lines, me, options),
    },
    folder: {
      export: () => knowledge.exportFolder(me),
      import: (files, query) => knowledge.importFolder(files, me, query),
      sync: (input) => knowledge.syncFolder(input, me),
    },
    resources: {
      save: (input) => resources.upsert(input, me),
      update: (id, input, target = {}) => resources.update(id, input, me, target),
      get: (id, options = {}) => resources.get(id, me, { ...options, site }),
      list: (query) => resources.list(query, me),
      delete: (id, target = {}) => resources.delete(id, me, target),
    },
    ...(services.agent ? { agent: agentMethods(services.agent, me, options.remote === true) } : {}),
    users: {
      profile: async (id) => {
        if (!services.users) throw new KnowHubError('not_found', `No user ${id}`, { user: id })
        return services.users.profile(me, id)
      },
    },
    admin: adminMethods(services, me, options.remote !== true),
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
  return { ...servicesBackend(hub, principal, options), agent: agentMethods(hub.agent, principal, options.remote === true) }
}
