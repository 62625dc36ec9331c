/**
 * A map bounded to a number of entries that drops the least recently used first: the
 * shape of every in-process cache here (query vectors, search responses, filter
 * verdicts, rate-limit buckets). A `Map` keeps insertion order, so "used" means
 * deleted and set again; the first key is the least recently used.
 */

export interface Lru<K, V> {
  /** The value, marked most recently used; undefined when absent. */
  get(key: K): V | undefined
  /** Sets the value, marked most recently used; drops the least recently used beyond the bound. */
  set(key: K, value: V): void
  delete(key: K): void
  clear(): void
  readonly size: number
}

/**
 * Creates an empty bounded map of at most `max` entries (at least 1).
 * @example
 * const cache = createLru<string, number>(2)
 * cache.set('a', 1); cache.set('b', 2); cache.get('a'); cache.set('c', 3)
 * cache.get('b') // undefined: the least recently used went first
 */
export function createLru<K, V>(max: number): Lru<K, V> {
  const bound = Math.max(1, max)
  const map = new Map<K, V>()
  return {
    get(key) {
      const value = map.get(key)
      if (value !== undefined) {
        map.delete(key)
        map.set(key, value)
      }
      return value
    },
    set(key, value) {
      map.delete(key)
      map.set(key, value)
      if (map.size > bound) map.delete(map.keys().next().value as K)
    },
    delete(key) {
      map.delete(key)
    },
    clear() {
      map.clear()
    },
    get size() {
      return map.size
    },
  }
}
