/**
 * `knowhub reown` (POST /api/reown, admin): entries saved in local mode (owner and scope
 * user:local) are not visible to a token's user after the switch to token mode; a reown
 * hands them to that user and shares them with a scope, recorded as a version of each.
 * A dry run changes nothing; a caller without `admin` is refused. The CLI runs beside the
 * server holding the folder (PGlite) or on it through --url (PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client/index.js'
import type { RunningServer } from '../../src/server/serve.js'
import { runCli } from '../helpers/cli.js'
import { openTestHub, type TestHub } from './helpers.js'

let t: TestHub
let server: RunningServer
const saved = { ...process.env }
/** Where the CLI runs: beside the server (its lock file) on PGlite, else on --url with the admin token once there is one. */
let where: () => string[]
let adminToken: string | undefined

beforeAll(async () => {
  t = await openTestHub({ embedder: { provider: 'hashed', dimension: 64 } })
  server = await t.start()
  for (const name of ['DATABASE_URL', 'KNOWHUB_URL', 'KNOWHUB_TOKEN']) delete process.env[name]
  process.env.KNOWHUB_EMBEDDER = 'hashed'
  process.env.KNOWHUB_EMBED_DIM = '64'
  // The hub's folder: the embedded database's (held by the server), or an unused one beside a PostgreSQL server.
  process.env.KNOWHUB_DATA_DIR = t.dataDir
  where = t.hub.config.databaseUrl ? () => ['--url', server.url, ...(adminToken ? ['--token', adminToken] : [])] : () => []
}, 120_000)
afterAll(async () => {
  process.env = saved
  await t?.close()
})

async function cli(...args: string[]) {
  // `save` names the server with --server (its --url is a source URL).
  const place = where().map((a) => (a === '--url' && args[0] === 'save' ? '--server' : a))
  const run = await runCli(...args, ...place)
  return { ...run, json: () => JSON.parse(run.stdout) as Record<string, unknown> }
}

async function token(...args: string[]): Promise<string> {
  const created = await cli('token', 'create', ...args)
  expect(created.code, created.stderr).toBe(0)
  return created.stdout.trim()
}

describe('knowhub reown', () => {
  it('hands local-mode entries to a user and shares them; dry run changes nothing; non-admins are refused', async () => {
    // Local mode: two entries saved by the CLI belong to user:local.
    const ids: string[] = []
    for (const task of ['Deploy with pnpm in Docker', 'Rotate the staging database password']) {
      const save = await cli('save', '--task', task, '--content', `How to: ${task}`, '--type', 'tool', '--json')
      expect(save.code, save.stderr).toBe(0)
      expect(save.json()).toMatchObject({ owner: 'user:local', scopes: ['user:local'] })
      ids.push(String(save.json().id))
    }

    // Token mode.
    // The hub operator's token (issue 27: re-owning across the hub is the operator's; an org admin
    // reowns within what it sees). Minted while the server is in local mode: the CLI there is the operator.
    adminToken = await token('--user', 'root', '--hub-admin')
    const alice = createClient({ baseUrl: server.url, token: await token('--user', 'alice', '--org', 'acme') })
    const carol = createClient({ baseUrl: server.url, token: await token('--user', 'carol', '--org', 'acme') })
    const bobToken = await token('--user', 'bob', '--org', 'other')
    const bob = createClient({ baseUrl: server.url, token: bobToken })
    await new Promise((resolve) => setTimeout(resolve, 2100)) // the server re-checks local mode every 2 s
    expect((await alice.knowledge.list({})).items).toEqual([])

    // A caller without admin is refused, over the CLI and the API alike.
    const refused = await runCli('reown', '--from', 'local', '--to', 'bob', '--url', server.url, '--token', bobToken, '--json')
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: 'forbidden' } })
    await expect(alice.admin.reown({ from: 'user:local', to: 'user:alice' })).rejects.toMatchObject({ code: 'forbidden' })

    // Dry run: the counts, nothing changed.
    const dry = await cli('reown', '--from', 'local', '--to', 'alice', '--scope', 'org:acme', '--dry-run', '--json')
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.json()).toMatchObject({ from: 'user:local', to: 'user:alice', added_scopes: ['org:acme'], dry_run: true, owned: 2, changed: 2 })
    expect((dry.json().ids as string[]).sort()).toEqual([...ids].sort())
    expect((await alice.knowledge.list({})).items).toEqual([])
    expect(await t.hub.knowledge.get(ids[0]!, t.hub.config.principal)).toMatchObject({ owner: 'user:local', version: 1 })

    // The reown: alice owns them, acme shares them, bob still sees nothing.
    const done = await cli('reown', '--from', 'local', '--to', 'alice', '--scope', 'org:acme')
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toBe(
      'user:local owns 2 entries: changed 2 (to user:alice, shared with org:acme); each keeps its previous version ("reown: user:local -> user:alice, shared with org:acme")',
    )
    const seen = (await alice.knowledge.list({})).items
    expect(seen.map((e) => e.id).sort()).toEqual([...ids].sort())
    expect(seen[0]).toMatchObject({ owner: 'user:alice', scopes: ['user:alice', 'org:acme'], version: 2 })
    expect((await carol.knowledge.list({})).items).toHaveLength(2)
    expect((await bob.knowledge.list({})).items).toEqual([])
    expect((await bob.knowledge.search({ q: 'pnpm docker' })).results).toEqual([])
    expect((await alice.knowledge.search({ q: 'pnpm docker' })).results.map((r) => r.id)).toContain(ids[0])

    // Recorded: the previous version keeps the old scopes and says why.
    const { versions } = await alice.knowledge.versions(ids[0]!)
    expect(versions).toEqual([expect.objectContaining({ version: 1, scopes: ['user:local'], reason: 'reown: user:local -> user:alice, shared with org:acme' })])
    // Alice manages them now (she is the owner).
    expect(await alice.knowledge.edit(ids[0]!, { tags: { tool: 'pnpm' } })).toMatchObject({ owner: 'user:alice', version: 3 })

    // Again: nothing left to change.
    const again = await cli('reown', '--from', 'local', '--to', 'alice', '--json')
    expect(again.json()).toMatchObject({ owned: 0, changed: 0, ids: [] })
    // Sharing only (no new owner): alice's entries with team:infra as well; --to missing and no --scope is refused.
    const share = await cli('reown', '--from', 'alice', '--scope', 'team:infra', '--json')
    expect(share.json()).toMatchObject({ from: 'user:alice', to: 'user:alice', owned: 2, changed: 2 })
    expect((await alice.knowledge.get(ids[1]!)).scopes).toEqual(['user:alice', 'org:acme', 'team:infra'])
    const nothing = await cli('reown', '--from', 'alice', '--json')
    expect(nothing.code).toBe(1)
    expect(JSON.parse(nothing.stdout)).toMatchObject({ error: { code: 'validation_error' } })
  }, 120_000)
})
