/**
 * The offline default embedder: a deterministic, signed feature-hashing vector
 * of lexical features. It needs no model and downloads nothing. It is lexical,
 * not semantic: texts are similar when they share (stemmed) words, word pairs,
 * character n-grams or, for Chinese/Japanese/Korean, words and characters.
 *
 * Feature families (each hashed with its own seed, so families never share a slot
 * on purpose):
 * - Latin words, lower-cased, stop words dropped (`EMBEDDER_STOP_WORDS`), stemmed
 *   by core's `stemWord` (irregular forms to their base, `went` → `go`, then Porter);
 * - adjacent pairs of those stems (word bigrams);
 * - character 3- and 4-grams of each content word with `<` `>` boundaries, for
 *   typos and morphology the stemmer misses (low weight; not for numbers);
 * - CJK dictionary words (Intl.Segmenter), CJK character bigrams and single
 *   characters (particles dropped from words and characters).
 *
 * Each feature counts `weight(family) * (1 + ln tf)`; it lands in slot
 * `h mod dimension` with a sign taken from an independent mix of the hash, so
 * collisions cancel out on average instead of adding up. The vector is then
 * L2-normalised (an empty text gives the zero vector).
 *
 * Changing any of this changes the vectors: bump {@link HASHED_VERSION}, so the
 * store sees a new model name and asks for `knowhub reindex`.
 *
 * Determinism: hashing works on UTF-16 code units with 32-bit integer maths, so
 * Latin features are identical everywhere. CJK dictionary words come from the
 * ICU data inside Node; a Node upgrade with new ICU data may segment a few
 * words differently (bigrams and characters never change).
 */
import { KnowHubError } from '../core/errors.js'
import { EMBEDDER_CJK_PARTICLES, EMBEDDER_STOP_WORDS, cjkBigrams, cjkWords, hasCjk, isLargelyCjk, latinWords, stemWord } from '../core/text/index.js'
import type { Embedder } from './embedder.js'

/**
 * Version of the feature set; part of the model name. 2: stems from core's one stemmer
 * (core/text/stem.ts), whose irregular-forms table leaves out the ambiguous `bit`,
 * `bound`, `left` and `rose` (v1 joined them to bite, bind, leave, rise) and adds
 * `borne`, `laid`, `lain`, `proven`, `geese` and a few more verbs.
 */
export const HASHED_VERSION = 2

/** Options of {@link createHashedEmbedder}. */
export interface HashedEmbedderOptions {
  /** Vector size, 8 to 65,536 (KnowHub's default is 512). */
  dimension: number
}

/** Per-family weights. The ratios decide how much each family counts in a cosine. */
const WEIGHT = {
  word: 1,
  wordBigram: 0.3,
  charGram: 0.4,
  cjkWord: 1,
  cjkBigram: 0.6,
  cjkChar: 0.3,
} as const

type Family = keyof typeof WEIGHT
const FAMILIES = Object.keys(WEIGHT) as Family[]
const FAMILY_INDEX = Object.fromEntries(FAMILIES.map((family, index) => [family, index])) as Record<Family, number>
const FAMILY_WEIGHT = FAMILIES.map((family) => WEIGHT[family])
/** `1 + ln tf` for small tf (sublinear term frequency), computed once. */
const SUBLINEAR = Array.from({ length: 64 }, (_, tf) => (tf === 0 ? 0 : 1 + Math.log(tf)))

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** Continues a 32-bit FNV-1a hash over the UTF-16 code units of `text[start, end)`. */
function fnv(hash: number, text: string, start = 0, end = text.length): number {
  let h = hash
  for (let i = start; i < end; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, FNV_PRIME)
  }
  return h
}

/** murmur3's 32-bit finaliser: spreads FNV's weak low bits over the whole word. */
function fmix(hash: number): number {
  let h = hash
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A seed per family, so the same string in two families hashes apart. */
const SEED = Object.fromEntries(FAMILIES.map((family) => [family, fnv(FNV_OFFSET, `knowhub:${family}:`)])) as Record<Family, number>

const HAS_DIGIT = /\d/

/**
 * Term counts of one text: an open-addressing hash table keyed by the feature's
 * mixed 32-bit hash and its family, reused across texts. (Maps with 32-bit keys
 * box most keys as heap numbers; this allocates nothing per feature.)
 */
class FeatureCounts {
  private keys = new Int32Array(1024)
  private families = new Uint8Array(1024)
  private counts = new Uint32Array(1024)
  /** Occupied slots, in insertion order. */
  private used = new Int32Array(512)
  size = 0

  add(family: Family, hash: number): void {
    this.insert(FAMILY_INDEX[family], fmix(hash) | 0, 1)
  }

  private insert(family: number, key: number, count: number): void {
    const mask = this.keys.length - 1
    let slot = key & mask
    // An empty slot has count 0; a key may be 0.
    while (this.counts[slot] !== 0 && (this.keys[slot] !== key || this.families[slot] !== family)) slot = (slot + 1) & mask
    if (this.counts[slot] === 0) {
      this.keys[slot] = key
      this.families[slot] = family
      this.used[this.size++] = slot
    }
    this.counts[slot]! += count
    if (this.size * 2 > this.keys.length) this.grow()
  }

  private grow(): void {
    const { keys, families, counts, used, size } = this
    this.keys = new Int32Array(keys.length * 2)
    this.families = new Uint8Array(keys.length * 2)
    this.counts = new Uint32Array(keys.length * 2)
    this.used = new Int32Array(keys.length)
    this.size = 0
    for (let i = 0; i < size; i++) {
      const slot = used[i]!
      this.insert(families[slot]!, keys[slot]!, counts[slot]!)
    }
  }

  /** Calls `visit` for each distinct feature, in insertion order. */
  forEach(visit: (family: number, key: number, count: number) => void): void {
    for (let i = 0; i < this.size; i++) {
      const slot = this.used[i]!
      visit(this.families[slot]!, this.keys[slot]!, this.counts[slot]!)
    }
  }

  clear(): void {
    for (let i = 0; i < this.size; i++) this.counts[this.used[i]!] = 0
    this.size = 0
  }
}

function addLatin(text: string, features: FeatureCounts): void {
  let previous: string | undefined
  for (const word of latinWords(text)) {
    if (EMBEDDER_STOP_WORDS.has(word)) continue
    const root = stemWord(word)
    features.add('word', fnv(SEED.word, root))
    if (previous !== undefined) {
      // previous + ' ' + root, without building the string.
      features.add('wordBigram', fnv(Math.imul(fnv(SEED.wordBigram, previous) ^ 0x20, FNV_PRIME), root))
    }
    previous = root
    if (HAS_DIGIT.test(word)) continue
    const padded = `<${word}>`
    for (let n = 3; n <= 4; n++) {
      for (let i = 0; i + n <= padded.length; i++) features.add('charGram', fnv(SEED.charGram, padded, i, i + n))
    }
  }
}

function addCjk(text: string, features: FeatureCounts): void {
  for (const word of cjkWords(text)) {
    if (!EMBEDDER_CJK_PARTICLES.has(word)) features.add('cjkWord', fnv(SEED.cjkWord, word))
  }
  for (const gram of cjkBigrams(text)) {
    // A pair of particles (的了, 是在) carries nothing; a pair with one content character does.
    if (gram.length === 2 && EMBEDDER_CJK_PARTICLES.has(gram[0]!) && EMBEDDER_CJK_PARTICLES.has(gram[1]!)) continue
    features.add('cjkBigram', fnv(SEED.cjkBigram, gram))
  }
  for (const char of text) {
    if (hasCjk(char) && !EMBEDDER_CJK_PARTICLES.has(char)) features.add('cjkChar', fnv(SEED.cjkChar, char))
  }
}

/**
 * Turns feature counts into an L2-normalised vector: sublinear tf, family
 * weight, signed hashing into `dimension` slots.
 */
function project(features: FeatureCounts, dimension: number, scratch: Float64Array): Float32Array {
  scratch.fill(0)
  features.forEach((family, key, tf) => {
    const value = FAMILY_WEIGHT[family]! * (SUBLINEAR[tf] ?? 1 + Math.log(tf))
    const slot = (key >>> 0) % dimension
    // Sign from an independent mix of the key, not from the bits that chose the slot.
    scratch[slot]! += (fmix(key ^ 0x9e3779b9) & 1) === 0 ? value : -value
  })
  let norm = 0
  for (let i = 0; i < dimension; i++) norm += scratch[i]! * scratch[i]!
  const vector = new Float32Array(dimension)
  if (norm === 0) return vector
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < dimension; i++) vector[i] = scratch[i]! * scale
  return vector
}

/** Embeds one text with the hashed features. */
function embedOne(text: string, dimension: number, features: FeatureCounts, scratch: Float64Array): Float32Array {
  features.clear()
  addLatin(text, features)
  if (hasCjk(text)) addCjk(text, features)
  return project(features, dimension, scratch)
}

/**
 * The similarity floor of `dimension`-number hashed vectors for a query. At 512, five
 * unrelated English queries reached at most 0.17 against the LoCoMo sets, and a floor of 0.2
 * costs at most 0.001 of recall@10 there (docs/embeddings.md). Unrelated texts meet only
 * through hash collisions, whose spread shrinks with √dimension: the floor scales alike.
 * None for Chinese text: relevant entries of zh-agent reach as little as unrelated queries do.
 */
export function hashedSimilarityFloor(dimension: number, query: string): number | undefined {
  return isLargelyCjk(query) ? undefined : Math.min(0.6, 0.2 * Math.sqrt(512 / dimension))
}

/**
 * Creates the offline hashed n-gram embedder. Synchronous work, deterministic
 * across runs and platforms; its model name is `hashed-ngram-v2-<dimension>`.
 * @example
 * const embedder = createHashedEmbedder({ dimension: 512 })
 * const [a, b] = await embedder.embed(['running shoes', 'shoes for runners'])
 * cosine(a!, b!) // > 0.3
 */
export function createHashedEmbedder(options: HashedEmbedderOptions): Embedder {
  const { dimension } = options
  if (!Number.isInteger(dimension) || dimension < 8 || dimension > 65_536) {
    throw new KnowHubError('config_error', `The hashed embedder's dimension must be an integer from 8 to 65536, got ${dimension}`, {
      field: 'dimension',
      value: dimension,
    })
  }
  const features = new FeatureCounts()
  const scratch = new Float64Array(dimension)
  return {
    model: `hashed-ngram-v${HASHED_VERSION}-${dimension}`,
    dimension,
    similarityFloor: (query) => hashedSimilarityFloor(dimension, query),
    embed(texts, embedOptions) {
      try {
        // The work is synchronous: an abort can only take effect before it starts.
        embedOptions?.signal?.throwIfAborted()
        return Promise.resolve(texts.map((text) => embedOne(text, dimension, features, scratch)))
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
}
