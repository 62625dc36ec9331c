import { describe, expect, it } from 'vitest'
import {
  assertScope,
  assertWritableScopes,
  canManage,
  defaultOwnerOf,
  defaultWriteScopes,
  Principal,
  scopePriority,
  visibleScopes,
} from '../../src/core/principal.js'
import { isKnowHubError, type KnowHubError } from '../../src/core/errors.js'

describe('principal and scopes', () => {
  const alice = Principal.parse({ user: 'alice', project: 'p1', org: 'acme' })

  it('sees its own scopes plus public', () => {
    expect(visibleScopes(alice)).toEqual(['user:alice', 'project:p1', 'org:acme', 'public'])
  })

  it('rejects malformed scopes with a stable code', () => {
    for (const bad of ['user', 'user:', 'robot:1', 'user:a b', 'PUBLIC', 'org:../x']) {
      try {
        assertScope(bad)
        expect.unreachable(`accepted ${bad}`)
      } catch (error) {
        expect(isKnowHubError(error, 'invalid_scope')).toBe(true)
      }
    }
    expect(assertScope('team:core-2')).toBe('team:core-2')
  })

  it('writes only scopes the principal belongs to; public needs admin', () => {
    expect(() => assertWritableScopes(alice, ['user:alice', 'org:acme'])).not.toThrow()
    expect(() => assertWritableScopes(alice, ['org:other'])).toThrow(/org:other/)
    expect(() => assertWritableScopes(alice, ['public'])).toThrow(/public needs the admin permission|it needs the admin permission/)
    const admin = Principal.parse({ user: 'root', org: 'acme', permissions: ['admin'] })
    expect(() => assertWritableScopes(admin, ['public', 'org:acme', 'user:root'])).not.toThrow()
  })

  it('refuses admins too a scope outside their own ids, naming the scope and how to get it', () => {
    const admin = Principal.parse({ user: 'local', permissions: ['admin'] })
    let caught: unknown
    try {
      assertWritableScopes(admin, ['org:acme', 'public'])
    } catch (error) {
      caught = error
    }
    expect(isKnowHubError(caught, 'forbidden')).toBe(true)
    const error = caught as KnowHubError
    expect(error.message).toContain('You cannot write to scope org:acme: it is not among your scopes (user:local)')
    expect(error.message).toContain('KNOWHUB_ORG=acme for the CLI')
    expect(error.message).toContain('knowhub token create --org acme')
    expect(error.details).toEqual({ scopes: ['org:acme'], your_scopes: ['user:local'] })
    // Several at once: every refused scope is named, public too for a non-admin.
    expect(() => assertWritableScopes(alice, ['team:core', 'user:bob', 'public'])).toThrow(
      /^You cannot write to scopes team:core, user:bob, public: .*act as team "core" and user "bob": KNOWHUB_TEAM=core KNOWHUB_USER=bob .*; public needs the admin permission$/,
    )
  })

  it('ranks scopes user > project > agent > team > org > public among visible ones', () => {
    const visible = visibleScopes(Principal.parse({ user: 'u', agent: 'a', project: 'p', team: 't', org: 'o' }))
    expect(scopePriority(['public', 'org:o'], visible)).toBe(4)
    expect(scopePriority(['agent:a', 'project:p'], visible)).toBe(1)
    expect(scopePriority(['user:someone-else', 'team:t'], visible)).toBe(3)
    expect(scopePriority(['user:someone-else'], visible)).toBe(6)
  })

  it('lets owners and the hub operator act as an owner, not an org admin (issue 27)', () => {
    expect(canManage(alice, 'user:alice')).toBe(true)
    expect(canManage(alice, 'user:bob')).toBe(false)
    expect(canManage(Principal.parse({ user: 'x', org: 'acme', permissions: ['admin'] }), 'user:bob')).toBe(false)
    expect(canManage(Principal.parse({ user: 'x', permissions: ['hub:admin'] }), 'user:bob')).toBe(true)
  })

  it('saves without owner or scopes as its user, else its agent, else its first id; into its first scope', () => {
    const cases: Array<[Record<string, string>, string | undefined, string[]]> = [
      [{ user: 'u', agent: 'a', project: 'p', org: 'o' }, 'user:u', ['user:u']],
      [{ agent: 'a', project: 'p' }, 'agent:a', ['project:p']],
      [{ team: 't', org: 'o' }, 'team:t', ['team:t']],
      [{}, undefined, []],
    ]
    for (const [ids, owner, scopes] of cases) {
      const principal = Principal.parse({ ...ids, permissions: ['write'] })
      expect(defaultOwnerOf(principal), JSON.stringify(ids)).toBe(owner)
      expect(defaultWriteScopes(principal), JSON.stringify(ids)).toEqual(scopes)
    }
  })
})
