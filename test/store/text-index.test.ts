/**
 * The embedded store's in-memory full-text index: the pure index (filters, ties,
 * replacement), and its equality with the exact SQL path on a real PGlite database
 * after every kind of write — through the service, through import and merge, and
 * through raw SQL statements that bypass the store (the change log still sees them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { textQuery } from '../../src/knowledge/search/document.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { knowledgeStore, type KnowledgeStore, type TraceNeighbours } from '../../src/store/knowledge/knowledge.js'
import { sql } from '../../src/store/sql.js'
import { openStore, type Store } from '../../src/store/store.js'
import { createTextIndex, type IndexedEntry } from '../../src/store/text-index/text-index.js'
import { DEFAULT_TEXT_RANKING, type EntryFilter, type RankedId } from '../../src/store/text-index/query.js'
import pg from 'pg'
import { BACKENDS, createTestDatabase, openTestStore, SERVER_BACKENDS, type TestDatabase } from '../helpers/stores.js'
import { driveWritePaths } from '../helpers/write-paths.js'

const entry = (id: string, tf: Record<string, number>, more: Partial<IndexedEntry> = {}): IndexedEntry => ({
  id,
  scopes: ['user:u'],
  types: ['tool'],
  status: 'active',
  score: 3,
  helpful: 0,
  harmful: 0,
  tf,
  length: Object.values(tf).reduce((a, b) => a + b, 0),
  ...more,
})

describe('createTextIndex', () => {
  const visible: EntryFilter = { visible: ['user:u', 'public'] }
  const ids = (hits: RankedId[]) => hits.map((h) => h.id)

  it('ranks by BM25, rarer terms weighing more, and breaks ties by id', () => {
    const index = createTextIndex()
    index.upsert(entry('b', { proxy: 1, agent: 1 }))
    index.upsert(entry('a', { proxy: 1, agent: 1 }))
    index.upsert(entry('c', { agent: 1, notes: 1 }))
    index.upsert(entry('d', { agent: 2 }))
    expect(ids(index.search(['proxy', 'agent'], visible, 10, DEFAULT_TEXT_RANKING))).toEqual(['a', 'b', 'd', 'c'])
    expect(ids(index.search(['proxy', 'agent'], visible, 2, DEFAULT_TEXT_RANKING))).toEqual(['a', 'b'])
    expect(index.search(['absent'], visible, 10, DEFAULT_TEXT_RANKING)).toEqual([])
    expect(index.size).toBe(4)
  })

  it('applies every filter: visibility, status, types, scopes, min score, negative quality', () => {
    const index = createTextIndex()
    index.upsert(entry('mine', { selenium: 1 }))
    index.upsert(entry('theirs', { selenium: 1 }, { scopes: ['user:other'] }))
    index.upsert(entry('public', { selenium: 1 }, { scopes: ['public'], types: ['strategy'] }))
    index.upsert(entry('archived', { selenium: 1 }, { status: 'archived' }))
    index.upsert(entry('low', { selenium: 1 }, { score: 1 }))
    index.upsert(entry('harmful', { selenium: 1 }, { harmful: 2 }))
    index.upsert(entry('team', { selenium: 1 }, { scopes: ['team:t', 'user:u'] }))
    const search = (filter: Partial<EntryFilter>) => ids(index.search(['selenium'], { ...visible, ...filter }, 10, DEFAULT_TEXT_RANKING)).sort()
    expect(search({})).toEqual(['harmful', 'low', 'mine', 'public', 'team'])
    expect(search({ status: ['archived'] })).toEqual(['archived'])
    expect(search({ types: ['strategy'] })).toEqual(['public'])
    expect(search({ types: ['no_such_type'] })).toEqual([])
    expect(search({ scopes: ['team:t'] })).toEqual(['team'])
    expect(search({ minScore: 3 })).toEqual(['harmful', 'mine', 'public', 'team'])
    expect(search({ nonNegativeQuality: true })).toEqual(['low', 'mine', 'public', 'team'])
    expect(search({ visible: ['user:nobody'] })).toEqual([])
  })

  it('sees changes of fields and text after a search (cached filter verdicts are dropped)', () => {
    const index = createTextIndex()
    index.upsert(entry('x', { proxy: 1 }))
    index.upsert(entry('y', { proxy: 1 }))
    const filter = { ...visible, nonNegativeQuality: true }
    expect(ids(index.search(['proxy'], filter, 10, DEFAULT_TEXT_RANKING))).toEqual(['x', 'y'])
    index.upsert(entry('x', { proxy: 1 }, { harmful: 5 }))
    expect(ids(index.search(['proxy'], filter, 10, DEFAULT_TEXT_RANKING))).toEqual(['y'])
    index.upsert(entry('y', { captcha: 1 }))
    expect(index.search(['proxy'], filter, 10, DEFAULT_TEXT_RANKING)).toEqual([])
    expect(ids(index.search(['captcha'], filter, 10, DEFAULT_TEXT_RANKING))).toEqual(['y'])
    index.remove('y')
    index.remove('unknown')
    expect(index.search(['captcha'], filter, 10, DEFAULT_TEXT_RANKING)).toEqual([])
    expect(index.size).toBe(1)
    index.upsert(entry('z', { captcha: 3 }))
    expect(ids(index.search(['captcha', 'proxy'], visible, 10, DEFAULT_TEXT_RANKING))).toEqual(['z', 'x'])
    index.clear()
    expect(index.size).toBe(0)
    expect(index.search(['captcha'], visible, 10, DEFAULT_TEXT_RANKING)).toEqual([])
  })

  it('grows past its initial capacity and reuses the slots of removed entries', () => {
    const index = createTextIndex()
    for (let i = 0; i < 3000; i++) index.upsert(entry(`e${String(i).padStart(4, '0')}`, { common: 1, [`w${i % 7}`]: 1 }))
    for (let i = 0; i < 3000; i += 2) index.remove(`e${String(i).padStart(4, '0')}`)
    for (let i = 0; i < 500; i++) index.upsert(entry(`n${i}`, { fresh: 1 }))
    expect(index.size).toBe(2000)
    expect(index.search(['common'], visible, 5000, DEFAULT_TEXT_RANKING)).toHaveLength(1500)
    expect(index.search(['w1'], visible, 5000, DEFAULT_TEXT_RANKING).every((hit) => Number(hit.id.slice(1)) % 2 === 1)).toBe(true)
    expect(index.search(['fresh'], visible, 5000, DEFAULT_TEXT_RANKING)).toHaveLength(500)
  })

  it('answers the same after its arrays are trimmed (compact), and grows again after it', () => {
    const index = createTextIndex()
    const reference = createTextIndex()
    for (let i = 0; i < 1500; i++) {
      const e = entry(`e${String(i).padStart(4, '0')}`, { common: 1 + (i % 3), [`w${i % 7}`]: 1 + (i % 2) }, { length: 2 + (i % 11) })
      index.upsert(e)
      reference.upsert(e)
    }
    index.compact()
    const same = () => {
      for (const terms of [['common'], ['w3', 'common'], ['w1', 'w2', 'late']]) {
        expect(index.search(terms, visible, 50, DEFAULT_TEXT_RANKING), terms.join(' ')).toEqual(reference.search(terms, visible, 50, DEFAULT_TEXT_RANKING))
      }
    }
    same()
    for (let i = 0; i < 700; i++) {
      const e = entry(`l${i}`, { late: 1, common: 2, w3: 1 + (i % 4) })
      index.upsert(e)
      reference.upsert(e)
    }
    index.remove('e0003')
    reference.remove('e0003')
    same()
  })
})

describe('createTextIndex: dialogue neighbours', () => {
  const turn = (id: string, trace: string, created: number, more: Partial<IndexedEntry> = {}) => entry(id, { word: 1 }, { trace, created, ...more })
  const around = (index: ReturnType<typeof createTextIndex>, ids: string[], visible = ['user:u']) =>
    index.traceNeighbours(ids, visible).sort((a, b) => (a.id < b.id ? -1 : 1))

  it('names the visible active entries at the places either side, entries of one moment sharing a place', () => {
    const index = createTextIndex()
    index.upsert(turn('a', 't', 1))
    index.upsert(turn('b2', 't', 2))
    index.upsert(turn('b1', 't', 2))
    index.upsert(turn('hidden', 't', 3, { scopes: ['user:other'] }))
    index.upsert(turn('archived', 't', 3.5, { status: 'archived' }))
    index.upsert(turn('c', 't', 4))
    index.upsert(turn('other', 'u', 3))
    index.upsert(turn('loose', '', 3))
    expect(around(index, ['a', 'b1', 'c', 'loose', 'hidden', 'archived', 'unknown', 'a'])).toEqual([
      { id: 'a', previous: [], next: ['b1', 'b2'] },
      { id: 'b1', previous: ['a'], next: ['c'] },
      { id: 'c', previous: ['b1', 'b2'], next: [] },
    ])
    // The hidden entry counts for a caller who sees it.
    expect(around(index, ['c'], ['user:u', 'user:other'])).toEqual([{ id: 'c', previous: ['hidden'], next: [] }])
  })

  it('follows an entry that moves to another trace, is archived or removed', () => {
    const index = createTextIndex()
    index.upsert(turn('a', 't', 1))
    index.upsert(turn('b', 't', 2))
    index.upsert(turn('c', 't', 3))
    index.upsert(turn('b', 'u', 2))
    expect(around(index, ['a'])).toEqual([{ id: 'a', previous: [], next: ['c'] }])
    index.upsert(turn('c', 't', 3, { status: 'archived' }))
    expect(around(index, ['a'])).toEqual([{ id: 'a', previous: [], next: [] }])
    index.upsert(turn('d', 't', 5))
    index.remove('a')
    expect(around(index, ['d', 'a'])).toEqual([{ id: 'd', previous: [], next: [] }])
    index.clear()
    expect(around(index, ['d'])).toEqual([])
  })
})

describe.each(BACKENDS)('the in-memory index matches BM25 in SQL on %s, whatever path writes', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let exactSql: KnowledgeStore
  const alice = Principal.parse({ user: 'alice', project: 'p', org: 'acme', permissions: ['read', 'write'] })
  const admin = Principal.parse({ user: 'root', project: 'p', org: 'acme', permissions: ['admin'] })
  const exact = { ...DEFAULT_TEXT_RANKING, candidates: Infinity }
  const queries = ['selenium login captcha', 'proxy rotation', 'agent notes proxy', '用户 偏好 类型', 'deploy docker pnpm', 'login']
  const filters: EntryFilter[] = [
    { visible: visibleScopes(alice) },
    { visible: visibleScopes(alice), types: ['tool'] },
    { visible: visibleScopes(alice), minScore: 3, nonNegativeQuality: true },
    { visible: visibleScopes(alice), scopes: ['project:p'] },
    { visible: visibleScopes(alice), status: ['active', 'merged', 'archived'] },
    { visible: ['user:bob', 'public'] },
    // Issue 31: a search of the history counts superseded entries in its statistics, a current one does not.
    { visible: visibleScopes(alice), validity: { superseded: true } },
    { visible: visibleScopes(alice), validity: { asOf: new Date(Date.now() + 86_400_000) } },
  ]

  // Scores are sums of the same terms in another order: compare ids, and scores to 1e-9.
  const normalise = (hits: RankedId[]) => hits.map((h) => ({ id: h.id, score: Math.round(h.score * 1e9) / 1e9 }))
  async function expectSameAsSql(step: string): Promise<void> {
    for (const q of queries) {
      for (const filter of filters) {
        const memory = await store.knowledge.searchText(textQuery(q), filter, 20)
        const reference = await exactSql.searchText(textQuery(q), filter, 20, exact)
        expect(normalise(memory), `${step}: "${q}" ${JSON.stringify(filter)}`).toEqual(normalise(reference))
      }
    }
    // Dialogue neighbours: every entry's places either side in its trace, per caller.
    const ids = (await store.db.query<{ id: string }>(sql`SELECT id FROM knowledge ORDER BY id`)).map((r) => r.id)
    const byId = (rows: TraceNeighbours[]) => rows.slice().sort((a, b) => (a.id < b.id ? -1 : 1))
    for (const visible of [visibleScopes(alice), ['user:bob', 'public'], ['project:p']]) {
      const memory = await store.knowledge.traceNeighbours(ids, visible)
      expect(byId(memory), `${step}: neighbours seen by ${visible.join(',')}`).toEqual(byId(await exactSql.traceNeighbours(ids, visible)))
    }
  }

  beforeAll(async () => {
    // On a server the index is an option (issue 32): the store reads the change log as a registered reader.
    const opened = await openTestStore(backend, backend === 'pglite' ? {} : { fulltext: 'memory' })
    store = opened.store
    // Built before the first search (on a server, searches answer in SQL while it builds).
    await store.refreshCaches([])
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
    exactSql = knowledgeStore(store.db, () => undefined)
  })
  afterAll(async () => cleanup())

  it('after saves, edits, feedback, archive, delete, import, merge and unmerge through the service', async () => {
    await driveWritePaths({ store, embedder: createHashedEmbedder({ dimension: 64 }), knowledge, author: alice, admin }, expectSameAsSql, {
      contentSuffix: '用户偏好使用 TypeScript 类型安全',
    })
    // The comparison above had neighbours to compare.
    const ids = (await store.db.query<{ id: string }>(sql`SELECT id FROM knowledge ORDER BY id`)).map((r) => r.id)
    const around = await store.knowledge.traceNeighbours(ids, visibleScopes(alice))
    expect(around.filter((n) => n.next.length > 0 && n.previous.length > 0).length).toBeGreaterThan(10)
  })

  it('after raw SQL writes that bypass the store, and after TRUNCATE', async () => {
    await store.db.query(sql`UPDATE knowledge SET harmful = harmful + 3 WHERE types && ARRAY['tool']`)
    await store.db.query(sql`UPDATE knowledge SET scopes = ARRAY['user:bob'] WHERE id IN (SELECT id FROM knowledge ORDER BY id LIMIT 3)`)
    await store.db.query(sql`DELETE FROM knowledge WHERE id IN (SELECT id FROM knowledge ORDER BY id DESC LIMIT 2)`)
    // An entry closed and one reopened behind the store's back (issue 31: the statistics of current entries).
    await store.db.query(sql`UPDATE knowledge SET valid_to = now() WHERE id IN (SELECT id FROM knowledge WHERE valid_to IS NULL ORDER BY id LIMIT 2)`)
    // Reopened: one without a successor (a superseded entry must keep its valid_to, a check constraint of 0048); the ids' order is random.
    await store.db.query(
      sql`UPDATE knowledge SET valid_to = NULL WHERE id IN (SELECT id FROM knowledge WHERE valid_to IS NOT NULL AND superseded_by IS NULL ORDER BY id LIMIT 1)`,
    )
    await expectSameAsSql('raw updates and deletes')
    await store.db.query(sql`TRUNCATE knowledge CASCADE`)
    expect(await store.knowledge.searchText(textQuery('selenium'), filters[0]!, 20)).toEqual([])
    await knowledge.save({ task: 'selenium login', content: 'use a proxy rotation', types: ['tool'] }, alice)
    await expectSameAsSql('truncate, then a save')
  })

  it('changes its generation exactly when the table changes, and prunes the change log', async () => {
    if (backend !== 'pglite') {
      // A server's log can fill a gap below its position: no generation a response cache could key on.
      expect(await store.knowledge.searchGeneration()).toBeUndefined()
      // Many changes at once (over 40,000 log rows): read page by page, still equal to SQL.
      for (let i = 0; i < 1100; i++) await store.db.query(sql`UPDATE knowledge SET helpful = helpful + ${i % 2} WHERE true`)
      await expectSameAsSql('after many changes')
      return
    }
    const before = await store.knowledge.searchGeneration()
    expect(before).toBeGreaterThan(0)
    expect(await store.knowledge.searchGeneration()).toBe(before)
    const entry = await knowledge.save({ task: 'generation', content: 'one more', types: ['tool'] }, alice)
    const after = await store.knowledge.searchGeneration()
    expect(after).toBeGreaterThan(before!)
    await knowledge.feedback(entry.id, { add_helpful_case: { task: 't', outcome: 'ok' } }, alice)
    expect(await store.knowledge.searchGeneration()).toBeGreaterThan(after!)
    // Over 2,000 applied changes: the index prunes the rows it has read.
    for (let i = 0; i < 1100; i++) await store.db.query(sql`UPDATE knowledge SET helpful = helpful WHERE true`)
    expect((await store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_change`))[0]!.n).toBeGreaterThan(2_000)
    await store.knowledge.searchGeneration()
    expect((await store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_change`))[0]!.n).toBe(0)
    await expectSameAsSql('after pruning')
  })

  it('writes the change log only where an in-memory index reads it: not from a store that searches in SQL', async () => {
    const changes = async (db: Store['db']) => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_change`))[0]!.n
    const logged = await changes(store.db)
    await knowledge.save({ task: 'change log on', content: 'memory index', types: ['tool'] }, alice)
    expect(await changes(store.db)).toBeGreaterThan(logged)
    for (const [backend, options] of [
      ['pglite', { fulltext: 'sql' }],
      ['postgres', {}],
    ] as const) {
      const other = await openTestStore(backend, options)
      try {
        const service = await createKnowledgeService({ store: other.store, embedder: createHashedEmbedder({ dimension: 64 }) })
        const before = await changes(other.store.db)
        const saved = await service.save({ task: 'change log off', content: 'sql search', types: ['tool'] }, alice)
        await service.feedback(saved.id, { add_helpful_case: { task: 't', outcome: 'ok' } }, alice)
        await other.store.db.query(sql`UPDATE knowledge SET score = 4`)
        await other.store.db.query(sql`TRUNCATE knowledge CASCADE`)
        expect(await changes(other.store.db), backend).toBe(before)
      } finally {
        await other.cleanup()
      }
    }
  })
})

describe.each(SERVER_BACKENDS)('the in-memory index on a %s server, beside other processes (issue 32)', (backend) => {
  let database: TestDatabase
  let writer: Store
  let reader: Store
  let writing: KnowledgeService
  const alice = Principal.parse({ user: 'alice', project: 'p', org: 'acme', permissions: ['read', 'write'] })
  const aliceSees: EntryFilter = { visible: visibleScopes(alice), nonNegativeQuality: true }
  const embedder = createHashedEmbedder({ dimension: 64 })
  const found = async (store: Store, q: string, filter: EntryFilter = aliceSees) =>
    (await store.knowledge.searchText(textQuery(q), filter, 50)).map((h) => h.id).sort()
  const changes = async () => (await writer.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_change`))[0]!.n
  /** A raw connection, as another program's transaction. */
  async function client(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: database.options.databaseUrl })
    await c.connect()
    return c
  }

  beforeAll(async () => {
    database = await createTestDatabase(backend)
    // The writer searches in SQL (its sessions would skip the log): the reader's registration makes them log.
    writer = await openStore(database.options)
    writing = await createKnowledgeService({ store: writer, embedder })
    reader = await openStore({ ...database.options, fulltext: 'memory' })
    await reader.refreshCaches([])
  })
  afterAll(async () => {
    await reader.close()
    await writer.close()
    await database.drop()
  })

  it("sees at once what another process writes, through the service or raw SQL, the SQL path's answer each time", async () => {
    const exact = { ...DEFAULT_TEXT_RANKING, candidates: Infinity }
    const same = async (step: string) => {
      for (const q of ['selenium login', 'proxy rotation captcha', 'docker']) {
        const memory = await reader.knowledge.searchText(textQuery(q), aliceSees, 20)
        const reference = await writer.knowledge.searchText(textQuery(q), aliceSees, 20, exact)
        expect(
          memory.map((h) => [h.id, Math.round(h.score * 1e9)]),
          `${step}: ${q}`,
        ).toEqual(reference.map((h) => [h.id, Math.round(h.score * 1e9)]))
      }
    }
    expect(await found(reader, 'selenium')).toEqual([])
    const a = await writing.save({ task: 'selenium login', content: 'use a proxy rotation', types: ['tool'] }, alice)
    const b = await writing.save({ task: 'captcha solver', content: 'selenium with docker', types: ['tool'] }, alice)
    expect(await found(reader, 'selenium')).toEqual([a.id, b.id].sort())
    await same('saved')
    await writing.feedback(a.id, { add_harmful_case: { task: 't', outcome: 'broke' } }, alice)
    await writing.feedback(a.id, { add_harmful_case: { task: 't', outcome: 'broke again' } }, alice)
    expect(await found(reader, 'selenium')).toEqual([b.id])
    await same('harmful feedback')
    await writer.db.query(sql`UPDATE knowledge SET scopes = ARRAY['user:bob'] WHERE id = ${b.id}`)
    expect(await found(reader, 'selenium')).toEqual([])
    expect(await found(reader, 'selenium', { visible: ['user:bob'] })).toEqual([b.id])
    await same('rescoped')
    await writer.db.query(sql`DELETE FROM knowledge WHERE id = ${b.id}`)
    expect(await found(reader, 'selenium', { visible: ['user:bob'] })).toEqual([])
    await same('deleted')
  })

  it('finds a change committed after a later one (sequence numbers out of commit order)', async () => {
    const x = await writing.save({ task: 'zebra schedule', content: 'weekly zebra feeding', types: ['tool'] }, alice)
    expect(await found(reader, 'zebra schedule')).toContain(x.id)
    const other = await client()
    try {
      // The other program's transaction takes the next sequence number and stays open (a
      // harmful weight: no statistics row locked, so the later save does not wait for it)…
      await other.query('BEGIN')
      await other.query(`UPDATE knowledge SET harmful_weight = 10 WHERE id = $1`, [x.id])
      // …while a later change commits and the reader reads past it.
      const y = await writing.save({ task: 'zebra notes', content: 'zebra keys', types: ['tool'] }, alice)
      expect(await found(reader, 'zebra')).toEqual([x.id, y.id].sort())
      await other.query('COMMIT')
      expect(await found(reader, 'zebra')).toEqual([y.id])
      expect(await found(reader, 'zebra', { visible: visibleScopes(alice) })).toEqual([x.id, y.id].sort())
      // A rolled-back change leaves a number that never appears: it is given up, nothing changes.
      await other.query('BEGIN')
      await other.query(`UPDATE knowledge SET harmful_weight = 10 WHERE id = $1`, [y.id])
      await other.query('ROLLBACK')
      await writing.save({ task: 'unrelated', content: 'docker compose', types: ['tool'] }, alice)
      expect(await found(reader, 'zebra')).toEqual([y.id])
    } finally {
      await other.end()
    }
  })

  it("a new reader's first build waits for a transaction in flight, and sees its change", async () => {
    const z = await writing.save({ task: 'captcha farm', content: 'captcha farm notes', types: ['tool'] }, alice)
    const other = await client()
    const late = await openStore({ ...database.options, fulltext: 'memory' })
    try {
      await other.query('BEGIN')
      await other.query(`UPDATE knowledge SET harmful_weight = 10 WHERE id = $1`, [z.id])
      // A later change commits first: the log's top is past the open transaction's number.
      await writing.save({ task: 'later', content: 'committed first', types: ['tool'] }, alice)
      // Until its first build ends, a new reader answers in SQL (already current).
      expect(await found(late, 'captcha farm')).toEqual([z.id])
      const built = late.refreshCaches([])
      await new Promise((resolve) => setTimeout(resolve, 300))
      await other.query('COMMIT')
      await built
      expect(await found(late, 'captcha farm')).toEqual([])
      expect(await found(late, 'captcha farm', { visible: visibleScopes(alice) })).toEqual([z.id])
    } finally {
      await other.end()
      await late.close()
    }
  })

  it("never shows another tenant's entries, and they move no score", async () => {
    const mine = await writing.save({ task: 'quokka census', content: 'quokka counting notes', types: ['tool'] }, alice)
    const before = await reader.knowledge.searchText(textQuery('quokka census'), aliceSees, 10)
    expect(before.map((h) => h.id)).toEqual([mine.id])
    // Another org's entries full of the same words, written by another program.
    const other = await client()
    try {
      const mallory = Principal.parse({ user: 'mallory', org: 'evil', permissions: ['read', 'write'] })
      for (let i = 0; i < 5; i++) await writing.save({ task: 'quokka quokka census', content: `quokka ${i}`, types: ['tool'] }, mallory)
      await other.query(`UPDATE knowledge SET score = 5 WHERE 'user:mallory' = ANY(scopes)`)
    } finally {
      await other.end()
    }
    const after = await reader.knowledge.searchText(textQuery('quokka census'), aliceSees, 10)
    expect(after).toEqual(before)
    const theirs = await reader.knowledge.searchText(textQuery('quokka census'), { visible: ['user:mallory', 'org:evil'] }, 10)
    expect(theirs).toHaveLength(5)
  })

  it('makes every session log while a reader is registered, and none once the last one closes', async () => {
    const before = await changes()
    await writing.save({ task: 'logged', content: 'while a reader runs', types: ['tool'] }, alice)
    expect(await changes()).toBeGreaterThan(before)
    await reader.close()
    const after = await changes()
    await writing.save({ task: 'not logged', content: 'no reader left', types: ['tool'] }, alice)
    expect(await changes()).toBe(after)
    reader = await openStore({ ...database.options, fulltext: 'memory' })
    await reader.refreshCaches([])
    expect(await found(reader, 'logged')).toHaveLength(2)
  })
})
