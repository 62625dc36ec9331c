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
   * The highest frequency and the shortest entry length the list has held since it was made:
   * with a query's BM25 statistics, the most one posting can score (`Bm25.score` rises with the
   * frequency and falls with the length), which lets a search skip what cannot reach its top k.
   * Removal does not lower them back: still a bound, only a looser one.
   */
  maxTf: number
  minLength: number
}

/** Adds `sign` to the term's count of every scope in `scopes`. */
function count(list: Postings, scopes: Int32Array, sign: 1 | -1): void {
  for (let i = 0; i < scopes.length; i++) {
    const scope = scopes[i]!
    const n = (list.scopeCounts.get(scope) ?? 0) + sign
    if (n === 0) list.scopeCounts.delete(scope)
    else list.scopeCounts.set(scope, n)
  }
}

/**
 * The term's document frequency over `visible` (scope symbols, each once): each entry counts
 * once per visible scope it is in, as the collection size does (`EntryTable.visibleStats`).
 */
export function visibleFrequency(list: Postings, visible: Iterable<number>): number {
  let df = 0
  for (const scope of visible) df += list.scopeCounts.get(scope) ?? 0
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

  /** Adds slot `slot`, whose entry is in `scopes` and `length` terms long, with frequency `tf` to the term's list. */
  add(term: string, slot: number, tf: number, scopes: Int32Array, length = 0): void {
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
    count(list, scopes, 1)
  }

  /** Removes slot `slot`, whose entry is in `scopes`, from the term's list (a list left empty is dropped). */
  remove(term: string, slot: number, scopes: Int32Array): void {
    const list = this.lists.get(term)
    if (!list) return
    const at = list.slots.subarray(0, list.size).indexOf(slot)
    if (at < 0) return
    list.size--
    list.slots[at] = list.slots[list.size]!
    list.tfs[at] = list.tfs[list.size]!
    count(list, scopes, -1)
    if (list.size === 0) this.lists.delete(term)
  }

  /** Moves a slot of the term's list from the scopes `from` to `to` (its entry's scopes changed). */
  rescope(term: string, from: Int32Array, to: Int32Array): void {
    const list = this.lists.get(term)
    if (!list) return
    count(list, from, -1)
    count(list, to, 1)
  }

  clear(): void {
    this.lists.clear()
  }
}
