/**
 * The entries of the in-memory full-text index as columns: one slot per entry in parallel
 * arrays (freed slots reused), scope/type/status names as small integers, each entry's
 * term frequencies and length. No scoring and no filtering here.
 */

/** What the index keeps of an entry (the columns `text-sync.ts` reads). */
export interface IndexedEntry {
  id: string
  scopes: readonly string[]
  types: readonly string[]
  status: string
  /** Seed 002's visibility, derived from scopes and owner (the generated column of migration 0054); absent: not filtered on. */
  visibility?: string | undefined
  /** The entry's tags as `key=value` pairs, one per element of a list tag ({@link tagPairs}); absent: none. */
  tagPairs?: readonly string[] | undefined
  score: number
  helpful: number
  harmful: number
  /** Weighted term frequencies (the stored `search_tf`). */
  tf: Readonly<Record<string, number>>
  /** Length in terms (the stored `search_len`). */
  length: number
  /** The stored embedding (absent or null: none), searched by `searchVector`. */
  embedding?: ArrayLike<number> | null | undefined
  /** `source.trace_id` (absent, null or '': none): the conversation the entry belongs to. */
  trace?: string | null | undefined
  /** `created_at` in microseconds since the epoch: the entry's place in its trace. */
  created?: number | undefined
  /**
   * Validity in time (issue 31), in milliseconds since the epoch: `valid_from` (absent: always),
   * `valid_to` (absent or null: current) and `expires_at` (absent or null: never).
   */
  validFrom?: number | undefined
  validTo?: number | null | undefined
  expires?: number | null | undefined
}

/**
 * The entry columns. Slots are dense integers: `capacity` grows by doubling, and every
 * per-slot array (here and in the search scratch) is that long.
 * @example
 * const table = new EntryTable()
 * const slot = table.place(entry)
 * table.ids[slot] // entry.id
 */
export class EntryTable {
  capacity = 1024
  readonly ids: Array<string | undefined> = []
  /** Each entry's terms (their weighted frequencies, in the same order, are in the frequency pool). */
  readonly terms: string[][] = []
  readonly scopes: Int32Array[] = []
  readonly types: Int32Array[] = []
  /** Each entry's tags as symbols of `key=value` pairs (a filter by tags needs every pair it names). */
  readonly tagPairs: Int32Array[] = []
  status = new Int32Array(this.capacity)
  visibility = new Int32Array(this.capacity)
  score = new Float64Array(this.capacity)
  /** score + helpful − 2 × harmful. */
  quality = new Float64Array(this.capacity)
  /** `created_at` in microseconds (the place in a trace). */
  created = new Float64Array(this.capacity)
  /** Validity in time, in milliseconds: `valid_from` (−Infinity: always), `valid_to` and `expires_at` (Infinity: none). */
  validFrom = new Float64Array(this.capacity)
  validTo = new Float64Array(this.capacity)
  expires = new Float64Array(this.capacity)
  /** Each slot's trace ('' for none), and the slots of each trace. */
  readonly trace: string[] = []
  readonly traceSlots = new Map<string, Set<number>>()
  lengths = new Float64Array(this.capacity)
  totalLength = 0
  /**
   * Per scope symbol: the entries stored in the scope and their summed length (every
   * status). BM25's collection statistics of a search are summed over the caller's visible
   * scopes (as the SQL path sums migration 0009's tables), so that nothing outside them
   * moves a score.
   */
  readonly scopeDocs: number[] = []
  readonly scopeLength: number[] = []
  /**
   * The same of the superseded entries alone (`valid_to` set, issue 31): a search of current
   * entries subtracts them (migration 0052 keeps the same figures in SQL).
   */
  readonly supersededDocs: number[] = []
  readonly supersededLength: number[] = []
  private readonly free: number[] = []
  /**
   * The weighted term frequencies of every slot in one array: a slot's are at `freqAt[slot]`,
   * `terms[slot].length` of them. A released slot's become garbage, dropped when the pool is
   * full and at least half of it is garbage. (A Float32Array per entry cost about as much again
   * in array objects and allocations as its numbers.)
   */
  private freqs = new Float32Array(1024)
  private freqAt = new Int32Array(this.capacity)
  private freqEnd = 0
  private freqGarbage = 0
  private readonly slotOf = new Map<string, number>()
  // Small integers for scope, type and status strings: filters compare numbers.
  private readonly symbols = new Map<string, number>()
  // Entries share few distinct scope and type lists: one array each.
  private readonly lists = new Map<string, Int32Array>()

  /** Number of entries. */
  get size(): number {
    return this.slotOf.size
  }

  slot(id: string): number | undefined {
    return this.slotOf.get(id)
  }

  /** The integer of a scope, type or status name; undefined for a name never seen. */
  symbolOf(name: string): number | undefined {
    return this.symbols.get(name)
  }

  private symbol(name: string): number {
    let n = this.symbols.get(name)
    if (n === undefined) this.symbols.set(name, (n = this.symbols.size))
    return n
  }

  private shared(names: readonly string[]): Int32Array {
    const key = names.join('\u0000')
    let list = this.lists.get(key)
    // Distinct names: an entry counts once per scope in the statistics.
    if (!list) this.lists.set(key, (list = Int32Array.from(new Set(names), (name) => this.symbol(name))))
    return list
  }

  /** The weighted frequency of `term` in the slot's entry (the value its posting holds); 0 when it lacks the term. */
  frequency(slot: number, term: string): number {
    const at = this.terms[slot]!.indexOf(term)
    return at < 0 ? 0 : this.freqs[this.freqAt[slot]! + at]!
  }

  /** True when `entry` has the terms and frequencies the slot has. */
  sameText(slot: number, entry: IndexedEntry): boolean {
    const slotTerms = this.terms[slot]!
    const { freqs } = this
    const at = this.freqAt[slot]!
    if (this.lengths[slot] !== entry.length || slotTerms.length !== Object.keys(entry.tf).length) return false
    for (let i = 0; i < slotTerms.length; i++) if (entry.tf[slotTerms[i]!] !== freqs[at + i]) return false
    return true
  }

  /** Sets the filtered fields (scopes, types, status, score, quality) of a slot. */
  setFields(slot: number, entry: IndexedEntry): void {
    this.ids[slot] = entry.id
    this.scopes[slot] = this.shared(entry.scopes)
    this.types[slot] = this.shared(entry.types)
    this.tagPairs[slot] = this.shared(entry.tagPairs ?? [])
    this.status[slot] = this.symbol(entry.status)
    this.visibility[slot] = entry.visibility === undefined ? -1 : this.symbol(entry.visibility)
    this.score[slot] = Number(entry.score)
    this.quality[slot] = Number(entry.score) + Number(entry.helpful) - 2 * Number(entry.harmful)
    this.created[slot] = Number(entry.created ?? 0)
    this.validFrom[slot] = entry.validFrom ?? -Infinity
    this.validTo[slot] = entry.validTo ?? Infinity
    this.expires[slot] = entry.expires ?? Infinity
    this.setTrace(slot, entry.trace ?? '')
  }

  /** Moves a slot to another trace ('' for none). */
  private setTrace(slot: number, trace: string): void {
    const was = this.trace[slot] ?? ''
    if (was === trace) return
    if (was !== '') {
      const members = this.traceSlots.get(was)!
      members.delete(slot)
      if (members.size === 0) this.traceSlots.delete(was)
    }
    this.trace[slot] = trace
    if (trace !== '') {
      let members = this.traceSlots.get(trace)
      if (!members) this.traceSlots.set(trace, (members = new Set()))
      members.add(slot)
    }
  }

  /** Replaces the filtered fields of an occupied slot, keeping the per-scope statistics in step. */
  updateFields(slot: number, entry: IndexedEntry): void {
    this.account(slot, -1)
    this.setFields(slot, entry)
    this.account(slot, 1)
  }

  /** True when the slot's entry is superseded (`valid_to` set): the statistics of current entries leave it out. */
  superseded(slot: number): boolean {
    return this.validTo[slot] !== Infinity
  }

  /** Adds (`sign` 1) or removes (−1) a slot's entry from the per-scope statistics. */
  private account(slot: number, sign: 1 | -1): void {
    const length = this.lengths[slot]!
    const superseded = this.superseded(slot)
    for (const scope of this.scopes[slot]!) {
      this.scopeDocs[scope] = (this.scopeDocs[scope] ?? 0) + sign
      this.scopeLength[scope] = (this.scopeLength[scope] ?? 0) + sign * length
      if (!superseded) continue
      this.supersededDocs[scope] = (this.supersededDocs[scope] ?? 0) + sign
      this.supersededLength[scope] = (this.supersededLength[scope] ?? 0) + sign * length
    }
  }

  /**
   * The collection statistics over the entries in any of `visible` (scope symbols, each
   * once): an entry counts once per visible scope it is in. `current`: the entries not
   * superseded only (what a search of current entries can find).
   */
  visibleStats(visible: Iterable<number>, current = false): { docs: number; totalLength: number } {
    let docs = 0
    let totalLength = 0
    for (const scope of visible) {
      docs += (this.scopeDocs[scope] ?? 0) - (current ? (this.supersededDocs[scope] ?? 0) : 0)
      totalLength += (this.scopeLength[scope] ?? 0) - (current ? (this.supersededLength[scope] ?? 0) : 0)
    }
    return { docs, totalLength }
  }

  /** Takes a slot for a new entry (a freed one first) and stores the entry in it. */
  place(entry: IndexedEntry): number {
    const slot = this.free.pop() ?? this.ids.length
    if (slot === this.ids.length) {
      this.ids.push(undefined)
      this.terms.push([])
      this.scopes.push(new Int32Array(0))
      this.types.push(new Int32Array(0))
      this.tagPairs.push(new Int32Array(0))
      this.trace.push('')
      if (this.ids.length > this.capacity) this.grow()
    }
    this.setFields(slot, entry)
    const entryTerms = Object.keys(entry.tf)
    // Before the slot has its terms: a compaction of the pool meanwhile copies none for it.
    const at = this.reserveFreqs(entryTerms.length)
    for (let i = 0; i < entryTerms.length; i++) this.freqs[at + i] = Number(entry.tf[entryTerms[i]!])
    this.freqAt[slot] = at
    this.terms[slot] = entryTerms
    this.lengths[slot] = entry.length
    this.slotOf.set(entry.id, slot)
    this.totalLength += entry.length
    this.account(slot, 1)
    return slot
  }

  /** Frees a slot; returns the terms it had (for the postings to drop). */
  release(slot: number): string[] {
    const released = this.terms[slot]!
    this.account(slot, -1)
    this.totalLength -= this.lengths[slot]!
    this.slotOf.delete(this.ids[slot]!)
    this.ids[slot] = undefined
    this.terms[slot] = []
    this.freqGarbage += released.length
    this.setTrace(slot, '')
    this.free.push(slot)
    return released
  }

  clear(): void {
    this.ids.length = 0
    this.terms.length = 0
    this.freqs = new Float32Array(1024)
    this.freqEnd = 0
    this.freqGarbage = 0
    this.scopes.length = 0
    this.types.length = 0
    this.tagPairs.length = 0
    this.trace.length = 0
    this.traceSlots.clear()
    this.free.length = 0
    this.slotOf.clear()
    this.lists.clear()
    this.totalLength = 0
    this.scopeDocs.length = 0
    this.scopeLength.length = 0
    this.supersededDocs.length = 0
    this.supersededLength.length = 0
  }

  /** Trims the frequency pool to the frequencies in use (after a full build; garbage stays until the pool next fills). */
  compact(): void {
    if (this.freqs.length > this.freqEnd) this.freqs = this.freqs.slice(0, this.freqEnd)
  }

  /** Room for `n` frequencies at the end of the pool (dropping the garbage or growing it first): where they go. */
  private reserveFreqs(n: number): number {
    if (this.freqEnd + n > this.freqs.length) {
      const live = this.freqEnd - this.freqGarbage
      // At least half garbage: the live frequencies are copied together into a pool of their size (with room).
      const compact = this.freqGarbage * 2 >= this.freqEnd
      const size = Math.max(1024, Math.ceil((compact ? live : this.freqs.length) * 1.5) + n)
      const pool = new Float32Array(size)
      if (compact) {
        let end = 0
        for (let slot = 0; slot < this.terms.length; slot++) {
          const count = this.terms[slot]!.length
          if (count === 0) continue
          const at = this.freqAt[slot]!
          pool.set(this.freqs.subarray(at, at + count), end)
          this.freqAt[slot] = end
          end += count
        }
        this.freqEnd = end
        this.freqGarbage = 0
      } else {
        pool.set(this.freqs.subarray(0, this.freqEnd))
      }
      this.freqs = pool
    }
    const at = this.freqEnd
    this.freqEnd += n
    return at
  }

  private grow(): void {
    const next = this.capacity * 2
    const growF = (a: Float64Array) => {
      const b = new Float64Array(next)
      b.set(a)
      return b
    }
    const growI = (a: Int32Array) => {
      const b = new Int32Array(next)
      b.set(a)
      return b
    }
    this.freqAt = growI(this.freqAt)
    this.status = growI(this.status)
    this.visibility = growI(this.visibility)
    this.score = growF(this.score)
    this.quality = growF(this.quality)
    this.lengths = growF(this.lengths)
    this.created = growF(this.created)
    this.validFrom = growF(this.validFrom)
    this.validTo = growF(this.validTo)
    this.expires = growF(this.expires)
    this.capacity = next
  }
}

/**
 * An entry's tags as `key=value` pairs for the in-memory filter: a string as it is, a number or a
 * boolean as text (as SQL's `->>` gives them), a list one pair per element.
 * @example
 * tagPairs({ category: 'preference', langs: ['ts', 'go'], stars: 3 }) // ['category=preference', 'langs=ts', 'langs=go', 'stars=3']
 */
export function tagPairs(tags: Readonly<Record<string, unknown>> | null | undefined): string[] {
  const out: string[] = []
  for (const [key, value] of Object.entries(tags ?? {})) {
    if (Array.isArray(value)) for (const item of value) out.push(`${key}=${String(item)}`)
    else if (value !== null && typeof value !== 'object') out.push(`${key}=${String(value)}`)
  }
  return out
}
