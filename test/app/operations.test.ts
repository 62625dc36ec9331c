/**
 * The operations table (src/core/operations.ts) against what it is derived into: every declaration
 * names a method of the built services, its path parameters are the declared ones, each method
 * and path is declared once, and each has its OpenAPI path. (The tenancy suite checks that each
 * route the server mounts has a case; the client and port tests run every derived method.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import { invoke } from '../../src/app/operations.js'
import { pathParams, type AnyOperation } from '../../src/core/operation.js'
import { ADMIN_OPERATIONS, AGENT_OPERATIONS, KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, TOKEN_OPERATIONS, USER_OPERATIONS } from '../../src/core/operations.js'
import { ACTIONS } from '../../src/auth/policy.js'
import { openApiDocument } from '../../src/server/openapi.js'

const GROUPS = { KNOWLEDGE_OPERATIONS, RESOURCE_OPERATIONS, USER_OPERATIONS, ADMIN_OPERATIONS, TOKEN_OPERATIONS, AGENT_OPERATIONS }
const ALL: Array<[string, AnyOperation]> = Object.entries(GROUPS).flatMap(([group, ops]) =>
  Object.entries(ops as Record<string, AnyOperation>).map(([name, op]) => [`${group}.${name}`, op] as [string, AnyOperation]),
)

const dir = mkdtempSync(join(tmpdir(), 'knowhub-operations-'))
let hub: KnowHub
beforeAll(async () => {
  hub = await openKnowHub({ dataDir: dir, embedder: { provider: 'hashed' }, secrets: { key: Buffer.alloc(32, 1).toString('base64') } })
})
afterAll(async () => {
  await hub?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the operations table', () => {
  it('names a method of the built services for every operation', () => {
    for (const [name, op] of ALL) {
      const path = op.call.split('.')
      const target = path.slice(0, -1).reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], hub)
      expect(typeof (target as Record<string, unknown>)[path[path.length - 1]!], `${name}: ${op.call}`).toBe('function')
    }
  })

  it('answers an operation whose service is absent with the code the port promises', async () => {
    const bare = { knowledge: hub.knowledge, resources: hub.resources, slim: hub.slim }
    const context = { local: true, key: 'local', site: { via: 'tools', route: 'test', caller: 'local' } }
    const run = (op: AnyOperation, args: unknown[]) => invoke(bare, op, args, hub.config.principal, context)
    await expect(run(KNOWLEDGE_OPERATIONS.extract, [{ messages: [] }])).rejects.toMatchObject({ code: 'llm_not_configured' })
    await expect(run(ADMIN_OPERATIONS.status, [])).rejects.toMatchObject({ code: 'forbidden' })
    await expect(run(ADMIN_OPERATIONS.forget, ['user:bob'])).rejects.toMatchObject({ code: 'forbidden' })
    await expect(run(USER_OPERATIONS.profile, ['bob'])).rejects.toMatchObject({ code: 'not_found', details: { user: 'bob' } })
  })

  it('declares each method and path once, its path parameters and a known action', () => {
    const routes = ALL.map(([, op]) => `${op.method} ${op.path}`)
    expect(new Set(routes).size).toBe(routes.length)
    for (const [name, op] of ALL) {
      expect(
        Object.keys(op.params ?? {}).every((param) => pathParams(op.path).includes(param)),
        name,
      ).toBe(true)
      expect(ACTIONS, name).toContain(op.action)
    }
  })

  it('has an OpenAPI path for every operation, and every reference of the document resolves', () => {
    const doc = openApiDocument('0.0.0')
    for (const [name, op] of ALL) expect(doc.paths[op.path.replace(/:(\w+)\+?/g, '{$1}')]?.[op.method.toLowerCase()], name).toBeDefined()
    const refs: string[] = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object')
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref') refs.push(value as string)
          else walk(value)
        }
    }
    walk(doc)
    const unresolved = refs.filter(
      (ref) =>
        ref
          .slice(2)
          .split('/')
          .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], doc) === undefined,
    )
    expect(refs.length).toBeGreaterThan(50)
    expect(unresolved).toEqual([])
  })
})
