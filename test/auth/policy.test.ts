/**
 * The role × action table (src/auth/policy.ts) is the one place the rules live, and
 * docs/server.md prints it: they must agree. Plus the rules an org admin lives by (issue 27).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { authorize, mayManage, mayNameOwner, policyTableRows, reach, roleOf } from '../../src/auth/policy.js'
import { Principal } from '../../src/core/principal.js'

const ann = Principal.parse({ user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] })
const ops = Principal.parse({ user: 'ops', permissions: ['hub:admin'] })
const writer = Principal.parse({ user: 'wr', org: 'acme', permissions: ['read', 'write'] })
const reader = Principal.parse({ user: 'rd', org: 'acme', permissions: ['read'] })

describe('the role × action table', () => {
  it('is printed in docs/server.md exactly as the code has it', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'server.md'), 'utf8')
    const table = doc.slice(doc.indexOf('<!-- policy-table:start -->'), doc.indexOf('<!-- policy-table:end -->'))
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| action') && !line.startsWith('| ---'))
    expect(rows, 'regenerate with policyTableRows()').toEqual(policyTableRows())
  })

  it('gives each permission set its role', () => {
    expect([ops, ann, writer, reader].map(roleOf)).toEqual(['operator', 'admin', 'writer', 'reader'])
  })

  it('keeps an org admin to its org: no backups, no hub status, no hub:admin, no foreign owner', () => {
    expect(reach(ann, 'tokens.manage')).toBe('org')
    expect(reach(ops, 'tokens.manage')).toBe('hub')
    for (const action of ['backup', 'status.hub', 'tokens.mint_operator', 'orgs.manage'] as const) {
      expect(() => authorize(ann, action)).toThrow(/hub operator/)
      expect(authorize(ops, action)).toBe('hub')
    }
    // An admin without an org administers none.
    expect(reach(Principal.parse({ user: 'root', permissions: ['admin'] }), 'tokens.manage')).toBe('none')
    expect(mayNameOwner(ann, 'user:ann')).toBe(true)
    expect(mayNameOwner(ann, 'org:acme')).toBe(true)
    expect(mayNameOwner(ann, 'user:bob')).toBe(false)
    expect(mayNameOwner(ops, 'user:bob')).toBe(true)
  })

  it('lets an admin manage what it sees through its own ids, never what it sees only as public', () => {
    expect(mayManage(ann, { owner: 'user:bob', scopes: ['org:acme'] })).toBe(true)
    expect(mayManage(ann, { owner: 'user:bob', scopes: ['public'] })).toBe(false)
    expect(mayManage(ann, { owner: 'user:bob', scopes: ['org:other'] })).toBe(false)
    expect(mayManage(writer, { owner: 'user:bob', scopes: ['org:acme'] })).toBe(false)
    expect(mayManage(writer, { owner: 'user:wr', scopes: ['public'] })).toBe(true)
    expect(reach(reader, 'knowledge.write')).toBe('none')
  })
})
