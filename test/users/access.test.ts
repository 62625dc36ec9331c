/**
 * Who an org admin may name as a user (forget, profile; src/users/access.ts): a user whose every
 * token is of the admin's org, or an id ending in `@org`; a user who also has a token of another
 * org, or a hub operator's token, is the hub operator's alone.
 */
import { describe, expect, it } from 'vitest'
import type { TokenInfo } from '../../src/core/tokens.js'
import { reachUser, userInOrg } from '../../src/users/access.js'

const token = (user: string, org: string | undefined, permissions: TokenInfo['principal']['permissions'] = ['read', 'write']): TokenInfo => ({
  id: `tok_${user}_${org ?? 'none'}`,
  name: '',
  prefix: 'kh_x',
  principal: { user, ...(org ? { org } : {}), permissions },
  status: 'active',
  created_at: '2026-11-26T00:00:00Z',
  expires_at: null,
  last_used_at: null,
  revoked_at: null,
})

const tokens = [token('bob', 'acme'), token('bob', 'acme'), token('eve', 'acme'), token('eve', 'other'), token('ops', 'acme', ['hub:admin'])]

describe('userInOrg', () => {
  it('a member whose every token is of the org, or an id ending in @org', () => {
    expect(userInOrg(tokens, 'acme', 'bob')).toBe(true)
    expect(userInOrg(tokens, 'other', 'bob')).toBe(false)
    expect(userInOrg(tokens, 'acme', 'eve')).toBe(false)
    expect(userInOrg(tokens, 'other', 'eve')).toBe(false)
    expect(userInOrg(tokens, 'acme', 'ops')).toBe(false)
    expect(userInOrg(tokens, 'acme', 'carol@acme')).toBe(true)
    expect(userInOrg(tokens, 'acme', 'x@y@acme')).toBe(false)
    expect(userInOrg(tokens, 'acme', '@acme')).toBe(false)
    expect(userInOrg(tokens, 'acme', 'ghost')).toBe(false)
  })

  it('reachUser: forbidden for writers (forget), not_found out of reach, silent within it', async () => {
    const list = { list: async () => tokens }
    const admin = { user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] as const }
    const writer = { user: 'bob', org: 'acme', permissions: ['read', 'write'] as const }
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code: string }) => e.code,
      )
    expect(await code(reachUser(list, { ...admin, permissions: [...admin.permissions] }, 'user:bob', 'principals.forget'))).toBe('ok')
    expect(await code(reachUser(list, { ...admin, permissions: [...admin.permissions] }, 'user:eve', 'principals.forget'))).toBe('not_found')
    expect(await code(reachUser(list, { ...writer, permissions: [...writer.permissions] }, 'user:bob', 'principals.forget'))).toBe('forbidden')
    expect(await code(reachUser(list, { ...writer, permissions: [...writer.permissions] }, 'user:bob', 'profile.read'))).toBe('ok')
    expect(await code(reachUser(list, { ...writer, permissions: [...writer.permissions] }, 'user:eve', 'profile.read'))).toBe('not_found')
    expect(await code(reachUser(list, { user: 'ops', permissions: ['hub:admin'] }, 'user:anyone', 'principals.forget'))).toBe('ok')
  })
})
