import { describe, expect, it } from 'vitest'
import { createLru } from '../../src/core/lru.js'

describe('createLru', () => {
  it('keeps at most max entries, dropping the least recently used (a get or a set is a use)', () => {
    const cache = createLru<string, number>(2)
    cache.set('a', 1)
    cache.set('b', 2)
    expect(cache.get('a')).toBe(1)
    cache.set('c', 3)
    expect(cache.get('b')).toBeUndefined()
    expect([cache.get('a'), cache.get('c'), cache.size]).toEqual([1, 3, 2])
    cache.set('c', 30)
    cache.set('d', 4)
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([undefined, 30, 4])
  })

  it('deletes and clears; a bound below 1 keeps the newest entry', () => {
    const cache = createLru<string, number>(3)
    cache.set('a', 1)
    cache.set('b', 2)
    cache.delete('a')
    expect([cache.get('a'), cache.size]).toEqual([undefined, 1])
    cache.clear()
    expect(cache.size).toBe(0)
    const tiny = createLru<string, number>(0)
    tiny.set('x', 1)
    tiny.set('y', 2)
    expect([tiny.get('x'), tiny.get('y'), tiny.size]).toEqual([undefined, 2, 1])
  })
})
