/**
 * Issue 39: the store enforces who may write, in its SQL, as it does for reads. On every backend:
 *
 * - every statement that changes, replaces, merges or closes an entry by id refuses a caller
 *   that may not change it, even when the service above forgot to check (the store's methods
 *   called directly with another tenant's or another owner's write access);
 * - the SQL agrees with the policy (`mayManage`, src/auth/policy.ts) for generated principals
 *   and entries (fast-check);
 * - generated JSONL imports naming ids of every kind (own, same org, other org, unknown; in `id`
 *   and in `merged_into` / `superseded_by` / `supersedes`; every `on_conflict` and mode) never
 *   change an entry the importer may not change, and never answer with another tenant's text.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { mayManage, writeAccess } from '../../src/auth/policy.js'
import { Principal, hasPermission, visibleScopes } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', org: 'acme' })
const bob = Principal.parse({ user: 'bob', org: 'acme' })
const ann = Principal.parse({ user: 'ann', org: 'acme', permissions: ['read', 'write', 'admin'] })
const carl = Principal.parse({ user: 'carl', org: 'beta' })
const bea = Principal.parse({ user: 'bea', org: 'beta', permissions: ['read', 'write', 'admin'] })
const rita = Principal.parse({ user: 'rita', org: 'acme', permissions: ['read'] })
const PEOPLE = { alice, bob, ann, carl, bea, rita } as const
type Who = keyof typeof PEOPLE

describe.each(BACKENDS)('write rights in the store on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  const now = new Date('2026-06-01T00:00:00Z')

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }), searchCacheSize: 0 })
  }, 120_000)
  afterAll(async () => cleanup?.())
  beforeEach(async () => truncateKnowledge(store))

  const save = async (who: Principal, scope: string, text: string) =>
    (await knowledge.save({ task: `${text} task`, content: `${text} zqmark${text}`, types: ['tool'], scopes: [scope] }, who)).id

  /** Everything of an entry that a write could change, as stored (no visibility: the test reads as the database). */
  const snapshot = async (id: string) => {
    const record = await store.knowledge.get(id, ['org:acme', 'org:beta', 'user:alice', 'user:bob', 'user:ann', 'user:carl', 'user:bea', 'public'])
    const versions = await store.knowledge.versions(id, record?.scopes ?? [])
    return JSON.stringify({ record, versions })
  }

  it('refuses every change by id from a caller that may not make it, with nothing written', async () => {
    const beta = await save(carl, 'org:beta', 'beta')
    const bobs = await save(bob, 'org:acme', 'bobs')
    const other = await save(carl, 'org:beta', 'other')
    const before = { beta: await snapshot(beta), bobs: await snapshot(bobs) }
    const doc = { title: ['x'], body: ['overwritten'] }
    const change = { task: 't', content: 'OVERWRITTEN', types: ['tool' as const], tags: {}, scopes: ['org:beta'], resource_ids: [] }
    // alice (acme writer) against beta's entry, and against bob's entry of her own org; rita (a reader) against both.
    for (const [who, id] of [
      [alice, beta],
      [alice, bobs],
      [rita, bobs],
      [carl, bobs],
    ] as const) {
      const access = writeAccess(who)
      const version = JSON.parse(await snapshot(id)).record.version as number
      expect(await store.knowledge.update(id, access, version, change, doc, undefined, 'attack', now)).toBeUndefined()
      expect(await store.knowledge.setStatus(id, access, 'archived', null, now)).toBeUndefined()
      expect(await store.knowledge.setExpiry(id, access, now, now)).toBeUndefined()
      expect(await store.knowledge.moveConfidence(id, access, 0, 1, now)).toBeUndefined()
      expect(await store.knowledge.setOwnerScore(id, access, 1, now)).toBeUndefined()
      expect(await store.knowledge.delete(id, access)).toBe(false)
      expect(await store.knowledge.supersede({ oldId: id, newId: other, access, validTo: now, at: now })).toMatchObject({ refused: expect.any(String) })
      const merged = { ...JSON.parse(await snapshot(id)).record, id: 'knowledge-20260601000000-mrg1', created_at: now, updated_at: now, valid_from: now }
      expect(await store.knowledge.merge({ record: merged, doc, embedding: undefined }, [id], access)).toEqual({ conflict: 'originals_changed' })
      const item = { record: { ...merged, id }, doc, embedding: undefined, helpful_history: [], harmful_history: [], versions: [], replace: true }
      async function* batches() {
        yield [item]
      }
      await expect(store.knowledge.importBatches(batches(), true, access)).rejects.toThrow(/No entry .* that you may replace/)
    }
    // Feedback is open to every writer who can see the entry, and to nobody else.
    expect(await store.knowledge.addFeedback(beta, writeAccess(alice), 'harmful', { task: 't' }, 'user:alice', now)).toBeUndefined()
    expect(await store.knowledge.voteScore(beta, writeAccess(alice), 'user:alice', 1, now)).toBeUndefined()
    expect(await store.knowledge.addFeedback(bobs, writeAccess(rita), 'helpful', { task: 't' }, 'user:rita', now)).toBeUndefined()
    expect(await snapshot(beta)).toBe(before.beta)
    expect(await snapshot(bobs)).toBe(before.bobs)
    // Reads through the same store are as blind: versions and histories of an entry one cannot see are empty.
    expect(await store.knowledge.versions(beta, visibleScopes(alice))).toEqual([])
    expect((await store.knowledge.histories([beta], visibleScopes(alice))).get(beta)).toEqual({ helpful: [], harmful: [] })
    // What may be done still is: bob's own change, ann (acme admin) on bob's org entry, a harmful case weighing 1 from a manager.
    expect(await store.knowledge.setStatus(bobs, writeAccess(ann), 'archived', null, now)).toMatchObject({ status: 'archived' })
    expect(await store.knowledge.setStatus(bobs, writeAccess(bob), 'active', null, now)).toMatchObject({ status: 'active' })
    const fed = await store.knowledge.addFeedback(bobs, writeAccess(ann), 'harmful', { task: 't' }, 'user:ann', now)
    expect(fed?.harmful_weight).toBe(1)
  })

  it('refuses a resource change or delete from a caller that may not make it', async () => {
    const at = now
    const base = { title: 't', body: 'b', secret: null, content_type: 'text', metadata: {}, created_at: at }
    expect(await store.resources.insert({ ...base, id: 'code/beta', scopes: ['org:beta'], owner: 'user:carl' })).toBe(true)
    expect(await store.resources.insert({ ...base, id: 'code/bob', scopes: ['org:acme'], owner: 'user:bob' })).toBe(true)
    const change = { title: 'OVERWRITTEN', body: 'x', content_type: 'text', metadata: {}, scopes: ['org:acme'], owner: 'user:alice' }
    for (const [who, key] of [
      [alice, { owner: 'user:carl', id: 'code/beta' }],
      [bea, { owner: 'user:bob', id: 'code/bob' }],
      [alice, { owner: 'user:bob', id: 'code/bob' }],
      [rita, { owner: 'user:bob', id: 'code/bob' }],
    ] as const) {
      expect(await store.resources.update(key, writeAccess(who), 1, change, at)).toEqual({ conflict: 'changed' })
      expect(await store.resources.delete(key, writeAccess(who))).toBe(false)
    }
    // Its owner and its org's admin may.
    expect(await store.resources.update({ owner: 'user:bob', id: 'code/bob' }, writeAccess(ann), 1, { ...change, owner: 'user:bob' }, at)).toMatchObject({
      record: { title: 'OVERWRITTEN' },
    })
    expect(await store.resources.delete({ owner: 'user:carl', id: 'code/beta' }, writeAccess(carl))).toBe(true)
  })

  it('agrees with the policy: claims says manage exactly when mayManage (and write) says so', async () => {
    const scopes = ['user:alice', 'user:bob', 'org:acme', 'org:beta', 'team:red', 'public'] as const
    const owners = ['user:alice', 'user:bob', 'user:carl', 'org:acme', 'team:red'] as const
    const principal = fc.record({
      user: fc.constantFrom('alice', 'bob', 'carl'),
      org: fc.option(fc.constantFrom('acme', 'beta'), { nil: undefined }),
      team: fc.option(fc.constant('red'), { nil: undefined }),
      permissions: fc.constantFrom(['read'], ['read', 'write'], ['read', 'write', 'admin'], ['read', 'write', 'secrets:read', 'admin', 'hub:admin']),
    })
    const entry = fc.record({ owner: fc.constantFrom(...owners), scopes: fc.uniqueArray(fc.constantFrom(...scopes), { minLength: 1, maxLength: 3 }) })
    let n = 0
    await fc.assert(
      fc.asyncProperty(principal, entry, async (raw, e) => {
        const p = Principal.parse(raw)
        const id = `knowledge-20260601000000-p${(n++).toString(36).padStart(3, '0')}`
        const record = { ...(await store.knowledge.get(await save(ann, 'org:acme', 'seed'), ['org:acme']))!, id, owner: e.owner, scopes: [...e.scopes] }
        expect(await store.knowledge.insert(record, { title: ['p'], body: ['p'] }, undefined)).toBe(true)
        const claim = (await store.knowledge.claims([id], writeAccess(p))).get(id)
        const visible = e.scopes.some((s) => visibleScopes(p).includes(s))
        const expected = !hasPermission(p, 'write') ? 'hidden' : !visible ? 'hidden' : mayManage(p, e) ? 'manage' : 'see'
        // A reader is told 'hidden' for everything: it may write nothing.
        expect(claim, `${JSON.stringify(raw)} on ${JSON.stringify(e)}`).toBe(expected)
      }),
      { numRuns: 60 },
    )
  })

  it('generated imports naming ids of every kind never change what the importer may not change', async () => {
    const target = fc.constantFrom('own', 'org-other-owner', 'org-admin', 'other-org', 'unknown')
    const line = fc.record({
      id: target,
      ref: fc.option(fc.record({ field: fc.constantFrom('merged_into', 'superseded_by', 'supersedes'), to: target }), { nil: undefined }),
    })
    const body = fc.record({
      who: fc.constantFrom<Who>('alice', 'ann', 'carl', 'rita'),
      lines: fc.array(line, { minLength: 1, maxLength: 4 }),
      conflict: fc.constantFrom('error', 'skip', 'replace'),
      mode: fc.constantFrom('atomic', 'partial'),
    })
    await fc.assert(
      fc.asyncProperty(body, async ({ who, lines, conflict, mode }) => {
        await truncateKnowledge(store)
        const importer = PEOPLE[who]
        const seeded = {
          // A reader owns nothing: its "own" line is one of its org it can read.
          own: await save(hasPermission(importer, 'write') ? importer : ann, `org:${importer.org}`, 'own'),
          'org-other-owner': await save(importer.org === 'beta' ? carl : bob, importer.org === 'beta' ? 'org:beta' : 'org:acme', 'same'),
          'org-admin': await save(importer.org === 'beta' ? bea : ann, importer.org === 'beta' ? 'org:beta' : 'org:acme', 'admin'),
          'other-org': await save(importer.org === 'beta' ? bob : carl, importer.org === 'beta' ? 'org:acme' : 'org:beta', 'foreign'),
          unknown: 'knowledge-20200101000000-unkn',
        }
        const exported = JSON.parse((await collect(knowledge.exportJsonl(importer))).find((l) => l.includes(seeded.own)) ?? 'null')
        const before = new Map<string, string>()
        for (const [kind, id] of Object.entries(seeded)) if (kind !== 'unknown') before.set(id, await snapshot(id))
        const text = lines.map((l, i) => {
          const extra = l.ref ? { [l.ref.field]: seeded[l.ref.to], ...(l.ref.field === 'superseded_by' ? { valid_to: now.toISOString() } : {}) } : {}
          return JSON.stringify({ ...exported, id: seeded[l.id], content: `IMPORTED_${i}`, ...extra })
        })
        let report
        try {
          report = await knowledge.importJsonl(text, importer, { on_conflict: conflict, mode })
        } catch (error) {
          // A reader is refused outright; nobody else is.
          expect(who).toBe('rita')
          expect((error as { code?: string }).code).toBe('forbidden')
        }
        for (const [id, was] of before) {
          const stored = await store.knowledge.get(id, ['org:acme', 'org:beta', 'user:alice', 'user:ann', 'user:carl', 'public'])
          if (stored && mayManage(importer, stored) && hasPermission(importer, 'write')) continue
          expect(await snapshot(id), `${who} ${conflict}/${mode}: ${JSON.stringify(lines)} changed ${id}`).toBe(was)
        }
        const foreignText = seeded['other-org'] ? 'zqmarkforeign' : ''
        expect(JSON.stringify(report ?? {})).not.toContain(foreignText)
      }),
      { numRuns: backend === 'pglite' ? 40 : 25 },
    )
  })
})

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of lines) out.push(line)
  return out
}
