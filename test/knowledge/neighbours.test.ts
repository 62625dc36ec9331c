/**
 * Dialogue neighbours in search (src/knowledge/search/neighbours.ts, src/store/knowledge/neighbours.ts),
 * on every backend: the entry after (and before) a matching one in its trace is found and
 * ranked; only entries the caller sees count as neighbours; entries without a trace are untouched.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, DEFAULT_NEIGHBOUR_LIFT, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1' })
const carol = Principal.parse({ user: 'carol', project: 'p1' })

describe.each(BACKENDS)('dialogue neighbours on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let plain: KnowledgeService
  let tick = 0
  const clock = { now: () => new Date(Date.UTC(2026, 0, 1) + ++tick * 1000) }

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    const embedder = createHashedEmbedder({ dimension: 256 })
    knowledge = await createKnowledgeService({ store, embedder, clock, searchCacheSize: 0, neighbours: DEFAULT_NEIGHBOUR_LIFT })
    plain = await createKnowledgeService({ store, embedder, clock, searchCacheSize: 0, neighbours: false })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => truncateKnowledge(store))

  /** Saves one turn as `by`, in scope `scope`, in trace `trace` ('' for none). */
  const turn = async (text: string, trace: string, scope = 'project:p1', by = alice) =>
    (await knowledge.save({ task: text, content: text, types: ['usecase'], scopes: [scope], source: { trace_id: trace } }, by)).id

  const search = (service: KnowledgeService, q: string, who: Principal) => service.search({ q, top_k: 10, min_score: 0, explain: true, mode: 'fulltext' }, who)

  it('finds and ranks the reply after the question that matches', async () => {
    const earlier = await turn('Caroline: I went hiking in the mountains last weekend.', 'c1')
    const question = await turn('Melanie: How long have you been married to your husband?', 'c1')
    const answer = await turn('Caroline: Five years already! Time flies.', 'c1')
    const before = await turn('Melanie: Your wedding photos are lovely.', 'c2')
    await turn('Caroline: Thanks, we painted the kitchen blue.', 'c2')

    const without = await search(plain, 'how long married husband', alice)
    expect(without.results.map((r) => r.id)).toEqual([question])

    const { results } = await search(knowledge, 'how long married husband', alice)
    // The turn after the match gains 0.5 × its fused score, the turn before 0.2 ×.
    expect(results.map((r) => r.id)).toEqual([question, answer, earlier])
    expect(results[1]!.explain).toMatchObject({ neighbour_of: question, fulltext_rank: null })
    expect(results[1]!.explain!.neighbour_lift).toBeCloseTo(0.5 * results[0]!.explain!.fused, 6)
    expect(results[2]!.explain!.neighbour_lift).toBeCloseTo(0.2 * results[0]!.explain!.fused, 6)
    expect(results[0]!.explain!.neighbour_of).toBeUndefined()
    // Other traces are not neighbours.
    const wedding = await search(knowledge, 'lovely wedding photos', alice)
    expect(wedding.results[0]!.id).toBe(before)
    expect(wedding.results.map((r) => r.id)).not.toContain(question)
  })

  it('counts only entries the caller may see: the next visible one, the same as if the hidden one did not exist', async () => {
    const question = await turn('Which seeds did you plant in the garden this spring?', 'g1')
    const hidden = await turn('Only alice sees this reply about squash.', 'g1', 'user:alice')
    const shared = await turn('Tomatoes and basil, mostly.', 'g1')

    const seen = await search(knowledge, 'seeds plant garden spring', alice)
    expect(seen.results.map((r) => r.id)).toEqual([question, hidden, shared].slice(0, 2))
    const restricted = await search(knowledge, 'seeds plant garden spring', carol)
    expect(restricted.results.map((r) => r.id)).toEqual([question, shared])
    expect(restricted.results[1]!.explain).toMatchObject({ neighbour_of: question })

    // What carol gets does not depend on the entry she cannot see.
    await knowledge.delete(hidden, alice)
    expect(await search(knowledge, 'seeds plant garden spring', carol)).toEqual(restricted)
    // Archived entries are never neighbours.
    await knowledge.archive(shared, alice)
    expect((await search(knowledge, 'seeds plant garden spring', carol)).results.map((r) => r.id)).toEqual([question])
  })

  it('leaves entries without a trace untouched', async () => {
    const first = await turn('Rotate the API keys every ninety days.', '')
    await turn('The office closes at six on Fridays.', '')
    const on = await search(knowledge, 'rotate api keys', alice)
    expect(on.results.map((r) => r.id)).toEqual([first])
    expect(on.results[0]!.explain!.neighbour_of).toBeUndefined()
    expect(on).toEqual(await search(plain, 'rotate api keys', alice))
  })
  it('gives entries of a trace created at the same moment one place: lifted alike, never each other', async () => {
    const question = await turn('Melanie: What did you name your new puppy?', 'p1')
    const reply = await turn('Caroline: We called him Biscuit after his colour.', 'p1')
    const after = await turn('Melanie: Adorable, I love golden retrievers.', 'p1')
    // The same reply saved twice at the same moment (an import keeps a creation time).
    const original = await knowledge.get(reply, alice)
    const twin = `${reply}-twin`
    const line = JSON.stringify({ ...original, id: twin, content: `${original.content} (again)`, versions: [] })
    expect((await knowledge.importJsonl([line], alice)).imported).toBe(1)

    const { results } = await search(knowledge, 'new puppy name', alice)
    const byId = new Map(results.map((r) => [r.id, r]))
    expect(results[0]!.id).toBe(question)
    // Both are the place after the question: the same lift, from it.
    for (const id of [reply, twin]) {
      expect(byId.get(id)!.explain).toMatchObject({ neighbour_of: question })
      expect(byId.get(id)!.explain!.neighbour_lift).toBeCloseTo(0.5 * results[0]!.explain!.fused, 6)
    }
    // Searching for the reply itself: each copy lifts the turns either side, not the other copy.
    const biscuit = await search(knowledge, 'called Biscuit colour', alice)
    const lifted = new Map(biscuit.results.map((r) => [r.id, r.explain!.neighbour_of]))
    expect([...lifted.keys()].sort()).toEqual([after, question, reply, twin].sort())
    expect(lifted.get(reply)).toBeUndefined()
    expect(lifted.get(twin)).toBeUndefined()
    expect([reply, twin]).toContain(lifted.get(after))
    expect([reply, twin]).toContain(lifted.get(question))
  })
})
