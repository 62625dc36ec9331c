/**
 * The parts of the in-memory full-text index, each on its own: postings, entry columns,
 * filters with cached verdicts, and the best-hits list.
 */
import { describe, expect, it } from 'vitest'
import { EntryTable, type IndexedEntry } from '../../src/store/text-index/entries.js'
import { compileFilter, VerdictCache } from '../../src/store/text-index/filter.js'
import { PostingLists } from '../../src/store/text-index/postings.js'
import { offerHit } from '../../src/store/text-index/top-k.js'
import type { RankedId } from '../../src/store/text-query.js'

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
    for (let slot = 0; slot < 10; slot++) lists.add('proxy', slot, slot + 1)
    expect(lists.get('proxy')!.size).toBe(10)
    lists.remove('proxy', 2)
    lists.remove('proxy', 99)
    lists.remove('absent', 0)
    const list = lists.get('proxy')!
    expect(list.size).toBe(9)
    expect(list.slots[2]).toBe(9)
    expect(list.tfs[2]).toBe(10)
    for (let slot = 0; slot < 10; slot++) lists.remove('proxy', slot)
    expect(lists.get('proxy')).toBeUndefined()
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
