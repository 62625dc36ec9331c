/**
 * Seed 002's `visibility` (issue 41): the generated column of migration 0054 and `visibilityOf`
 * (src/core/visibility.ts) say the same for generated scopes and owners, on every backend, and a
 * list filtered by it returns exactly the entries of that visibility.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal, visibleScopes } from '../../src/core/principal.js'
import { visibilityOf, VISIBILITIES } from '../../src/core/visibility.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService } from '../../src/knowledge/service.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'

describe.each(BACKENDS)('visibility on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore(backend))
  }, 120_000)
  afterAll(async () => cleanup?.())

  it('the SQL function and visibilityOf agree', async () => {
    const scope = fc.constantFrom('user:1', 'user:2', 'agent:a', 'project:p', 'team:t', 'org:o', 'public')
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(scope, { minLength: 1, maxLength: 4 }), fc.constantFrom('user:1', 'agent:a', 'org:o'), async (scopes, owner) => {
        const [row] = await store.db.query<{ v: string }>(sql`SELECT knowledge_visibility(${scopes}::text[], ${owner}) AS v`)
        expect(row!.v, `${scopes.join(',')} owned by ${owner}`).toBe(visibilityOf(scopes, owner))
      }),
      { numRuns: 80 },
    )
    // One of each, by the rule's own examples.
    expect(VISIBILITIES.map((v) => v)).toEqual(['private', 'shared', 'org', 'public'])
    expect(visibilityOf(['user:123', 'project:456'], 'user:123')).toBe('shared')
    expect(visibilityOf(['user:123'], 'user:123')).toBe('private')
    expect(visibilityOf(['org:o', 'user:1'], 'user:1')).toBe('org')
    expect(visibilityOf(['org:o', 'public'], 'user:1')).toBe('public')
  })

  it('a list and a search filtered by visibility return exactly the entries of that visibility', async () => {
    const knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), searchCacheSize: 0 })
    const ann = Principal.parse({ user: '1', project: 'p', org: 'o', permissions: ['read', 'write', 'admin'] })
    const saved: Record<string, string> = {}
    for (const [name, scopes] of Object.entries({ private: ['user:1'], shared: ['user:1', 'project:p'], org: ['org:o'], public: ['public'] })) {
      saved[name] = (await knowledge.save({ task: `visibility probe ${name}`, content: 'zqvisprobe', types: ['tool'], scopes }, ann)).id
    }
    const visible = visibleScopes(ann)
    for (const visibility of VISIBILITIES) {
      const listed = await store.knowledge.list({ visible, visibility: [visibility] }, 100)
      expect(
        listed.map((r) => r.id),
        visibility,
      ).toEqual([saved[visibility]])
      const found = await knowledge.search({ q: 'visibility probe zqvisprobe', top_k: 10, min_score: 0, mode: 'recall', visibility }, ann)
      expect(
        found.results.map((r) => r.id),
        visibility,
      ).toEqual([saved[visibility]])
    }
    const two = await knowledge.list({ visibility: 'org,public', limit: 10 }, ann)
    expect(two.items.map((e) => e.visibility).sort()).toEqual(['org', 'public'])
  })
})
