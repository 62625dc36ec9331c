/**
 * The embedded database keeps no HNSW index (issue 18): its server searches vectors in memory
 * and one-shot commands (`search.fulltext: sql`) scan them exactly in SQL, so no save pays for
 * index upkeep. An index left by an earlier version is dropped on open; both paths find the
 * same nearest entries.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService } from '../../src/knowledge/service.js'
import { sql } from '../../src/store/sql.js'
import { openStore, type Store } from '../../src/store/store.js'

const hnswIndexes = async (store: Store) => (await store.db.query(sql`SELECT 1 FROM pg_indexes WHERE indexname = 'knowledge_embedding_hnsw'`)).length

describe('vectors on the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowhub-embedded-vectors-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const alice = Principal.parse({ user: 'alice' })
  const embedder = createHashedEmbedder({ dimension: 64 })
  const topics = ['selenium login proxy', 'docker pnpm cache', 'postgres vacuum analyze', 'kubernetes ingress tls']

  it('keeps no HNSW index, drops an old one on open, and the SQL scan finds what the in-memory scan finds', async () => {
    let store = await openStore({ dataDir: dir })
    const knowledge = await createKnowledgeService({ store, embedder, searchCacheSize: 0 })
    for (const [i, topic] of topics.entries()) await knowledge.save({ task: topic, content: `notes ${i} on ${topic}`, types: ['tool'] }, alice)
    expect(await hnswIndexes(store)).toBe(0)
    const search = async (s: Store) => {
      const service = await createKnowledgeService({ store: s, embedder, searchCacheSize: 0 })
      const found: string[][] = []
      for (const q of topics) found.push((await service.search({ q, top_k: 2, mode: 'vector', min_score: 0 }, alice)).results.map((r) => r.task))
      return found
    }
    const inMemory = await search(store)
    expect(inMemory.map((tasks) => tasks[0])).toEqual(topics)
    // As an earlier version left it.
    await store.db.query(sql`CREATE INDEX knowledge_embedding_hnsw ON knowledge USING hnsw (embedding vector_cosine_ops)`)
    await store.close()
    store = await openStore({ dataDir: dir, fulltext: 'sql' })
    try {
      expect(await hnswIndexes(store)).toBe(0)
      expect(await search(store)).toEqual(inMemory)
    } finally {
      await store.close()
    }
  })
})
