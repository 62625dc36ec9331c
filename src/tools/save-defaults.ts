/**
 * Where `knowledge_save` saves when the model says nothing (seed 003: "默认值(在 agent 代码中设置):
 * scopes: ["org:…"], owner: f"agent:{agent_id}""): knowledge an agent learns is shared with its org
 * and owned by the agent. The API's own default (`user:<caller>`) stays the API's; the tools differ.
 *
 * - scopes: the argument, else the toolkit's configured default, else the caller's org (`org:<id>`),
 *   else the server's default;
 * - owner: the argument, else the configured default, else `agent:<agent_id>` for the agent the call
 *   names (`agent_id`, else the configured one, else the caller's own agent id) — when the caller may
 *   act as that agent. Otherwise a clear error saying how to get an agent token: never a silent change
 *   of owner. With no agent at all, the server's default (the caller).
 */
import { KnowHubError } from '../core/errors.js'
import { memberScopes } from '../core/principal.js'
import type { Me } from '../core/profile.js'
import type { ToolContext } from './define.js'

/** What a `knowledge_save` call says about where to save. */
export interface SaveTargetArgs {
  scopes?: string[] | undefined
  owner?: string | undefined
  agent_id?: string | undefined
}

/** The scopes, owner and `source.agent_id` of a `knowledge_save` call (undefined: the server's default). */
export interface SaveTarget {
  scopes: string[] | undefined
  owner: string | undefined
  agentId: string
}

/**
 * The save target of a `knowledge_save` call (see the file comment). Asks the backend who the
 * caller is (`GET /api/me`) only when a default depends on it.
 * @example
 * await saveTarget({}, context) // { scopes: ['org:acme'], owner: 'agent:crawler_ops', agentId: 'crawler_ops' } for an agent token of acme
 */
export async function saveTarget(args: SaveTargetArgs, context: Pick<ToolContext, 'backend' | 'defaults'>): Promise<SaveTarget> {
  const { defaults } = context
  const given = { scopes: args.scopes ?? defaults.scopes, owner: args.owner ?? defaults.owner, agentId: args.agent_id ?? defaults.agent_id }
  if (given.scopes && given.owner) return { scopes: given.scopes, owner: given.owner, agentId: given.agentId ?? '' }
  const me = await context.backend.users.me()
  const agentId = given.agentId ?? me.principal.agent
  const scopes = given.scopes ?? (me.principal.org ? [`org:${me.principal.org}`] : undefined)
  // A reader may save nothing: the server says so, in its words, before any default matters.
  if (given.owner || !agentId || me.role === 'reader') return { scopes, owner: given.owner, agentId: agentId ?? '' }
  const owner = `agent:${agentId}`
  if (!mayActAs(me, owner)) throw notThatAgent(me, agentId)
  return { scopes, owner, agentId }
}

/** Whether the caller may own what it saves as `owner`: one of its own ids, or the hub operator. */
function mayActAs(me: Me, owner: string): boolean {
  return me.role === 'operator' || memberScopes(me.principal).includes(owner)
}

function notThatAgent(me: Me, agentId: string): KnowHubError {
  const own = memberScopes(me.principal)
  const org = me.principal.org ? ` --org ${me.principal.org}` : ''
  return new KnowHubError(
    'forbidden',
    `knowledge_save would save as agent:${agentId} (seed 003's default owner: the agent that learned it), but this caller is not that agent ` +
      `(its ids: ${own.join(', ') || 'none'}). Use an agent token — \`knowhub token create --agent ${agentId}${org}\` (in local mode KNOWHUB_AGENT=${agentId}) — ` +
      `or pass owner explicitly (one of your ids), or leave agent_id out.`,
    { agent_id: agentId, your_ids: own, fix: `knowhub token create --agent ${agentId}${org}` },
  )
}
