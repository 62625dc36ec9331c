/**
 * Issue 27, finding 5: every read of a secret is audited — over real HTTP (`GET
 * /api/resource/{id}`), the official MCP client (`resource_get` at /mcp), the CLI's local
 * path and backups — with the principal, resource, route and time, never the secret. The
 * records are visible to the resource's owner and its org admin (`GET /api/secret-reads`) and to
 * nobody else: not a reader of the same org, not another org's admin.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backupHub } from '../../src/admin/backup.js'
import { Principal } from '../../src/core/principal.js'
import { sql } from '../../src/store/sql.js'
import { rejection } from '../helpers/errors.js'
import { client, openTestHub, type Client, type TestHub } from './helpers.js'

const SHARED = 'S3cret-db-9f8e7d6c'
const OWN = 'S3cret-own-7a6b5c4d'

describe('the audit of secret reads (issue 27)', () => {
  let t: TestHub
  let url: string
  const tokens: Record<string, string> = {}
  const api: Record<string, Client> = {}
  const ann = Principal.parse({ user: 'ann', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })

  beforeAll(async () => {
    t = await openTestHub()
    url = (await t.start()).url
    const make = async (name: string, ids: Record<string, string>, permissions: string[]) => {
      tokens[name] = (await t.hub.tokens.create({ ...ids, permissions } as never)).token
      api[name] = client(url, tokens[name])
    }
    await make('ann', { user: 'ann', org: 'acme' }, ['read', 'write', 'secrets:read'])
    await make('carol', { user: 'carol', org: 'acme' }, ['read', 'secrets:read'])
    await make('acmeAdmin', { user: 'root', org: 'acme' }, ['admin'])
    await make('otherAdmin', { user: 'zed', org: 'other' }, ['admin'])
    await make('bob', { user: 'bob', org: 'other' }, ['read', 'secrets:read'])
    const save = (id: string, secret: string, scopes: string[]) =>
      api.ann!.post('/api/resource', { id, title: id, content_type: 'credential', body: 'public part', secure_body: secret, scopes })
    expect((await save('credentials/db', SHARED, ['org:acme'])).status).toBe(201)
    expect((await save('credentials/own', OWN, ['user:ann'])).status).toBe(201)
  })
  afterAll(async () => t?.close())

  /** resource_get over the MCP client, as the token's principal. */
  async function mcpGet(token: string, id: string): Promise<string> {
    const mcp = new McpClient({ name: 'knowhub-audit-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    try {
      const result = (await mcp.callTool({ name: 'resource_get', arguments: { id, include_secret: true } })) as CallToolResult
      return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
    } finally {
      await mcp.close()
    }
  }

  const rows = () => t.hub.store.db.query(sql`SELECT * FROM knowhub_secret_reveal ORDER BY seq`)

  it('records each read that returns a secure_body, through every surface, and no other read', async () => {
    expect((await api.ann!.get('/api/resource/credentials/db')).body.secure_body).toBe(SHARED)
    expect((await api.ann!.get('/api/resource/credentials/db?include_secret=false')).body.secure_body).toBeUndefined()
    expect((await api.carol!.get('/api/resource/credentials/db')).body.secure_body).toBe(SHARED)
    expect((await api.bob!.get('/api/resource/credentials/db')).status).toBe(404)
    expect(await mcpGet(tokens.ann!, 'credentials/own')).toContain(OWN)
    expect(await mcpGet(tokens.carol!, 'credentials/db')).toContain(SHARED)
    // Without secrets:read the secret is not returned, and so not recorded.
    expect((await api.acmeAdmin!.get('/api/resource/credentials/own')).body.secure_body).toBeUndefined()
    // The CLI's local path (knowhub resource get --show-secret).
    expect((await t.hub.resources.get('credentials/own', ann, { includeSecret: true, site: { via: 'cli', route: 'knowhub resource get' } })).secure_body).toBe(
      OWN,
    )

    const log = await rows()
    expect(log.map((r) => [r.resource_id, (r.principal as { user: string }).user, r.via, r.route])).toEqual([
      ['credentials/db', 'ann', 'api', 'GET /api/resource/{id}'],
      ['credentials/db', 'carol', 'api', 'GET /api/resource/{id}'],
      ['credentials/own', 'ann', 'mcp', 'resource_get'],
      ['credentials/db', 'carol', 'mcp', 'resource_get'],
      ['credentials/own', 'ann', 'cli', 'knowhub resource get'],
    ])
    for (const row of log.slice(0, 4)) expect(row.caller).toMatch(/^token:tok_/)
    expect(log.every((r) => r.owner === 'user:ann' && r.revealed_at instanceof Date)).toBe(true)
    expect(JSON.stringify(log)).not.toContain(SHARED)
    expect(JSON.stringify(log)).not.toContain(OWN)
  })

  it('records a backup as a read of every secret it carries (refused, and not recorded, on PostgreSQL)', async () => {
    const before = (await rows()).length
    if (t.hub.store.db.kind === 'pglite') {
      await backupHub(t.hub)
      const added = (await rows()).slice(before)
      expect(added.map((r) => [r.resource_id, r.via, r.route, r.caller])).toEqual([
        ['credentials/db', 'backup', 'knowhub backup', 'local'],
        ['credentials/own', 'backup', 'knowhub backup', 'local'],
      ])
    } else {
      expect((await rejection(backupHub(t.hub))).code).toBe('validation_error')
      expect(await rows()).toHaveLength(before)
    }
  })

  it('shows the records to the owner and the org admin only; never the secret', async () => {
    const seen = async (who: string, query = '') => {
      const response = await api[who]!.get(`/api/secret-reads${query}`)
      expect(response.status, response.text).toBe(200)
      expect(response.text).not.toContain(SHARED)
      expect(response.text).not.toContain(OWN)
      return response.body.items as Array<{ resource_id: string; principal: { user: string }; via: string; route: string; read_at: string }>
    }
    const all = (await rows()).length
    const backups = (await rows()).filter((r) => r.via === 'backup').length
    const owner = await seen('ann')
    expect(owner).toHaveLength(all)
    expect(owner[0]!.read_at).toMatch(/^\d{4}-\d\d-\d\dT/)
    // The acme admin sees the reads of acme's resource, and those of ann's own secret by ann (an
    // acme member); a backup row of a resource with no org scope is its owner's only.
    const admin = await seen('acmeAdmin')
    expect(admin).toHaveLength(all - (backups > 0 ? 1 : 0))
    expect(new Set(admin.map((r) => r.resource_id))).toEqual(new Set(['credentials/db', 'credentials/own']))
    // Nobody else: a reader of the same org who read the secret itself, another org's admin and reader.
    let attempts = 0
    let leaks = 0
    for (const who of ['carol', 'otherAdmin', 'bob']) {
      for (const query of [
        '',
        '?resource=credentials/db',
        '?resource=credentials/own',
        '?owner=user:ann',
        '?resource=credentials/db&owner=user:ann&limit=500',
      ]) {
        attempts++
        leaks += (await seen(who, query)).length
      }
    }
    console.log(
      `secret-read audit: ${all} records; owner sees ${owner.length}, acme admin ${admin.length}; others: ${attempts} attempts, ${leaks} records seen`,
    )
    expect(leaks).toBe(0)
  })

  it('pages newest first and refuses a bad query with a clear code', async () => {
    const first = await api.ann!.get('/api/secret-reads?limit=2')
    expect(first.body.items).toHaveLength(2)
    expect(first.body.items[0].seq).toBeGreaterThan(first.body.items[1].seq)
    const next = await api.ann!.get(`/api/secret-reads?limit=2&before=${first.body.next_before}`)
    expect(next.body.items[0].seq).toBeLessThan(first.body.items[1].seq)
    const bad = await api.ann!.get('/api/secret-reads?limit=0')
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('validation_error')
    expect((await api.ann!.get('/api/secret-reads?resource=../x')).status).toBe(400)
  })
})
