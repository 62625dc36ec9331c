/**
 * The world of the tenancy suite (issue 27): one hub per backend, two orgs (acme, other), each
 * with an admin, a writer, a read-only token and a secrets reader, plus a hub operator (a
 * `hub:admin` token, minted in process as `knowhub token create --hub-admin` does). Data is
 * seeded once: per org a shared entry and resource (org scope, with a secret), a private entry and
 * resource (the writer's user scope), a goal tree, and a knowledge pack readable by the org only.
 *
 * `Probe` runs one request as one actor, asserts the expected status (and code), and scans the
 * response for leaks: any marker, secret, token id or server path the actor may not see that the
 * request itself did not carry. Every attempt and every leak is counted; the suite prints them.
 */
import { createMetrics } from '../../../src/app/metrics.js'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import type { Principal } from '../../../src/core/principal.js'
import { createDashboard } from '../../../src/server/dashboard/index.js'
import type { RunningServer } from '../../../src/server/serve.js'
import { dashboardAssets } from '../../dashboard/helpers.js'
import { client, openTestHub, type ApiResponse, type Client, type TestHub } from '../helpers.js'

export const ORGS = ['acme', 'other'] as const
export type Org = (typeof ORGS)[number]
export type Role = 'operator' | 'admin' | 'writer' | 'reader' | 'secrets'

/** The other org of the two. */
export const otherOrg = (org: Org): Org => (org === 'acme' ? 'other' : 'acme')

export interface Actor {
  name: string
  role: Role
  /** Undefined for the hub operator (it belongs to no org). */
  org: Org | undefined
  principal: Principal
  token: string
  tokenId: string
  api: Client
  /** The same token signed in to the dashboard (session cookie, CSRF header on writes). */
  ui: Client
  mcp: McpClient
}

/** What was seeded for one org. */
export interface OrgData {
  org: Org
  shared: { id: string; marker: string }
  private: { id: string; marker: string }
  sharedResource: { id: string; owner: string; secret: string }
  privateResource: { id: string; owner: string; secret: string }
  goal: { trace: string; marker: string }
  pack: { name: string; marker: string }
  /** Token ids of the org's actors. */
  tokenIds: string[]
}

export interface Attempt {
  surface: 'api' | 'ui' | 'mcp'
  route: string
  actor: string
  cross: boolean
  /** The attempt named ids inside its body (imports, folders, batches: issue 39). */
  data: boolean
  leaked: string[]
}

export interface World {
  t: TestHub
  server: RunningServer
  actors: Actor[]
  data: Record<Org, OrgData>
  /** Every attempt made, for the counts. */
  attempts: Attempt[]
  /** An anonymous HTTP client (no token, no session). */
  anonymous: Client
  actor(role: Role, org?: Org): Actor
}

const ROLE_PERMISSIONS: Record<Exclude<Role, 'operator'>, Principal['permissions']> = {
  admin: ['read', 'write', 'admin'],
  writer: ['read', 'write'],
  reader: ['read'],
  secrets: ['read', 'secrets:read'],
}

/** A dashboard session for a token: its cookie on every request, its CSRF token on writes. */
async function signIn(url: string, token: string): Promise<Client> {
  const anonymous = client(url)
  const session = await anonymous.post('/session', { token })
  expect(session.status).toBe(200)
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!
  const me = await anonymous.get('/ui/me', { cookie })
  const headers = { cookie, 'x-csrf-token': me.body.csrf as string }
  return {
    get: (path, extra = {}) => anonymous.get(path, { ...extra, cookie }),
    post: (path, body, extra = {}) => anonymous.post(path, body, { ...headers, ...extra }),
    put: (path, body, extra = {}) => anonymous.put(path, body, { ...headers, ...extra }),
    patch: (path, body, extra = {}) => anonymous.patch(path, body, { ...headers, ...extra }),
    delete: (path, extra = {}) => anonymous.delete(path, { ...headers, ...extra }),
  }
}

async function connectMcp(url: string, token: string): Promise<McpClient> {
  const mcp = new McpClient({ name: 'knowhub-tenancy', version: '1.0.0' })
  await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return mcp
}

const random = () => Math.random().toString(36).slice(2, 10)

function packFile(name: string, description: string, body: string): string {
  return `---\nname: ${name}\ndescription: ${description}\ntype: domain-reference\nstatus: ready\nprofile: wiki-first\n---\n\n${body}\n`
}

/** Opens the hub, creates the actors and seeds every org once. */
export async function openWorld(): Promise<World> {
  const packsRoot = mkdtempSync(join(tmpdir(), 'knowhub-tenancy-packs-'))
  const data = {} as Record<Org, OrgData>
  for (const org of ORGS) {
    const marker = `zq${org}packmark`
    const dir = join(packsRoot, org, `${org}-brief`)
    mkdirSync(join(dir, 'documents'), { recursive: true })
    writeFileSync(join(dir, 'KNOWLEDGE.md'), packFile(`${org}-brief`, `The ${org} brief on pricing.`, `# ${org} brief\n\nRead documents/pricing.md.`))
    writeFileSync(join(dir, 'documents', 'pricing.md'), `# Pricing\n\nThe ${org} Team plan costs 42 euros per seat (${marker}).\n`)
  }
  // Packs scoped per org (packs.access): the pack tools and pages come with them.
  const reopened = await openTestHub(
    {
      embedder: { provider: 'hashed' },
      packs: { paths: ORGS.map((org) => join(packsRoot, org)), access: ORGS.map((org) => ({ root: join(packsRoot, org), allow: [`org:${org}`] })) },
    },
    // Metrics on, as `knowhub start` has them: GET /metrics is a route like the others.
    { packs: { project: packsRoot, user: false }, metrics: createMetrics({ defaultMetrics: false }) },
  )
  await reopened.hub.packs.discover()
  // Every token exists before the server starts: it starts in token mode, as a shared hub does
  // (a server started without tokens answers anonymous requests as the local principal for up to 2 s more).
  const specs: Array<{ name: string; role: Role; org: Org | undefined; fields: Record<string, unknown> }> = [
    { name: 'operator', role: 'operator', org: undefined, fields: { user: 'ops', permissions: ['read', 'write', 'secrets:read', 'admin', 'hub:admin'] } },
    ...ORGS.flatMap((org) =>
      (['admin', 'writer', 'reader', 'secrets'] as const).map((role) => ({
        name: `${role}@${org}`,
        role,
        org,
        fields: { user: `${role}-${org}`, org, permissions: ROLE_PERMISSIONS[role] },
      })),
    ),
  ]
  const created = []
  for (const spec of specs) created.push({ spec, token: await reopened.hub.tokens.create({ ...spec.fields, name: spec.name }) })
  const assetsDir = await dashboardAssets()
  const server = await reopened.start({
    mcp: { packService: reopened.hub.packs },
    dashboard: (api) => createDashboard({ hub: reopened.hub, apiAuthenticate: api.authenticate, latency: api.latency, assetsDir, packs: reopened.hub.packs }),
  })
  expect(server.local).toBe(false)
  const actors: Actor[] = []
  for (const { spec, token } of created) {
    actors.push({
      name: spec.name,
      role: spec.role,
      org: spec.org,
      principal: token.principal,
      token: token.token,
      tokenId: token.id,
      api: client(server.url, token.token),
      ui: await signIn(server.url, token.token),
      mcp: await connectMcp(server.url, token.token),
    })
  }
  const find = (role: Role, org?: Org) => actors.find((a) => a.role === role && a.org === org)!
  for (const org of ORGS) {
    const writer = find('writer', org)
    const save = async (scopes: string[], marker: string) => {
      const r = await writer.api.post('/api/knowledge', {
        task: `tenancy ${org} ${marker}`,
        content: `tenancy check of ${org}: ${marker}`,
        types: ['strategy'],
        scopes,
      })
      expect(r.status).toBe(201)
      return { id: r.body.id as string, marker }
    }
    const resource = async (id: string, scopes: string[], secret: string) => {
      const r = await writer.api.post('/api/resource', {
        id,
        title: `${id} of ${org}`,
        body: 'public part',
        secure_body: secret,
        content_type: 'credential',
        scopes,
      })
      expect(r.status).toBe(201)
      return { id, owner: r.body.owner as string, secret }
    }
    const goalMarker = `zq${org}goalmark`
    const goal = await writer.api.post('/api/goals', { action: 'create', trace_id: `tenancy-trace`, description: `reach ${goalMarker}` })
    expect(goal.status).toBe(200)
    data[org] = {
      org,
      shared: await save([`org:${org}`], `zq${org}sharedmark`),
      private: await save([`user:writer-${org}`], `zq${org}privatemark`),
      sharedResource: await resource('tenancy/shared', [`org:${org}`], `SECRET-${org}-shared-${random()}`),
      privateResource: await resource('tenancy/private', [`user:writer-${org}`], `SECRET-${org}-private-${random()}`),
      goal: { trace: 'tenancy-trace', marker: goalMarker },
      pack: { name: `${org}-brief`, marker: `zq${org}packmark` },
      tokenIds: actors.filter((a) => a.org === org).map((a) => a.tokenId),
    }
  }
  const world: World = {
    t: reopened,
    server,
    actors,
    data,
    attempts: [],
    anonymous: client(server.url),
    actor: find,
  }
  const closeOriginal = reopened.close
  reopened.close = async () => {
    for (const actor of actors) await actor.mcp.close().catch(() => {})
    await closeOriginal()
    rmSync(packsRoot, { recursive: true, force: true })
  }
  return world
}

/** What an actor may see of one org's seed: the rules of seed 002 and issue 27, written out. */
export function allowed(actor: Actor, data: OrgData) {
  const member = actor.org === data.org
  const isWriter = member && actor.role === 'writer'
  const readsSecrets = member && (actor.role === 'admin' || actor.role === 'secrets')
  return {
    shared: member,
    private: isWriter,
    sharedResource: member,
    privateResource: isWriter,
    sharedSecret: readsSecrets,
    privateSecret: false,
    goal: isWriter,
    pack: member,
    tokens: member && actor.role === 'admin',
  }
}

/** Strings the actor must never receive (unless its own request carried them). */
export function forbiddenFor(world: World, actor: Actor): Array<{ text: string; secret: boolean }> {
  const out: Array<{ text: string; secret: boolean }> = []
  for (const org of ORGS) {
    const d = world.data[org]
    const may = allowed(actor, d)
    if (!may.shared) out.push({ text: d.shared.marker, secret: false })
    if (!may.private) out.push({ text: d.private.marker, secret: false })
    if (!may.sharedSecret) out.push({ text: d.sharedResource.secret, secret: true })
    if (!may.privateSecret) out.push({ text: d.privateResource.secret, secret: true })
    if (!may.goal) out.push({ text: d.goal.marker, secret: false })
    if (!may.pack) out.push({ text: d.pack.marker, secret: false })
    if (!may.tokens && actor.role !== 'operator') for (const id of d.tokenIds) if (id !== actor.tokenId) out.push({ text: id, secret: false })
  }
  for (const other of world.actors) if (other !== actor) out.push({ text: other.token, secret: true })
  if (actor.role !== 'operator') out.push({ text: world.t.dataDir, secret: false })
  return out
}

export interface Expect {
  status: number | readonly number[]
  code?: string
  /** The attempt reaches into the other org (counted as cross-tenant). */
  cross?: boolean
  /** The attempt carries ids inside its body (counted as data-carrying). */
  data?: boolean
}

/** Runs probes, asserting statuses and scanning every response for leaks. */
export class Probe {
  constructor(
    readonly world: World,
    readonly route: string,
  ) {}

  /** One HTTP request (API or dashboard): `sent` is what the request carried (path + body), so echoes are not leaks. */
  async http(
    actor: Actor | undefined,
    surface: 'api' | 'ui',
    label: string,
    sent: unknown,
    run: () => Promise<ApiResponse>,
    expected: Expect,
  ): Promise<ApiResponse> {
    const response = await run()
    const who = actor?.name ?? 'anonymous'
    const statuses = typeof expected.status === 'number' ? [expected.status] : expected.status
    expect(statuses, `${this.route} ${who}: ${label} answered ${response.status} ${response.text.slice(0, 300)}`).toContain(response.status)
    if (expected.code) expect(response.body?.error?.code, `${this.route} ${who}: ${label}`).toBe(expected.code)
    this.scan(actor, surface, label, JSON.stringify(sent ?? null), response.text, expected.cross === true, expected.data === true)
    return response
  }

  /** One MCP tool call: `isError` expected or not, and the text scanned for leaks. */
  async tool(
    actor: Actor,
    name: string,
    args: Record<string, unknown>,
    expected: { error: boolean; match?: RegExp; cross?: boolean; data?: boolean },
  ): Promise<string> {
    let text: string
    let isError: boolean
    try {
      const result = (await actor.mcp.callTool({ name, arguments: args })) as CallToolResult
      text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
      isError = result.isError === true
    } catch (error) {
      // A protocol error (bad parameters) is an error too.
      text = (error as Error).message
      isError = true
    }
    expect(isError, `${this.route} ${actor.name}: ${name}(${JSON.stringify(args)}) → ${text.slice(0, 300)}`).toBe(expected.error)
    if (expected.match) expect(text, `${this.route} ${actor.name}: ${name}`).toMatch(expected.match)
    this.scan(actor, 'mcp', name, JSON.stringify(args), text, expected.cross === true, expected.data === true)
    return text
  }

  private scan(actor: Actor | undefined, surface: Attempt['surface'], label: string, sent: string, text: string, cross: boolean, data: boolean): void {
    const forbidden = actor ? forbiddenFor(this.world, actor) : this.world.actors.flatMap((a) => forbiddenFor(this.world, a))
    const leaked = forbidden.filter((f) => text.includes(f.text) && !sent.includes(f.text)).map((f) => (f.secret ? `secret:${f.text.slice(0, 12)}` : f.text))
    this.world.attempts.push({ surface, route: this.route, actor: actor?.name ?? 'anonymous', cross, data, leaked })
    expect(leaked, `${this.route} ${actor?.name ?? 'anonymous'}: ${label} leaked`).toEqual([])
  }

  /**
   * Naming something of the other org answers exactly as naming something that does not exist:
   * same status, code and message (the name itself replaced).
   */
  async sameAsUnknown(
    actor: Actor,
    surface: 'api' | 'ui',
    label: string,
    foreign: { name: string; run: () => Promise<ApiResponse>; sent: unknown },
    unknown: { name: string; run: () => Promise<ApiResponse>; sent: unknown },
    expected: Expect,
  ): Promise<void> {
    const a = await this.http(actor, surface, `${label} (another org's ${foreign.name})`, foreign.sent, foreign.run, { ...expected, cross: true })
    const b = await this.http(actor, surface, `${label} (unknown ${unknown.name})`, unknown.sent, unknown.run, expected)
    const normal = (r: ApiResponse, name: string) => ({ status: r.status, body: r.text.replaceAll(name, '<name>').replace(/"request_id":"[^"]*"/, '') })
    expect(normal(a, foreign.name), `${this.route} ${actor.name}: ${label} is an existence oracle`).toEqual(normal(b, unknown.name))
  }
}
