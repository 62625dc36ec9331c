/**
 * Revealing a secret to a person (the dashboard's "reveal"): the resource's `secure_body`
 * for a principal allowed to read it (`secrets:read` in one of the resource's own
 * scopes, as for the API), recorded in the audit of secret reads like every other read
 * (audit.ts: via `dashboard`, route `POST /reveal`). A principal that may not read it gets
 * `forbidden` and nothing is recorded.
 */
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { Resource } from '../core/resources.js'
import type { ResourceService } from './service.js'

export interface SecretRevealDeps {
  resources: Pick<ResourceService, 'get'>
}

/** Who asks: the principal, and the caller key (`token:tok_…` or `local`) for the log. */
export interface RevealCaller {
  principal: Principal
  key: string
}

/**
 * Reveals a secret; the resource service writes the audit row before the secret is returned.
 * @example
 * const reveal = createSecretReveal({ resources: hub.resources })
 * const { secure_body } = await reveal('cookies/site_a', { principal, key: 'token:tok_abc' }, { via: 'dashboard' })
 */
export function createSecretReveal(deps: SecretRevealDeps) {
  return async (id: string, who: RevealCaller, options: { owner?: string | undefined; via: string }): Promise<Resource & { secure_body: string }> => {
    // The service records the read (before it returns the secret).
    const site = { via: options.via, route: 'POST /reveal', caller: who.key }
    const resource = await deps.resources.get(id, who.principal, { includeSecret: true, owner: options.owner, site })
    if (typeof resource.secure_body !== 'string') {
      const reason = resource.has_secret ? 'revealing it needs the "secrets:read" permission in one of its own scopes' : 'it holds no secret'
      throw new KnowHubError('forbidden', `The secret of ${resource.id} cannot be revealed: ${reason}`, { id: resource.id })
    }
    return { ...resource, secure_body: resource.secure_body }
  }
}

export type SecretReveal = ReturnType<typeof createSecretReveal>
