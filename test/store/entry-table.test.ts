/**
 * The entry table's term frequency pool: every slot's frequencies in one array, a released
 * slot's dropped when the pool is compacted; sameText must stay exact through it all.
 */
import { describe, expect, it } from 'vitest'
import { EntryTable, type IndexedEntry } from '../../src/store/text-index/entries.js'

describe('EntryTable term frequencies', () => {
  it('answers sameText exactly through random places, releases and pool compactions', () => {
    let seed = 3
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const make = (id: string): IndexedEntry => {
      const tf: Record<string, number> = {}
      const n = 1 + Math.floor(random() * 80)
      for (let i = 0; i < n; i++) tf[`t${Math.floor(random() * 500)}`] = Math.round(random() * 40) / 4
      return { id, scopes: ['user:u'], types: ['tool'], status: 'active', score: 1, helpful: 0, harmful: 0, tf, length: n }
    }
    const table = new EntryTable()
    const live = new Map<string, IndexedEntry>()
    for (let step = 0; step < 30_000; step++) {
      const id = `e${Math.floor(random() * 2000)}`
      const slot = table.slot(id)
      if (slot !== undefined) table.release(slot)
      if (random() < 0.6) {
        const entry = make(id)
        table.place(entry)
        live.set(id, entry)
      } else live.delete(id)
      if (step % 5_000 !== 4_999) continue
      expect(table.size).toBe(live.size)
      for (const [liveId, entry] of live) {
        const at = table.slot(liveId)!
        expect(table.sameText(at, entry)).toBe(true)
        const term = Object.keys(entry.tf)[0]!
        expect(table.sameText(at, { ...entry, tf: { ...entry.tf, [term]: entry.tf[term]! + 0.25 } })).toBe(false)
      }
    }
  })
})
