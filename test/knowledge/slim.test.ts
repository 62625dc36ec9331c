/**
 * Knowledge slimming without an LLM, on BOTH backends: near-duplicate groups,
 * dry run, the deterministic merge (counters, histories, unions, versions),
 * search after a merge, exact unmerge, and who may merge what. Nothing is deleted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { isKnowHubError, type ErrorCode } from '../../src/core/errors.js'
import type { KnowledgeEntry } from '../../src/core/knowledge.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import { mergeContent, slimKnowledge, unmergeKnowledge, type SlimDeps } from '../../src/knowledge/slim/slim.js'
import { sql } from '../../src/store/sql.js'
import type { Store } from '../../src/store/store.js'
import { BACKENDS, openTestStore } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', project: 'p1', team: 't1', org: 'acme' })
const carol = Principal.parse({ user: 'carol', project: 'p1', org: 'acme' })
const admin = Principal.parse({ user: 'root', org: 'acme', permissions: ['admin'] })
const reader = Principal.parse({ user: 'reader', org: 'acme', permissions: ['read'] })

const LOGIN = {
  task: 'Log in to site A with selenium',
  content: 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent. Add random delays between requests.',
}
const LOGIN_DUP = {
  task: 'Log in to site A with selenium',
  content: 'Use undetected_chromedriver to avoid bot detection. Set a realistic user agent. Add random delays between requests. Sessions last 2 hours.',
}
const BREAD = { task: 'Bake sourdough bread', content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam.' }
const BREAD_DUP = {
  task: 'Bake sourdough bread',
  content: 'Feed the starter twice a day and keep the dough at 24 degrees. Bake at 250 degrees with steam for 20 minutes.',
}
const UNRELATED = { task: 'Rotate PostgreSQL logs', content: 'Set log_rotation_age to 1d and log_rotation_size to 100MB in postgresql.conf.' }

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  try {
    await promise
  } catch (error) {
    if (!isKnowHubError(error, code)) throw new Error(`expected ${code}, got ${String((error as { code?: string }).code)}: ${(error as Error).message}`)
    return
  }
  throw new Error(`expected ${code}, but it succeeded`)
}

describe('mergeContent', () => {
  it('keeps the lead text and appends only sentences not seen yet, per entry', () => {
    expect(mergeContent('A b. C d.', ['a B. E f!', 'c d. E F. G h'])).toBe('A b. C d.\n\nE f!\n\nG h')
    expect(mergeContent('登录网站。使用测试账号。', ['使用测试账号。每天限额 100 次。'])).toBe('登录网站。使用测试账号。\n\n每天限额 100 次。')
    expect(mergeContent('same', ['same', 'Same.'])).toBe('same')
  })
})

describe.each(BACKENDS)('slim on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService
  let deps: SlimDeps
  const embedder = createHashedEmbedder({ dimension: 256 })

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder })
    deps = { store, embedder, clock: { now: () => new Date('2026-03-06T12:00:00Z') } }
  })
  afterAll(async () => cleanup())
  // DELETE cascades to feedback and versions, and is much faster than TRUNCATE on PGlite for a few rows.
  beforeEach(async () => void (await store.db.query(sql`DELETE FROM knowledge`)))

  async function save(text: { task: string; content: string }, who: Principal, extra: Record<string, unknown> = {}): Promise<KnowledgeEntry> {
    return knowledge.save({ ...text, types: ['tool'], scopes: ['org:acme'], ...extra }, who)
  }

  async function snapshot(): Promise<unknown[]> {
    return store.db.query(sql`SELECT id, status, merged_into, content, helpful, harmful, version, updated_at FROM knowledge ORDER BY id`)
  }

  it('plans in a dry run without changing anything', async () => {
    const a = await save(LOGIN, alice)
    const b = await save(LOGIN_DUP, alice)
    const c = await save(BREAD, alice)
    const d = await save(BREAD_DUP, alice)
    await save(UNRELATED, alice)
    const before = await snapshot()
    const plan = await slimKnowledge(deps, { model: 'google/gemini-2.0-flash-001', dry_run: true }, alice)
    expect(plan).toMatchObject({ dry_run: true, threshold: 0.9, considered: 5, truncated: false, merged: 0, skipped: [] })
    expect(plan.groups.map((g) => [...g.merged_ids].sort())).toEqual([[a.id, b.id].sort(), [c.id, d.id].sort()].sort((x, y) => (x[0]! < y[0]! ? -1 : 1)))
    for (const group of plan.groups) {
      expect(group.kept_id).toBeNull()
      expect(group.similarity).toBeGreaterThanOrEqual(0.9)
    }
    expect(await snapshot()).toEqual(before)
    // A stricter threshold or overlap finds nothing; limit caps the entries compared.
    expect((await slimKnowledge(deps, { dry_run: true, threshold: 0.999 }, alice)).groups).toEqual([])
    expect((await slimKnowledge(deps, { dry_run: true, min_overlap: 1 }, alice)).groups).toEqual([])
    expect(await slimKnowledge(deps, { dry_run: true, limit: 2 }, alice)).toMatchObject({ considered: 2, truncated: true })
  })

  it('merges: counters summed, histories concatenated, unions, max score; originals merged with a pointer', async () => {
    const lead = await save(LOGIN_DUP, alice, {
      types: ['tool'],
      resource_ids: ['code/selenium/login'],
      source: { urls: ['https://a.example'] },
      tags: { domain: 'crawling' },
      score: 5,
    })
    const other = await save(LOGIN, alice, {
      types: ['strategy'],
      resource_ids: ['credentials/site_a', 'code/selenium/login'],
      source: { urls: ['https://b.example'] },
      tags: { domain: 'other', lang: 'python' },
      score: 2,
    })
    await knowledge.feedback(lead.id, { add_helpful_case: { task: 'lead-h1' } }, carol)
    await knowledge.feedback(lead.id, { add_harmful_case: { task: 'lead-x1' } }, carol)
    await knowledge.feedback(other.id, { add_helpful_case: { task: 'other-h1' } }, carol)
    await knowledge.feedback(other.id, { add_helpful_case: { task: 'other-h2' } }, carol)
    const rowsBefore = (await store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`))[0]!.n

    const result = await slimKnowledge(deps, {}, alice)
    expect(result).toMatchObject({ dry_run: false, merged: 2, skipped: [] })
    expect(result.groups).toHaveLength(1)
    const group = result.groups[0]!
    expect(group.merged_ids).toEqual([lead.id, other.id])
    const merged = await knowledge.get(group.kept_id!, alice)
    expect(merged.status).toBe('active')
    expect(merged.task).toBe(LOGIN_DUP.task)
    expect(merged.content).toBe(LOGIN_DUP.content)
    expect(merged.eval).toMatchObject({ score: 5, helpful: 3, harmful: 1 })
    expect(merged.eval.helpful_history.map((h) => h.task)).toEqual(['lead-h1', 'other-h1', 'other-h2'])
    expect(merged.eval.harmful_history.map((h) => h.task)).toEqual(['lead-x1'])
    expect(merged.resource_ids).toEqual(['code/selenium/login', 'credentials/site_a'])
    expect(merged.types).toEqual(['tool', 'strategy'])
    expect(merged.tags).toEqual({ domain: 'crawling', lang: 'python' })
    expect(merged.source.urls).toEqual(['https://a.example', 'https://b.example'])
    expect(merged.scopes).toEqual(['org:acme'])
    expect(merged.owner).toBe('user:alice')
    const versions = await knowledge.versions(merged.id, alice)
    expect(versions.map((v) => [v.version, v.reason, v.content])).toEqual([
      [1, `merged from ${lead.id}`, LOGIN_DUP.content],
      [2, `merged from ${other.id}`, LOGIN.content],
    ])
    expect(merged.version).toBe(3)
    for (const id of [lead.id, other.id]) {
      const original = await knowledge.get(id, alice)
      expect(original).toMatchObject({ status: 'merged', merged_into: merged.id })
    }
    // Nothing deleted: one new row, the originals kept with their histories.
    expect((await store.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge`))[0]!.n).toBe(rowsBefore + 1)
    expect((await knowledge.get(other.id, alice)).eval.helpful_history).toHaveLength(2)
    // Search finds the merged entry, not the originals.
    const hits = (await knowledge.search({ q: 'selenium undetected_chromedriver login', top_k: 10 }, alice)).results.map((r) => r.id)
    expect(hits).toContain(merged.id)
    expect(hits).not.toContain(lead.id)
    expect(hits).not.toContain(other.id)
    const listed = (await knowledge.list({ limit: 100 }, alice)).items.map((e) => e.id)
    expect(listed).toEqual([merged.id])
    // A second run finds nothing more to merge.
    expect((await slimKnowledge(deps, {}, alice)).groups).toEqual([])
  })

  it('unmerge restores the originals exactly and archives the merged entry', async () => {
    const a = await save(BREAD, alice, { resource_ids: ['r/1'] })
    const b = await save(BREAD_DUP, alice, { resource_ids: ['r/2'] })
    await knowledge.feedback(a.id, { add_helpful_case: { task: 'worked' } }, alice)
    await knowledge.feedback(b.id, { add_harmful_case: { task: 'burnt' }, update_score: 2 }, alice)
    const before = [await knowledge.get(a.id, alice), await knowledge.get(b.id, alice)]
    const { groups } = await slimKnowledge(deps, {}, alice)
    const keptId = groups[0]!.kept_id!
    await knowledge.feedback(keptId, { add_helpful_case: { task: 'after merge' } }, alice)

    await expectCode(unmergeKnowledge(deps, keptId, carol), 'forbidden')
    const undone = await unmergeKnowledge(deps, keptId, alice)
    expect(undone).toEqual({ id: keptId, status: 'archived', restored_ids: [a.id, b.id].sort() })
    expect([await knowledge.get(a.id, alice), await knowledge.get(b.id, alice)]).toEqual(before)
    const archived = await knowledge.get(keptId, alice)
    expect(archived.status).toBe('archived')
    expect(archived.eval.helpful_history.map((h) => h.task)).toContain('after merge')
    const hits = (await knowledge.search({ q: 'sourdough bread starter', top_k: 10, min_score: 0 }, alice)).results.map((r) => r.id)
    expect(hits).toEqual(expect.arrayContaining([a.id, b.id]))
    expect(hits).not.toContain(keptId)
    await expectCode(unmergeKnowledge(deps, keptId, alice), 'conflict')
    await expectCode(unmergeKnowledge(deps, a.id, alice), 'conflict')
    await expectCode(unmergeKnowledge(deps, 'knowledge-20990101000000-zzzz', alice), 'not_found')
    await expectCode(unmergeKnowledge(deps, '../x', alice), 'validation_error')
  })

  it('merges only entries the caller manages, and reports the rest', async () => {
    const mine1 = await save(LOGIN, alice)
    const mine2 = await save(LOGIN_DUP, alice)
    const theirs = await save({ ...LOGIN, content: `${LOGIN.content} Works in 2026.` }, carol)
    const before = await knowledge.get(theirs.id, carol)
    // An admin manages all three (in its org), but never merges across owners (issue 27): a
    // merged entry has one owner, who could then edit or delete the other owner's text.
    const byAdmin = await slimKnowledge(deps, { dry_run: true }, admin)
    expect(byAdmin.groups.map((g) => [...g.merged_ids].sort())).toEqual([[mine1.id, mine2.id].sort()])
    expect(byAdmin.skipped).toEqual([
      { ids: [mine1.id, mine2.id, theirs.id].sort(), reason: 'owners_differ', message: expect.stringContaining(`${theirs.id} (user:carol)`) },
    ])
    const result = await slimKnowledge(deps, {}, alice)
    expect(result.groups).toHaveLength(1)
    expect([...result.groups[0]!.merged_ids].sort()).toEqual([mine1.id, mine2.id].sort())
    expect(result.skipped).toEqual([{ ids: [mine1.id, mine2.id, theirs.id].sort(), reason: 'not_managed', message: expect.stringContaining(theirs.id) }])
    expect(await knowledge.get(theirs.id, carol)).toEqual(before)
    // Carol alone manages nothing else in the group: no merge for her.
    const forCarol = await slimKnowledge(deps, {}, carol)
    expect(forCarol.groups).toEqual([])
  })

  it('skips a group whose scopes the caller cannot write', async () => {
    const a = await save(BREAD, alice, { scopes: ['org:acme', 'team:t1'] })
    const b = await save(BREAD_DUP, alice, { scopes: ['team:t1', 'org:acme'] })
    const aliceElsewhere = Principal.parse({ user: 'alice', org: 'acme' })
    const before = await snapshot()
    const result = await slimKnowledge(deps, {}, aliceElsewhere)
    expect(result.groups).toEqual([])
    expect(result.skipped).toEqual([{ ids: expect.arrayContaining([a.id, b.id]), reason: 'scopes_not_writable', message: expect.stringContaining('team:t1') }])
    expect(await snapshot()).toEqual(before)
    const ok = await slimKnowledge(deps, {}, alice)
    expect(ok.groups).toHaveLength(1)
    expect((await knowledge.get(ok.groups[0]!.kept_id!, alice)).scopes.sort()).toEqual(['org:acme', 'team:t1'])
  })

  it('never widens visibility: near-duplicates with different scope sets are not merged (scopes_differ)', async () => {
    const personal = await save(LOGIN, alice, { scopes: ['user:alice'] })
    const shared = await save(LOGIN_DUP, alice, { scopes: ['org:acme'] })
    const sharedToo = await save({ ...LOGIN_DUP, content: `${LOGIN_DUP.content} Works in 2026.` }, alice, { scopes: ['org:acme'] })
    const wider = await save(BREAD, alice, { scopes: ['org:acme', 'team:t1'] })
    const narrower = await save(BREAD_DUP, alice, { scopes: ['org:acme'] })
    const differing = async (who: Principal) =>
      (await slimKnowledge(deps, { dry_run: true }, who)).skipped
        .filter((s) => s.reason === 'scopes_differ')
        .map((s) => [...s.ids].sort())
        .sort()
    expect(await differing(alice)).toEqual([[personal.id, shared.id, sharedToo.id].sort(), [wider.id, narrower.id].sort()].sort())
    // An admin too: it may merge anything it sees, but not across scope sets.
    expect(await differing(admin)).toEqual([[wider.id, narrower.id].sort()])
    const result = await slimKnowledge(deps, {}, alice)
    // Only the two org:acme login entries merge; the user-scoped one stays as it was.
    expect(result.groups.map((g) => [...g.merged_ids].sort())).toEqual([[shared.id, sharedToo.id].sort()])
    expect(result.skipped.find((s) => s.ids.includes(personal.id))).toMatchObject({ reason: 'scopes_differ', message: expect.stringContaining('user:alice') })
    expect((await knowledge.get(result.groups[0]!.kept_id!, alice)).scopes).toEqual(['org:acme'])
    expect(await knowledge.get(personal.id, alice)).toMatchObject({ status: 'active', merged_into: null })
    expect((await knowledge.get(wider.id, alice)).status).toBe('active')
  })

  it('continues with older entries through next_cursor: every window overlaps the previous one by half', async () => {
    // Six entries, a second apart: three pairs of near-duplicates, oldest pair first.
    let at = Date.parse('2026-03-01T00:00:00Z')
    const stepping = await createKnowledgeService({ store, embedder, clock: { now: () => new Date((at += 1000)) } })
    const ids: string[] = []
    for (const text of [LOGIN, LOGIN_DUP, BREAD, BREAD_DUP, UNRELATED, { ...UNRELATED, content: `${UNRELATED.content} Reload the server.` }]) {
      ids.push((await stepping.save({ ...text, types: ['tool'], scopes: ['org:acme'] }, alice)).id)
    }
    const first = await slimKnowledge(deps, { dry_run: true, limit: 2 }, alice)
    expect(first).toMatchObject({ considered: 2, truncated: true, next_cursor: expect.any(String) })
    // Without the cursor a run compares the same newest window again: it is the cursor that moves on.
    expect((await slimKnowledge(deps, { dry_run: true, limit: 2 }, alice)).groups).toEqual(first.groups)
    const found: string[][] = []
    let cursor: string | null = null
    let runs = 0
    do {
      const run = await slimKnowledge(deps, { dry_run: true, limit: 2, ...(cursor ? { cursor } : {}) }, alice)
      found.push(...run.groups.map((g) => [...g.merged_ids].sort()))
      expect(run.truncated).toBe(run.next_cursor !== null)
      cursor = run.next_cursor
      runs++
    } while (cursor && runs < 10)
    expect(runs).toBe(5)
    expect(found.sort()).toEqual([[ids[0]!, ids[1]!].sort(), [ids[2]!, ids[3]!].sort(), [ids[4]!, ids[5]!].sort()].sort())
    // A real run with the cursor merges in that window only.
    const second = await slimKnowledge(deps, { limit: 2, cursor: first.next_cursor }, alice)
    expect(second.groups).toEqual([])
    await expectCode(slimKnowledge(deps, { cursor: 'garbage' }, alice), 'validation_error')
    expect((await slimKnowledge(deps, { dry_run: true, cursor: null }, alice)).considered).toBe(6)
  })

  it('sees only visible entries and refuses bad input', async () => {
    await save(LOGIN, alice, { scopes: ['user:alice'] })
    await save(LOGIN_DUP, carol, { scopes: ['user:carol'] })
    expect((await slimKnowledge(deps, { dry_run: true }, admin)).considered).toBe(0)
    expect((await slimKnowledge(deps, { dry_run: true }, alice)).considered).toBe(1)
    await expectCode(slimKnowledge(deps, { threshold: 2 }, alice), 'validation_error')
    await expectCode(slimKnowledge(deps, { surprise: true }, alice), 'validation_error')
    await expectCode(slimKnowledge(deps, {}, reader), 'forbidden')
    expect((await slimKnowledge(deps, { dry_run: 'true', threshold: '0.95' }, alice)).dry_run).toBe(true)
  })
})
