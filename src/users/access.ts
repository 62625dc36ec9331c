/**
 * Which users a caller may name (forget, profile): the hub operator any; an org admin the users
 * of its org; a user itself. Who belongs to an org: a user with a token of that org, or an id
 * ending in `@org` (the rule of src/auth/token-admin.ts). An org admin reaches a user only when
 * every token of that user is of its org: ids are global, and a user who also works in another
 * org is the hub operator's. Anything out of reach answers exactly as an unknown user: `not_found`.
 */
import { authorize } from '../auth/policy.js'
import type { TokenService } from '../auth/tokens.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { TokenInfo } from '../core/tokens.js'

/** The same answer for a user out of reach as for one that does not exist. */
const unknownUser = (subject: string) => new KnowHubError('not_found', `No principal ${subject}`, { principal: subject })

/**
 * Whether `user` is reachable for an org admin of `org`: a member (a token of the org, or an id
 * ending in `@org`) with no token of any other org.
 * @example
 * userInOrg(await tokens.list(), 'acme', 'bob') // true when bob's tokens are all acme's
 */
export function userInOrg(tokens: readonly TokenInfo[], org: string, user: string): boolean {
  const theirs = tokens.filter((t) => t.principal.user === user)
  if (theirs.some((t) => t.principal.org !== org || t.principal.permissions.includes('hub:admin'))) return false
  const suffix = `@${org}`
  return theirs.length > 0 || (user.endsWith(suffix) && user.length > suffix.length && !user.slice(0, -suffix.length).includes('@'))
}

/**
 * Resolves who a caller may name as a user (forget, profile): the hub operator anyone; an org
 * admin a user of its org (see {@link userInOrg}); otherwise `not_found`. Throws `forbidden`
 * first when the action reaches nothing for the caller's role.
 */
export async function reachUser(
  tokens: Pick<TokenService, 'list'>,
  principal: Principal,
  subject: string,
  action: 'principals.forget' | 'profile.read',
): Promise<void> {
  const reach = authorize(principal, action)
  const user = subject.slice('user:'.length)
  if (reach === 'hub') return
  if (reach === 'own' && principal.user === user) return
  if (reach === 'org' && (principal.user === user || userInOrg(await tokens.list(), principal.org!, user))) return
  throw unknownUser(subject)
}
