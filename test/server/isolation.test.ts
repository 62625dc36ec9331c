/**
 * The isolation matrix, over real HTTP: randomised principals (users, agents,
 * projects, teams, orgs, permissions) each save entries and resources in random
 * scopes of their own; then every principal hits every endpoint for every entry
 * and resource, and must see exactly what its scopes allow: 404 for what it cannot
 * see, 403 for what it can see but not manage, and never a secret it may not read.
 * Resource ids are namespaced by owner: several writers save the same ids, and
 * every read, write and expansion by id must resolve to the resource the rule picks
 * for that caller (own first, then scope priority, then the oldest), while a save
 * never collides with — or hints at — a resource the caller cannot see.
 * The dashboard is a column of the matrix: each principal, signed in to the dashboard with
 * its token, reads exactly what the API shows it (same entries, lists, searches, resources),
 * and a secret is revealed there exactly when the API would show it.
 * Set KNOWHUB_TEST_SEED to replay a run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memberScopes, scopePriority, visibleScopes, type Principal } from '../../src/core/principal.js'
import { createDashboard } from '../../src/server/dashboard/index.js'
import { dashboardAssets } from '../dashboard/helpers.js'
import { client, errorOf, openTestHub, type Client, type TestHub } from './helpers.js'
import { seededRandom } from '../../src/core/random.js'

const SEED = Number(process.env.KNOWHUB_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))

const random = seededRandom(SEED)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
const chance = (p: number) => random() < p
function sample<T>(items: readonly T[], n: number): T[] {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j]!, copy[i]!]
  }
  return copy.slice(0, n)
}

interface Actor {
  name: string
  principal: Principal
  api: Client
  /** The same principal signed in to the dashboard (cookie session, CSRF header on writes). */
  ui: { get: Client['get']; post: Client['post'] }
}
interface Entry {
  id: string
  scopes: string[]
  owner: string
  marker: string
  resource_ids: string[]
  /** Issue 15.8: the owner each id was pinned to at save time (the writer's resolution, else the entry owner). */
  pins: string[]
}
interface Res {
  id: string
  scopes: string[]
  owner: string
  secret: string
  created_at: string
}

/** Ids that several writers each save in their own namespace. */
const SHARED_IDS = ['credentials/website_a', 'cookies/website_a', 'code/selenium/undetected_login']
const WRITERS = 10
const ENTRIES_PER_WRITER = 3
const RESOURCES_PER_WRITER = 2

let t: TestHub
let actors: Actor[] = []
const entries: Entry[] = []
const resources: Res[] = []

const sees = (actor: Actor, scopes: readonly string[]) => scopes.some((s) => visibleScopes(actor.principal).includes(s))
const manages = (actor: Actor, owner: string) => memberScopes(actor.principal).includes(owner)
/** A resource is visible in its scopes and to its owner. */
const seesResource = (actor: Actor, r: Res) => sees(actor, r.scopes) || manages(actor, r.owner)
/** Owner kinds in the order a save without `owner` picks one. */
const OWNER_KIND_ORDER = ['user', 'agent', 'project', 'team', 'org']
/**
 * The resource an id means for this caller: its own first (by owner kind, user first), then
 * scope priority, then the oldest, then by owner.
 */
function resolve(actor: Actor, id: string): Res | undefined {
  const visible = visibleScopes(actor.principal)
  const rank = (r: Res) =>
    [manages(actor, r.owner) ? OWNER_KIND_ORDER.indexOf(r.owner.split(':')[0]!) : OWNER_KIND_ORDER.length, scopePriority(r.scopes, visible)] as const
  return resources
    .filter((r) => r.id === id && seesResource(actor, r))
    .sort(
      (a, b) =>
        rank(a)[0] - rank(b)[0] || rank(a)[1] - rank(b)[1] || a.created_at.localeCompare(b.created_at) || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0),
    )[0]
}
const resourceIds = () => [...new Set(resources.map((r) => r.id))]
const readsSecret = (actor: Actor, scopes: readonly string[]) =>
  (actor.principal.permissions.includes('secrets:read') || actor.principal.permissions.includes('admin')) &&
  scopes.some((s) => s !== 'public' && memberScopes(actor.principal).includes(s))
const why = (actor: Actor, what: string) => `seed ${SEED}: ${actor.name} ${JSON.stringify(actor.principal)} ${what}`

/** A dashboard session for a token: its cookie on every request, its CSRF token on writes. */
async function signIn(url: string, token: string): Promise<Actor['ui']> {
  const anonymous = client(url)
  const session = await anonymous.post('/session', { token })
  expect(session.status).toBe(200)
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!
  const me = await anonymous.get('/ui/me', { cookie })
  return {
    get: (path, headers = {}) => anonymous.get(path, { ...headers, cookie }),
    post: (path, body) => anonymous.post(path, body, { cookie, 'x-csrf-token': me.body.csrf }),
  }
}

async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn))
}

beforeAll(async () => {
  t = await openTestHub()
  const orgs = ['o0', 'o1', 'o2']
  const projects = ['p0', 'p1', 'p2', 'p3']
  const teams = ['t0', 't1']
  const agents = ['a0', 'a1', 'a2']
  const specs: Array<{ name: string; fields: Record<string, unknown> }> = []
  for (let i = 0; i < WRITERS; i++) {
    specs.push({
      name: `writer${i}`,
      fields: {
        user: `u${i}`,
        ...(chance(0.7) ? { org: pick(orgs) } : {}),
        ...(chance(0.6) ? { project: pick(projects) } : {}),
        ...(chance(0.4) ? { team: pick(teams) } : {}),
        ...(chance(0.3) ? { agent: pick(agents) } : {}),
        permissions: chance(0.5) ? ['read', 'write', 'secrets:read'] : ['read', 'write'],
      },
    })
  }
  specs.push({ name: 'reader', fields: { user: 'reader', org: pick(orgs), project: pick(projects), permissions: ['read'] } })
  specs.push({
    name: 'stranger',
    fields: { user: 'stranger', org: 'elsewhere', project: 'nowhere', team: 'outsiders', agent: 'lone', permissions: ['read', 'write', 'secrets:read'] },
  })
  specs.push({ name: 'agent-only', fields: { agent: pick(agents), permissions: ['read', 'write', 'secrets:read'] } })
  const assetsDir = await dashboardAssets()
  const server = await t.start({ dashboard: (api) => createDashboard({ hub: t.hub, apiAuthenticate: api.authenticate, assetsDir }) })
  actors = []
  for (const spec of specs) {
    const created = await t.hub.tokens.create({ ...spec.fields, name: spec.name })
    actors.push({ name: spec.name, principal: created.principal, api: client(server.url, created.token), ui: await signIn(server.url, created.token) })
  }
  const writers = actors.filter((a) => a.name.startsWith('writer'))
  const scopesOf = (actor: Actor) => sample(memberScopes(actor.principal), 1 + Math.floor(random() * 2))

  for (const writer of writers) {
    for (let j = 0; j < RESOURCES_PER_WRITER; j++) {
      const id = `iso/${writer.name}/r${j}`
      const secret = `SECRET-${writer.name}-${j}-${Math.floor(random() * 1e12).toString(36)}`
      const scopes = scopesOf(writer)
      const r = await writer.api.post('/api/resource', {
        id,
        title: `resource ${j} of ${writer.name}`,
        body: 'public part',
        secure_body: secret,
        content_type: 'credential',
        scopes,
      })
      expect(r.status, why(writer, `saving ${id}`)).toBe(201)
      resources.push({ id, scopes, owner: r.body.owner, secret, created_at: r.body.created_at })
    }
  }
  // The same ids in many namespaces, in random scopes (each writer saves a random subset).
  for (const writer of writers) {
    for (const id of SHARED_IDS) {
      if (!chance(0.6)) continue
      const secret = `SECRET-${writer.name}-${id}-${Math.floor(random() * 1e12).toString(36)}`
      const scopes = scopesOf(writer)
      const r = await writer.api.post('/api/resource', {
        id,
        title: `${id} of ${writer.name}`,
        body: 'public part',
        secure_body: secret,
        content_type: 'credential',
        scopes,
      })
      expect(r.status, why(writer, `saving shared ${id} (never a conflict)`)).toBe(201)
      expect(r.body.owner).toBe(`user:${writer.principal.user}`)
      resources.push({ id, scopes, owner: r.body.owner, secret, created_at: r.body.created_at })
    }
  }
  for (const writer of writers) {
    for (let j = 0; j < ENTRIES_PER_WRITER; j++) {
      const marker = `zq${writer.name}x${j}marker`
      const scopes = scopesOf(writer)
      const resource_ids = sample(resourceIds(), 3)
      const r = await writer.api.post('/api/knowledge', {
        task: `isolation check ${marker}`,
        content: `isolation content ${marker}`,
        types: ['strategy'],
        scopes,
        resource_ids,
      })
      expect(r.status, why(writer, 'saving an entry')).toBe(201)
      const pins = resource_ids.map((id) => resolve(writer, id)?.owner ?? r.body.owner)
      entries.push({ id: r.body.id, scopes, owner: r.body.owner, marker, resource_ids, pins })
    }
  }
})
afterAll(async () => t?.close())

describe(`isolation matrix (seed ${SEED})`, () => {
  it('GET /api/knowledge/{id}: 200 exactly when a scope is visible, else 404', async () => {
    await inBatches(actors, 4, async (actor) => {
      for (const entry of entries) {
        const r = await actor.api.get(`/api/knowledge/${entry.id}`)
        expect(r.status, why(actor, `GET ${entry.id} in ${entry.scopes}`)).toBe(sees(actor, entry.scopes) ? 200 : 404)
        if (r.status === 404) expect(errorOf(r).code).toBe('not_found')
        const versions = await actor.api.get(`/api/knowledge/${entry.id}/versions`)
        expect(versions.status, why(actor, `versions of ${entry.id}`)).toBe(sees(actor, entry.scopes) ? 200 : 404)
      }
    })
  })

  it('GET /api/knowledge (list) shows exactly the visible entries, whatever the scopes filter', async () => {
    await inBatches(actors, 4, async (actor) => {
      const r = await actor.api.get('/api/knowledge?limit=1000')
      expect(r.status).toBe(200)
      const expected = entries
        .filter((e) => sees(actor, e.scopes))
        .map((e) => e.id)
        .sort()
      expect(r.body.items.map((e: { id: string }) => e.id).sort(), why(actor, 'list')).toEqual(expected)
      // Asking for someone else's scopes narrows, never widens.
      const foreign = [...new Set(entries.flatMap((e) => e.scopes))].join(',')
      const filtered = await actor.api.get(`/api/knowledge?limit=1000&scopes=${foreign}`)
      expect(filtered.body.items.map((e: { id: string }) => e.id).sort(), why(actor, 'list with foreign scopes')).toEqual(expected)
    })
  })

  it('GET /api/knowledge/search returns only visible entries', async () => {
    await inBatches(actors, 4, async (actor) => {
      const broad = await actor.api.get('/api/knowledge/search?q=isolation&top_k=100&min_score=1')
      expect(broad.status).toBe(200)
      const visible = new Set(entries.filter((e) => sees(actor, e.scopes)).map((e) => e.id))
      for (const result of broad.body.results) expect(visible.has(result.id), why(actor, `search found ${result.id}`)).toBe(true)
      expect(broad.body.count, why(actor, 'broad search count')).toBe(visible.size)
      for (const entry of sample(entries, 6)) {
        // top_k 100: presence is what matters here, not rank (ties go by scope priority first)
        const r = await actor.api.get(`/api/knowledge/search?q=${entry.marker}&top_k=100&min_score=1&types=strategy`)
        const ids = r.body.results.map((x: { id: string }) => x.id)
        expect(ids.includes(entry.id), why(actor, `search ${entry.marker}`)).toBe(sees(actor, entry.scopes))
        for (const id of ids) expect(visible.has(id), why(actor, `search ${entry.marker} → ${id}`)).toBe(true)
      }
    })
  })

  it('expand=resources shows the resource the writer meant, never one the caller cannot see itself, nor any secret', async () => {
    await inBatches(actors, 4, async (actor) => {
      for (const entry of entries.filter((e) => sees(actor, e.scopes))) {
        const r = await actor.api.get(`/api/knowledge/${entry.id}?expand=resources`)
        const expected = entry.resource_ids.flatMap((id, i) => {
          const chosen = resources.find((res) => res.id === id && res.owner === entry.pins[i])
          return chosen && seesResource(actor, chosen) ? [`${chosen.id} ${chosen.owner}`] : []
        })
        expect(
          r.body.resources.map((x: { id: string; owner: string }) => `${x.id} ${x.owner}`),
          why(actor, `expand ${entry.id}`),
        ).toEqual(expected)
        for (const resource of resources) expect(r.text.includes(resource.secret), why(actor, `expand leaks ${resource.id}`)).toBe(false)
      }
    })
  })

  it('GET /api/resource/{id}: the resource the id resolves to for the caller, else 404; secure_body only with secrets:read in its own scope', async () => {
    await inBatches(actors, 4, async (actor) => {
      for (const id of resourceIds()) {
        const chosen = resolve(actor, id)
        const r = await actor.api.get(`/api/resource/${id}`)
        expect(r.status, why(actor, `GET resource ${id}`)).toBe(chosen ? 200 : 404)
        if (!chosen) {
          expect(errorOf(r).code).toBe('not_found')
          for (const other of resources) expect(r.text.includes(other.secret)).toBe(false)
          continue
        }
        expect(r.body.owner, why(actor, `${id} resolves to ${chosen.owner}`)).toBe(chosen.owner)
        const allowed = readsSecret(actor, chosen.scopes)
        expect(r.body.secure_body, why(actor, `secret of ${id} of ${chosen.owner}`)).toBe(allowed ? chosen.secret : undefined)
        for (const other of resources) if (other !== chosen) expect(r.text.includes(other.secret)).toBe(false)
        if (!allowed) expect(r.text.includes(chosen.secret)).toBe(false)
      }
      // ?owner= picks one namespace: found exactly when that one is visible.
      for (const resource of sample(resources, 8)) {
        const r = await actor.api.get(`/api/resource/${resource.id}?owner=${resource.owner}&include_secret=false`)
        expect(r.status, why(actor, `GET ${resource.id} of ${resource.owner}`)).toBe(seesResource(actor, resource) ? 200 : 404)
      }
    })
  })

  it('GET /api/resource (list) shows exactly the visible resources, one per owner and id, and no secrets', async () => {
    await inBatches(actors, 4, async (actor) => {
      const r = await actor.api.get('/api/resource?limit=1000')
      const expected = resources
        .filter((x) => seesResource(actor, x))
        .map((x) => `${x.id} ${x.owner}`)
        .sort()
      expect(r.body.items.map((x: { id: string; owner: string }) => `${x.id} ${x.owner}`).sort(), why(actor, 'resource list')).toEqual(expected)
      expect(Object.keys(r.body).sort()).toEqual(['count', 'items', 'next_cursor'])
      for (const resource of resources) expect(r.text.includes(resource.secret)).toBe(false)
    })
  })

  it('dashboard column: each principal reads in the dashboard exactly what the API shows it, and sees a secret there only where the API would', async () => {
    const same = async (actor: Actor, uiPath: string, apiPath: string) => {
      const [ui, api] = [await actor.ui.get(uiPath), await actor.api.get(apiPath)]
      expect(ui.status, why(actor, `dashboard ${uiPath} vs API ${apiPath}`)).toBe(api.status)
      expect(ui.body, why(actor, `dashboard ${uiPath} vs API ${apiPath}`)).toEqual(api.body)
    }
    await inBatches(actors, 4, async (actor) => {
      for (const entry of sample(entries, 6)) {
        await same(actor, `/ui/knowledge/${entry.id}`, `/api/knowledge/${entry.id}`)
        await same(actor, `/ui/knowledge/${entry.id}/versions`, `/api/knowledge/${entry.id}/versions`)
      }
      await same(actor, '/ui/knowledge?limit=1000', '/api/knowledge?limit=1000')
      await same(
        actor,
        '/ui/knowledge/search?q=isolation&top_k=100&min_score=1&explain=true',
        '/api/knowledge/search?q=isolation&top_k=100&min_score=1&explain=true',
      )
      for (const entry of sample(entries, 4))
        await same(actor, `/ui/knowledge/search?q=${entry.marker}&top_k=100&min_score=1`, `/api/knowledge/search?q=${entry.marker}&top_k=100&min_score=1`)
      await same(actor, '/ui/resources?limit=1000', '/api/resource?limit=1000')

      const overview = await actor.ui.get('/ui/overview')
      expect(overview.body.total, why(actor, 'overview total')).toBe(entries.filter((e) => sees(actor, e.scopes)).length)
      for (const resource of resources) expect(overview.text.includes(resource.secret)).toBe(false)

      // A random dozen per principal (seeded): 3 requests each, over 13 principals.
      for (const resource of sample(resources, 12)) {
        const target = `id=${encodeURIComponent(resource.id)}&owner=${resource.owner}`
        const item = await actor.ui.get(`/ui/resources/item?${target}`)
        const api = await actor.api.get(`/api/resource/${resource.id}?owner=${resource.owner}&include_secret=false`)
        expect(item.status, why(actor, `dashboard resource ${resource.id} of ${resource.owner}`)).toBe(api.status)
        if (item.status === 200) {
          const { reveals: _reveals, ...shown } = item.body
          expect(shown, why(actor, `dashboard resource ${resource.id}`)).toEqual(api.body)
        }
        for (const other of resources) expect(item.text.includes(other.secret), why(actor, `dashboard resource ${resource.id} leaks`)).toBe(false)
        const reveal = await actor.ui.post('/ui/resources/reveal', { id: resource.id, owner: resource.owner })
        const expected = !seesResource(actor, resource) ? 404 : readsSecret(actor, resource.scopes) ? 200 : 403
        expect(reveal.status, why(actor, `reveal ${resource.id} of ${resource.owner} in ${resource.scopes}`)).toBe(expected)
        if (expected === 200) expect(reveal.body.secure_body).toBe(resource.secret)
        for (const other of resources) if (expected !== 200 || other !== resource) expect(reveal.text.includes(other.secret)).toBe(false)
      }
    })
  }, 120_000)

  it('writes: feedback needs write and visibility; edit, archive and delete need ownership (403 seen, 404 unseen)', async () => {
    const pairs = actors.flatMap((actor) => sample(entries, 8).map((entry) => ({ actor, entry })))
    await inBatches(pairs, 6, async ({ actor, entry }) => {
      const visible = sees(actor, entry.scopes)
      const canWrite = actor.principal.permissions.includes('write')
      const feedback = await actor.api.put(`/api/knowledge/${entry.id}`, { add_helpful_case: { task: 'matrix', outcome: 'ok' } })
      // Issue 15.2: feedback needs `write` (a reader is refused before any lookup).
      expect(feedback.status, why(actor, `feedback on ${entry.id}`)).toBe(canWrite ? (visible ? 200 : 404) : 403)
      const manage = visible ? (canWrite && manages(actor, entry.owner) ? 200 : 403) : canWrite ? 404 : 403
      const edit = await actor.api.patch(`/api/knowledge/${entry.id}`, { tags: { checked_by: actor.name } })
      expect(edit.status, why(actor, `edit ${entry.id} owned by ${entry.owner}`)).toBe(manage)
      if (manage !== 200) {
        // Non-owners may not archive or delete; only check the refusal (keep the entry).
        expect((await actor.api.post(`/api/knowledge/${entry.id}/archive`)).status, why(actor, `archive ${entry.id}`)).toBe(manage)
        expect((await actor.api.delete(`/api/knowledge/${entry.id}`)).status, why(actor, `delete ${entry.id}`)).toBe(manage)
        expect((await actor.api.patch(`/api/knowledge/${entry.id}`, { scopes: memberScopes(actor.principal).slice(0, 1) })).status).toBe(manage)
      }
    })
    // Every entry is still there, with its scopes.
    for (const entry of entries) {
      const owner = actors.find((a) => manages(a, entry.owner))!
      const r = await owner.api.get(`/api/knowledge/${entry.id}`)
      expect(r.body.scopes).toEqual(entry.scopes)
      expect(r.body.status).toBe('active')
    }
  })

  it('batch_update: visible entries updated, the others not_found, one by one', async () => {
    await inBatches(actors, 4, async (actor) => {
      const chosen = sample(entries, 6)
      const r = await actor.api.post('/api/knowledge/batch_update', {
        feedback_list: chosen.map((e) => ({ knowledge_id: e.id, is_helpful: false, case: { task: 'matrix' } })),
      })
      // Issue 15.2: feedback needs `write`.
      if (!actor.principal.permissions.includes('write') && !actor.principal.permissions.includes('admin')) {
        expect(r.status, why(actor, 'batch_update without write')).toBe(403)
        return
      }
      expect(r.status).toBe(200)
      r.body.results.forEach((result: { ok: boolean; error?: { code: string } }, i: number) => {
        const visible = sees(actor, chosen[i]!.scopes)
        expect(result.ok, why(actor, `batch on ${chosen[i]!.id}`)).toBe(visible)
        if (!visible) expect(result.error?.code).toBe('not_found')
      })
    })
  })

  it('resources: update and delete act on the resource the id resolves to, and need its ownership', async () => {
    const pairs = actors.flatMap((actor) => sample(resourceIds(), 6).map((id) => ({ actor, id })))
    await inBatches(pairs, 6, async ({ actor, id }) => {
      const chosen = resolve(actor, id)
      const canWrite = actor.principal.permissions.includes('write')
      const expected = chosen ? (canWrite && manages(actor, chosen.owner) ? 200 : 403) : canWrite ? 404 : 403
      if (expected === 200) return
      const update = await actor.api.put(`/api/resource/${id}`, { secure_body: 'stolen' })
      expect(update.status, why(actor, `update ${id}`)).toBe(expected)
      const del = await actor.api.delete(`/api/resource/${id}`)
      expect(del.status, why(actor, `delete ${id}`)).toBe(expected)
    })
    for (const actor of actors) {
      const foreign = ['org:elsewhere', 'user:u0', 'project:p0', 'team:t0', 'org:o0', 'public'].filter((s) => !memberScopes(actor.principal).includes(s))
      const scope = pick(foreign)
      const k = await actor.api.post('/api/knowledge', { task: 'intrusion', content: 'x', types: ['plan'], scopes: [scope] })
      expect(k.status, why(actor, `save knowledge in ${scope}`)).toBe(403)
      expect(errorOf(k).code).toBe('forbidden')
      const r = await actor.api.post('/api/resource', { id: `intrusion/${actor.name}`, title: 'x', scopes: [scope] })
      expect(r.status, why(actor, `save resource in ${scope}`)).toBe(403)
      const owner = await actor.api.post('/api/knowledge', { task: 'impersonation', content: 'x', types: ['plan'], owner: 'user:u0' })
      if (actor.principal.user !== 'u0') expect(owner.status, why(actor, 'save as user:u0')).toBe(403)
      const asOther = await actor.api.post('/api/resource', { id: `intrusion/as-u0/${actor.name}`, title: 'x', owner: 'user:u0' })
      if (actor.principal.user !== 'u0') expect(asOther.status, why(actor, 'save a resource as user:u0')).toBe(403)
    }
    // The secrets were never replaced.
    for (const resource of resources) {
      const owner = actors.find((a) => manages(a, resource.owner))!
      const r = await owner.api.get(`/api/resource/${resource.id}?owner=${resource.owner}`)
      expect(r.status).toBe(200)
      if (readsSecret(owner, resource.scopes)) expect(r.body.secure_body).toBe(resource.secret)
    }
  })

  it('POST /api/resource never reveals a resource the caller cannot see: 201 in its own namespace, then 200 (its own, updated)', async () => {
    const writers = actors.filter((a) => a.principal.permissions.includes('write'))
    await inBatches(writers, 4, async (actor) => {
      for (const id of SHARED_IDS) {
        const mine = resources.find((r) => r.id === id && manages(actor, r.owner))
        const first = await actor.api.post('/api/resource', { id, title: `${actor.name} saves ${id}`, body: 'mine' })
        // Whatever others hold under this id — visible or not — only the caller's own namespace counts.
        expect(first.status, why(actor, `first POST ${id}`)).toBe(mine ? 200 : 201)
        const again = await actor.api.post('/api/resource', { id, title: `${actor.name} saves ${id} again` })
        expect(again.status, why(actor, `second POST ${id}`)).toBe(200)
        expect(again.body.owner).toBe(first.body.owner)
        expect(again.body.body).toBe('mine')
        expect(memberScopes(actor.principal)).toContain(again.body.owner)
        const got = await actor.api.get(`/api/resource/${id}?include_secret=false`)
        expect(got.body.owner, why(actor, `${id} resolves to its own now`)).toBe(first.body.owner)
        expect(got.body.title).toBe(`${actor.name} saves ${id} again`)
      }
    })
    // Nobody else's resource changed.
    for (const resource of resources) {
      const owner = actors.find((a) => manages(a, resource.owner))!
      const r = await owner.api.get(`/api/resource/${resource.id}?owner=${resource.owner}`)
      if (owner.principal.permissions.includes('write') && SHARED_IDS.includes(resource.id)) continue // its own was re-saved above
      expect(r.body.title, why(owner, `${resource.id} of ${resource.owner} untouched`)).not.toMatch(/ saves /)
    }
  })
})
