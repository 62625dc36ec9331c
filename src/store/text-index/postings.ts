/**
 * Postings of the in-memory full-text index: for each term, the slots of the entries that
 * contain it and the term's weighted frequency in each, in growable typed arrays, and how
 * many of those entries are in each scope (the term's document frequency per scope, which
 * BM25 sums over a caller's visible scopes).
 */

/** One term's postings: parallel arrays of slots and frequencies, `size` of them in use. */
export interface Postings {
  slots: Int32Array
  tfs: Float32Array
  size: number
  /** Per scope symbol: the entries of this list in that scope (an entry counts once per scope it is in). */
  scopeCounts: Map<number, number>
  /**
   * The same counts of the list's superseded entries only (issue 31; absent while it has none):
   * a search of current entries subtracts them, so that its statistics are those of the
   * entries it can find.
   */
  supersededCounts?: Map<number, number>
  /**
   * The highest frequency and the shortest entry length the list has held since it was made:
   * with a query's BM25 statistics, the most one posting can score (`Bm25.score` rises with the
   * frequency and falls with the length), which lets a search skip what cannot reach its top k.
   * Removal does not lower them back: still a bound, only a looser one.
   */
  maxTf: number
  minLength: number
}

/** Adds `sign` to the count of every scope in `scopes`. */
function countIn(counts: Map<number, number>, scopes: Int32Array, sign: 1 | -1): void {
  for (let i = 0; i < scopes.length; i++) {
    const scope = scopes[i]!
    const n = (counts.get(scope) ?? 0) + sign
    if (n === 0) counts.delete(scope)
    else counts.set(scope, n)
  }
}

/** Adds `sign` to the term's count of every scope in `scopes` (and to its superseded count when the entry is superseded). */
function count(list: Postings, scopes: Int32Array, superseded: boolean, sign: 1 | -1): void {
  countIn(list.scopeCounts, scopes, sign)
  if (!superseded) return
  countIn((list.supersededCounts ??= new Map()), scopes, sign)
  if (list.supersededCounts.size === 0) delete list.supersededCounts
}

/**
 * The term's document frequency over `visible` (scope symbols, each once): each entry counts
 * once per visible scope it is in, as the collection size does (`EntryTable.visibleStats`).
 * `current`: only the entries not superseded (what a search of current entries can find).
 */
export function visibleFrequency(list: Postings, visible: Iterable<number>, current = false): number {
  let df = 0
  const superseded = current ? list.supersededCounts : undefined
  for (const scope of visible) df += (list.scopeCounts.get(scope) ?? 0) - (superseded?.get(scope) ?? 0)
  return df
}

/**
 * Every term's postings. Order within a list does not matter (removal moves the last
 * posting into the hole).
 * @example
 * const lists = new PostingLists()
 * lists.add('selenium', 0, 2)
 * lists.get('selenium')?.size // 1
 */
export class PostingLists {
  private readonly lists = new Map<string, Postings>()

  /** The postings of a term, if any entry has it. */
  get(term: string): Postings | undefined {
    return this.lists.get(term)
  }

  /**
   * Adds slot `slot`, whose entry is in `scopes` and `length` terms long (and `superseded` or
   * not), with frequency `tf` to the term's list.
   */
  add(term: string, slot: number, tf: number, scopes: Int32Array, length = 0, superseded = false): void {
    let list = this.lists.get(term)
    if (!list)
      this.lists.set(term, (list = { slots: new Int32Array(4), tfs: new Float32Array(4), size: 0, scopeCounts: new Map(), maxTf: 0, minLength: Infinity }))
    if (list.size === list.slots.length) {
      const slotsGrown = new Int32Array(list.size * 2)
      slotsGrown.set(list.slots)
      const tfsGrown = new Float32Array(list.size * 2)
      tfsGrown.set(list.tfs)
      list.slots = slotsGrown
      list.tfs = tfsGrown
    }
    list.slots[list.size] = slot
    list.tfs[list.size] = tf
    list.size++
    // The stored (float32) frequency: the one searches score.
    if (list.tfs[list.size - 1]! > list.maxTf) list.maxTf = list.tfs[list.size - 1]!
    if (length < list.minLength) list.minLength = length
    count(list, scopes, superseded, 1)
  }

  /** Removes slot `slot`, whose entry is in `scopes` (and `superseded` or not), from the term's list (a list left empty is dropped). */
  remove(term: string, slot: number, scopes: Int32Array, superseded = false): void {
    const list = this.lists.get(term)
    if (!list) return
    const at = list.slots.subarray(0, list.size).indexOf(slot)
    if (at < 0) return
    list.size--
    list.slots[at] = list.slots[list.size]!
    list.tfs[at] = list.tfs[list.size]!
    count(list, scopes, superseded, -1)
    if (list.size === 0) this.lists.delete(term)
  }

  /** Moves a slot of the term's list from the scopes `from` to `to` (its entry's scopes, or whether it is superseded, changed). */
  rescope(term: string, from: { scopes: Int32Array; superseded: boolean }, to: { scopes: Int32Array; superseded: boolean }): void {
    const list = this.lists.get(term)
    if (!list) return
    count(list, from.scopes, from.superseded, -1)
    count(list, to.scopes, to.superseded, 1)
  }

  clear(): void {
    this.lists.clear()
  }

  /**
   * Trims every list's arrays to its postings (growth by doubling leaves up to half of each
   * unused): after a full build, about a quarter of the postings' memory (issue 32, 1M entries).
   */
  compact(): void {
    for (const list of this.lists.values()) {
      if (list.slots.length === list.size) continue
      list.slots = list.slots.slice(0, list.size)
      list.tfs = list.tfs.slice(0, list.size)
    }
  }
}
