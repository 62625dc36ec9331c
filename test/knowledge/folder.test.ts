/**
 * The knowledge folder (seed 002's layout, docs/knowledge-folder.md) through the knowledge
 * service, on every backend: the rule that places each entry, a byte-identical round trip
 * (a Chinese set with histories, versions and counters; a few hundred LoCoMo dev turns read in
 * place), import plans and their errors by file, index and field, and sync's conflicts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { FolderFile } from '../../src/core/knowledge-folder.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { loadRetrievalSet } from '../../src/eval/dataset.js'
import { unzipFolder, zipFolder } from '../../src/knowledge/folder/archive.js'
import { placeOf } from '../../src/knowledge/folder/layout.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { exportedEntry } from '../helpers/entries.js'
import { BACKENDS, openTestStore, truncateKnowledge } from '../helpers/stores.js'

const LOCOMO = new URL('../../../shared/corpus/locomo/turns-dev', import.meta.url).pathname

/** Sees and writes every section the sets use, and may name any owner (the hub operator: since #27 an org admin names only its own ids). */
const admin = Principal.parse({ user: 'alice', agent: 'crawler_ops', project: 'p1', team: 't1', org: 'acme', permissions: ['hub:admin'] })
const alice = Principal.parse({ user: 'alice', project: 'p1', org: 'acme' })
const bob = Principal.parse({ user: 'bob', org: 'acme' })

const id = (n: number) => `knowledge-20260101000000-${String(n).padStart(4, '0')}`

/** A Chinese set: every section, every file, feedback histories, earlier versions, counters, an archived entry. */
function chineseSet(): string[] {
  const history = [{ query: '如何登录', trace_id: 'trace-1', outcome: '成功', timestamp: '2026-02-01T00:00:00Z', zeta: 1, alpha: '先' }]
  const version = {
    version: 1,
    task: '旧的任务',
    content: '旧的内容',
    types: ['strategy'],
    tags: { domain: 'coding_style', category: 'preference' },
    scopes: ['user:alice'],
    resource_ids: [],
    reason: 'edit',
    created_at: '2026-01-01T00:00:00.000Z',
  }
  return [
    exportedEntry({
      id: id(1),
      task: '用户编码风格偏好',
      content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全',
      types: ['user_profile'],
      tags: { domain: 'coding_style', category: 'preference' },
      scopes: ['user:alice', 'project:p1'],
      owner: 'user:alice',
      source: {
        name: '',
        category: 'exp',
        urls: [],
        agent_id: 'general_assistant',
        submitted_by: '',
        timestamp: '2026-03-03',
        message_id: '',
        trace_id: 'trace-xxx',
      },
      eval: { score: 4, helpful: 5, harmful: 1, confidence: 0.9, helpful_history: history, harmful_history: [{ reason: '过时', query: '类型' }] },
      version: 2,
      versions: [version],
    }),
    exportedEntry({
      id: id(2),
      task: '提交习惯',
      content: '每次提交前运行 lint',
      types: ['user_profile'],
      tags: { category: 'habit' },
      scopes: ['user:alice'],
    }),
    exportedEntry({ id: id(3), task: '约束', content: '不能使用 any', types: ['user_profile'], tags: { category: 'constraint' }, scopes: ['user:alice'] }),
    exportedEntry({
      id: id(4),
      task: '背景',
      content: '后端工程师,五年经验',
      types: ['user_profile'],
      tags: { category: 'background' },
      scopes: ['user:alice'],
    }),
    exportedEntry({ id: id(5), task: '爬虫登录', content: '用测试账号登录站点 A', types: ['tool', 'usecase'], scopes: ['agent:crawler_ops', 'org:acme'] }),
    exportedEntry({ id: id(6), task: '部署', content: '先 corepack enable', types: ['plan'], scopes: ['org:acme'], owner: 'agent:crawler_ops' }),
    exportedEntry({ id: id(7), task: '术语', content: '向量检索:按语义相似度找知识', types: ['definition'], scopes: ['public'] }),
    exportedEntry({ id: id(8), task: '项目规范', content: '所有接口返回 JSON', types: ['strategy'], scopes: ['org:acme', 'project:p1'] }),
    exportedEntry({ id: id(9), task: '团队经验', content: '周五不发布', types: ['usecase'], scopes: ['team:t1', 'org:acme'] }),
    exportedEntry({ id: id(10), task: '旧知识', content: '已过时的做法', types: ['tool'], scopes: ['org:acme'], status: 'archived' }),
    exportedEntry({ id: id(11), task: '全局工具', content: 'ripgrep 比 grep 快', types: ['tool'], scopes: ['org:acme'], tags: { z: 1, a: ['x', 'y'] } }),
  ]
}

/** LoCoMo dev turns read in place, the first `count` (all with Infinity), as entries of project p1 (with their source trace and date). */
async function locomoSet(count: number): Promise<string[]> {
  const set = await loadRetrievalSet(LOCOMO)
  return set.docs.slice(0, count).map((doc, i) =>
    exportedEntry({
      id: id(1000 + i),
      task: doc.text.slice(0, 80),
      content: doc.text,
      types: ['usecase'],
      scopes: [i % 3 === 0 ? 'project:p1' : i % 3 === 1 ? 'user:alice' : 'org:acme'],
      owner: 'user:alice',
      source: { name: '', category: 'exp', urls: [], agent_id: '', submitted_by: 'eval', message_id: doc.id, trace_id: String(doc.meta.conv ?? '') },
      created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    }),
  )
}

const file = (files: FolderFile[], path: string) => files.find((f) => f.path === path)?.text
const sortedJsonl = async (knowledge: KnowledgeService) => {
  const lines: unknown[] = []
  for await (const line of knowledge.exportJsonl(admin)) lines.push(JSON.parse(line))
  return lines.sort((a, b) => ((a as { id: string }).id < (b as { id: string }).id ? -1 : 1))
}

describe.each(BACKENDS)('knowledge folder on %s', (backend) => {
  let store: Store
  let cleanup: () => Promise<void>
  let knowledge: KnowledgeService

  beforeAll(async () => {
    const opened = await openTestStore(backend)
    store = opened.store
    cleanup = opened.cleanup
    knowledge = await createKnowledgeService({ store, embedder: createHashedEmbedder({ dimension: 64 }) })
  })
  afterAll(async () => cleanup())
  beforeEach(async () => truncateKnowledge(store))

  async function load(lines: string[]): Promise<void> {
    const report = await knowledge.importJsonl(lines, admin)
    expect(report.errors).toEqual([])
  }

  it('places each entry in one file by the rule (user > project > agent > team > org > public, then the first type; status other than active in archive.json)', async () => {
    await load(chineseSet())
    const files = await knowledge.exportFolder(admin)
    expect(files.map((f) => f.path)).toEqual([
      'README.md',
      'agents/crawler_ops/tools.json',
      'global/archive.json',
      'global/definitions.json',
      'global/plans.json',
      'global/tools.json',
      'projects/p1/strategies.json',
      'teams/t1/usecases.json',
      'users/user_alice/constraints.json',
      'users/user_alice/habits.json',
      'users/user_alice/preferences.json',
      'users/user_alice/profile.json',
    ])
    const ids = (path: string) => (JSON.parse(file(files, path)!) as { id: string }[]).map((e) => e.id)
    expect(ids('users/user_alice/preferences.json')).toEqual([id(1)])
    // Owned by the agent, scoped org-wide: org-wide knowledge is global/'s (seed 002), whoever owns it.
    expect(ids('global/plans.json')).toEqual([id(6)])
    expect(ids('global/tools.json')).toEqual([id(11)])
    expect(ids('global/archive.json')).toEqual([id(10)])
    // Chinese as written, 2-space indent, trailing newline, free-form keys sorted.
    const text = file(files, 'users/user_alice/preferences.json')!
    expect(text).toContain('"content": "用户偏好使用 TypeScript 而非 JavaScript,注重类型安全"')
    expect(text).toMatch(/^\[\n {2}\{\n {4}"id": /)
    expect(text.endsWith('}\n]\n')).toBe(true)
    expect(text.indexOf('"alpha"')).toBeLessThan(text.indexOf('"zeta"'))
    expect(file(files, 'README.md')).toContain('knowhub import DIR')
  })

  it('round trip on a Chinese set: export -> import into an empty store -> export is byte-identical, every field equal (counters, histories, versions)', async () => {
    await load(chineseSet())
    const first = await knowledge.exportFolder(admin)
    const jsonl = await sortedJsonl(knowledge)
    await truncateKnowledge(store)
    const report = await knowledge.importFolder(first, admin)
    expect(report.errors).toEqual([])
    expect(report.added).toHaveLength(11)
    expect(report.applied).toBe(true)
    expect(await knowledge.exportFolder(admin)).toEqual(first)
    expect(await sortedJsonl(knowledge)).toEqual(jsonl)
    // Unchanged: a second import changes nothing.
    const again = await knowledge.importFolder(first, admin)
    expect({ added: again.added, changed: again.changed, unchanged: again.unchanged, removed: again.removed }).toEqual({
      added: [],
      changed: [],
      unchanged: 11,
      removed: [],
    })
  })

  it('round trip on the whole LoCoMo turns-dev corpus read in place (2,760 turns): byte-identical folders, every field equal', async () => {
    const entries = await locomoSet(Number.POSITIVE_INFINITY)
    expect(entries.length).toBeGreaterThan(2000)
    await load(entries)
    const first = await knowledge.exportFolder(admin)
    const jsonl = await sortedJsonl(knowledge)
    expect(jsonl).toHaveLength(entries.length)
    await truncateKnowledge(store)
    const report = await knowledge.importFolder(first, admin)
    expect(report.errors).toEqual([])
    expect(report.added).toHaveLength(entries.length)
    expect(await knowledge.exportFolder(admin)).toEqual(first)
    expect(await sortedJsonl(knowledge)).toEqual(jsonl)
  })

  it('a hand edit becomes a new version "edited in <path>", changes only its own lines on export, and new entries take their file`s type, category and scope', async () => {
    await load(chineseSet())
    const before = await knowledge.exportFolder(admin)
    const prefs = JSON.parse(file(before, 'users/user_alice/preferences.json')!) as Record<string, unknown>[]
    prefs[0]!.content = '用户偏好使用 TypeScript,开启 strict 模式'
    prefs.push({ task: '缩进', content: '两个空格' })
    const edited = before.map((f) => (f.path === 'users/user_alice/preferences.json' ? { ...f, text: JSON.stringify(prefs, null, 2) } : f))
    const plan = await knowledge.importFolder(edited, admin, { dry_run: true })
    expect(plan).toMatchObject({
      dry_run: true,
      applied: false,
      changed: [{ id: id(1), file: 'users/user_alice/preferences.json' }],
      unchanged: 10,
      errors: [],
    })
    expect(plan.added).toHaveLength(1)
    expect((await knowledge.get(id(1), admin)).version).toBe(2) // nothing written
    const report = await knowledge.importFolder(edited, admin)
    expect(report.applied).toBe(true)
    const entry = await knowledge.get(id(1), admin)
    expect(entry).toMatchObject({ version: 3, content: '用户偏好使用 TypeScript,开启 strict 模式', eval: { helpful: 5, harmful: 1 } })
    const versions = await knowledge.versions(id(1), admin)
    expect(versions.at(-1)).toMatchObject({
      version: 2,
      content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全',
      reason: 'edited in users/user_alice/preferences.json',
    })
    const added = await knowledge.get(report.added[0]!.id, admin)
    expect(added).toMatchObject({ types: ['user_profile'], tags: { category: 'preference' }, scopes: ['user:alice'], owner: 'user:alice', content: '两个空格' })
    // The next export: every other file byte-identical; in preferences.json only the edited entry's lines and the new one differ.
    const after = await knowledge.exportFolder(admin)
    for (const f of before) if (f.path !== 'users/user_alice/preferences.json') expect(file(after, f.path)).toBe(f.text)
    const oldEntries = JSON.parse(file(before, 'users/user_alice/preferences.json')!) as Record<string, unknown>[]
    const newEntries = JSON.parse(file(after, 'users/user_alice/preferences.json')!) as Record<string, unknown>[]
    expect(newEntries).toHaveLength(2)
    expect(newEntries[0]).toEqual({
      ...oldEntries[0],
      content: '用户偏好使用 TypeScript,开启 strict 模式',
      version: 3,
      updated_at: expect.any(String),
      versions: [...(oldEntries[0]!.versions as unknown[]), expect.objectContaining({ version: 2, reason: 'edited in users/user_alice/preferences.json' })],
    })
  })

  it('an entry removed from a file is reported, and archived only with prune (then found in archive.json)', async () => {
    await load(chineseSet())
    const files = await knowledge.exportFolder(admin)
    const without = files.map((f) => (f.path === 'users/user_alice/habits.json' ? { ...f, text: '[]\n' } : f))
    const report = await knowledge.importFolder(without, admin)
    expect(report.removed).toEqual([{ id: id(2), file: 'users/user_alice/habits.json' }])
    expect(report.archived).toEqual([])
    expect((await knowledge.get(id(2), admin)).status).toBe('active')
    // A folder without a section says nothing about that section's entries.
    const partialFolder = files.filter((f) => f.path.startsWith('global/'))
    expect((await knowledge.importFolder(partialFolder, admin, { dry_run: true })).removed).toEqual([])
    const pruned = await knowledge.importFolder(without, admin, { prune: true })
    expect(pruned.archived).toEqual([{ id: id(2), file: 'users/user_alice/habits.json' }])
    expect((await knowledge.get(id(2), admin)).status).toBe('archived')
    const after = await knowledge.exportFolder(admin)
    expect(file(after, 'users/user_alice/habits.json')).toBeUndefined()
    expect((JSON.parse(file(after, 'users/user_alice/archive.json')!) as { id: string }[]).map((e) => e.id)).toEqual([id(2)])
  })

  describe('bad input names the file, the index and the field, and imports nothing', () => {
    const good = { path: 'users/user_alice/habits.json', text: JSON.stringify([{ task: '好习惯', content: '早睡早起' }]) }
    async function expectNothingImported(files: FolderFile[], principal = alice) {
      const report = await knowledge.importFolder(files, principal)
      expect(report.applied).toBe(false)
      expect(report.errors.length).toBeGreaterThan(0)
      expect(await knowledge.count()).toBe(0)
      return report.errors
    }

    it('malformed JSON', async () => {
      const errors = await expectNothingImported([good, { path: 'global/tools.json', text: '[{"task": "x",' }])
      expect(errors).toEqual([
        { file: 'global/tools.json', index: null, field: null, code: 'invalid_import', message: expect.stringMatching(/^not valid JSON/) },
      ])
    })

    it('a file of the wrong shape, and an entry with a bad field', async () => {
      const errors = await expectNothingImported([
        good,
        { path: 'global/tools.json', text: '{"task": "x", "content": "y"}' },
        { path: 'global/plans.json', text: JSON.stringify([{ task: 'a', content: 'b' }, exportedEntryObject({ eval: 'many' }), 42]) },
      ])
      expect(errors).toEqual([
        { file: 'global/plans.json', index: 1, field: 'eval', code: 'invalid_import', message: expect.any(String) },
        { file: 'global/plans.json', index: 2, field: null, code: 'invalid_import', message: 'an entry is a JSON object' },
        { file: 'global/tools.json', index: null, field: null, code: 'invalid_import', message: 'a knowledge file is a JSON array of entries' },
      ])
      const partial = await knowledge.importFolder([good, { path: 'global/tools.json', text: '{}' }], alice, { partial: true })
      expect(partial.applied).toBe(true)
      expect(partial.added).toHaveLength(1)
    })

    it('duplicate ids across files', async () => {
      const entry = exportedEntryObject({})
      const errors = await expectNothingImported([
        { path: 'global/tools.json', text: JSON.stringify([entry]) },
        { path: 'users/user_alice/tools.json', text: JSON.stringify([entry]) },
      ])
      expect(errors).toEqual([
        {
          file: 'users/user_alice/tools.json',
          index: 0,
          field: 'id',
          code: 'invalid_import',
          message: `duplicate id ${id(99)} (also in global/tools.json at index 0)`,
        },
      ])
    })

    it('an unknown category file, an unknown folder', async () => {
      const errors = await expectNothingImported([good, { path: 'users/user_alice/hobbies.json', text: '[]' }, { path: 'user/alice/habits.json', text: '[]' }])
      expect(errors.map((e) => [e.file, e.code])).toEqual([
        ['user/alice/habits.json', 'invalid_import'],
        ['users/user_alice/hobbies.json', 'invalid_import'],
      ])
      expect(errors[1]!.message).toContain('unknown category file hobbies.json')
    })

    it('a folder the caller may not write: another user`s section, another owner`s entry', async () => {
      const errors = await expectNothingImported(
        [good, { path: 'users/user_carol/preferences.json', text: JSON.stringify([{ task: 't', content: 'c' }]) }],
        bob,
      )
      expect(errors).toEqual(
        [
          {
            file: 'users/user_carol/preferences.json',
            index: 0,
            field: 'scopes',
            code: 'forbidden',
            message: expect.stringContaining('You cannot write to scope user:carol'),
          },
          // bob writes bob's section, not alice's
          {
            file: 'users/user_alice/habits.json',
            index: 0,
            field: 'scopes',
            code: 'forbidden',
            message: expect.stringContaining('You cannot write to scope user:alice'),
          },
        ].sort((a, b) => (a.file < b.file ? -1 : 1)),
      )
      // An org entry of alice's, changed by bob (who sees it): only its owner may change it.
      await knowledge.importJsonl([exportedEntry({ id: id(50), task: '组织', content: '内容', scopes: ['org:acme'], owner: 'user:alice' })], admin)
      const files = (await knowledge.exportFolder(bob)).map((f) => (f.path === 'global/tools.json' ? { ...f, text: f.text.replace('内容', '改了') } : f))
      const report = await knowledge.importFolder(files, bob)
      expect(report.applied).toBe(false)
      expect(report.errors).toEqual([
        {
          file: 'global/tools.json',
          index: 0,
          field: 'owner',
          code: 'forbidden',
          message: `Only the owner (user:alice) or an admin may change entry ${id(50)}`,
        },
      ])
      expect((await knowledge.get(id(50), bob)).content).toBe('内容')
    })

    it('an entry written by hand with an id of its own (seed 002`s example) is added with that id and its file`s defaults', async () => {
      const seed = {
        id: 'profile_001',
        task: '用户编码风格偏好',
        tags: { domain: 'coding_style' },
        content: '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全',
      }
      const report = await knowledge.importFolder([{ path: 'users/user_alice/preferences.json', text: JSON.stringify([seed]) }], alice)
      expect(report.errors).toEqual([])
      expect(report.added).toEqual([{ id: 'profile_001', file: 'users/user_alice/preferences.json' }])
      expect(await knowledge.get('profile_001', alice)).toMatchObject({
        types: ['user_profile'],
        tags: { domain: 'coding_style', category: 'preference' },
        scopes: ['user:alice'],
        owner: 'user:alice',
      })
      const bad = await knowledge.importFolder([{ path: 'users/user_alice/habits.json', text: JSON.stringify([{ ...seed, id: 'no spaces' }]) }], alice)
      expect(bad.errors).toEqual([expect.objectContaining({ file: 'users/user_alice/habits.json', index: 0, field: 'id', code: 'invalid_import' })])
    })

    it('a BOM and Windows line endings are accepted', async () => {
      const text = `\uFEFF${JSON.stringify([{ task: '换行', content: 'CRLF 文件' }], null, 2).replaceAll('\n', '\r\n')}\r\n`
      const report = await knowledge.importFolder([{ path: 'users/user_alice/habits.json', text }], alice)
      expect(report.errors).toEqual([])
      expect(report.added).toHaveLength(1)
    })
  })

  describe('sync', () => {
    it('both ways with a state; an entry changed on both sides is a conflict that loses nothing', async () => {
      await load(chineseSet())
      // First sync into an empty folder: everything flows out.
      const first = await knowledge.syncFolder({ files: [] }, admin)
      expect(first.conflicts).toEqual([])
      expect(first.exported).toHaveLength(11)
      expect(first.files).toEqual(await knowledge.exportFolder(admin))
      let files = first.files
      const state = first.state
      expect(state.entries[id(1)]).toMatchObject({ version: 2 })

      // The folder edits 1 and 2; the store edits 1 and 3 (and counts feedback on 2).
      const edit = (path: string, fn: (entries: Record<string, unknown>[]) => void) => {
        files = files.map((f) => {
          if (f.path !== path) return f
          const entries = JSON.parse(f.text) as Record<string, unknown>[]
          fn(entries)
          return { ...f, text: JSON.stringify(entries, null, 2) }
        })
      }
      edit('users/user_alice/preferences.json', (e) => void (e[0]!.content = '文件里的改动'))
      edit('users/user_alice/habits.json', (e) => void (e[0]!.content = '每次提交前运行 lint 和测试'))
      await knowledge.edit(id(1), { content: '数据库里的改动' }, admin)
      await knowledge.edit(id(3), { content: '不能使用 any,也不能用 as' }, admin)
      await knowledge.feedback(id(2), { add_helpful_case: { query: '习惯' } }, admin)

      const second = await knowledge.syncFolder({ files, state }, admin)
      expect(second.report.errors).toEqual([])
      expect(second.report.changed).toEqual([{ id: id(2), file: 'users/user_alice/habits.json' }])
      expect(second.conflicts).toEqual([{ id: id(1), file: 'users/user_alice/preferences.json', note: `conflicts/${id(1)}.json` }])
      // Nothing overwritten: the store keeps its text, the folder its own, the note the store's version.
      expect((await knowledge.get(id(1), admin)).content).toBe('数据库里的改动')
      const prefs = JSON.parse(file(second.files, 'users/user_alice/preferences.json')!) as { content: string }[]
      expect(prefs[0]!.content).toBe('文件里的改动')
      const note = JSON.parse(file(second.files, `conflicts/${id(1)}.json`)!) as { store: { content: string }; note: string }
      expect(note.store.content).toBe('数据库里的改动')
      // The other sides flowed: 2's edit is a new version with the feedback kept, 3's store edit is in the folder.
      expect(await knowledge.get(id(2), admin)).toMatchObject({ content: '每次提交前运行 lint 和测试', eval: { helpful: 1 } })
      expect(file(second.files, 'users/user_alice/constraints.json')).toContain('不能使用 any,也不能用 as')
      expect(file(second.files, 'users/user_alice/habits.json')).toContain('"helpful": 1')

      // While the note is there, the entry is left alone, however often sync runs.
      const third = await knowledge.syncFolder({ files: second.files, state: second.state }, admin)
      expect(third.report.changed).toEqual([])
      expect((await knowledge.get(id(1), admin)).content).toBe('数据库里的改动')
      expect(file(third.files, `conflicts/${id(1)}.json`)).toBe(file(second.files, `conflicts/${id(1)}.json`))
      expect(third.files).toEqual(second.files)

      // Merged by hand and the note deleted: the folder's text becomes the new version, the store's is kept as the previous one.
      files = third.files.filter((f) => !f.path.startsWith('conflicts/'))
      edit('users/user_alice/preferences.json', (e) => void (e[0]!.content = '合并后的内容'))
      const fourth = await knowledge.syncFolder({ files, state: third.state }, admin)
      expect(fourth.conflicts).toEqual([])
      expect(fourth.report.changed).toEqual([{ id: id(1), file: 'users/user_alice/preferences.json' }])
      expect((await knowledge.get(id(1), admin)).content).toBe('合并后的内容')
      expect((await knowledge.versions(id(1), admin)).map((v) => v.content)).toEqual([
        '旧的内容',
        '用户偏好使用 TypeScript 而非 JavaScript,注重类型安全',
        '数据库里的改动',
      ])
      expect(fourth.files).toEqual(await knowledge.exportFolder(admin))
    })

    it('a folder with a bad file syncs nothing, in either direction, and names the file', async () => {
      await load(chineseSet())
      const first = await knowledge.syncFolder({ files: [] }, admin)
      const files = [...first.files.filter((f) => f.path !== 'global/tools.json'), { path: 'global/tools.json', text: '[{' }]
      await knowledge.edit(id(3), { content: '改了' }, admin)
      const result = await knowledge.syncFolder({ files, state: first.state }, admin)
      expect(result.report.errors).toEqual([expect.objectContaining({ file: 'global/tools.json', index: null, code: 'invalid_import' })])
      expect({ files: result.files, remove: result.remove, state: result.state, applied: result.report.applied }).toEqual({
        files: [],
        remove: [],
        state: first.state,
        applied: false,
      })
    })

    it('a first sync over a differing folder without a state is a conflict, and entries deleted from the folder are archived only with prune', async () => {
      await load(chineseSet())
      const exported = await knowledge.exportFolder(admin)
      const changed = exported.map((f) => (f.path === 'global/tools.json' ? { ...f, text: f.text.replace('ripgrep 比 grep 快', 'rg 更快') } : f))
      const first = await knowledge.syncFolder({ files: changed }, admin)
      expect(first.conflicts.map((c) => c.id)).toEqual([id(11)])
      expect((await knowledge.get(id(11), admin)).content).toBe('ripgrep 比 grep 快')

      const synced = await knowledge.syncFolder({ files: first.files.filter((f) => !f.path.startsWith('conflicts/')), state: first.state }, admin)
      const withoutHabits = synced.files.filter((f) => f.path !== 'users/user_alice/habits.json')
      const kept = await knowledge.syncFolder({ files: withoutHabits, state: synced.state }, admin)
      expect(kept.report.removed).toEqual([{ id: id(2), file: 'users/user_alice/habits.json' }])
      expect(file(kept.files, 'users/user_alice/habits.json')).toBeDefined() // written back
      const pruned = await knowledge.syncFolder({ files: withoutHabits, state: kept.state, prune: true }, admin)
      expect(pruned.report.archived).toEqual([{ id: id(2), file: 'users/user_alice/habits.json' }])
      expect((await knowledge.get(id(2), admin)).status).toBe('archived')
      expect(pruned.remove).toEqual([])
      expect(file(pruned.files, 'users/user_alice/archive.json')).toContain(id(2))
    })
  })

  it('placeOf: the rule on the seed`s example (user:123 + project:456 preference -> users/user_123/preferences.json)', () => {
    expect(
      placeOf({ scopes: ['user:123', 'project:456'], owner: 'user:123', types: ['user_profile'], tags: { category: 'preference' }, status: 'active' }),
    ).toBe('users/user_123/preferences.json')
    expect(placeOf({ scopes: ['project:456', 'user:123'], owner: 'user:123', types: ['tool'], tags: {}, status: 'active' })).toBe('users/user_123/tools.json')
    expect(placeOf({ scopes: ['team:t', 'org:o'], owner: 'agent:a', types: ['plan', 'tool'], tags: {}, status: 'active' })).toBe('teams/t/plans.json')
    expect(placeOf({ scopes: ['org:o'], owner: 'agent:a', types: ['plan'], tags: {}, status: 'active' })).toBe('global/plans.json')
    expect(placeOf({ scopes: ['public'], owner: 'user:u', types: ['user_profile'], tags: { category: 'hobby' }, status: 'active' })).toBe('global/profile.json')
    expect(placeOf({ scopes: ['team:t'], owner: 'user:u', types: ['strategy'], tags: {}, status: 'merged' })).toBe('teams/t/archive.json')
  })
})

/** An exported entry (id 99, alice's, org-wide) with `fields` over it, as an object. */
function exportedEntryObject(fields: Record<string, unknown>): Record<string, unknown> {
  return { ...(JSON.parse(exportedEntry({ id: id(99), task: 't', content: 'c', scopes: ['org:acme'], owner: 'user:alice' })) as object), ...fields }
}

describe('folder zip', () => {
  it('round-trips files byte for byte, and refuses a small zip that would inflate past the bounds', async () => {
    const files = [
      { path: 'README.md', text: '# 知识\n' },
      { path: 'users/user_alice/preferences.json', text: '[]\n' },
    ]
    expect(await unzipFolder(zipFolder(files), { maxFiles: 10, maxFileBytes: 1000, maxTotalBytes: 1000 })).toEqual(files)
    expect(zipFolder(files)).toEqual(zipFolder([...files].reverse()))
    const bomb = zipFolder([{ path: 'global/tools.json', text: ' '.repeat(1_000_000) }])
    expect(bomb.length).toBeLessThan(10_000)
    await expect(unzipFolder(bomb, { maxFiles: 10, maxFileBytes: 10_000_000, maxTotalBytes: 100_000 })).rejects.toThrow(
      /the zip inflates past 100000 bytes in all/,
    )
    await expect(unzipFolder(bomb, { maxFiles: 10, maxFileBytes: 100_000, maxTotalBytes: 10_000_000 })).rejects.toThrow(
      /"global\/tools.json" inflates past 100000 bytes/,
    )
    await expect(unzipFolder(new TextEncoder().encode('not a zip'), { maxFiles: 10, maxFileBytes: 10, maxTotalBytes: 10 })).rejects.toThrow(/not a zip file/)
  })
})
