/**
 * Every path of the knowledge service embeds by kind (issue 40): what is stored (save, edit,
 * supersession, import, reindex, slim's merge) as documents, what is searched (search, and through
 * it goal focus and the agent context) as queries. One backend: which kind a path asks for does
 * not depend on the database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { EmbedKind } from '../../src/core/embed-convention.js'
import { Principal } from '../../src/core/principal.js'
import type { Embedder } from '../../src/embed/embedder.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1', permissions: ['read', 'write'] })

describe('the kind each path of the knowledge service embeds as', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const calls: Array<{ kind: EmbedKind; texts: string[] }> = []
  const kinds = () => calls.map((c) => c.kind)
  const hashed = createHashedEmbedder({ dimension: 64 })
  const recording: Embedder = {
    model: hashed.model,
    dimension: hashed.dimension,
    embed: (texts, options) => {
      calls.push({ kind: options.kind, texts: [...texts] })
      return hashed.embed(texts, options)
    },
  }

  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore('pglite'))
    knowledge = await createKnowledgeService({ store, embedder: recording, queryCacheSize: 0, searchCacheSize: 0 })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    await truncateKnowledge(store)
    calls.length = 0
  })

  it('save, edit and supersession embed documents; search embeds its query once', async () => {
    const entry = await knowledge.save({ task: 'user language', content: 'The user prefers TypeScript', types: ['user_profile'] }, alice)
    await knowledge.edit(entry.id, { content: 'The user prefers TypeScript over JavaScript' }, alice)
    await knowledge.supersede(entry.id, { by: { task: 'user language', content: 'The user now prefers Rust', types: ['user_profile'] } }, alice)
    expect(kinds()).toEqual(['document', 'document', 'document'])
    calls.length = 0
    await knowledge.search({ q: 'which language does the user like' }, alice)
    expect(calls).toEqual([{ kind: 'query', texts: ['which language does the user like'] }])
  })

  it('import and reindex embed documents', async () => {
    const line = JSON.stringify({ task: 'deploy', content: 'docker compose up -d on staging', types: ['strategy'], scopes: ['project:p1'] })
    await knowledge.importJsonl([line], alice)
    expect(kinds()).toEqual(['document'])
    calls.length = 0
    await knowledge.reindex()
    expect(kinds()).toEqual(['document'])
  })
})
