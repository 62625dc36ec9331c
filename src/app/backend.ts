/**
 * The agent tools' backend over in-process services (the other one is the HTTP client,
 * src/client/backend.ts). It lives in the composition root: the tools only know the
 * `ToolBackend` port, never the services behind it.
 */
import type { AgentService } from '../agent/service.js'
import { AgentContextRequest } from '../core/agent.js'
import type { Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { KnowledgeService } from '../knowledge/service.js'
import type { SlimService } from '../knowledge/slim/slim.js'
import type { ExtractionService } from '../knowledge/extract/extract.js'
import { KnowHubError } from '../core/errors.js'
import type { ResourceService } from '../resources/service.js'
import type { ToolBackend } from '../tools/backend.js'
import type { KnowHub } from './open.js'

/**
 * The in-process services a local backend calls (the shapes `createApp` takes, so the
 * server's `/mcp` endpoint runs the tools on the same services as its HTTP routes).
 */
export interface ToolServices {
  knowledge: Pick<KnowledgeService, 'search' | 'save' | 'get' | 'feedback' | 'batchFeedback' | 'list'>
  resources: Pick<ResourceService, 'save' | 'get'>
  slim: Pick<SlimService, 'slim'>
  /** Absent: knowledge_extract answers `llm_not_configured`. */
  extraction?: Pick<ExtractionService, 'extract'> | undefined
  /** Goal trees and agent contexts (absent: no `goal` tool, no `agent-context` prompt). */
  agent?: Pick<AgentService, 'goal' | 'assembleContext' | 'compact' | 'compactStored'> | undefined
}

/** The agent methods of a backend: goal trees, the assembled context and compaction, as `principal`. */
function agentMethods(
  agent: NonNullable<ToolServices['agent']>,
  principal: Principal,
  remote: boolean,
): Pick<ToolBackend, 'goal' | 'agentContext' | 'agentCompact'> {
  return {
    goal: (body) => agent.goal(body, principal),
    // A remote caller compacts the agent stored in its org; in-process, the agent's folder on this machine.
    agentCompact: (name, body) => (remote ? agent.compactStored(name, body, principal) : agent.compact({ ...body, agent: name }, principal)),
    agentContext: (body) => {
      const { knowledge_files: knowledgeFiles, ...rest } = parseWith(AgentContextRequest, body, 'agent context request')
      return agent.assembleContext({ ...rest, ...(knowledgeFiles ? { knowledgeFiles } : {}), principal, ...(remote ? { remote } : {}) })
    },
  }
}

/**
 * A backend over in-process services, acting as `principal`; `remote`: for a caller over
 * HTTP (`/mcp`), whose agent context shows only the packs it may see, by pack-relative paths.
 * @example
 * const backend = servicesBackend({ knowledge: hub.knowledge, resources: hub.resources, slim: hub.slim }, principal)
 */
export function servicesBackend(
  services: ToolServices,
  principal: Principal,
  options: { remote?: boolean; site?: { via: string; caller: string } } = {},
): ToolBackend {
  // Where a secret read through the tools is recorded (the audit of secret reads): `/mcp` passes its caller.
  const site = { via: options.site?.via ?? 'tools', route: 'resource_get', caller: options.site?.caller ?? 'local' }
  const { knowledge, resources, slim } = services
  return {
    search: (query) => knowledge.search(query, principal),
    save: (body) => knowledge.save(body, principal),
    get: (id) => knowledge.get(id, principal),
    update: (id, body) => knowledge.feedback(id, body, principal),
    batchUpdate: (body) => knowledge.batchFeedback(body, principal),
    list: (query) => knowledge.list(query, principal),
    slim: (body) => slim.slim(body, principal),
    extract: async (body) => {
      if (!services.extraction) throw new KnowHubError('llm_not_configured', 'Extraction needs an LLM, and this KnowHub has none configured')
      return services.extraction.extract(body, principal)
    },
    resourceSave: (body) => resources.save(body, principal),
    resourceGet: (id, options = {}) => resources.get(id, principal, { ...options, site }),
    ...(services.agent ? agentMethods(services.agent, principal, options.remote === true) : {}),
  }
}

/**
 * A backend over the in-process services of an open hub, acting as `principal`.
 * @example
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * const kit = createToolkit({ backend: localBackend(hub, hub.config.principal) })
 */
export function localBackend(hub: KnowHub, principal: Principal): ToolBackend {
  return servicesBackend(hub, principal)
}
