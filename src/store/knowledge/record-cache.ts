/**
 * A bounded cache of knowledge records for the embedded store (issue 18): the rows a search's
 * shortlist, `get` and `getMany` read, kept in memory so that a search answers without asking
 * PGlite for them. It is kept correct by the same change log that keeps the in-memory index
 * equal to the table (`text-sync.ts`): every sync drops the entries the log names (a rebuild
 * drops everything) before anything reads the cache. Pure data, no I/O.
 *
 * A read that misses fetches rows from the database and puts them here; a row fetched before a
 * change but put after the sync that dropped it would be stale, so every put carries the
 * {@link RecordCache.mark} taken before its fetch, and a row dropped since that mark (or any
 * row, after a drop of everything) is not kept.
 */
import { createLru, type Lru } from '../../core/lru.js'
import type { KnowledgeRecord } from './rows.js'

/** Records kept by default: all of a 10k-entry store (about 1.5 kB each with their text). */
export const DEFAULT_RECORD_CACHE_SIZE = 10_000

/** Ids whose last drop is remembered (to refuse stale puts); beyond it, a drop of one id counts as a drop of all. */
const REMEMBERED_DROPS = 100_000

/**
 * Records by id, least recently used dropped first beyond the bound.
 * @example
 * const cache = new RecordCache(1000)
 * const mark = cache.mark()
 * const rows = await fetch(ids) // from the database
 * cache.put(mark, rows)         // rows dropped meanwhile by a sync are not kept
 */
export class RecordCache {
  readonly max: number
  private readonly lru: Lru<string, KnowledgeRecord>
  /** Counts drops; a mark is its value when a fetch began. */
  private drops = 0
  /** The count at the last drop of everything. */
  private clearedAt = 0
  /** Per id, the count at its last drop (since the last drop of everything). */
  private readonly droppedAt = new Map<string, number>()

  constructor(max: number = DEFAULT_RECORD_CACHE_SIZE) {
    this.max = Math.max(1, max)
    this.lru = createLru(this.max)
  }

  /** Number of records held. */
  get size(): number {
    return this.lru.size
  }

  /** How many times everything was dropped: a reader refills the cache when it changes. */
  get clears(): number {
    return this.clearedAt
  }

  /** The position to pass to {@link RecordCache.put} for rows fetched from now on. */
  mark(): number {
    return this.drops
  }

  /** The record with this id, or undefined when it is not held. */
  get(id: string): KnowledgeRecord | undefined {
    return this.lru.get(id)
  }

  /** Keeps rows fetched after `mark`, except those dropped since (they may be stale). */
  put(mark: number, records: readonly KnowledgeRecord[]): void {
    if (this.clearedAt > mark) return
    for (const record of records) if ((this.droppedAt.get(record.id) ?? 0) <= mark) this.lru.set(record.id, record)
  }

  /** Drops the records with these ids (changed in the table); undefined drops every record. */
  drop(ids?: readonly string[]): void {
    this.drops++
    if (ids === undefined || this.droppedAt.size + ids.length > REMEMBERED_DROPS) {
      this.clearedAt = this.drops
      this.droppedAt.clear()
      this.lru.clear()
      return
    }
    for (const id of ids) {
      this.droppedAt.set(id, this.drops)
      this.lru.delete(id)
    }
  }
}
