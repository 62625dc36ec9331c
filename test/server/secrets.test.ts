/**
 * Secrets never leak, over real HTTP: every endpoint is driven by principals with and
 * without `secrets:read` (and in or out of the resource's scope), including error
 * paths that carry a secret in the request; every response body and header, and
 * every log line of the services and the server, is scanned for the secret values
 * (and for the API tokens). A secret may appear in exactly one place: the answer to
 * `GET /api/resource/{id}` for a caller allowed to read it.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, openTestHub, type ApiResponse, type Client, type TestHub } from './helpers.js'

let t: TestHub
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`
const SECRETS = {
  orgCredential: secret('pw'),
  userCookie: secret('cookie'),
  publicSecret: secret('pub'),
  rotated: secret('rotated'),
  rejectedUpdate: secret('rejected'),
  badSave: secret('bad'),
  malformed: secret('malformed'),
  oversized: secret('oversized'),
  duplicate: secret('dup'),
  forbiddenSave: secret('forbidden'),
}
const allSecrets = () => Object.values(SECRETS)

interface Seen {
  who: string
  what: string
  response: ApiResponse
  /** The one secret this response may carry. */
  allowed?: string
}
const seen: Seen[] = []
const tokens: string[] = []
let actors: Record<'owner' | 'teammate' | 'keyholder' | 'outsider' | 'admin', Client>

async function record(who: string, what: string, call: Promise<ApiResponse>, allowed?: string): Promise<ApiResponse> {
  const response = await call
  seen.push({ who, what, response, ...(allowed ? { allowed } : {}) })
  return response
}

beforeAll(async () => {
  t = await openTestHub()
  const make = async (fields: Record<string, unknown>) => {
    const created = await t.hub.tokens.create(fields)
    tokens.push(created.token)
    return created.token
  }
  const owner = await make({ user: 'owner', org: 'acme', permissions: ['read', 'write', 'secrets:read'] })
  const teammate = await make({ user: 'teammate', org: 'acme', permissions: ['read', 'write'] })
  const keyholder = await make({ user: 'keyholder', org: 'acme', permissions: ['read', 'secrets:read'] })
  const outsider = await make({ user: 'outsider', org: 'other', permissions: ['read', 'write', 'secrets:read'] })
  const admin = await make({ user: 'root', org: 'ops', permissions: ['admin'] })
  const server = await t.start()
  actors = {
    owner: client(server.url, owner),
    teammate: client(server.url, teammate),
    keyholder: client(server.url, keyholder),
    outsider: client(server.url, outsider),
    admin: client(server.url, admin),
  }
})
afterAll(async () => t?.close())

describe('secrets never leak', () => {
  it('drives every endpoint with and without the right to read secrets', async () => {
    const { owner, admin } = actors
    expect(
      (
        await record(
          'owner',
          'save credential',
          owner.post('/api/resource', {
            id: 'credentials/site_a',
            title: 'Site A account',
            body: 'login: see secure_body',
            secure_body: SECRETS.orgCredential,
            content_type: 'credential',
            scopes: ['org:acme'],
          }),
        )
      ).status,
    ).toBe(201)
    expect(
      (
        await record(
          'owner',
          'save cookie',
          owner.post('/api/resource', {
            id: 'cookies/site_a',
            title: 'Site A cookie',
            secure_body: SECRETS.userCookie,
            content_type: 'cookie',
            metadata: { expires_at: '2099-01-01T00:00:00Z' },
          }),
        )
      ).status,
    ).toBe(201)
    // A secret in a resource whose only scope is public is refused (nobody could read it) …
    expect(
      (
        await record(
          'admin',
          'save public-only secret',
          admin.post('/api/resource', { id: 'shared/public_key', title: 'public with secret', secure_body: SECRETS.publicSecret, scopes: ['public'] }),
        )
      ).status,
    ).toBe(400)
    // … and next to the admin's own org, public grants it to nobody else (everyone sees the resource).
    expect(
      (
        await record(
          'admin',
          'save public secret',
          admin.post('/api/resource', {
            id: 'shared/public_key',
            title: 'public with secret',
            secure_body: SECRETS.publicSecret,
            scopes: ['public', 'org:ops'],
          }),
        )
      ).status,
    ).toBe(201)
    const entry = await record(
      'owner',
      'save entry',
      owner.post('/api/knowledge', {
        task: 'Log in to site A',
        content: 'Use the shared account; the cookie lasts a day.',
        types: ['tool'],
        scopes: ['org:acme'],
        resource_ids: ['credentials/site_a', 'cookies/site_a', 'shared/public_key'],
      }),
    )
    expect(entry.status).toBe(201)
    const id = entry.body.id as string

    // Error paths that carry a secret in the request.
    expect(
      (await record('owner', 'save with a bad field', owner.post('/api/resource', { id: 'bad/one', title: 42, secure_body: SECRETS.badSave }))).status,
    ).toBe(400)
    expect(
      (await record('owner', 'malformed JSON', owner.post('/api/resource', `{"id":"m/one","title":"t","secure_body":"${SECRETS.malformed}"`))).status,
    ).toBe(400)
    expect(
      (await record('owner', 'oversized', owner.post('/api/resource', { id: 'big/one', title: 't', secure_body: `${SECRETS.oversized}${'x'.repeat(70_000)}` })))
        .status,
    ).toBe(413)
    // The same id saved by another org: a resource of its own (ids are namespaced by owner).
    expect(
      (
        await record(
          'outsider',
          'same id, own namespace',
          actors.outsider.post('/api/resource', { id: 'credentials/site_a', title: 'again', secure_body: SECRETS.duplicate, scopes: ['org:other'] }),
        )
      ).status,
    ).toBe(201)
    expect(
      (await record('teammate', 'update by non-owner', actors.teammate.put('/api/resource/credentials/site_a', { secure_body: SECRETS.rejectedUpdate })))
        .status,
    ).toBe(403)
    expect(
      (
        await record(
          'outsider',
          'save in a foreign scope',
          actors.outsider.post('/api/resource', { id: 'x/y', title: 't', secure_body: SECRETS.forbiddenSave, scopes: ['org:acme'] }),
        )
      ).status,
    ).toBe(403)
    expect((await record('owner', 'rotate the secret', owner.put('/api/resource/cookies/site_a', { secure_body: SECRETS.rotated }))).status).toBe(200)

    for (const [who, api] of Object.entries(actors)) {
      await record(who, 'search', api.get('/api/knowledge/search?q=site%20A%20login&min_score=1'))
      await record(who, 'search expand', api.get('/api/knowledge/search?q=site%20A%20login&min_score=1&expand=resources'))
      await record(who, 'list expand', api.get('/api/knowledge?limit=100&expand=resources'))
      await record(who, 'get expand', api.get(`/api/knowledge/${id}?expand=resources`))
      await record(who, 'versions', api.get(`/api/knowledge/${id}/versions`))
      await record(who, 'feedback', api.put(`/api/knowledge/${id}`, { add_helpful_case: { task: 'login', outcome: 'ok' } }))
      await record(who, 'batch', api.post('/api/knowledge/batch_update', { feedback_list: [{ knowledge_id: id, is_helpful: true }] }))
      await record(who, 'slim dry run', api.post('/api/knowledge/slim', { dry_run: true }))
      await record(who, 'resource list', api.get('/api/resource?limit=100'))
      await record(who, 'resource list expired', api.get('/api/resource?expired=false&content_type=credential,cookie'))
      await record(who, 'openapi', api.get('/api/openapi.json'))
      for (const rid of ['credentials/site_a', 'cookies/site_a', 'shared/public_key']) {
        await record(who, `get ${rid} without include_secret`, api.get(`/api/resource/${rid}?include_secret=false`))
        const allowed =
          rid === 'credentials/site_a' && (who === 'owner' || who === 'keyholder')
            ? SECRETS.orgCredential
            : rid === 'credentials/site_a' && who === 'outsider'
              ? SECRETS.duplicate
              : rid === 'cookies/site_a' && who === 'owner'
                ? SECRETS.rotated
                : rid === 'shared/public_key' && who === 'admin'
                  ? SECRETS.publicSecret
                  : undefined
        const got = await record(who, `get ${rid}`, api.get(`/api/resource/${rid}`), allowed)
        if (allowed) expect(got.body.secure_body, `${who} ${rid}`).toBe(allowed)
        else expect(got.body?.secure_body, `${who} ${rid}`).toBeUndefined()
      }
    }
    expect((await record('owner', 'delete', owner.delete('/api/resource/cookies/site_a'))).status).toBe(200)
  })

  it('no response carries a secret, except the one allowed read', () => {
    expect(seen.length).toBeGreaterThan(80)
    for (const { who, what, response, allowed } of seen) {
      const headers = JSON.stringify([...response.headers.entries()])
      for (const value of allSecrets()) {
        const hex = value.slice(value.indexOf('-') + 1)
        if (value === allowed) continue
        expect(response.text.includes(hex), `${who} ${what} leaks ${value}: ${response.text.slice(0, 300)}`).toBe(false)
        expect(headers.includes(hex), `${who} ${what} header leaks`).toBe(false)
      }
    }
    // The allowed reads happened (the test would prove nothing otherwise).
    expect(seen.filter((s) => s.allowed).length).toBe(5)
  })

  it('no log line carries a secret or a token', () => {
    expect(t.logs.length).toBeGreaterThan(80)
    expect(t.logs.some((line) => line.includes('resource.secret.read'))).toBe(true)
    for (const line of t.logs) {
      for (const value of allSecrets()) expect(line.includes(value.slice(value.indexOf('-') + 1)), `log leaks ${value}: ${line}`).toBe(false)
      for (const token of tokens) expect(line.includes(token.slice(3)), `log leaks a token: ${line}`).toBe(false)
    }
  })
})
