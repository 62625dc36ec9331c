/**
 * Full-text search: BM25 with bounded candidate work (planTextQuery), on both
 * backends. With a tiny candidate budget the store must return the same top
 * results as the exact path whenever the rare terms decide the ranking.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { textQuery } from '../../src/knowledge/search/document.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { DEFAULT_TEXT_RANKING, planTextQuery } from '../../src/store/knowledge/knowledge.js'
import { Sql, sql } from '../../src/store/sql.js'
import { BACKENDS, useTestStore } from '../helpers/stores.js'
import { exportedEntry } from '../helpers/entries.js'

describe('planTextQuery', () => {
  const ranking = { ...DEFAULT_TEXT_RANKING, candidates: 100 }

  it('makes the rarest terms candidates while their document frequencies fit the budget', () => {
    const plan = planTextQuery(
      [
        { term: 'common', df: 900 },
        { term: 'rare', df: 3 },
        { term: 'mid', df: 60 },
      ],
      1000,
      ranking,
    )
    expect(plan.terms.map((t) => t.term)).toEqual(['rare', 'mid', 'common'])
    expect(plan.candidates.map((t) => t.term)).toEqual(['rare', 'mid'])
    expect(plan.common.map((t) => t.term)).toEqual(['common'])
    expect(plan.commonBound).toBeCloseTo(plan.common[0]!.idf * (ranking.k1 + 1))
    expect(plan.sampled).toBe(false)
  })

  it('always keeps the rarest term, and says when even it is over the budget', () => {
    const plan = planTextQuery(
      [
        { term: 'a', df: 500 },
        { term: 'b', df: 800 },
      ],
      1000,
      ranking,
    )
    expect(plan.candidates.map((t) => t.term)).toEqual(['a'])
    expect(plan.sampled).toBe(true)
    expect(plan.budget).toBe(100)
  })

  it('is exact with an infinite budget', () => {
    const plan = planTextQuery(
      [
        { term: 'a', df: 500 },
        { term: 'b', df: 800 },
      ],
      1000,
      { k1: 1.2, b: 0.5, candidates: Infinity },
    )
    expect(plan.candidates).toHaveLength(2)
    expect(plan.common).toEqual([])
    expect(plan.sampled).toBe(false)
  })
})

describe.each(BACKENDS)('bounded full-text search in SQL on %s', (backend) => {
  const opened = useTestStore(backend, { fulltext: 'sql' })
  let knowledge: KnowledgeService
  const principal = Principal.parse({ user: 'u', project: 'p', permissions: ['read', 'write'] })
  const filter = { visible: visibleScopes(principal) }

  beforeAll(async () => {
    knowledge = await createKnowledgeService({ store: opened.store, embedder: createHashedEmbedder({ dimension: 64 }) })
    // 120 entries: every one says "agent" and "notes", some "proxy", few "selenium" or "captcha".
    const lines: string[] = []
    for (let i = 0; i < 120; i++) {
      const words = ['agent notes', i % 3 === 0 ? 'proxy rotation' : 'plain text', i % 20 === 0 ? 'selenium login' : '', i % 30 === 1 ? 'captcha solver' : '']
      lines.push(
        exportedEntry({
          id: `knowledge-20260101000000-${String(i).padStart(4, '0')}`,
          types: [i % 2 ? 'tool' : 'strategy'],
          task: `entry ${i}`,
          scopes: [i % 5 === 4 ? 'org:other' : i % 2 ? 'user:u' : 'project:p'],
          content: words.join(' ') + ' filler '.repeat(i % 7),
        }),
      )
    }
    const admin = Principal.parse({ user: 'u', project: 'p', org: 'other', permissions: ['admin'] })
    const report = await knowledge.importJsonl(lines, admin, { mode: 'atomic' })
    expect(report.errors).toEqual([])
    await opened.store.knowledge.analyze()
  })

  const exact = { ...DEFAULT_TEXT_RANKING, candidates: Infinity }

  it.each(['selenium agent notes', 'captcha proxy agent', 'captcha selenium notes'])(
    'returns exactly the top results of the exact path for "%s" with a budget of 10',
    async (q) => {
      const bounded = { ...DEFAULT_TEXT_RANKING, candidates: 10 }
      const stats = await opened.store.db.query<{ term: string; df: number }>(sql`SELECT term, sum(df)::int AS df FROM knowledge_scope_term
        WHERE term = ANY(${textQuery(q).terms}::text[]) AND scope = ANY(${filter.visible}::text[]) GROUP BY term`)
      const plan = planTextQuery(stats, 120, bounded)
      expect(plan.common.length).toBeGreaterThan(0) // the budget does leave terms out
      const expected = await opened.store.knowledge.searchText(textQuery(q), filter, 3, exact)
      expect(expected).toHaveLength(3)
      expect(await opened.store.knowledge.searchText(textQuery(q), filter, 3, bounded)).toEqual(expected)
    },
  )

  it('keeps the rare-term entries in the exact order when it also reads common-term entries', async () => {
    const q = 'selenium captcha agent notes'
    const rareIds = new Set(
      (await opened.store.db.query<{ id: string }>(sql`SELECT id FROM knowledge WHERE search_doc @@ 'selenium | captcha'::tsquery`)).map((r) => r.id),
    )
    const expected = (await opened.store.knowledge.searchText(textQuery(q), filter, 50, exact)).filter((hit) => rareIds.has(hit.id))
    const bounded = await opened.store.knowledge.searchText(textQuery(q), filter, 50, { ...DEFAULT_TEXT_RANKING, candidates: 10 })
    expect(bounded.length).toBeGreaterThan(expected.length)
    expect(bounded.filter((hit) => rareIds.has(hit.id))).toEqual(expected)
  })

  it('matches the exact path completely when the budget covers every term', async () => {
    for (const q of ['selenium login', 'captcha solver notes', 'proxy rotation selenium']) {
      const expected = await opened.store.knowledge.searchText(textQuery(q), filter, 50, exact)
      expect(await opened.store.knowledge.searchText(textQuery(q), filter, 50, DEFAULT_TEXT_RANKING)).toEqual(expected)
    }
  })

  it('bounds a query of common words only to a sample of the budget, within the visible entries', async () => {
    const hits = await opened.store.knowledge.searchText(textQuery('agent notes'), filter, 50, { ...DEFAULT_TEXT_RANKING, candidates: 15 })
    expect(hits.length).toBe(15)
    const visible = new Set(
      (await opened.store.db.query<{ id: string }>(sql`SELECT id FROM knowledge WHERE scopes && ${filter.visible}::text[]`)).map((r) => r.id),
    )
    for (const hit of hits) expect(visible.has(hit.id)).toBe(true)
  })

  it('keeps the GIN pending lists small and merges them on analyze', async () => {
    const rows = await opened.store.db.query<{ reloptions: string[] | null }>(sql`SELECT reloptions FROM pg_class WHERE relname = 'knowledge_search_idx'`)
    expect(rows[0]!.reloptions).toContain('gin_pending_list_limit=128')
    const stats = await opened.store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge_scope_term WHERE df > 0`)
    expect(stats[0]!.n).toBeGreaterThan(5)
  })
})

describe.each(BACKENDS)('full-text candidates on a larger table on %s', (backend) => {
  const opened = useTestStore(backend, { fulltext: 'sql' })
  const principal = Principal.parse({ user: 'u', project: 'p', permissions: ['read', 'write'] })
  const filter = { visible: visibleScopes(principal) }

  beforeAll(async () => {
    // 20,000 entries of ~1.5 kB (a third of them rows the caller cannot see); "common" in
    // every one, "rare" in one in forty: a table where the planner, left alone, intersects
    // the text index with the scopes index.
    await opened.store.db.query(sql`INSERT INTO knowledge (id, types, task, scopes, owner, content, score, owner_score,
      search_doc, search_tf, search_len, created_at, updated_at)
      SELECT 'knowledge-20260101000000-' || lpad(i::text, 6, '0'), ARRAY['tool'], 'entry ' || i,
        ARRAY[CASE WHEN i % 3 = 0 THEN 'org:other' ELSE 'project:p' END], 'user:u',
        (SELECT string_agg(md5(i::text || '-' || j::text), ' ') FROM generate_series(1, 45) j), 3, 3,
        CASE WHEN i % 40 = 0 THEN array_to_tsvector(ARRAY['common', 'rare']) ELSE array_to_tsvector(ARRAY['common']) END,
        CASE WHEN i % 40 = 0 THEN '{"common": 1, "rare": 1}'::jsonb ELSE '{"common": 1}'::jsonb END,
        CASE WHEN i % 40 = 0 THEN 2 ELSE 1 END, now(), now()
      FROM generate_series(1, 20000) i`)
    await opened.store.knowledge.analyze()
  }, 120_000)

  it('filters visibility on the rows the text index finds, not through the scopes index, when the caller sees most entries', async () => {
    // The caller sees two thirds of the entries: intersecting the text index with the scopes
    // index would read the scopes index over most of the table (issue 18: 75,000 rows at 100k).
    const statements: Sql[] = []
    const db = opened.store.db as { query: typeof opened.store.db.query }
    const query = db.query.bind(opened.store.db)
    db.query = (async (q: Sql) => {
      if (q.build().text.includes('search_tf->>')) statements.push(q)
      return query(q)
    }) as typeof opened.store.db.query
    let hits
    try {
      hits = await opened.store.knowledge.searchText(textQuery('rare common'), filter, 10)
    } finally {
      db.query = query
    }
    // The same hits as the exact path: the entries with "rare" the caller sees, by id (equal scores).
    const rare = await opened.store.db.query<{ id: string }>(
      sql`SELECT id FROM knowledge WHERE search_doc @@ 'rare'::tsquery AND scopes && ${filter.visible}::text[] ORDER BY id LIMIT 10`,
    )
    expect(hits!.map((hit) => hit.id)).toEqual(rare.map((row) => row.id))
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) {
      const explained = new Sql([`EXPLAIN ${statement.strings[0] ?? ''}`, ...statement.strings.slice(1)], statement.values)
      const plan = (await opened.store.db.query<{ 'QUERY PLAN': string }>(explained)).map((row) => row['QUERY PLAN']).join('\n')
      expect(plan).toContain('knowledge_search_idx')
      expect(plan).not.toContain('knowledge_scopes_idx')
    }
  })
})
