/**
 * The vectors of the in-memory index, column by column (one column per dimension, one number
 * per slot of the entry table), and each slot's norm (0: no vector). Search is an exact scan —
 * the cosine similarity of every entry — in about a millisecond at 10k entries for a hashed
 * query, where PGlite's HNSW index took tens. The columns live in a WebAssembly memory, where
 * the SIMD kernel of `dot-kernel.ts` sums the products (JavaScript does the same sums where
 * the runtime has no SIMD). Pure data, no I/O.
 */
import { createDotKernel, createWasmMemory, dotKernelAvailable, type DotKernel, type WasmMemory } from './dot-kernel.js'

/**
 * Slots per block of the columns. The columns grow a block at a time, as slots are used: one
 * allocation of `dimension × BLOCK` numbers per block (4 MB at 512 numbers), never copied,
 * at most one block ahead of the last slot with a vector (an array of `capacity` slots, which
 * doubles, held up to half of it unused: 268 MB at 100k entries instead of 205, and both the
 * old and the doubled arrays while it grew).
 */
const BLOCK = 2048

/** Bytes of a WebAssembly memory page. */
const PAGE = 65_536

/**
 * The memory's layout: at 0, the kernel's scratch of one block's dot products (f64, with room
 * for the odd slot the kernel writes past the end); the blocks from {@link FIRST_BLOCK} on,
 * each `dimension × BLOCK` f32 (a multiple of 16 bytes, so every block and column stays aligned).
 */
const FIRST_BLOCK = (BLOCK + 2) * 8

/**
 * A slot's cosine similarity from its dot product with the query and the two norms, clamped to
 * [-1, 1] as pgvector's cosine distance is; NaN for a slot without a vector (norm 0).
 */
export function cosineOf(dot: number, norm: number, queryNorm: number): number {
  const cosine = norm === 0 ? NaN : dot / (norm * queryNorm)
  return cosine > 1 ? 1 : cosine < -1 ? -1 : cosine
}

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
   * `(b + 1) × BLOCK − 1`, column `i` of them at `i × BLOCK` numbers from the block's start.
   * One column per dimension: a query touches only the columns of its non-zero numbers (a
   * hashed n-gram query has a few dozen of 512), each read in order. Byte offsets into `memory`.
   */
  private blocks: number[] = []
  /** The memory of the blocks and its kernel, made with the first block (an index without vectors has none). */
  private space: { memory: WasmMemory; kernel: DotKernel | undefined } | undefined
  /** Views of the memory, made again when it grows (growing detaches the old buffer). */
  private heap: { f32: Float32Array; f64: Float64Array } | undefined
  private norms = new Float64Array(0)
  private scratch = new Float64Array(0)

  private readonly simd: boolean

  /** `simd: false` sums in JavaScript even where the runtime has WebAssembly SIMD (the same sums; for tests). */
  constructor(options: { simd?: boolean } = {}) {
    this.simd = options.simd !== false
  }

  /** Whether the dot products run in the WebAssembly SIMD kernel. */
  get usesSimd(): boolean {
    return this.simd && dotKernelAvailable()
  }

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
    const { f32 } = this.views()
    const start = this.blocks[Math.floor(slot / BLOCK)]! / 4 + (slot % BLOCK)
    let norm = 0
    for (let i = 0; i < dimension; i++) {
      const value = Number.isFinite(vector[i]!) ? Math.fround(vector[i]!) : 0
      f32[start + i * BLOCK] = value
      norm += value * value
    }
    this.norms[slot] = Math.sqrt(norm)
  }

  /** Drops a slot's vector. */
  remove(slot: number): void {
    if (slot >= this.norms.length) return
    this.norms[slot] = 0
    const block = this.blocks[Math.floor(slot / BLOCK)]
    if (block === undefined) return
    const { f32 } = this.views()
    const start = block / 4 + (slot % BLOCK)
    for (let i = 0; i < this.dimension; i++) f32[start + i * BLOCK] = 0
  }

  /** Drops every vector and the memory that held them. */
  clear(): void {
    this.reset(0)
  }

  /**
   * The cosine similarity of every slot below `slots` to `query`, clamped to [-1, 1] as
   * pgvector's cosine distance is, NaN for a slot without a vector (or with a zero one).
   * Undefined for a query of the wrong dimension or the zero vector (nothing is similar to
   * it). The array is scratch space, valid until the next call.
   */
  similarities(query: Float32Array, slots: number): Float64Array | undefined {
    const products = this.products(query, slots)
    if (!products) return undefined
    const { dots, norms, queryNorm, n } = products
    for (let slot = 0; slot < n; slot++) dots[slot] = cosineOf(dots[slot]!, norms[slot]!, queryNorm)
    // Slots past the norms hold no vector.
    dots.fill(NaN, n, slots)
    return dots
  }

  /**
   * What {@link similarities} divides, for a scan that needs the similarity of some slots only
   * (those that pass a filter): the dot products of the first `n` slots with `query` (scratch
   * space, valid until the next call), each slot's norm (0: no vector) and the query's norm;
   * slots from `n` on hold no vector. `cosineOf(dots[slot], norms[slot], queryNorm)` is exactly
   * the slot's similarity. Undefined where `similarities` is.
   */
  products(query: Float32Array, slots: number): { dots: Float64Array; norms: Float64Array; queryNorm: number; n: number } | undefined {
    if (query.length !== this.dimension || this.dimension === 0) return undefined
    let queryNorm = 0
    for (let i = 0; i < query.length; i++) if (Number.isFinite(query[i]!)) queryNorm += query[i]! * query[i]!
    if (queryNorm === 0) return undefined
    queryNorm = Math.sqrt(queryNorm)
    if (this.scratch.length < Math.max(slots, this.norms.length)) this.scratch = new Float64Array(Math.max(slots, this.norms.length))
    const dots = this.scratch
    const n = Math.min(slots, this.norms.length)
    this.dots(query, dots, n)
    return { dots, norms: this.norms, queryNorm, n }
  }

  /**
   * The dot products of the first `n` slots with the query's non-zero numbers, into `dots`
   * (0 for a slot past the blocks). Block by block, the columns of the query's non-zero numbers
   * that are left over from groups of four one at a time, then four columns per pass over the
   * block's slots: the pass reads and writes the sums once for four columns, which is most of
   * the memory traffic (about 3× faster than one column a pass at 100k entries;
   * docs/retrieval-log.md, "Search latency"). Each slot adds the same products in the same order
   * as one pass over whole columns would, in the kernel and in JavaScript alike.
   */
  private dots(query: Float32Array, dots: Float64Array, n: number): void {
    const used: number[] = []
    for (let i = 0; i < query.length; i++) if (query[i] !== 0 && Number.isFinite(query[i]!)) used.push(i)
    const { blocks } = this
    dots.fill(0, 0, n)
    if (blocks.length === 0) return
    const kernel = this.space?.kernel
    const { f32, f64 } = this.views()
    const rest = used.length % 4
    // Byte offset of a used column within a block.
    const column = used.map((dimension) => dimension * BLOCK * 4)
    for (let b = 0; b < blocks.length && b * BLOCK < n; b++) {
      const block = blocks[b]!
      const base = b * BLOCK
      const end = Math.min(BLOCK, n - base)
      if (kernel) {
        f64.fill(0, 0, end + 1)
        for (let k = 0; k < rest; k++) kernel.dots1(0, end, block + column[k]!, query[used[k]!]!)
        for (let k = rest; k < used.length; k += 4) {
          const [va, vb, vc, vd] = [query[used[k]!]!, query[used[k + 1]!]!, query[used[k + 2]!]!, query[used[k + 3]!]!]
          kernel.dots4(0, end, block + column[k]!, block + column[k + 1]!, block + column[k + 2]!, block + column[k + 3]!, va, vb, vc, vd)
        }
        dots.set(f64.subarray(0, end), base)
        continue
      }
      const first = block / 4
      for (let k = 0; k < rest; k++) {
        const a = first + column[k]! / 4
        const value = query[used[k]!]!
        for (let at = 0; at < end; at++) dots[base + at]! += f32[a + at]! * value
      }
      for (let k = rest; k < used.length; k += 4) {
        const [a, b2, c, d] = [first + column[k]! / 4, first + column[k + 1]! / 4, first + column[k + 2]! / 4, first + column[k + 3]! / 4]
        const [va, vb, vc, vd] = [query[used[k]!]!, query[used[k + 1]!]!, query[used[k + 2]!]!, query[used[k + 3]!]!]
        for (let at = 0; at < end; at++) dots[base + at]! += f32[a + at]! * va + f32[b2 + at]! * vb + f32[c + at]! * vc + f32[d + at]! * vd
      }
    }
  }

  /** The memory's views, made again after it grew. */
  private views(): { f32: Float32Array; f64: Float64Array } {
    const { buffer } = this.space!.memory
    if (!this.heap || this.heap.f32.buffer !== buffer) this.heap = { f32: new Float32Array(buffer), f64: new Float64Array(buffer) }
    return this.heap
  }

  /** Starts over with vectors of `dimension` numbers (0: none), in a new memory. */
  private reset(dimension: number): void {
    this.dimension = dimension
    this.blocks = []
    this.space = undefined
    this.heap = undefined
    this.norms = new Float64Array(0)
    this.scratch = new Float64Array(0)
  }

  /** Adds the blocks up to the one of `slot`, and grows the norms to `capacity` slots. */
  private fit(slot: number, capacity: number): void {
    const blockBytes = this.dimension * BLOCK * 4
    while (this.blocks.length * BLOCK <= slot) {
      if (!this.space) {
        const memory = createWasmMemory()
        this.space = { memory, kernel: this.simd ? createDotKernel(memory) : undefined }
      }
      const { memory } = this.space
      const at = FIRST_BLOCK + this.blocks.length * blockBytes
      const needed = Math.ceil((at + blockBytes) / PAGE) - memory.buffer.byteLength / PAGE
      if (needed > 0) memory.grow(needed)
      this.blocks.push(at)
    }
    if (this.norms.length > slot && this.norms.length >= capacity) return
    const norms = new Float64Array(Math.max(capacity, slot + 1))
    norms.set(this.norms)
    this.norms = norms
  }
}
