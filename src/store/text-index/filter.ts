/**
 * Filters of the in-memory full-text index: an `EntryFilter` compiled to symbol sets over
 * the entry columns, and per-filter verdicts (0 not checked yet, 1 passes, 2 fails) kept
 * for the few most recent filters until the index changes.
 */
import { createLru } from '../../core/lru.js'
import type { EntryFilter } from './query.js'
import type { EntryTable } from './entries.js'

/** Verdict of a slot: not checked yet. */
export const UNCHECKED = 0
/** Verdict of a slot: passes the filter. */
export const PASSES = 1
/** Verdict of a slot: fails the filter. */
export const FAILS = 2

const anyIn = (values: Int32Array, set: Set<number>): boolean => {
  for (let i = 0; i < values.length; i++) if (set.has(values[i]!)) return true
  return false
}

const allIn = (values: Int32Array, wanted: readonly number[]): boolean => {
  for (const symbol of wanted) if (!values.includes(symbol)) return false
  return true
}

/**
 * A filter as a test of a slot; names the table has never seen match nothing.
 * @example
 * const passes = compileFilter({ visible: ['user:u', 'public'] }, table)
 * passes(slot) // true when the entry is active and visible to user:u
 */
export function compileFilter(filter: EntryFilter, table: EntryTable): (slot: number) => boolean {
  const set = (names: readonly string[] | undefined) => (names && names.length > 0 ? new Set(names.map((n) => table.symbolOf(n) ?? -1)) : undefined)
  const visible = set(filter.visible) ?? new Set<number>()
  const types = set(filter.types)
  const scopes = set(filter.scopes)
  const statuses = set(filter.status ?? ['active'])!
  const visibilities = set(filter.visibility)
  const tags = Object.entries(filter.tags ?? {}).map(([key, value]) => table.symbolOf(`${key}=${value}`) ?? -1)
  const { minScore } = filter
  const nonNegativeQuality = filter.nonNegativeQuality === true
  const validity = filter.validity ?? {}
  const asOf = validity.asOf?.getTime()
  // Valid from at most `asOf`; not superseded (as of a time: valid past it; else current, no
  // valid_to: Infinity); as of a time, not expired then (at `now`, expiry is checked apart: expiryBound).
  const fromBound = asOf ?? Infinity
  const toBound = validity.superseded ? -Infinity : (asOf ?? Number.MAX_VALUE)
  const expiresBound = !validity.expired && asOf !== undefined ? asOf : -Infinity
  const { validFrom, validTo, expires } = table
  return (slot) =>
    validFrom[slot]! <= fromBound &&
    validTo[slot]! > toBound &&
    expires[slot]! > expiresBound &&
    statuses.has(table.status[slot]!) &&
    anyIn(table.scopes[slot]!, visible) &&
    (!types || anyIn(table.types[slot]!, types)) &&
    (!scopes || anyIn(table.scopes[slot]!, scopes)) &&
    (!visibilities || visibilities.has(table.visibility[slot]!)) &&
    (tags.length === 0 || allIn(table.tagPairs[slot]!, tags)) &&
    (minScore === undefined || table.score[slot]! >= minScore) &&
    (!nonNegativeQuality || table.quality[slot]! >= 0)
}

/**
 * The time (milliseconds) an entry must expire after to pass a filter, checked apart from the
 * cached verdicts because it moves with the clock: `validity.now` unless expired entries are
 * asked for or the filter is as of another time (then expiry is in the verdict); −Infinity
 * when nothing is checked.
 * @example
 * const bound = expiryBound(filter)
 * if (table.expires[slot]! <= bound) continue // expired
 */
export function expiryBound(filter: EntryFilter): number {
  const validity = filter.validity
  if (!validity || validity.expired || validity.asOf || !validity.now) return -Infinity
  return validity.now.getTime()
}

/**
 * Per-filter verdict arrays for the `size` most recent filters, dropped whenever the
 * index changes (`clear`).
 * @example
 * const cache = new VerdictCache(8)
 * const verdicts = cache.for(filter, table.capacity)
 */
export class VerdictCache {
  private readonly cache

  constructor(size: number) {
    this.cache = createLru<string, Uint8Array>(size)
  }

  /** The verdicts of a filter: kept ones, or fresh (all {@link UNCHECKED}) ones of length `capacity`. */
  for(filter: EntryFilter, capacity: number): Uint8Array {
    const key = JSON.stringify([
      [...filter.visible].sort(),
      [...(filter.types ?? [])].sort(),
      [...(filter.scopes ?? [])].sort(),
      [...(filter.status ?? ['active'])].sort(),
      [...(filter.visibility ?? [])].sort(),
      Object.entries(filter.tags ?? {}).sort(),
      filter.minScore ?? null,
      filter.nonNegativeQuality === true,
      // `now` stays out of the key: expiry at `now` is checked apart from the verdicts (expiryBound).
      filter.validity?.asOf?.getTime() ?? null,
      filter.validity?.superseded === true,
      filter.validity?.expired === true,
    ])
    let verdicts = this.cache.get(key)
    if (!verdicts || verdicts.length !== capacity) {
      verdicts = new Uint8Array(capacity)
      this.cache.set(key, verdicts)
    }
    return verdicts
  }

  clear(): void {
    this.cache.clear()
  }
}
