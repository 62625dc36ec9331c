/**
 * Validity in time in the store (issue 31, migration 0048), on every backend and on both
 * search paths of the embedded one (in-memory index and SQL): the new columns and their
 * defaults, the backfill of existing rows, the one-transaction supersession and its refusals,
 * and the validity filter (current, as of a date, history, expiry) of list, full-text, vector
 * and neighbour queries.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { writeAccess } from '../../src/auth/policy.js'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { textQuery } from '../../src/knowledge/search/document.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { ANY_VALIDITY, type EntryFilter, type KnowledgeRecord } from '../../src/store/knowledge/knowledge.js'
import { loadMigrations, migrate } from '../../src/store/migrate.js'
import { openPGlite, openPostgres } from '../../src/store/database.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, createTestDatabase, openTestStore, truncateKnowledge, type Backend } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme' })
const visible = visibleScopes(alice)
const access = writeAccess(alice)
const embedder = createHashedEmbedder({ dimension: 64 })

/** Every backend, and the embedded one once more with full-text search in SQL. */
const PATHS: Array<[Backend, 'memory' | 'sql' | undefined]> = BACKENDS.flatMap((b): Array<[Backend, 'memory' | 'sql' | undefined]> =>
  b === 'pglite'
    ? [
        [b, 'memory'],
        [b, 'sql'],
      ]
    : [[b, undefined]],
)

describe.each(PATHS)('validity in the store on %s (full text: %s)', (backend, fulltext) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let now = new Date('2026-06-01T00:00:00Z')

  beforeAll(async () => {
    const opened = await openTestStore(backend, fulltext ? { fulltext } : {})
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder, clock: { now: () => now }, searchCacheSize: 0 })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    now = new Date('2026-06-01T00:00:00Z')
    await truncateKnowledge(store)
  })

  const save = (task: string, more: Record<string, unknown> = {}) => knowledge.save({ task, content: task, types: ['tool'], ...more }, alice)
  const textIds = async (q: string, filter: Partial<EntryFilter> = {}) =>
    (await store.knowledge.searchText(textQuery(q), { visible, ...filter }, 20)).map((h) => h.id).sort()
  const vectorIds = async (q: string, filter: Partial<EntryFilter> = {}) =>
    (await store.knowledge.searchVector((await embedder.embed([q], { kind: 'document' }))[0]!, { visible, ...filter }, 20)).map((h) => h.id).sort()
  const listIds = async (_q: string, filter: Partial<EntryFilter> = {}) => (await store.knowledge.list({ visible, ...filter }, 100)).map((r) => r.id).sort()

  it('defaults valid_from to the source time when it is a date, else to the save time, and keeps created_at apart', async () => {
    const dated = await save('deploys run on jenkins', { source: { timestamp: '2025-03-05T12:00:00Z' } })
    const undated = await save('deploys run nightly', { source: { timestamp: 'yesterday at noon' } })
    const given = await save('deploys need approval', { valid_from: '2024-01-02', expires_at: '2026-12-31T00:00:00Z' })
    expect(dated).toMatchObject({
      valid_from: '2025-03-05T12:00:00.000Z',
      created_at: now.toISOString(),
      valid_to: null,
      superseded_by: null,
      supersedes: null,
      expires_at: null,
    })
    expect(undated.valid_from).toBe(now.toISOString())
    expect(given).toMatchObject({ valid_from: '2024-01-02T00:00:00.000Z', expires_at: '2026-12-31T00:00:00.000Z' })
    const record = await store.knowledge.get(given.id, visible)
    expect(record?.valid_from).toEqual(new Date('2024-01-02T00:00:00Z'))
    expect(record?.expires_at).toEqual(new Date('2026-12-31T00:00:00Z'))
  })

  it('supersedes in one transaction: closes the old entry, links the new one, and both reads see it (record cache included)', async () => {
    const old = await save('ci runs on jenkins')
    const fresh = await save('ci runs on github actions')
    // Read both first: a cached record must not outlive the change.
    await store.knowledge.getMany([old.id, fresh.id], visible)
    const at = new Date('2026-06-02T00:00:00Z')
    const done = await store.knowledge.supersede({ oldId: old.id, newId: fresh.id, access, validTo: at, at })
    expect('refused' in done).toBe(false)
    const [o, n] = [await store.knowledge.get(old.id, visible), await store.knowledge.get(fresh.id, visible)] as KnowledgeRecord[]
    expect(o).toMatchObject({ valid_to: at, superseded_by: fresh.id, supersedes: null, updated_at: at })
    expect(n).toMatchObject({ valid_to: null, superseded_by: null, supersedes: old.id, updated_at: at })
    // The old one is neither current nor supersedable again; the new one supersedes nothing else.
    const third = await save('ci runs on buildkite')
    expect(await store.knowledge.supersede({ oldId: old.id, newId: third.id, access, validTo: at, at })).toEqual({ refused: 'old_changed' })
    expect(await store.knowledge.supersede({ oldId: third.id, newId: fresh.id, access, validTo: at, at })).toEqual({ refused: 'new_changed' })
    expect(await store.knowledge.supersede({ oldId: fresh.id, newId: old.id, access, validTo: at, at })).toEqual({ refused: 'new_changed' })
    expect((await store.knowledge.get(third.id, visible))?.valid_to).toBeNull()
  })

  it('refuses what the caller cannot see, and rolls back an entry inserted in the same transaction', async () => {
    const old = await save('the cache is redis')
    const bob = writeAccess(Principal.parse({ user: 'bob', org: 'other' }))
    const theirs = await knowledge.save({ task: 'the cache is memcached', content: 'x', types: ['tool'] }, Principal.parse({ user: 'bob', org: 'other' }))
    const at = now
    expect(await store.knowledge.supersede({ oldId: old.id, newId: theirs.id, access, validTo: at, at })).toEqual({ refused: 'new_missing' })
    expect(await store.knowledge.supersede({ oldId: old.id, newId: theirs.id, access: bob, validTo: at, at })).toEqual({ refused: 'old_missing' })
    const record = { ...(await store.knowledge.get(old.id, visible))!, id: 'knowledge-20260601000000-zzzz', supersedes: null }
    const insert = { record, doc: { title: ['cache'], body: ['valkey'] }, embedding: undefined }
    // The old entry is closed meanwhile: the insert is rolled back with the refusal.
    await store.knowledge.supersede({ oldId: old.id, newId: (await save('the cache is valkey')).id, access, validTo: at, at })
    expect(await store.knowledge.supersede({ oldId: old.id, newId: record.id, access, validTo: at, at, insert })).toEqual({ refused: 'old_changed' })
    expect(await store.knowledge.claims([record.id], access)).toEqual(new Map())
  })

  it('filters by validity in list, full-text, vector and neighbour queries: current by default, as of a date, history, expiry', async () => {
    const trace = { trace_id: 't1' }
    now = new Date('2026-01-01T00:00:00Z')
    const jenkins = await save('pipeline tool jenkins', { source: { ...trace, timestamp: '2026-01-01T00:00:00Z' } })
    now = new Date('2026-01-01T00:00:01Z')
    const middle = await save('pipeline tool notes', { source: { ...trace, timestamp: '2026-01-01T00:00:01Z' } })
    now = new Date('2026-03-01T00:00:00Z')
    const actions = await save('pipeline tool github actions', { source: { ...trace, timestamp: '2026-03-01T00:00:00Z' } })
    const cookie = await save('pipeline tool cookie', { expires_at: '2026-04-01T00:00:00Z' })
    const switched = new Date('2026-03-01T00:00:00Z')
    await store.knowledge.supersede({ oldId: jenkins.id, newId: actions.id, access, validTo: switched, at: switched })

    const all = [jenkins.id, middle.id, actions.id, cookie.id].sort()
    const current = [middle.id, actions.id, cookie.id].sort()
    const currentNow = (at: string) => ({ validity: { now: new Date(at) } })
    for (const ids of [textIds, vectorIds, listIds]) {
      const q = 'pipeline tool'
      expect(await ids(q), ids.name).toEqual(current)
      expect(await ids(q, currentNow('2026-03-15T00:00:00Z')), ids.name).toEqual(current)
      expect(await ids(q, currentNow('2026-04-01T00:00:00Z')), `${ids.name}: expired at its expiry`).toEqual([middle.id, actions.id].sort())
      expect(await ids(q, { validity: { now: new Date('2026-05-01T00:00:00Z'), expired: true } }), ids.name).toEqual(current)
      expect(await ids(q, { validity: { superseded: true } }), ids.name).toEqual(all)
      expect(await ids(q, { validity: ANY_VALIDITY }), ids.name).toEqual(all)
      expect(await ids(q, { validity: { asOf: new Date('2026-02-01T00:00:00Z') } }), `${ids.name}: as of February`).toEqual([jenkins.id, middle.id].sort())
      expect(await ids(q, { validity: { asOf: switched } }), `${ids.name}: as of the switch`).toEqual(current)
      expect(await ids(q, { validity: { asOf: new Date('2025-12-31T00:00:00Z') } }), ids.name).toEqual([])
      expect(await ids(q, { validity: { asOf: new Date('2026-04-02T00:00:00Z') } }), `${ids.name}: as of after the expiry`).toEqual(
        [middle.id, actions.id].sort(),
      )
    }
    // A superseded entry holds no place in its trace: the middle turn's previous neighbour is gone now, there as of February.
    const around = async (validity?: EntryFilter['validity']) => (await store.knowledge.traceNeighbours([middle.id], visible, validity))[0]
    expect(await around()).toEqual({ id: middle.id, previous: [], next: [actions.id] })
    expect(await around({ asOf: new Date('2026-02-01T00:00:00Z') })).toEqual({ id: middle.id, previous: [jenkins.id], next: [] })
    expect(await around({ superseded: true })).toEqual({ id: middle.id, previous: [jenkins.id], next: [actions.id] })
  })

  it("counts only current entries in a current search's BM25 statistics, every entry in a search of the history", async () => {
    const old = await save('platform on-call lead priya, escalations go to her')
    const fresh = await save('platform on-call lead marco, escalations go to him', { valid_from: '2026-06-02' })
    await save('incidents are logged in the incidents channel')
    const q = textQuery('escalate a platform incident')
    const search = (validity?: EntryFilter['validity']) => store.knowledge.searchTextWithBound(q, { visible, ...(validity ? { validity } : {}) }, 20)
    const everyEntry = await search()
    const at = new Date('2026-06-02T00:00:00Z')
    await store.knowledge.supersede({ oldId: old.id, newId: fresh.id, access, validTo: at, at })
    const current = await search()
    const history = await search({ superseded: true })
    const asOf = await search({ asOf: new Date('2026-06-01T12:00:00Z') })
    // The history counts the superseded entry, as every search did before it was superseded.
    expect(history).toEqual(everyEntry)
    expect(asOf.bound).toBe(everyEntry.bound)
    expect(asOf.hits).toEqual(everyEntry.hits.filter((h) => h.id !== fresh.id))
    // A current search's figures are those of a store without it: the words it shares with the
    // current entry ("platform", "escalations") weigh as they do among current entries.
    expect(current.hits.map((h) => h.id)).not.toContain(old.id)
    await store.db.query(sql`DELETE FROM knowledge WHERE id = ${old.id}`)
    expect(await search()).toEqual(current)
    expect(current.hits.find((h) => h.id === fresh.id)!.score).toBeGreaterThan(everyEntry.hits.find((h) => h.id === fresh.id)!.score)
  })

  it('round-trips the validity fields through the JSONL export and the knowledge folder; a line exported before them gets the defaults', async () => {
    const old = await save('ci runs on jenkins', { source: { timestamp: '2025-01-01T00:00:00Z' } })
    const fresh = await save('ci runs on github actions', { expires_at: '2027-01-01' })
    const at = new Date('2026-06-02T00:00:00Z')
    await store.knowledge.supersede({ oldId: old.id, newId: fresh.id, access, validTo: at, at })
    const lines: string[] = []
    for await (const line of knowledge.exportJsonl(alice)) lines.push(line)
    const files = await knowledge.exportFolder(alice)
    const before = (await store.knowledge.list({ visible, validity: ANY_VALIDITY }, 10)).sort((a, b) => (a.id < b.id ? -1 : 1))
    expect(Object.fromEntries(before.map((r) => [r.id, [r.valid_to, r.superseded_by, r.supersedes]]))).toEqual({
      [old.id]: [at, fresh.id, null],
      [fresh.id]: [null, null, old.id],
    })
    for (const load of [() => knowledge.importJsonl(lines, alice), () => knowledge.importFolder(files, alice)]) {
      await truncateKnowledge(store)
      await load()
      const after = (await store.knowledge.list({ visible, validity: ANY_VALIDITY }, 10)).sort((a, b) => (a.id < b.id ? -1 : 1))
      const fields = (r: KnowledgeRecord) => [r.id, r.valid_from, r.valid_to, r.superseded_by, r.supersedes, r.expires_at, r.created_at]
      expect(after.map(fields)).toEqual(before.map(fields))
    }
    // An export line of an older KnowHub: no validity fields.
    await truncateKnowledge(store)
    const line = JSON.parse(lines[0]!) as Record<string, unknown>
    for (const key of ['valid_from', 'valid_to', 'superseded_by', 'supersedes', 'expires_at']) delete line[key]
    expect(await knowledge.importJsonl([JSON.stringify(line)], alice)).toMatchObject({ imported: 1, errors: [] })
    const imported = await knowledge.get(String(line.id), alice)
    expect(imported).toMatchObject({ valid_to: null, superseded_by: null, supersedes: null, expires_at: null })
    expect(imported.valid_from).toBe(new Date((line.source as { timestamp: string }).timestamp).toISOString())
    // A closed entry must say when.
    const bad = { ...JSON.parse(lines[0]!), id: 'knowledge-20260601000000-bad1', superseded_by: fresh.id, valid_to: null }
    expect((await knowledge.importJsonl([JSON.stringify(bad)], alice)).errors).toMatchObject([
      { line: 1, code: 'invalid_import', message: expect.stringMatching(/needs valid_to/) },
    ])
  })

  it('sets and clears expires_at', async () => {
    const entry = await save('session cookie for site a')
    const at = new Date('2026-06-01T00:00:00Z')
    expect((await store.knowledge.setExpiry(entry.id, access, new Date('2026-06-02T00:00:00Z'), at))?.expires_at).toEqual(new Date('2026-06-02T00:00:00Z'))
    expect(await textIds('session cookie', { validity: { now: new Date('2026-06-03T00:00:00Z') } })).toEqual([])
    expect((await store.knowledge.setExpiry(entry.id, access, null, at))?.expires_at).toBeNull()
    expect(await textIds('session cookie', { validity: { now: new Date('2026-06-03T00:00:00Z') } })).toEqual([entry.id])
    expect(await store.knowledge.setExpiry(entry.id, writeAccess(Principal.parse({ user: 'someone-else' })), null, at)).toBeUndefined()
  })
})

describe.each(BACKENDS)('migration 0048 on %s', (backend) => {
  it('backfills valid_from from an ISO source timestamp, else created_at, and adds the columns empty', async () => {
    const database = await createTestDatabase(backend)
    const { dataDir, databaseUrl } = database.options
    const db = databaseUrl ? await openPostgres({ connectionString: databaseUrl }) : await openPGlite({ dataDir: dataDir! })
    try {
      const all = await loadMigrations()
      await migrate(db, { migrations: all.filter((m) => m.name < '0048') })
      const insert = (id: string, timestamp: string | null) =>
        db.query(sql`INSERT INTO knowledge (id, types, task, scopes, owner, content, source, score, owner_score, created_at, updated_at)
          VALUES (${id}, ARRAY['tool'], 't', ARRAY['user:u'], 'user:u', 'c', ${JSON.stringify(timestamp === null ? {} : { timestamp })}::jsonb, 3, 3,
            '2026-02-02T00:00:00Z', '2026-02-02T00:00:00Z')`)
      await insert('a', '2025-05-08')
      await insert('b', '2025-05-08T10:30:00+02:00')
      await insert('c', '1:56 pm on 8 May, 2023')
      await insert('d', '2025-02-30')
      await insert('e', null)
      await migrate(db, { migrations: all })
      const rows = await db.query<{ id: string; valid_from: Date; valid_to: Date | null; superseded_by: string | null; expires_at: Date | null }>(
        sql`SELECT id, valid_from, valid_to, superseded_by, expires_at FROM knowledge ORDER BY id`,
      )
      expect(rows.map((r) => [r.id, new Date(r.valid_from).toISOString(), r.valid_to, r.superseded_by, r.expires_at])).toEqual([
        ['a', '2025-05-08T00:00:00.000Z', null, null, null],
        ['b', '2025-05-08T08:30:00.000Z', null, null, null],
        ['c', '2026-02-02T00:00:00.000Z', null, null, null],
        ['d', '2026-02-02T00:00:00.000Z', null, null, null],
        ['e', '2026-02-02T00:00:00.000Z', null, null, null],
      ])
      // A row written later without valid_from (raw SQL, an older writer) is valid from its created_at.
      await insert('f', '2025-05-08')
      expect((await db.query<{ v: Date }>(sql`SELECT valid_from AS v FROM knowledge WHERE id = 'f'`)).map((r) => new Date(r.v).toISOString())).toEqual([
        '2026-02-02T00:00:00.000Z',
      ])
      // A closed entry must say when; nothing supersedes itself.
      await expect(db.query(sql`UPDATE knowledge SET superseded_by = 'b' WHERE id = 'a'`)).rejects.toThrow(/knowledge_superseded_closed_check/)
      await expect(db.query(sql`UPDATE knowledge SET supersedes = 'a' WHERE id = 'a'`)).rejects.toThrow(/knowledge_supersede_self_check/)
    } finally {
      await db.close()
      await database.drop()
    }
  })
})

describe.each(BACKENDS)('migration 0052 on %s', (backend) => {
  it('counts the entries superseded before it apart in the BM25 statistics', async () => {
    const database = await createTestDatabase(backend)
    const { dataDir, databaseUrl } = database.options
    const db = databaseUrl ? await openPostgres({ connectionString: databaseUrl }) : await openPGlite({ dataDir: dataDir! })
    try {
      const all = await loadMigrations()
      await migrate(db, { migrations: all.filter((m) => m.name < '0052') })
      const insert = (id: string, scopes: string[], words: string, validTo: string | null) =>
        db.query(sql`INSERT INTO knowledge (id, types, task, scopes, owner, content, source, score, owner_score, created_at, updated_at, valid_from, valid_to,
            search_doc, search_len)
          VALUES (${id}, ARRAY['tool'], 't', ${scopes}::text[], 'user:u', 'c', '{}'::jsonb, 3, 3, '2026-02-02T00:00:00Z', '2026-02-02T00:00:00Z',
            '2026-01-01T00:00:00Z', ${validTo}::timestamptz, to_tsvector('simple', ${words}), ${words.split(' ').length})`)
      await insert('a', ['user:u', 'team:t'], 'jenkins ci runner', '2026-02-01T00:00:00Z')
      await insert('b', ['user:u'], 'github actions ci', null)
      await insert('c', ['team:t'], 'jenkins plugins', null)
      await migrate(db, { migrations: all })
      expect(
        await db.query(sql`SELECT scope, docs::int, total_len::int, superseded_docs::int, superseded_len::int FROM knowledge_scope_stats ORDER BY scope`),
      ).toEqual([
        { scope: 'team:t', docs: 2, total_len: 5, superseded_docs: 1, superseded_len: 3 },
        { scope: 'user:u', docs: 2, total_len: 6, superseded_docs: 1, superseded_len: 3 },
      ])
      expect(await db.query(sql`SELECT term, scope, df, superseded_df FROM knowledge_scope_term WHERE term IN ('jenkins', 'ci') ORDER BY term, scope`)).toEqual(
        [
          { term: 'ci', scope: 'team:t', df: 1, superseded_df: 1 },
          { term: 'ci', scope: 'user:u', df: 2, superseded_df: 1 },
          { term: 'jenkins', scope: 'team:t', df: 2, superseded_df: 1 },
          { term: 'jenkins', scope: 'user:u', df: 1, superseded_df: 1 },
        ],
      )
      // Later writes keep them: the current one superseded, the old one reopened.
      await db.query(sql`UPDATE knowledge SET valid_to = '2026-03-01T00:00:00Z' WHERE id = 'b'`)
      await db.query(sql`UPDATE knowledge SET valid_to = NULL WHERE id = 'a'`)
      expect(await db.query(sql`SELECT scope, superseded_docs::int, superseded_len::int FROM knowledge_scope_stats ORDER BY scope`)).toEqual([
        { scope: 'team:t', superseded_docs: 0, superseded_len: 0 },
        { scope: 'user:u', superseded_docs: 1, superseded_len: 3 },
      ])
    } finally {
      await db.close()
      await database.drop()
    }
  })
})
