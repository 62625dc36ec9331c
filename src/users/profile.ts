/**
 * Users' profiles (issue 31): `GET /api/users/{id}/profile`, the client's `userProfile`, the
 * `user_profile` tool and the dashboard's profile section. Who may read one is the role table's
 * `profile.read` (src/auth/policy.ts): the user itself, the admin of its org (a user of that org
 * only, see ./access.ts), the hub operator; anyone else gets the answer an unknown user
 * gets (`not_found`). The entries are read whatever the reader's scopes: that check comes first.
 */
import type { TokenService } from '../auth/tokens.js'
import type { Clock } from '../core/clock.js'
import { ForgetSubject } from '../core/erasure.js'
import type { Principal } from '../core/principal.js'
import type { Me, UserProfile } from '../core/profile.js'
import { authorize, roleOf } from '../auth/policy.js'
import { parseWith } from '../core/validate.js'
import { buildProfile } from '../knowledge/entries/profile.js'
import type { Store } from '../store/store.js'
import { reachUser } from './access.js'

/** The users operations. */
export interface UsersService {
  /** The profile of user `id` (its current view and timeline), for a caller that may read it. */
  profile(id: string, principal: Principal): Promise<UserProfile>
  /** The caller itself: its principal and role (`GET /api/me`). */
  me(principal: Principal): Promise<Me>
}

/**
 * The users service over a hub's store and tokens.
 * @example
 * const profile = await usersService(hub).profile('bob', hub.config.principal)
 */
export function usersService(deps: { store: Pick<Store, 'knowledge'>; tokens: Pick<TokenService, 'list'>; clock?: Clock }): UsersService {
  return {
    async me(principal) {
      authorize(principal, 'profile.read')
      return { principal, role: roleOf(principal) }
    },
    async profile(id, principal) {
      const subject = parseWith(ForgetSubject, `user:${id}`, 'user')
      await reachUser(deps.tokens, principal, subject, 'profile.read')
      const records = await deps.store.knowledge.profileEntries(subject)
      // The subject's own entries, whatever the reader's scopes (reachUser decided it may read them).
      const versions = await deps.store.knowledge.versionsOf(
        records.map((r) => r.id),
        [...new Set(records.flatMap((r) => r.scopes))],
      )
      return buildProfile(id, records, versions, deps.clock?.now() ?? new Date())
    },
  }
}
