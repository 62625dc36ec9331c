/**
 * Issue 15.8, resource substitution, on every backend: an entry's `resource_ids` resolve to
 * the resources its writer meant (the owner pinned at save time), never to a same-id
 * resource another principal planted in the org — whether planted after the entry (and
 * the real one is private) or before it (and older, so an unpinned lookup preferred it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { SecretKey, createSecretBox } from '../../src/resources/secrets.js'
import { createResourceService, type ResourceService } from '../../src/resources/service.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })
const alice2 = Principal.parse({ user: 'alice2', org: 'acme', permissions: ['read', 'write'] })
const bob = Principal.parse({ user: 'bob', org: 'acme', permissions: ['read', 'write'] })
const carol = Principal.parse({ user: 'carol', org: 'acme', permissions: ['read'] })

describe.each(BACKENDS)('resource references on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let resources: ResourceService
  const expand = async (id: string, principal: Principal) =>
    (await resources.withResources([await knowledge.get(id, principal)], principal))[0]!.resources.map((r) => `${r.owner} ${r.id} ${r.title}`)

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), searchCacheSize: 0 })
    resources = createResourceService({ store, secrets: createSecretBox(SecretKey.generate()) })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => {
    await truncateKnowledge(store)
    await store.db.query(sql`DELETE FROM resources`)
  })

  it("never expands to a same-id resource planted after the entry when the owner's own is private", async () => {
    await resources.save({ id: 'credentials/site_x', title: 'alice real', scopes: ['user:alice'] }, alice)
    const entry = await knowledge.save(
      { task: 'log in to site X', content: 'use the stored login', types: ['tool'], scopes: ['org:acme'], resource_ids: ['credentials/site_x'] },
      alice,
    )
    await resources.save({ id: 'credentials/site_x', title: 'planted by alice2', scopes: ['org:acme'] }, alice2)
    expect(await expand(entry.id, carol)).toEqual([])
    expect(await expand(entry.id, alice)).toEqual(['user:alice credentials/site_x alice real'])
  })

  it('never expands to an older same-id resource planted before the entry', async () => {
    await resources.save({ id: 'code/deploy', title: 'planted by alice2', scopes: ['org:acme'] }, alice2)
    await resources.save({ id: 'code/deploy', title: 'alice real', scopes: ['org:acme'] }, alice)
    const entry = await knowledge.save(
      { task: 'deploy', content: 'run the deploy script', types: ['tool'], scopes: ['org:acme'], resource_ids: ['code/deploy'] },
      alice,
    )
    expect(await expand(entry.id, carol)).toEqual(['user:alice code/deploy alice real'])
    expect(await expand(entry.id, alice2)).toEqual(['user:alice code/deploy alice real'])
  })

  it("keeps a reference to another owner's shared resource, pinned to that owner; an edit pins new ids and keeps old pins", async () => {
    await resources.save({ id: 'code/shared', title: 'bob shared', scopes: ['org:acme'] }, bob)
    const entry = await knowledge.save(
      { task: 'shared helper', content: 'use the shared helper', types: ['tool'], scopes: ['org:acme'], resource_ids: ['code/shared'] },
      alice,
    )
    await resources.save({ id: 'code/shared', title: 'planted by alice2', scopes: ['org:acme', 'user:alice2'] }, alice2)
    expect(await expand(entry.id, carol)).toEqual(['user:bob code/shared bob shared'])
    await resources.save({ id: 'code/later', title: 'alice later', scopes: ['org:acme'] }, alice)
    await knowledge.edit(entry.id, { resource_ids: ['code/shared', 'code/later'] }, alice)
    expect(await expand(entry.id, carol)).toEqual(['user:bob code/shared bob shared', 'user:alice code/later alice later'])
    // A search hit expands the same way.
    const hits = (await knowledge.search({ q: 'shared helper', min_score: 1 }, carol)).results
    const [hit] = await resources.withResources(hits, carol)
    expect(hit!.resources.map((r) => `${r.owner} ${r.id}`)).toEqual(['user:bob code/shared', 'user:alice code/later'])
  })
})
