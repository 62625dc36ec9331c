/**
 * The agent tools' defaults for `knowhub mcp` and `knowhub start` (`/mcp`): the `tools`
 * section of the config file, with `knowhub mcp`'s flags winning value by value.
 */
import type { ToolsConfig } from '../core/config.js'
import type { ToolDefaults } from '../tools/define.js'

/** The tool-default flags of `knowhub mcp`. */
export interface ToolFlags {
  scope?: string[] | undefined
  owner?: string | undefined
  agentId?: string | undefined
  submittedBy?: string | undefined
}

/**
 * Merges the config file's `tools` section with flags (flags win; `--scope` replaces the
 * configured scopes). Without either, the tools ask the hub who the caller is (src/tools/save-defaults.ts).
 * @example
 * toolDefaults({ scopes: ['org:acme'], agentId: 'coder' }, { owner: 'user:me' }) // { scopes: ['org:acme'], owner: 'user:me', agent_id: 'coder' }
 */
export function toolDefaults(config: ToolsConfig, flags: ToolFlags = {}): ToolDefaults {
  const scopes = flags.scope && flags.scope.length > 0 ? flags.scope : config.scopes
  const owner = flags.owner ?? config.owner
  const agentId = flags.agentId ?? config.agentId
  const submittedBy = flags.submittedBy ?? config.submittedBy
  return {
    ...(scopes ? { scopes } : {}),
    ...(owner ? { owner } : {}),
    ...(agentId ? { agent_id: agentId } : {}),
    ...(submittedBy ? { submitted_by: submittedBy } : {}),
  }
}
