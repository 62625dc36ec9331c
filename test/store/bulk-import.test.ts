/**
 * Bulk import (issue 18): multi-row INSERTs, and BM25 statistics kept once per statement
 * (migration 0035), or on the embedded database once per import (migration 0022). After
 * imports (new entries, replaced ones, several scopes per entry), a delete and an update,
 * the per-scope statistics must equal those recomputed from the rows themselves, on every
 * backend. Embeddings are sent in binary wherever the column is pgvector's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { vectorBinary } from '../../src/store/knowledge/transfer.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'
import type { ImportItem } from '../../src/store/knowledge/knowledge.js'
import { exportedEntry } from '../helpers/entries.js'

const admin = Principal.parse({ user: 'u', project: 'p', team: 't', permissions: ['admin'] })

function line(i: number, content: string, scopes: string[]): string {
  const entry = exportedEntry({ id: `knowledge-20260101000000-${String(i).padStart(4, '0')}`, task: `entry ${i}`, content, scopes })
  // Every seventh entry was superseded (issue 31): the statistics count it apart too (migration 0052).
  return i % 7 === 3 ? JSON.stringify({ ...(JSON.parse(entry) as object), valid_from: '2025-06-01', valid_to: '2026-02-01' }) : entry
}

const SCOPES = [['user:u'], ['project:p'], ['user:u', 'team:t'], ['team:t', 'team:t', 'project:p']]
const WORDS = ['proxy', 'rotation', 'selenium', 'login', 'captcha', 'solver', 'retry', 'backoff']

describe.each(BACKENDS)('bulk import on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService

  beforeAll(async () => {
    const opened = await openTestStore(backend, { fulltext: 'sql' })
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
  })
  afterAll(async () => cleanup())

  /** The statistics as stored, and as recomputed from the rows (terms with df 0 left out). */
  async function statistics() {
    const stored = await store.db.query(sql`SELECT term, scope, df, superseded_df FROM knowledge_scope_term WHERE df <> 0 ORDER BY term, scope`)
    const derived = await store.db.query(sql`SELECT lexeme AS term, s.scope, count(*)::int AS df,
      (count(*) FILTER (WHERE k.valid_to IS NOT NULL))::int AS superseded_df
      FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s, unnest(tsvector_to_array(k.search_doc)) AS lexeme
      GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope`)
    const storedDocs = await store.db.query(sql`SELECT scope, docs::int, total_len::int, superseded_docs::int, superseded_len::int
      FROM knowledge_scope_stats WHERE docs <> 0 ORDER BY scope`)
    const derivedDocs = await store.db.query(sql`SELECT s.scope, count(*)::int AS docs, sum(k.search_len)::int AS total_len,
      (count(*) FILTER (WHERE k.valid_to IS NOT NULL))::int AS superseded_docs, coalesce(sum(k.search_len) FILTER (WHERE k.valid_to IS NOT NULL), 0)::int AS superseded_len
      FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s GROUP BY s.scope ORDER BY s.scope`)
    return { stored: { terms: stored, docs: storedDocs }, derived: { terms: derived, docs: derivedDocs } }
  }

  it('keeps the per-scope statistics exact through batched imports, replacements, a delete and an edit', async () => {
    const first = Array.from({ length: 1_200 }, (_, i) => line(i, `${WORDS[i % 8]} ${WORDS[(i * 3) % 8]} note ${i % 13}`, SCOPES[i % 4]!))
    // 1,200 lines in batches of 700: multi-row statements of 500 and 200 rows.
    expect((await knowledge.importJsonl(first, admin, { mode: 'partial', batchSize: 700 })).errors).toEqual([])
    // Replace a hundred entries (other text, other scopes) and add fifty.
    const second = Array.from({ length: 150 }, (_, j) => line(1_150 + j, `${WORDS[j % 8]} replaced ${j % 5}`, SCOPES[(j + 1) % 4]!))
    const replaced = await knowledge.importJsonl(second, admin, { mode: 'atomic', on_conflict: 'replace', batchSize: 40 })
    expect(replaced).toMatchObject({ imported: 150, errors: [] })
    await store.db.query(sql`DELETE FROM knowledge WHERE id LIKE ${'knowledge-20260101000000-00%'}`)
    await store.db.query(sql`UPDATE knowledge SET scopes = ${['org:o']}::text[] WHERE id = ${'knowledge-20260101000000-0500'}`)
    // Superseded and reopened by plain updates (the row trigger, migration 0052), one of them with new scopes at once.
    await store.db.query(sql`UPDATE knowledge SET valid_to = now() WHERE id IN (${'knowledge-20260101000000-0600'}, ${'knowledge-20260101000000-0601'})`)
    await store.db.query(sql`UPDATE knowledge SET valid_to = NULL, scopes = ${['user:u']}::text[] WHERE id = ${'knowledge-20260101000000-0605'}`)
    const { stored, derived } = await statistics()
    expect(stored.docs.some((row) => (row as { superseded_docs: number }).superseded_docs > 0)).toBe(true)
    expect(stored.docs).toEqual(derived.docs)
    expect(stored.terms).toEqual(derived.terms)
    // 1,200, plus the hundred new ids 1200-1299 (1150-1199 were replaced), less the hundred ids 0000-0099.
    expect((await store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`))[0]!.n).toBe(1_200)
  })

  it('updates the statistics once per statement on insert and delete (migration 0035), once per row on update', async () => {
    const triggers = await store.db.query<{ name: string; per_row: boolean }>(sql`SELECT tgname AS name, (tgtype & 1) = 1 AS per_row
      FROM pg_trigger WHERE tgrelid = 'knowledge'::regclass AND tgname LIKE 'knowledge_scope_search_stats_%' ORDER BY tgname`)
    expect(triggers).toEqual([
      { name: 'knowledge_scope_search_stats_delete', per_row: false },
      { name: 'knowledge_scope_search_stats_insert', per_row: false },
      { name: 'knowledge_scope_search_stats_truncate', per_row: false },
      { name: 'knowledge_scope_search_stats_update', per_row: true },
    ])
  })
})

describe.each(BACKENDS)('imported vectors on %s', (backend) => {
  it('stores each imported embedding exactly as the embedder made it (binary where the column is pgvector, text for real[])', async () => {
    const { store, cleanup } = await openTestStore(backend)
    try {
      const hashed = createHashedEmbedder({ dimension: 64 })
      const made: Float32Array[] = []
      const recorded = {
        ...hashed,
        embed: async (texts: string[]) => {
          const vectors = await hashed.embed(texts, { kind: 'document' })
          made.push(...vectors)
          return vectors
        },
      }
      const knowledge = await createKnowledgeService({ store, embedder: recorded })
      const lines = Array.from({ length: 3 }, (_, i) => line(i, `${WORDS[i]} ${WORDS[i + 1]} notes`, ['user:u']))
      expect((await knowledge.importJsonl(lines, admin, { mode: 'atomic' })).errors).toEqual([])
      const rows = await store.db.query<{ v: string }>(sql`SELECT embedding::text AS v FROM knowledge ORDER BY id`)
      expect(made).toHaveLength(3)
      // The same vectors written as text (the dialect's form before), as the database prints them.
      const expected = []
      for (const vector of made) {
        const [row] = await store.db.query<{ v: string }>(
          store.pgvector ? sql`SELECT (${`[${vector.join(',')}]`}::vector)::text AS v` : sql`SELECT (${`{${vector.join(',')}}`}::real[])::text AS v`,
        )
        expected.push(row!.v)
      }
      expect(rows.map((row) => row.v)).toEqual(expected)
    } finally {
      await cleanup()
    }
  })
})

describe('vectorBinary', () => {
  it("writes pgvector's binary input: dimension, an unused word, big-endian float4s, non-finite as 0", () => {
    const buffer = vectorBinary(new Float32Array([0.5, -1, Number.NaN]))
    expect([...buffer]).toEqual([0, 3, 0, 0, 0x3f, 0, 0, 0, 0xbf, 0x80, 0, 0, 0, 0, 0, 0])
  })
})

describe('bulk import statistics on the embedded database (migration 0022)', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService

  beforeAll(async () => {
    const opened = await openTestStore('pglite', { fulltext: 'sql' })
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
  })
  afterAll(async () => cleanup())

  const enabled = async () =>
    (await store.db.query<{ on: string }>(sql`SELECT tgenabled AS on FROM pg_trigger WHERE tgname = 'knowledge_scope_search_stats_insert'`))[0]!.on

  it('adds the statistics of an all-or-nothing import once, by one statement, and turns the insert trigger back on', async () => {
    const lines = Array.from({ length: 600 }, (_, i) => line(5_000 + i, `${WORDS[i % 8]} ${WORDS[(i * 5) % 8]} shared`, SCOPES[i % 4]!))
    expect(await knowledge.importJsonl(lines, admin, { mode: 'atomic', batchSize: 100 })).toMatchObject({ imported: 600, errors: [] })
    // Six batches: with a statement trigger each would have rewritten the shared rows (six command ids).
    const commands = await store.db.query<{ n: number }>(sql`SELECT count(DISTINCT cmin::text)::int AS n FROM knowledge_scope_term`)
    expect(commands[0]!.n).toBe(1)
    expect(await enabled()).toBe('O')
    const derived = await store.db.query(sql`SELECT lexeme AS term, s.scope, count(*)::int AS df
      FROM knowledge k, LATERAL (SELECT DISTINCT unnest(k.scopes) AS scope) s, unnest(tsvector_to_array(k.search_doc)) AS lexeme
      GROUP BY lexeme, s.scope ORDER BY lexeme, s.scope`)
    expect(await store.db.query(sql`SELECT term, scope, df FROM knowledge_scope_term WHERE df <> 0 ORDER BY term, scope`)).toEqual(derived)
  })

  it('a failed import leaves the statistics and the trigger as they were', async () => {
    const before = await store.db.query(sql`SELECT term, scope, df FROM knowledge_scope_term ORDER BY term, scope`)
    const item = (id: string): ImportItem => ({
      record: {
        ...JSON.parse(line(0, 'proxy rotation failed', ['user:u'])),
        id,
        created_at: new Date(),
        updated_at: new Date(),
        score: 3,
        helpful: 0,
        harmful: 0,
        confidence: 0.5,
      },
      doc: { title: ['failed'], body: ['proxy', 'rotation', 'failed'] },
      embedding: undefined,
      helpful_history: [],
      harmful_history: [],
      versions: [],
      replace: false,
    })
    async function* batches() {
      yield [item('knowledge-20260101000000-9001')]
      // The same id again: the second INSERT fails after the first went in.
      yield [item('knowledge-20260101000000-9001')]
    }
    await expect(store.knowledge.importBatches(batches(), true, { visible: [], owners: [], scopes: [] })).rejects.toThrow()
    expect(await enabled()).toBe('O')
    expect(await store.db.query(sql`SELECT term, scope, df FROM knowledge_scope_term ORDER BY term, scope`)).toEqual(before)
    expect(await store.db.query(sql`SELECT id FROM knowledge WHERE id = ${'knowledge-20260101000000-9001'}`)).toEqual([])
  })
})

describe('binary parameters on the embedded database', () => {
  it("reads a byte array as its type's binary input (pgvector: vector_recv)", async () => {
    const { store, cleanup } = await openTestStore('pglite')
    try {
      const rows = await store.db.query<{ v: string }>(sql`SELECT (${vectorBinary(new Float32Array([0.5, -1, 0.25]))}::vector)::text AS v`)
      expect(rows[0]!.v).toBe('[0.5,-1,0.25]')
    } finally {
      await cleanup()
    }
  })
})
