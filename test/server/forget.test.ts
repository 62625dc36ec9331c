/**
 * Forgetting a user (issue 31): `DELETE /api/principals/user:ID` erases, in one transaction,
 * everything about the user — entries it owns or only it sees (with versions), its feedback
 * cases and votes on other entries (counters lowered to match), its resources and secrets,
 * tokens, dashboard sessions, goal trees, agent documents, its rows in the audit of secret reads
 * — and keeps an audit row with counts. Done means gone: a marker only that user wrote is then
 * absent from every API response, the export, a new backup, the dashboard, and the database
 * files (the PGlite data folder; the PostgreSQL server's table files, found with
 * pg_relation_filepath). A control step shows each of those finds the marker before the forget.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { CreatedToken } from '../../src/core/tokens.js'
import type { RunningServer } from '../../src/server/serve.js'
import { sql } from '../../src/store/sql.js'
import { FORGET_TABLES, cleanupFiles } from '../../src/store/users/erasure.js'
import { createDashboard } from '../../src/server/dashboard/index.js'
import { dashboardAssets } from '../dashboard/helpers.js'
import { heldWarning } from '../../src/cli/commands/forget.js'
import { runCli } from '../helpers/cli.js'
import { HUB_BACKEND, client, errorOf, openTestHub, type Client, type TestHub } from './helpers.js'

let t: TestHub
let server: RunningServer
const tokens: Record<string, CreatedToken> = {}
const api: Record<string, Client> = {}
/** Only bob writes it; the `0` keeps stemmers from changing the word in the full-text index. */
const MARKER = `zqb0bm4rk${Math.random().toString(36).slice(2, 8)}`

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
  const people: Record<string, Record<string, unknown>> = {
    operator: { user: 'ops', permissions: ['read', 'write', 'secrets:read', 'admin', 'hub:admin'] },
    bob: { user: 'bob', org: 'acme', permissions: ['read', 'write', 'secrets:read'] },
    carol: { user: 'carol', org: 'acme', permissions: ['read', 'write'] },
    acmeAdmin: { user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] },
    otherAdmin: { user: 'olga', org: 'other', permissions: ['read', 'write', 'admin'] },
    dave: { user: 'dave', org: 'other', permissions: ['read', 'write'] },
  }
  for (const [name, fields] of Object.entries(people)) tokens[name] = await t.hub.tokens.create({ ...fields, name })
  const assetsDir = await dashboardAssets()
  server = await t.start({ dashboard: (deps) => createDashboard({ hub: t.hub, apiAuthenticate: deps.authenticate, latency: deps.latency, assetsDir }) })
  for (const name of Object.keys(people)) api[name] = client(server.url, tokens[name]!.token)
}, 180_000)

afterAll(async () => {
  await t?.close()
})

/** A dashboard session (cookie) for a token. */
async function signIn(token: string): Promise<Client & { cookie: string }> {
  const anonymous = client(server.url)
  const session = await anonymous.post('/session', { token })
  expect(session.status).toBe(200)
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!
  return { ...client(server.url), cookie, get: (path, extra = {}) => anonymous.get(path, { ...extra, cookie }) }
}

/** Every file under a folder whose bytes contain `needle`. */
function filesContaining(root: string, needle: string): string[] {
  const bytes = Buffer.from(needle)
  const found: string[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const stat = statSync(path)
      if (stat.isDirectory()) walk(path)
      else if (stat.isFile() && readFileSync(path).includes(bytes)) found.push(path)
    }
  }
  walk(root)
  return found
}

/** A superuser connection to the hub's PostgreSQL database. */
async function superuser<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(inject('pgUrl'))
  url.pathname = new URL(t.hub.config.databaseUrl!).pathname
  const c = new pg.Client({ connectionString: url.toString() })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

/**
 * The database files that hold `needle`: on PGlite, anywhere in the data folder (WAL included);
 * on PostgreSQL, in the files of the tables a forget touches, their indexes and TOAST tables
 * (pg_relation_filepath), after a CHECKPOINT wrote every page.
 */
async function databaseFilesWith(needle: string): Promise<string[]> {
  if (!t.hub.config.databaseUrl) {
    await t.hub.store.db.query(sql`CHECKPOINT`)
    const folder = join(t.dataDir, 'db')
    // grep -r as a second reader of the same bytes (exit 1: no match).
    let grep = ''
    try {
      grep = execFileSync('grep', ['-rl', needle, folder]).toString()
    } catch (error) {
      if ((error as { status?: number }).status !== 1) throw error
    }
    const walked = filesContaining(folder, needle)
    expect(grep.split('\n').filter(Boolean).sort()).toEqual([...walked].sort())
    return walked
  }
  return superuser(async (c) => {
    await c.query('CHECKPOINT')
    const dataDir = (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory
    const { rows } = await c.query<{ path: string | null }>(
      `WITH t AS (SELECT oid, reltoastrelid FROM pg_class WHERE relname = ANY($1) AND relnamespace = 'public'::regnamespace)
       SELECT pg_relation_filepath(x) AS path FROM (
         SELECT oid AS x FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0
         UNION SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM t UNION SELECT reltoastrelid FROM t)) r`,
      [[...FORGET_TABLES]],
    )
    const found: string[] = []
    for (const { path } of rows) {
      if (!path) continue
      // Every fork and segment of the relation: base/DB/NODE, NODE.1, NODE_fsm, NODE_vm…
      const dir = join(dataDir, path, '..')
      const node = path.split('/').pop()!
      for (const name of readdirSync(dir).filter((n) => n === node || n.startsWith(`${node}.`) || n.startsWith(`${node}_`))) {
        if (readFileSync(join(dir, name)).includes(Buffer.from(needle))) found.push(join(path, '..', name))
      }
    }
    expect(rows.length).toBeGreaterThan(FORGET_TABLES.length)
    return found
  })
}

/** The gunzipped data-folder tarball of a backup file (PGlite). */
function backupBytes(file: Buffer): Buffer {
  const second = file.indexOf(0x0a, file.indexOf(0x0a) + 1)
  return gunzipSync(file.subarray(second + 1))
}

async function newBackup(): Promise<Buffer | undefined> {
  if (t.hub.config.databaseUrl) return undefined
  const r = await fetch(`${server.url}/api/admin/backup`, { method: 'POST', headers: { authorization: `Bearer ${tokens.operator!.token}` } })
  expect(r.status).toBe(200)
  return backupBytes(Buffer.from(await r.arrayBuffer()))
}

/** Everything the operator and carol can read through the API and the dashboard, as text. */
async function everythingVisible(carolEntry: string): Promise<string> {
  const texts: string[] = []
  for (const who of ['operator', 'carol', 'acmeAdmin'] as const) {
    const c = api[who]!
    for (const path of [
      `/api/knowledge/search?q=${MARKER}&min_score=1&top_k=50`,
      `/api/knowledge/search?q=${MARKER}&min_score=1&top_k=50&mode=fulltext`,
      '/api/knowledge?limit=1000&status=active,merged,archived',
      '/api/knowledge/export',
      `/api/knowledge/${carolEntry}`,
      `/api/knowledge/${carolEntry}/versions`,
      '/api/resource?limit=1000',
      '/api/secret-reads?limit=1000',
      '/api/agents',
      '/api/status',
    ]) {
      const r = await c.get(path)
      texts.push(r.text)
    }
  }
  const ui = await signIn(tokens.operator!.token)
  for (const path of [
    '/ui/overview',
    `/ui/knowledge?limit=1000&status=active,merged,archived`,
    `/ui/knowledge/search?q=${MARKER}&min_score=1`,
    '/ui/resources',
  ])
    texts.push((await ui.get(path)).text)
  return texts.join('\n')
}

describe('forget user:ID', () => {
  it('erases everything of the user, answers others as an unknown user, and leaves no byte of it in the files', async () => {
    const bob = api.bob!
    // Carol's entry, which bob gives feedback on; bob's own entries, a version, a resource with a secret, a goal, an agent document.
    const carolEntry = await api.carol!.post('/api/knowledge', {
      task: 'Deploy the acme app',
      content: 'Run the deploy script',
      types: ['tool'],
      scopes: ['org:acme'],
    })
    expect(carolEntry.status).toBe(201)
    const privateEntry = await bob.post('/api/knowledge', {
      task: `bob's note ${MARKER}`,
      content: `remember ${MARKER} always`,
      types: ['user_profile'],
      tags: { category: 'preference' },
    })
    expect(privateEntry.status).toBe(201)
    const shared = await bob.post('/api/knowledge', {
      task: 'Shared how-to by bob',
      content: `first draft ${MARKER}`,
      types: ['strategy'],
      scopes: ['org:acme'],
    })
    expect((await bob.patch(`/api/knowledge/${shared.body.id}`, { content: 'second draft, nothing personal' })).status).toBe(200)
    const fb = await bob.put(`/api/knowledge/${carolEntry.body.id}`, {
      add_helpful_case: { task: `used by ${MARKER}` },
      add_harmful_case: { reason: `broke for ${MARKER}` },
      update_score: 1,
    })
    expect(fb.status).toBe(200)
    expect(fb.body.eval).toMatchObject({ helpful: 1, harmful: 1 })
    expect((await api.carol!.put(`/api/knowledge/${carolEntry.body.id}`, { add_helpful_case: { task: 'carol used it' } })).status).toBe(200)
    const resource = await bob.post('/api/resource', {
      id: 'bob/login',
      title: `login ${MARKER}`,
      body: `body ${MARKER}`,
      secure_body: `pw-${MARKER}`,
      content_type: 'credential',
      scopes: ['user:bob'],
    })
    expect(resource.status).toBe(201)
    expect((await bob.get('/api/resource/bob/login?include_secret=true')).text).toContain(`pw-${MARKER}`)
    expect((await bob.post('/api/goals', { action: 'create', trace_id: 'bob-trace', description: `reach ${MARKER}` })).status).toBe(200)
    const doc = await bob.put('/api/agents/bobs-helper/documents/knowledge.md', { content: `notes ${MARKER}` })
    expect([200, 201]).toContain(doc.status)
    const bobUi = await signIn(tokens.bob!.token)
    expect((await bobUi.get('/ui/me')).status).toBe(200)
    // Statistics as a long-running hub has them (PGlite analyzes after many writes).
    await t.hub.store.db.query(sql`ANALYZE knowledge`)

    // Control: the marker is there, through the API, the dashboard, a backup and in the files.
    expect(await everythingVisible(carolEntry.body.id)).toContain(MARKER)
    const before = await newBackup()
    if (before) expect(before.includes(Buffer.from(MARKER))).toBe(true)
    expect((await databaseFilesWith(MARKER)).length).toBeGreaterThan(0)

    // Nobody else: a writer is refused; another org's admin gets what an unknown user gets.
    const refused = await api.carol!.delete('/api/principals/user:bob?dry_run=true')
    expect(refused.status).toBe(403)
    expect(errorOf(refused).code).toBe('forbidden')
    const foreign = await api.otherAdmin!.delete('/api/principals/user:bob')
    const ghost = await api.otherAdmin!.delete('/api/principals/user:ghost')
    expect(foreign.status).toBe(404)
    expect(foreign.text.replaceAll('bob', '<x>').replace(/"request_id":"[^"]*"/, '')).toBe(
      ghost.text.replaceAll('ghost', '<x>').replace(/"request_id":"[^"]*"/, ''),
    )
    expect((await api.acmeAdmin!.delete('/api/principals/user:dave')).status).toBe(404)
    expect((await api.acmeAdmin!.delete('/api/principals/agent:bob')).status).toBe(400)

    // A dry run: the counts, nothing changed.
    const dry = await api.acmeAdmin!.delete('/api/principals/user:bob?dry_run=true')
    expect(dry.status, dry.text).toBe(200)
    const expected = {
      entries: 2,
      versions: 1,
      feedback_cases: 2,
      score_votes: 1,
      resources: 1,
      secrets: 1,
      tokens: 1,
      sessions: 1,
      goal_trees: 1,
      goals: 1,
      // knowledge.md and the function index generated from it (owned by bob too).
      agent_documents: 2,
      // Bob's read of his secret, and the control backup's (a backup records one read per secret it carries; PGlite only).
      secret_reads: t.hub.config.databaseUrl ? 1 : 2,
    }
    expect(dry.body).toMatchObject({ subject: 'user:bob', dry_run: true, erased: expected, cleanup: { mode: 'skipped' } })
    expect(dry.text).not.toContain(MARKER)
    expect((await bob.get(`/api/knowledge/${privateEntry.body.id}`)).status).toBe(200)

    // The forget, by bob's org admin.
    const done = await api.acmeAdmin!.delete('/api/principals/user:bob')
    expect(done.status, done.text).toBe(200)
    expect(done.body).toMatchObject({
      subject: 'user:bob',
      dry_run: false,
      erased: expected,
      cleanup: { mode: 'full', wal: t.hub.config.databaseUrl ? expect.any(String) : 'rotated' },
    })
    // The statistics rows pruned on the way are housekeeping, not counted as bob's (issue 42).
    expect(done.body.erased.search_statistics).toBeUndefined()
    expect(done.body.housekeeping.search_statistics).toBeGreaterThan(0)
    expect(done.text).not.toContain(MARKER)

    // Bob's token and dashboard session stop at once.
    expect((await bob.get('/api/knowledge?limit=1')).status).toBe(401)
    expect((await bobUi.get('/ui/me')).status).toBe(401)
    // Carol's entry keeps carol's case; bob's cases, vote and the counts they made are gone.
    const kept = await api.carol!.get(`/api/knowledge/${carolEntry.body.id}`)
    expect(kept.body.eval).toMatchObject({ helpful: 1, harmful: 0, score: 3 })
    expect(kept.body.eval.helpful_history).toEqual([expect.objectContaining({ task: 'carol used it' })])

    // Gone from every response, the dashboard, a new backup and the database files.
    expect(await everythingVisible(carolEntry.body.id)).not.toContain(MARKER)
    const after = await newBackup()
    if (after) expect(after.includes(Buffer.from(MARKER))).toBe(false)
    expect(await databaseFilesWith(MARKER)).toEqual([])

    // The audit keeps that it happened, with counts, naming nobody.
    const audit = await t.hub.store.db.query<{ kind: string; subject: string; by: string; org: string; counts: Record<string, number> }>(
      sql`SELECT kind, subject, by, org, counts FROM knowhub_erasure ORDER BY seq`,
    )
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ kind: 'forget', by: 'user:ann', org: 'acme', counts: expected })
    expect(audit[0]!.subject).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(audit)).not.toContain('bob')
    expect(t.logs.join('\n')).not.toContain(MARKER)

    // Forgetting again: bob is nobody now, for his org admin as for anyone.
    expect((await api.acmeAdmin!.delete('/api/principals/user:bob')).status).toBe(404)
    // For the hub operator: nothing of bob is stored, so nothing is forgotten (issue 42) unless forced.
    const nothing = await api.operator!.delete('/api/principals/user:bob')
    expect(nothing.status).toBe(404)
    expect(nothing.body.error.message).toContain('Nothing of user:bob is stored')
    expect(await t.hub.store.db.query(sql`SELECT count(*)::int AS n FROM knowhub_erasure`)).toEqual([{ n: 1 }])
    const dryAgain = await api.operator!.delete('/api/principals/user:bob?dry_run=true')
    expect(dryAgain.status).toBe(200)
    expect(Object.values(dryAgain.body.erased as Record<string, number>).every((v) => v === 0)).toBe(true)
    const again = await api.operator!.delete('/api/principals/user:bob?force=true')
    expect(again.status).toBe(200)
    expect(Object.values(again.body.erased as Record<string, number>).every((v) => v === 0)).toBe(true)
    expect(again.body.cleanup.mode).toBe('full')
  })

  // VACUUM FULL copies every row a snapshot still open in the database may read: a session that
  // began reading before the forget would keep the erased rows in the rewritten files. (The CI of
  // stop 46 failed so, once: an open snapshot during the rewrite left the marker in 9 files.)
  it.runIf(HUB_BACKEND !== 'pglite')(
    'waits for a session that still reads from before the forget, then leaves no byte; reports one that outlasts the wait',
    async () => {
      const erin = await t.hub.tokens.create({ user: 'erin', org: 'acme', permissions: ['read', 'write'], name: 'erin' })
      const mark = `zqe0r1nm4rk${Math.random().toString(36).slice(2, 8)}`
      const saved = await client(server.url, erin.token).post('/api/knowledge', { task: `erin's note ${mark}`, content: `keep ${mark}`, types: ['strategy'] })
      expect(saved.status, saved.text).toBe(201)
      await superuser(async (reader) => {
        // A snapshot taken now, on a table the forget does not lock (a lock would only make the rewrite wait for the lock).
        await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
        await reader.query('SELECT count(*) FROM pg_class')
        const forget = api.acmeAdmin!.delete('/api/principals/user:erin')
        await new Promise((resolve) => setTimeout(resolve, 700))
        await reader.query('COMMIT')
        const done = await forget
        expect(done.status, done.text).toBe(200)
        expect(done.body.cleanup).toMatchObject({ mode: 'full', older_sessions: 0 })
        expect(done.body.cleanup.waited_ms).toBeGreaterThanOrEqual(300)
      })
      expect(await databaseFilesWith(mark)).toEqual([])

      // A session that does not end within the wait: the rewrite goes on, and the receipt says so.
      const [row] = await t.hub.store.db.query<{ id: string }>(sql`SELECT id FROM knowledge LIMIT 1`)
      await superuser(async (reader) => {
        await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
        await reader.query('SELECT count(*) FROM pg_class')
        await t.hub.store.db.query(sql`UPDATE knowledge SET content = content WHERE id = ${row!.id}`)
        const cleanup = await cleanupFiles(t.hub.store.db, ['knowledge'], { waitMs: 300 })
        expect(cleanup).toMatchObject({ mode: 'full', older_sessions: 1 })
        expect(cleanup.waited_ms).toBeGreaterThanOrEqual(300)
        expect(heldWarning(cleanup)).toMatch(/^Warning: 1 database session\(s\) still read from before the erasure .* until the next VACUUM FULL of knowledge/)
        await reader.query('COMMIT')
      })
    },
  )
})

describe('purge --merged-older-than / --archived-older-than', () => {
  it('removes old slimmed originals and archived entries for good, within the caller’s reach, with a receipt; a dry run changes nothing', async () => {
    const carol = api.carol!
    const mark = `zqp0rgem4rk${Math.random().toString(36).slice(2, 8)}`
    const save = async (c: Client, task: string, content: string, scopes: string[]) => {
      const r = await c.post('/api/knowledge', { task, content, types: ['strategy'], scopes })
      expect(r.status, r.text).toBe(201)
      return r.body.id as string
    }
    // Two near-duplicates that slim merges; an old and a new archived entry; one archived in the other org.
    const a = await save(carol, 'Restart the acme worker pool', `Drain the queue then restart the worker pool ${mark}`, ['org:acme'])
    const b = await save(carol, 'Restart the acme worker pool', `Drain the queue then restart the worker pool ${mark}`, ['org:acme'])
    const slim = await carol.post('/api/knowledge/slim', { threshold: 0.95 })
    expect(slim.status, slim.text).toBe(200)
    const group = (slim.body.groups as Array<{ kept_id: string; merged_ids: string[] }>).find((g) => g.merged_ids.includes(a))
    expect(group?.merged_ids.sort()).toEqual([a, b].sort())
    const oldArchived = await save(carol, 'Old acme runbook', `Superseded runbook ${mark}`, ['org:acme'])
    const newArchived = await save(carol, 'Recent acme runbook', 'Archived this week', ['org:acme'])
    const foreign = await save(api.dave!, 'Old other runbook', 'Archived long ago', ['org:other'])
    for (const [c, id] of [
      [carol, oldArchived],
      [carol, newArchived],
      [api.dave!, foreign],
    ] as const)
      expect((await c.post(`/api/knowledge/${id}/archive`)).status).toBe(200)
    // Age them as time would: the merge 100 days ago, two archives 40 days ago.
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString()
    await t.hub.store.db.query(sql`UPDATE knowledge SET created_at = ${ago(100)}::timestamptz WHERE id = ${group!.kept_id}`)
    await t.hub.store.db.query(sql`UPDATE knowledge SET updated_at = ${ago(40)}::timestamptz WHERE id = ANY(${[oldArchived, foreign]}::text[])`)
    expect((await databaseFilesWith(mark)).length).toBeGreaterThan(0)

    const body = { merged_older_than: '90d', archived_older_than: '30d' }
    expect((await carol.post('/api/admin/purge', { ...body, dry_run: true })).status).toBe(403)
    expect((await api.acmeAdmin!.post('/api/admin/purge', { dry_run: true })).status).toBe(400)
    expect((await api.acmeAdmin!.post('/api/admin/purge', { merged_older_than: 'ninety days' })).status).toBe(400)
    const dry = await api.acmeAdmin!.post('/api/admin/purge', { ...body, dry_run: true })
    expect(dry.status, dry.text).toBe(200)
    expect(dry.body).toMatchObject({ dry_run: true, reach: 'org', erased: { merged: 2, archived: 1 } })
    expect((await carol.get(`/api/knowledge/${a}`)).status).toBe(200)

    const done = await api.acmeAdmin!.post('/api/admin/purge', body)
    expect(done.body).toMatchObject({ dry_run: false, reach: 'org', erased: { merged: 2, archived: 1, versions: 0 }, cleanup: { mode: 'full' } })
    for (const id of [a, b, oldArchived]) expect((await carol.get(`/api/knowledge/${id}`)).status).toBe(404)
    // The merge product, the recent archive and the other org's entry stay.
    for (const id of [group!.kept_id, newArchived]) expect((await carol.get(`/api/knowledge/${id}`)).status).toBe(200)
    expect((await api.dave!.get(`/api/knowledge/${foreign}`)).status).toBe(200)
    // The product keeps its merged text (it holds the originals' words), but no file holds the purged archive's.
    const kept = await carol.get(`/api/knowledge/${group!.kept_id}`)
    expect(kept.body.content).toContain(mark)
    const files = await databaseFilesWith('Superseded runbook')
    expect(files).toEqual([])

    // The hub operator reaches the other org's old archive too.
    const all = await api.operator!.post('/api/admin/purge', { archived_older_than: '30d' })
    expect(all.body).toMatchObject({ reach: 'hub', erased: { archived: 1, merged: 0 } })
    expect((await api.dave!.get(`/api/knowledge/${foreign}`)).status).toBe(404)
    const audit = await t.hub.store.db.query<{ kind: string; org: string | null; counts: Record<string, number> }>(
      sql`SELECT kind, org, counts FROM knowhub_erasure WHERE kind = 'purge' ORDER BY seq`,
    )
    expect(audit).toEqual([
      { kind: 'purge', org: 'acme', counts: { merged: 2, archived: 1, versions: 0, feedback_cases: 0 } },
      { kind: 'purge', org: null, counts: { merged: 0, archived: 1, versions: 0, feedback_cases: 0 } },
    ])
  })
})

describe('GET /api/users/{id}/profile', () => {
  it("gives each seed-002 category's current entries with their confidence, and a timeline of what changed", async () => {
    const carol = api.carol!
    const profile = async (category: string, task: string, content: string, confidence = 0.5) => {
      const r = await carol.post('/api/knowledge', { task, content, types: ['user_profile'], tags: { category }, confidence })
      expect(r.status, r.text).toBe(201)
      return r.body.id as string
    }
    const language = await profile('preference', 'Preferred language', 'Carol prefers TypeScript', 0.6)
    const role = await profile('background', 'Role', 'Carol is a backend engineer', 0.9)
    const mornings = await profile('habit', 'Working hours', 'Carol reviews code in the morning')
    const budget = await profile('constraint', 'Budget', 'No paid services')
    const other = await profile('mood', 'Mood', 'Carol likes short answers')
    await carol.post('/api/knowledge', { task: 'Not a profile', content: 'a strategy', types: ['strategy'] })
    expect((await carol.patch(`/api/knowledge/${language}`, { content: 'Carol prefers Python now', reason: 'she switched' })).status).toBe(200)
    expect((await carol.post(`/api/knowledge/${mornings}/archive`)).status).toBe(200)
    // A fact that changed (a supersession: the store's operation, as the service and extraction apply it) and one that expired.
    const berlin = await profile('background', 'Location', 'Carol works from Berlin')
    const lisbon = await profile('background', 'Location', 'Carol moved to Lisbon', 0.8)
    const movedAt = new Date(Date.now() - 3_600_000)
    const carolAccess = { visible: ['user:carol', 'org:acme', 'public'], owners: ['user:carol', 'org:acme'], scopes: [] }
    const superseded = await t.hub.store.knowledge.supersede({ oldId: berlin, newId: lisbon, access: carolAccess, validTo: movedAt, at: new Date() })
    expect('refused' in superseded).toBe(false)
    const trial = await profile('constraint', 'Trial', 'Carol is on a free trial')
    const expiredAt = new Date(Date.now() - 60_000)
    expect(await t.hub.store.knowledge.setExpiry(trial, carolAccess, expiredAt, new Date())).toBeDefined()

    const r = await carol.get('/api/users/carol/profile')
    expect(r.status, r.text).toBe(200)
    const ids = (list: Array<{ id: string }>) => list.map((e) => e.id)
    expect(r.body.user).toBe('carol')
    expect(ids(r.body.categories.preference)).toEqual([language])
    expect(r.body.categories.preference[0]).toMatchObject({ content: 'Carol prefers Python now', confidence: 0.6, version: 2 })
    // Sorted by confidence; a category outside seed 002 counts as background (as the folder layout files it).
    expect(ids(r.body.categories.background)).toEqual([role, lisbon, other])
    expect(r.body.categories.habit).toEqual([])
    expect(ids(r.body.categories.constraint)).toEqual([budget])
    expect(r.body.counts).toEqual({ current: 5, entries: 8 })
    const events = (r.body.timeline as Array<{ id: string; event: string; content: string; reason: string }>).map((e) => [e.id, e.event, e.content, e.reason])
    expect(events).toEqual(
      expect.arrayContaining([
        [language, 'recorded', 'Carol prefers TypeScript', ''],
        [language, 'changed', 'Carol prefers TypeScript', 'she switched'],
        [mornings, 'archived', 'Carol reviews code in the morning', ''],
        [berlin, 'superseded', 'Carol works from Berlin', `superseded by ${lisbon}`],
        [trial, 'expired', 'Carol is on a free trial', ''],
      ]),
    )
    const timeline = r.body.timeline as Array<{ id: string; event: string; at: string; superseded_by: string | null }>
    expect(timeline.find((e) => e.id === berlin && e.event === 'superseded')).toMatchObject({ at: movedAt.toISOString(), superseded_by: lisbon })
    expect(timeline.find((e) => e.id === trial && e.event === 'expired')?.at).toBe(expiredAt.toISOString())
    expect(r.body.categories.background.find((e: { id: string }) => e.id === lisbon).valid_from).toEqual(expect.any(String))
    expect(events.filter(([id]) => id === language).map(([, event]) => event)).toEqual(['recorded', 'changed'])

    // Her org admin and the hub operator read it too; the other org's admin, and a colleague, get what an unknown user gets.
    expect((await api.acmeAdmin!.get('/api/users/carol/profile')).body).toEqual(r.body)
    expect((await api.operator!.get('/api/users/carol/profile')).status).toBe(200)
    for (const c of [api.otherAdmin!, api.dave!]) {
      const foreign = await c.get('/api/users/carol/profile')
      const ghost = await c.get('/api/users/ghost/profile')
      expect(foreign.status).toBe(404)
      expect(foreign.text.replaceAll('carol', '<x>').replace(/"request_id":"[^"]*"/, '')).toBe(
        ghost.text.replaceAll('ghost', '<x>').replace(/"request_id":"[^"]*"/, ''),
      )
    }
    expect((await carol.get('/api/users/ann/profile')).status).toBe(404)
    expect((await carol.get('/api/users/bad%20id/profile')).status).toBe(400)
  })
})

describe('knowhub forget / knowhub purge', () => {
  it('forget: a dry run, then the receipt; purge: a dry run — beside the server (PGlite) or on it through --url (PostgreSQL)', async () => {
    const saved = { ...process.env }
    try {
      for (const name of ['DATABASE_URL', 'KNOWHUB_URL', 'KNOWHUB_TOKEN']) delete process.env[name]
      process.env.KNOWHUB_EMBEDDER = 'hashed'
      process.env.KNOWHUB_EMBED_DIM = '64'
      process.env.KNOWHUB_DATA_DIR = t.dataDir
      // PGlite: the CLI finds the server through the data folder's lock file (the local principal, the hub operator).
      const where = t.hub.config.databaseUrl ? ['--url', server.url, '--token', tokens.operator!.token] : []
      const gone = await t.hub.tokens.create({ user: 'quinn', org: 'acme', permissions: ['read', 'write'] })
      const note = await client(server.url, gone.token).post('/api/knowledge', { task: 'Quinn note', content: 'quinn was here', types: ['plan'] })
      expect(note.status).toBe(201)

      const dry = await runCli('forget', 'quinn', '--dry-run', ...where)
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toContain('Would erase user:quinn: 1 entries, 1 tokens')
      expect(dry.stdout).toContain('Dry run: nothing changed.')
      const json = await runCli('forget', 'user:quinn', '--dry-run', '--json', ...where)
      expect(JSON.parse(json.stdout)).toMatchObject({ subject: 'user:quinn', dry_run: true, erased: { entries: 1, tokens: 1 } })
      const stored = async () => (await t.hub.store.db.query(sql`SELECT id FROM knowledge WHERE id = ${note.body.id}`)).length
      expect(await stored()).toBe(1)

      const done = await runCli('forget', 'user:quinn', ...where)
      expect(done.code, done.stderr).toBe(0)
      expect(done.stdout).toMatch(/^Erased user:quinn: 1 entries, 1 tokens/)
      expect(done.stdout).toMatch(/13 tables rewritten \(VACUUM FULL\)/)
      expect(await stored()).toBe(0)
      expect((await runCli('forget', 'agent:quinn', ...where)).code).not.toBe(0)
      // A principal of whom nothing is stored: refused, nothing rewritten (issue 42); --force forgets anyway.
      const nobody = await runCli('forget', 'user:nobody', ...where)
      expect(nobody.code).not.toBe(0)
      expect(nobody.stderr).toContain('Nothing of user:nobody is stored')
      expect(nobody.stderr).toContain('--force')
      const forced = await runCli('forget', 'user:nobody', '--force', ...where)
      expect(forced.code, forced.stderr).toBe(0)
      expect(forced.stdout).toMatch(/^Erased user:nobody: nothing \(no data of this user\)/)

      const purge = await runCli('purge', '--archived-older-than', '3650d', '--dry-run', ...where)
      expect(purge.code, purge.stderr).toBe(0)
      expect(purge.stdout).toMatch(/^Would delete 0 merged and 0 archived entries \(archived before .*; reach: hub\).*dry run, nothing changed$/)
      const bad = await runCli('purge', '--archived-older-than', 'soon', ...where)
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toMatch(/age/)
    } finally {
      process.env = saved
    }
  })
})
