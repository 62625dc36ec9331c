/**
 * The parts of the in-memory full-text index, each on its own: postings, entry columns,
 * filters with cached verdicts, and the best-hits list.
 */
import { describe, expect, it } from 'vitest'
import { EntryTable, type IndexedEntry } from '../../src/store/text-index/entries.js'
import { compileFilter, VerdictCache } from '../../src/store/text-index/filter.js'
import { PostingLists, visibleFrequency } from '../../src/store/text-index/postings.js'
import { offerHit } from '../../src/store/text-index/top-k.js'
import type { RankedId } from '../../src/store/text-index/query.js'

const entry = (id: string, more: Partial<IndexedEntry> = {}): IndexedEntry => ({
  id,
  scopes: ['user:u'],
  types: ['tool'],
  status: 'active',
  score: 3,
  helpful: 0,
  harmful: 0,
  tf: { proxy: 1 },
  length: 1,
  ...more,
})

describe('PostingLists', () => {
  it('grows a list past its first size and removes by moving the last posting into the hole', () => {
    const lists = new PostingLists()
    const scopes = Int32Array.of(0)
    for (let slot = 0; slot < 10; slot++) lists.add('proxy', slot, slot + 1, scopes)
    expect(lists.get('proxy')!.size).toBe(10)
    lists.remove('proxy', 2, scopes)
    lists.remove('proxy', 99, scopes)
    lists.remove('absent', 0, scopes)
    const list = lists.get('proxy')!
    expect(list.size).toBe(9)
    expect(list.slots[2]).toBe(9)
    expect(list.tfs[2]).toBe(10)
    for (let slot = 0; slot < 10; slot++) lists.remove('proxy', slot, scopes)
    expect(lists.get('proxy')).toBeUndefined()
  })

  it("counts a term's entries per scope through adds, removes and scope changes", () => {
    const lists = new PostingLists()
    const [u, team, org] = [0, 1, 2]
    lists.add('proxy', 0, 1, Int32Array.of(u))
    lists.add('proxy', 1, 1, Int32Array.of(u, team))
    lists.add('proxy', 2, 1, Int32Array.of(org))
    const df = (visible: number[]) => visibleFrequency(lists.get('proxy')!, visible)
    // An entry counts once per visible scope it is in.
    expect([df([u]), df([team]), df([u, team]), df([u, team, org]), df([3])]).toEqual([2, 1, 3, 4, 0])
    lists.remove('proxy', 7, Int32Array.of(u))
    expect(df([u, team, org])).toBe(4)
    lists.rescope('proxy', { scopes: Int32Array.of(u, team), superseded: false }, { scopes: Int32Array.of(org), superseded: false })
    expect([df([u]), df([team]), df([org])]).toEqual([1, 0, 2])
    lists.remove('proxy', 0, Int32Array.of(u))
    expect([df([u]), df([org])]).toEqual([0, 2])
    expect([...lists.get('proxy')!.scopeCounts.keys()]).toEqual([org])
  })

  it("counts a term's superseded entries apart: a search of current entries leaves them out (issue 31)", () => {
    const lists = new PostingLists()
    const [u, team] = [0, 1]
    lists.add('jenkins', 0, 1, Int32Array.of(u, team), 3, true)
    lists.add('jenkins', 1, 1, Int32Array.of(u), 3)
    const df = (current: boolean) => visibleFrequency(lists.get('jenkins')!, [u, team], current)
    expect([df(false), df(true)]).toEqual([3, 1])
    // Reopened (no longer superseded), then superseded again and removed.
    lists.rescope('jenkins', { scopes: Int32Array.of(u, team), superseded: true }, { scopes: Int32Array.of(u, team), superseded: false })
    expect([df(false), df(true), lists.get('jenkins')!.supersededCounts]).toEqual([3, 3, undefined])
    lists.rescope('jenkins', { scopes: Int32Array.of(u, team), superseded: false }, { scopes: Int32Array.of(team), superseded: true })
    expect([df(false), df(true)]).toEqual([2, 1])
    lists.remove('jenkins', 0, Int32Array.of(team), true)
    expect([df(false), df(true), lists.get('jenkins')!.supersededCounts]).toEqual([1, 1, undefined])
  })
})

describe('EntryTable', () => {
  it('reuses freed slots, keeps the total length, and grows its columns', () => {
    const table = new EntryTable()
    const a = table.place(entry('a', { tf: { x: 2, y: 1 }, length: 3 }))
    table.place(entry('b'))
    expect(table.totalLength).toBe(4)
    expect(table.release(a)).toEqual(['x', 'y'])
    expect(table.slot('a')).toBeUndefined()
    expect(table.place(entry('c'))).toBe(a)
    expect(table.totalLength).toBe(2)
    for (let i = 0; i < 2000; i++) table.place(entry(`e${i}`))
    expect(table.capacity).toBe(2048)
    expect(table.size).toBe(2002)
    expect(table.sameText(table.slot('c')!, entry('c'))).toBe(true)
    expect(table.sameText(table.slot('c')!, entry('c', { tf: { proxy: 2 }, length: 2 }))).toBe(false)
  })
})

describe('compileFilter and VerdictCache', () => {
  it('tests every field, and names the table never saw match nothing', () => {
    const table = new EntryTable()
    const mine = table.place(entry('mine'))
    const low = table.place(entry('low', { score: 1, harmful: 1 }))
    expect(compileFilter({ visible: ['user:u'] }, table)(mine)).toBe(true)
    expect(compileFilter({ visible: ['user:nobody'] }, table)(mine)).toBe(false)
    expect(compileFilter({ visible: ['user:u'], types: ['unknown'] }, table)(mine)).toBe(false)
    expect(compileFilter({ visible: ['user:u'], minScore: 2 }, table)(low)).toBe(false)
    expect(compileFilter({ visible: ['user:u'], nonNegativeQuality: true }, table)(low)).toBe(false)
    expect(compileFilter({ visible: ['user:u'], status: ['archived'] }, table)(mine)).toBe(false)
  })

  it('keeps one verdict array per filter (whatever the order of names) until cleared or resized', () => {
    const cache = new VerdictCache(2)
    const first = cache.for({ visible: ['a', 'b'] }, 8)
    first[0] = 1
    expect(cache.for({ visible: ['b', 'a'] }, 8)).toBe(first)
    expect(cache.for({ visible: ['b', 'a'] }, 16)).not.toBe(first)
    const again = cache.for({ visible: ['a', 'b'] }, 16)
    cache.clear()
    expect(cache.for({ visible: ['a', 'b'] }, 16)).not.toBe(again)
  })
})

describe('offerHit', () => {
  it('keeps the best `limit` hits by score, ties by id', () => {
    const best: RankedId[] = []
    for (const [id, score] of [
      ['c', 1],
      ['b', 2],
      ['a', 1],
      ['d', 0.5],
      ['e', 2],
    ] as const)
      offerHit(best, id, score, 3)
    expect(best).toEqual([
      { id: 'b', score: 2 },
      { id: 'e', score: 2 },
      { id: 'a', score: 1 },
    ])
  })
})
