/**
 * The knowledge overview (the dashboard's first page, `knowledge.overview`) on every backend:
 * counts by status, type and scope over what the caller sees only, saves and feedback per day
 * within the last 30 days of the service's clock, and `forbidden` without `read`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { rejection } from '../helpers/errors.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', team: 'web', permissions: ['read', 'write'] })
const bob = Principal.parse({ user: 'bob', team: 'web', permissions: ['read', 'write'] })
const carol = Principal.parse({ user: 'carol', permissions: ['read', 'write'] })
const nobody = Principal.parse({ user: 'dave', team: 'web', permissions: [] })

describe.each(BACKENDS)('the knowledge overview on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  // The service's clock: two saves long ago, the rest "today" (2026-03-15 UTC).
  let now = new Date('2026-01-02T10:00:00Z')

  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore(backend))
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), clock: { now: () => now } })
    const save = (p: Principal, task: string, types: string[], scopes: string[]) => knowledge.save({ task, content: `${task}.`, types, scopes }, p)
    await save(alice, 'Old team note about caching', ['strategy'], ['team:web'])
    await save(carol, 'Old private note of carol', ['tool'], ['user:carol'])
    now = new Date('2026-03-15T09:00:00Z')
    const login = await save(alice, 'Log in to site A with selenium', ['tool', 'usecase'], ['user:alice', 'team:web'])
    const deploy = await save(bob, 'Deploy with pnpm in Docker', ['tool'], ['team:web'])
    const archived = await save(alice, 'An archived plan', ['plan'], ['user:alice'])
    await knowledge.archive(archived.id, alice)
    await save(carol, 'Carol keeps this to herself', ['definition'], ['user:carol'])
    await knowledge.feedback(login.id, { add_helpful_case: { reason: 'worked' } }, bob)
    await knowledge.feedback(deploy.id, { add_harmful_case: { reason: 'outdated' } }, alice)
    now = new Date('2026-03-16T08:00:00Z')
    await knowledge.feedback(deploy.id, { add_helpful_case: { reason: 'fine for me' } }, alice)
  }, 120_000)
  afterAll(async () => cleanup())

  it("counts only what the caller sees, its own scopes only, and the last 30 days' saves and feedback", async () => {
    const seen = await knowledge.overview(alice)
    // alice sees the old team note, her selenium entry, bob's deploy entry (team:web) and her archived plan; none of carol's.
    expect(seen.total).toBe(4)
    expect(seen.by_status).toEqual([
      { status: 'active', count: 3 },
      { status: 'archived', count: 1 },
    ])
    expect(seen.by_type).toEqual([
      { type: 'tool', count: 2 },
      { type: 'strategy', count: 1 },
      { type: 'usecase', count: 1 },
    ])
    expect(seen.by_scope).toEqual([
      { scope: 'team:web', count: 3 },
      { scope: 'user:alice', count: 1 },
    ])
    expect(seen.saves_per_day).toEqual([{ day: '2026-03-15', count: 3 }])
    expect(seen.feedback_per_day).toEqual([
      { day: '2026-03-15', helpful: 1, harmful: 1 },
      { day: '2026-03-16', helpful: 1, harmful: 0 },
    ])
  })

  it('a longer window takes in the older saves; another caller sees its own counts', async () => {
    expect((await knowledge.overview(alice, { days: 120 })).saves_per_day).toEqual([
      { day: '2026-01-02', count: 1 },
      { day: '2026-03-15', count: 3 },
    ])
    const carols = await knowledge.overview(carol)
    expect(carols).toMatchObject({ total: 2, by_scope: [{ scope: 'user:carol', count: 2 }], saves_per_day: [{ day: '2026-03-15', count: 1 }] })
    expect(carols.feedback_per_day).toEqual([])
  })

  it('is forbidden without the read permission', async () => {
    expect((await rejection(knowledge.overview(nobody))).code).toBe('forbidden')
  })
})
