/**
 * The tenancy suite's data-carrying cases (issue 39): ids named inside request bodies rather than
 * in the path — an exported JSONL line whose `id` is another tenant's entry (every `on_conflict`),
 * lines whose `merged_into` / `superseded_by` / `supersedes` name one, a knowledge folder (files or
 * sync) holding one. Another org's id is an unknown id: a line or file naming it becomes a new
 * entry under a new id, or fails exactly as an unknown id does; inside one org, an entry of
 * another owner is replaced only by those who may change it (its owner, an admin). After every
 * attempt the named entry is read back as its owner sees it: text, owner and version unchanged.
 * Each attempt is counted as data-carrying in the suite's printed totals.
 */
import { expect } from 'vitest'
import type { ApiResponse, Client } from '../helpers.js'
import { otherOrg, type Actor, type Org, type Probe, type World } from './world.js'

export type BodyCase = (p: Probe, w: World) => Promise<void>

const UNKNOWN = 'knowledge-20200101000000-zzzy'
const CONFLICTS = ['error', 'skip', 'replace'] as const

const knowledgeBase = (surface: 'api' | 'ui') => (surface === 'api' ? '/api/knowledge' : '/ui/knowledge')
const folderBase = (surface: 'api' | 'ui') => (surface === 'api' ? '/api/knowledge/folder' : '/ui/knowledge/folder')
const via = (surface: 'api' | 'ui', actor: Actor): Client => (surface === 'api' ? actor.api : actor.ui)
const writersOf = (w: World) => w.actors.filter((a) => a.org !== undefined && (a.role === 'writer' || a.role === 'admin'))

/** A JSONL body (not JSON): the client's post sends strings as they are. */
const postJsonl = (c: Client, path: string, body: string): Promise<ApiResponse> => c.post(path, body, { 'content-type': 'application/x-ndjson' })

/** One exported line of the actor's own (a fresh entry), to rewrite into an attack. */
async function ownLine(actor: Actor, label: string): Promise<Record<string, unknown>> {
  const saved = await actor.api.post('/api/knowledge', {
    task: `own line of ${actor.name} ${label}`,
    content: 'mine',
    types: ['plan'],
    scopes: [`org:${actor.org}`],
  })
  expect(saved.status, saved.text).toBe(201)
  const exported = await actor.api.get('/api/knowledge/export')
  const line = exported.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.id === saved.body.id)
  expect(line, `${actor.name}: its own export holds the entry it saved`).toBeDefined()
  return line!
}

/** The entry as `owner` (who may see it) reads it: text, owner, version, and its versions' texts. */
async function snapshot(owner: Actor, id: string): Promise<string> {
  const entry = await owner.api.get(`/api/knowledge/${id}`)
  expect(entry.status, entry.text).toBe(200)
  const versions = await owner.api.get(`/api/knowledge/${id}/versions`)
  const e = entry.body as { content: string; owner: string; version: number; scopes: string[] }
  return JSON.stringify({ content: e.content, owner: e.owner, version: e.version, scopes: e.scopes, versions: versions.body })
}

/** An entry of `org` saved by `who` (its admin or writer) into the org's scope. */
async function entryOf(w: World, org: Org, who: 'admin' | 'writer', label: string): Promise<{ id: string; owner: Actor }> {
  const owner = w.actor(who, org)
  const r = await owner.api.post('/api/knowledge', {
    task: `${label} of ${org}`,
    content: `${label} zq${org}bodymark`,
    types: ['tool'],
    scopes: [`org:${org}`],
  })
  expect(r.status, r.text).toBe(201)
  return { id: r.body.id as string, owner }
}

/**
 * `POST …/import` with an exported line whose `id` is another org's entry: with every
 * `on_conflict`, the line is a new entry under a new id (the report says so), and the named
 * entry is untouched. Inside the org, a writer may not replace its admin's entry; the admin may
 * replace the writer's (it manages its org).
 */
export function importIdsInBodies(surface: 'api' | 'ui'): BodyCase {
  return async (p, w) => {
    for (const actor of writersOf(w)) {
      const them = otherOrg(actor.org!)
      const target = await entryOf(w, them, 'writer', `import target for ${actor.name} ${surface}`)
      for (const conflict of CONFLICTS) {
        const before = await snapshot(target.owner, target.id)
        const line = { ...(await ownLine(actor, `${surface} ${conflict}`)), id: target.id, content: `OVERWRITTEN_BY_${actor.name}` }
        const path = `${knowledgeBase(surface)}/import?on_conflict=${conflict}`
        const r = await p.http(
          actor,
          surface,
          `import another org's id (${conflict})`,
          line,
          () => postJsonl(via(surface, actor), path, JSON.stringify(line)),
          {
            status: 200,
            cross: true,
            data: true,
          },
        )
        expect(r.body, `${actor.name}: another org's id is an unknown id, whatever on_conflict says`).toMatchObject({
          imported: 1,
          skipped: 0,
          errors: [],
          renamed: [{ line: 1, id: target.id }],
        })
        const renamed = (r.body.renamed as Array<{ new_id: string }>)[0]!.new_id
        expect(renamed).not.toBe(target.id)
        expect((await actor.api.get(`/api/knowledge/${renamed}`)).body).toMatchObject({
          content: `OVERWRITTEN_BY_${actor.name}`,
          owner: `user:${actor.principal.user}`,
        })
        expect(await snapshot(target.owner, target.id), `${actor.name} ${conflict}: the other org's entry changed`).toBe(before)
      }
      await referencesInBodies(p, w, actor, surface, target.id)
    }
    await insideOneOrg(p, w, surface)
  }
}

/** Lines naming another org's entry in `merged_into` / `superseded_by` / `supersedes` fail exactly as lines naming an unknown one. */
async function referencesInBodies(p: Probe, w: World, actor: Actor, surface: 'api' | 'ui', foreign: string): Promise<void> {
  for (const field of ['merged_into', 'superseded_by', 'supersedes'] as const) {
    const own = await ownLine(actor, `${surface} ${field}`)
    const extra = field === 'superseded_by' ? { valid_to: new Date().toISOString() } : field === 'merged_into' ? { status: 'merged' } : {}
    const line = (id: string) =>
      JSON.stringify({
        ...own,
        id: `knowledge-20200101000000-${field === 'supersedes' ? 'r1a' : field === 'merged_into' ? 'r2a' : 'r3a'}x`,
        [field]: id,
        ...extra,
      })
    const path = `${knowledgeBase(surface)}/import?mode=atomic`
    await p.sameAsUnknown(
      actor,
      surface,
      `import a line whose ${field} names an entry`,
      { name: foreign, sent: line(foreign), run: () => postJsonl(via(surface, actor), path, line(foreign)) },
      { name: UNKNOWN, sent: line(UNKNOWN), run: () => postJsonl(via(surface, actor), path, line(UNKNOWN)) },
      { status: 200, data: true },
    )
    const r = await postJsonl(via(surface, actor), path, line(foreign))
    expect(r.body, `${actor.name}: ${field} naming another org's entry`).toMatchObject({ imported: 0, errors: [{ line: 1, code: 'invalid_import' }] })
  }
  void w
}

/** Inside one org: the writer may not replace (or probe past) its admin's entry; the admin may replace the writer's. */
async function insideOneOrg(p: Probe, w: World, surface: 'api' | 'ui'): Promise<void> {
  for (const org of ['acme', 'other'] as const) {
    const writer = w.actor('writer', org)
    const admin = w.actor('admin', org)
    const adminEntry = await entryOf(w, org, 'admin', `admin entry ${surface}`)
    const before = await snapshot(admin, adminEntry.id)
    const line = { ...(await ownLine(writer, `${surface} in-org`)), id: adminEntry.id, content: 'OVERWRITTEN_BY_THE_WRITER' }
    const send = (actor: Actor, conflict: string, body: Record<string, unknown>) => () =>
      postJsonl(via(surface, actor), `${knowledgeBase(surface)}/import?on_conflict=${conflict}`, JSON.stringify(body))
    const replaced = await p.http(writer, surface, "replace its admin's entry", line, send(writer, 'replace', line), { status: 200, data: true })
    expect(replaced.body).toMatchObject({ imported: 0, errors: [{ line: 1, code: 'forbidden' }] })
    const skipped = await p.http(writer, surface, "skip its admin's entry", line, send(writer, 'skip', line), { status: 200, data: true })
    expect(skipped.body).toMatchObject({ imported: 0, skipped: 1, errors: [] })
    expect(await snapshot(admin, adminEntry.id), `${org}: the writer changed its admin's entry`).toBe(before)
    // The admin manages its org: it may replace the writer's org entry.
    const writerEntry = await entryOf(w, org, 'writer', `writer entry ${surface}`)
    const byAdmin = {
      ...(await ownLine(admin, `${surface} admin replaces`)),
      id: writerEntry.id,
      owner: `user:${admin.principal.user}`,
      content: 'REPLACED_BY_THE_ADMIN',
    }
    const done = await p.http(admin, surface, "replace its writer's org entry", byAdmin, send(admin, 'replace', byAdmin), { status: 200, data: true })
    expect(done.body).toMatchObject({ imported: 1, errors: [] })
    expect((await writer.api.get(`/api/knowledge/${writerEntry.id}`)).body).toMatchObject({ content: 'REPLACED_BY_THE_ADMIN' })
  }
}

/**
 * A knowledge folder holding an entry under another org's id, imported (dry run, then for real)
 * and synced: planned and written as a new entry under a new id, the named entry untouched; the
 * dry run plans exactly what the real run does.
 */
export function folderIdsInBodies(surface: 'api' | 'ui', route: 'import' | 'sync'): BodyCase {
  return async (p, w) => {
    for (const actor of writersOf(w)) {
      const them = otherOrg(actor.org!)
      const target = await entryOf(w, them, 'writer', `folder ${route} target for ${actor.name} ${surface}`)
      const before = await snapshot(target.owner, target.id)
      const marker = `FOLDER_${route}_BY_${actor.name}_${surface}`
      const { versions: _versions, ...own } = await ownLine(actor, `folder ${route} ${surface}`)
      const entry = { ...own, id: target.id, content: marker }
      const files = [{ path: 'global/tools.json', text: JSON.stringify([entry]) }]
      const c = via(surface, actor)
      const send = (dryRun: boolean) => () =>
        route === 'import'
          ? c.post(`${folderBase(surface)}/import?dry_run=${dryRun}`, { files })
          : c.post(`${folderBase(surface)}/sync`, { files, dry_run: dryRun })
      const reportOf = (r: ApiResponse) =>
        (route === 'import' ? r.body : r.body.report) as { added: Array<{ id: string }>; changed: unknown[]; errors: unknown[] }
      const plan = reportOf(
        await p.http(actor, surface, `${route} (dry run) holding another org's id`, files, send(true), { status: 200, cross: true, data: true }),
      )
      expect(JSON.stringify(plan.changed), `${actor.name}: the dry run plans a change of another org's entry`).not.toContain(target.id)
      expect(plan.errors).toEqual([])
      const done = reportOf(await p.http(actor, surface, `${route} holding another org's id`, files, send(false), { status: 200, cross: true, data: true }))
      expect(done.errors).toEqual([])
      expect(JSON.stringify(done.changed)).not.toContain(target.id)
      const added = done.added.map((a) => a.id)
      expect(added).not.toContain(target.id)
      expect(added, `${actor.name}: the dry run and the real run add as many`).toHaveLength(plan.added.length)
      expect(await snapshot(target.owner, target.id), `${actor.name} ${route}: the other org's entry changed`).toBe(before)
    }
  }
}
