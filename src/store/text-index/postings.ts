/**
 * Postings of the in-memory full-text index: for each term, the slots of the entries that
 * contain it and the term's weighted frequency in each, in growable typed arrays.
 */

/** One term's postings: parallel arrays of slots and frequencies, `size` of them in use. */
export interface Postings {
  slots: Int32Array
  tfs: Float32Array
  size: number
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

  /** Adds slot `slot` with frequency `tf` to the term's list. */
  add(term: string, slot: number, tf: number): void {
    let list = this.lists.get(term)
    if (!list) this.lists.set(term, (list = { slots: new Int32Array(4), tfs: new Float32Array(4), size: 0 }))
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
  }

  /** Removes slot `slot` from the term's list (a list left empty is dropped). */
  remove(term: string, slot: number): void {
    const list = this.lists.get(term)
    if (!list) return
    const at = list.slots.subarray(0, list.size).indexOf(slot)
    if (at < 0) return
    list.size--
    list.slots[at] = list.slots[list.size]!
    list.tfs[at] = list.tfs[list.size]!
    if (list.size === 0) this.lists.delete(term)
  }

  clear(): void {
    this.lists.clear()
  }
}
