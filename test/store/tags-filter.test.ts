/**
 * Filtering by tags (`tags=key:value,…` on list and search): a string tag equal to the value, a
 * list tag holding it, a number or boolean as text; every pair must hold; the same in SQL (list,
 * the PostgreSQL search) and in the in-memory index (the embedded search), on every backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { TagsFilter } from '../../src/core/knowledge.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'

const ann = Principal.parse({ user: 'ann', org: 'o', permissions: ['read', 'write'] })

describe.each(BACKENDS)('tags filter on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore(backend))
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), searchCacheSize: 0 })
    const save = async (name: string, tags: Record<string, unknown>) =>
      (ids[name] = (await knowledge.save({ task: `tag probe ${name}`, content: 'zqtagprobe', types: ['tool'], tags: tags as never }, ann)).id)
    await save('pref', { category: 'preference', domain: 'coding_style' })
    await save('habit', { category: 'habit', domain: 'coding_style' })
    await save('listed', { langs: ['ts', 'go'], stars: 3, pinned: true })
  }, 120_000)
  afterAll(async () => cleanup?.())

  const listed = async (tags: string) => (await knowledge.list({ tags, limit: 10 }, ann)).items.map((e) => e.id).sort()
  const found = async (tags: string) =>
    (await knowledge.search({ q: 'tag probe zqtagprobe', top_k: 10, min_score: 0, mode: 'recall', tags }, ann)).results.map((r) => r.id).sort()

  it('keeps the entries with every pair, in a list and in a search', async () => {
    for (const ask of [listed, found]) {
      expect(await ask('domain:coding_style')).toEqual([ids.pref, ids.habit].sort())
      expect(await ask('domain:coding_style,category:habit')).toEqual([ids.habit])
      expect(await ask('langs:go')).toEqual([ids.listed])
      expect(await ask('stars:3,pinned:true')).toEqual([ids.listed])
      expect(await ask('category:nothing')).toEqual([])
    }
  })

  it('parses key:value pairs and refuses a pair without a key', () => {
    expect(TagsFilter.parse('category:preference, note:a:b')).toEqual({ category: 'preference', note: 'a:b' })
    expect(TagsFilter.parse(['domain:x'])).toEqual({ domain: 'x' })
    expect(TagsFilter.safeParse('nokey').success).toBe(false)
  })
})
