/**
 * The vectors of the in-memory index, column by column (one Float32Array per dimension,
 * one number per slot of the entry table), and each slot's norm (0: no vector). Search is
 * an exact scan — the cosine similarity of every entry — in about a millisecond at 10k
 * entries for a hashed query, where PGlite's HNSW index took tens. Pure data, no I/O.
 */

/**
 * Slots per block of the columns. The columns grow a block at a time, as slots are used: one
 * allocation of `dimension × BLOCK` numbers per block (4 MB at 512 numbers), never copied,
 * at most one block ahead of the last slot with a vector (an array of `capacity` slots, which
 * doubles, held up to half of it unused: 268 MB at 100k entries instead of 205, and both the
 * old and the doubled arrays while it grew).
 */
const BLOCK = 2048

/**
 * The vector columns of the index's slots.
 * @example
 * const vectors = new VectorColumns()
 * vectors.set(slot, embedding, table.capacity)
 * vectors.similarities(query, table.ids.length)![slot] // cosine, as pgvector's `1 - (a <=> b)`
 */
export class VectorColumns {
  /** Numbers per vector; 0 until the first vector is stored. */
  dimension = 0
  /**
   * The columns, a block of slots at a time: block `b` holds slots `b × BLOCK` to
   * `(b + 1) × BLOCK − 1`, column `i` of them at `i × BLOCK`. One column per dimension: a query
   * touches only the columns of its non-zero numbers (a hashed n-gram query has a few dozen of
   * 512), each read in order.
   */
  private blocks: Float32Array[] = []
  private norms = new Float64Array(0)
  private scratch = new Float64Array(0)

  /** Whether the slot holds a vector. */
  has(slot: number): boolean {
    return slot < this.norms.length && this.norms[slot]! > 0
  }

  /**
   * Stores (or, with undefined, drops) a slot's vector. A vector of another dimension than
   * the stored ones drops them all first (a new embedder's vectors replace the old).
   * `capacity` (the entry table's, at least `slot + 1`) sizes the norms.
   */
  set(slot: number, vector: ArrayLike<number> | undefined, capacity: number): void {
    if (!vector || vector.length === 0) {
      this.remove(slot)
      return
    }
    if (vector.length !== this.dimension) this.reset(vector.length)
    this.fit(slot, capacity)
    const { dimension } = this
    const block = this.blocks[Math.floor(slot / BLOCK)]!
    const at = slot % BLOCK
    let norm = 0
    for (let i = 0; i < dimension; i++) {
      const value = Number.isFinite(vector[i]!) ? Math.fround(vector[i]!) : 0
      block[i * BLOCK + at] = value
      norm += value * value
    }
    this.norms[slot] = Math.sqrt(norm)
  }

  /** Drops a slot's vector. */
  remove(slot: number): void {
    if (slot >= this.norms.length) return
    this.norms[slot] = 0
    const block = this.blocks[Math.floor(slot / BLOCK)]
    if (!block) return
    const at = slot % BLOCK
    for (let i = 0; i < this.dimension; i++) block[i * BLOCK + at] = 0
  }

  clear(): void {
    this.dimension = 0
    this.blocks = []
    this.norms = new Float64Array(0)
    this.scratch = new Float64Array(0)
  }

  /**
   * The cosine similarity of every slot below `slots` to `query`, clamped to [-1, 1] as
   * pgvector's cosine distance is, NaN for a slot without a vector (or with a zero one).
   * Undefined for a query of the wrong dimension or the zero vector (nothing is similar to
   * it). The array is scratch space, valid until the next call.
   */
  similarities(query: Float32Array, slots: number): Float64Array | undefined {
    if (query.length !== this.dimension || this.dimension === 0) return undefined
    let queryNorm = 0
    for (let i = 0; i < query.length; i++) if (Number.isFinite(query[i]!)) queryNorm += query[i]! * query[i]!
    if (queryNorm === 0) return undefined
    queryNorm = Math.sqrt(queryNorm)
    if (this.scratch.length < Math.max(slots, this.norms.length)) this.scratch = new Float64Array(Math.max(slots, this.norms.length))
    const dots = this.scratch
    const n = Math.min(slots, this.norms.length)
    this.dots(query, dots, n)
    const { norms } = this
    for (let slot = 0; slot < n; slot++) {
      const norm = norms[slot]!
      const cosine = norm === 0 ? NaN : dots[slot]! / (norm * queryNorm)
      dots[slot] = cosine > 1 ? 1 : cosine < -1 ? -1 : cosine
    }
    // Slots past the norms hold no vector.
    dots.fill(NaN, n, slots)
    return dots
  }

  /**
   * The dot products of the first `n` slots with the query's non-zero numbers, into `dots`
   * (0 for a slot past the blocks). Block by block, four columns per pass over the block's
   * slots: the pass reads and writes `dots` once for four columns, which is most of the memory
   * traffic (about 3× faster than one column a pass at 100k entries; docs/retrieval.md,
   * "Search latency"). Each slot adds the same products in the same order as one pass over
   * whole columns would.
   */
  private dots(query: Float32Array, dots: Float64Array, n: number): void {
    const used: number[] = []
    for (let i = 0; i < query.length; i++) if (query[i] !== 0 && Number.isFinite(query[i]!)) used.push(i)
    const { blocks } = this
    const rest = used.length % 4
    dots.fill(0, 0, n)
    for (let b = 0; b < blocks.length && b * BLOCK < n; b++) {
      const block = blocks[b]!
      const base = b * BLOCK
      const end = Math.min(BLOCK, n - base)
      for (let k = 0; k < rest; k++) {
        const column = used[k]! * BLOCK
        const value = query[used[k]!]!
        for (let at = 0; at < end; at++) dots[base + at]! += block[column + at]! * value
      }
      for (let k = rest; k < used.length; k += 4) {
        const [a, b2, c, d] = [used[k]! * BLOCK, used[k + 1]! * BLOCK, used[k + 2]! * BLOCK, used[k + 3]! * BLOCK]
        const [va, vb, vc, vd] = [query[used[k]!]!, query[used[k + 1]!]!, query[used[k + 2]!]!, query[used[k + 3]!]!]
        for (let at = 0; at < end; at++) dots[base + at]! += block[a + at]! * va + block[b2 + at]! * vb + block[c + at]! * vc + block[d + at]! * vd
      }
    }
  }

  private reset(dimension: number): void {
    this.dimension = dimension
    this.blocks = []
    this.norms = new Float64Array(0)
  }

  /** Adds the blocks up to the one of `slot`, and grows the norms to `capacity` slots. */
  private fit(slot: number, capacity: number): void {
    while (this.blocks.length * BLOCK <= slot) this.blocks.push(new Float32Array(this.dimension * BLOCK))
    if (this.norms.length > slot && this.norms.length >= capacity) return
    const norms = new Float64Array(Math.max(capacity, slot + 1))
    norms.set(this.norms)
    this.norms = norms
  }
}
