/**
 * Extraction's execution context (seed 002): whose conversation it was decides the scopes and
 * owner of what is extracted, never the model. Ids default to the caller's; a caller cannot
 * name an id it does not hold.
 */
import { KnowHubError } from '../../core/errors.js'
import type { ExtractContext } from '../../core/extract.js'
import type { KnowledgeType } from '../../core/knowledge.js'
import { SCOPE_KINDS, type Principal, type ScopeKind } from '../../core/principal.js'

/** The ids an extraction writes as, and the trace it came from. */
export interface ExecutionContext {
  ids: Partial<Record<ScopeKind, string>>
  trace_id: string
  /** Where the conversation's secrets go, when the caller said (see {@link secretsPlacement}). */
  secrets_scope?: ScopeKind | undefined
}

/**
 * The context of an extraction: the caller's ids, narrowed or confirmed by `context`.
 * @example
 * executionContext(principal, { project: 'app', trace_id: 'trace-1' })
 */
export function executionContext(principal: Principal, context: ExtractContext | undefined): ExecutionContext {
  const ids: Partial<Record<ScopeKind, string>> = {}
  const foreign: string[] = []
  for (const kind of SCOPE_KINDS) {
    const named = context?.[kind] ?? undefined
    if (named !== undefined && named !== principal[kind]) foreign.push(`${kind}:${named}`)
    const id = named ?? principal[kind]
    if (id !== undefined) ids[kind] = id
  }
  if (foreign.length > 0) {
    throw new KnowHubError(
      'forbidden',
      `The context names ${foreign.join(', ')}, which you do not hold: extract as yourself, or with a token that has those ids`,
      {
        ids: foreign,
      },
    )
  }
  const secrets_scope = context?.secrets_scope ?? undefined
  if (secrets_scope !== undefined && ids[secrets_scope] === undefined) {
    throw new KnowHubError('validation_error', `secrets_scope is ${secrets_scope}, but the context has no ${secrets_scope} id`, {
      field: 'context.secrets_scope',
    })
  }
  return { ids, trace_id: context?.trace_id ?? '', secrets_scope }
}

/**
 * Scope and owner of the resource holding a conversation's secrets: the user's own scope unless
 * the caller asked for another (`context.secrets_scope`); an agent's when there is no user; the
 * entries' place (`fallback`) when the context has neither.
 * @example
 * secretsPlacement({ ids: { user: 'ann', org: 'acme' }, trace_id: '' }, { scopes: ['org:acme'], owner: 'user:ann' })
 * // { scopes: ['user:ann'], owner: 'user:ann' }
 */
export function secretsPlacement(context: ExecutionContext, fallback: { scopes: string[]; owner: string }): { scopes: string[]; owner: string } {
  const { ids } = context
  const kind = context.secrets_scope ?? (ids.user !== undefined ? 'user' : ids.agent !== undefined ? 'agent' : undefined)
  const id = kind === undefined ? undefined : ids[kind]
  if (kind === undefined || id === undefined) return fallback
  return { scopes: [`${kind}:${id}`], owner: kind === 'user' || kind === 'agent' ? `${kind}:${id}` : fallback.owner }
}

/** Where entries learned outside user profiles go: the first of project, team, org, agent, user the context has. */
const SHARED_ORDER: readonly ScopeKind[] = ['project', 'team', 'org', 'agent', 'user']

/**
 * Scopes and owner of an extracted entry. User profiles: `user:U`, owned by `user:U` (none
 * without a user). Other knowledge: the context's project (else team, org, agent, user),
 * owned by the context's agent, else its user.
 * @example
 * placement(['strategy'], { ids: { user: 'u', agent: 'a', project: 'p' }, trace_id: '' }) // { scopes: ['project:p'], owner: 'agent:a' }
 */
export function placement(types: readonly KnowledgeType[], context: ExecutionContext): { scopes: string[]; owner: string } | undefined {
  const { ids } = context
  if (types.includes('user_profile')) return ids.user ? { scopes: [`user:${ids.user}`], owner: `user:${ids.user}` } : undefined
  const kind = SHARED_ORDER.find((k) => ids[k] !== undefined)
  if (!kind) return undefined
  const ownerKind = ids.agent !== undefined ? 'agent' : ids.user !== undefined ? 'user' : kind
  return { scopes: [`${kind}:${ids[kind]}`], owner: `${ownerKind}:${ids[ownerKind]}` }
}
