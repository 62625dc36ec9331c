/**
 * A file-backed embedding cache for evaluation runs: embedding LoCoMo's turns with the
 * `sentence` embedder takes minutes on a busy machine, and every run of `knowhub eval` or
 * of a benchmark script would pay it again. Vectors are kept by the embedder's model name
 * (its query/document convention included), the kind when the convention embeds queries and
 * documents differently, and the text (a SHA-1 of them), one line per vector (`key<TAB>base64 float32`), appended
 * as they are computed; a later run with the same file reuses them. Embedders are
 * deterministic, so a cached vector is the vector the embedder would return.
 */
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import { isSymmetric, type EmbedKind } from '../core/embed-convention.js'
import type { Embedder } from '../embed/embedder.js'

/** The key of a text's vector: the model, the kind (only for a model that embeds the kinds differently) and the text. */
function key(model: string, kind: EmbedKind | undefined, text: string): string {
  const hash = createHash('sha1').update(model).update('\0')
  if (kind !== undefined) hash.update(kind).update('\0')
  return hash.update(text).digest('hex')
}

function encode(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
}

function decode(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64')
  const copy = new Uint8Array(bytes.byteLength)
  copy.set(bytes)
  return new Float32Array(copy.buffer)
}

/**
 * Wraps `inner` so that vectors already in `file` are not computed again and new ones are
 * appended to it. Lines of another dimension are ignored.
 * @example
 * const embedder = cachedEmbedder(await evalEmbedder('sentence', config.embedder), '/tmp/sentence.cache')
 */
export function cachedEmbedder(inner: Embedder, file: string): Embedder & { readonly hits: number; readonly misses: number } {
  const vectors = new Map<string, Float32Array>()
  if (existsSync(file))
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const tab = line.indexOf('\t')
      if (tab < 0) continue
      const vector = decode(line.slice(tab + 1))
      if (vector.length === inner.dimension) vectors.set(line.slice(0, tab), vector)
    }
  let hits = 0
  let misses = 0
  return {
    get model() {
      return inner.model
    },
    get dimension() {
      return inner.dimension
    },
    get hits() {
      return hits
    },
    get misses() {
      return misses
    },
    ...(inner.similarityFloor ? { similarityFloor: (query: string) => inner.similarityFloor!(query) } : {}),
    ...(inner.anchorFloor ? { anchorFloor: (query: string) => inner.anchorFloor!(query) } : {}),
    ...(inner.convention ? { convention: inner.convention } : {}),
    ...(inner.warmUp ? { warmUp: () => inner.warmUp!() } : {}),
    ...(inner.close ? { close: () => inner.close!() } : {}),
    async embed(texts, options) {
      const kind = inner.convention && !isSymmetric(inner.convention.applied) ? options.kind : undefined
      const keys = texts.map((text) => key(inner.model, kind, text))
      const missing = [...new Set(keys.flatMap((k, i) => (vectors.has(k) ? [] : [i])).map((i) => texts[i]!))]
      hits += texts.length - missing.length
      misses += missing.length
      if (missing.length > 0) {
        const computed = await inner.embed(missing, options)
        const lines: string[] = []
        missing.forEach((text, i) => {
          const k = key(inner.model, kind, text)
          vectors.set(k, computed[i]!)
          lines.push(`${k}\t${encode(computed[i]!)}\n`)
        })
        appendFileSync(file, lines.join(''))
      }
      return keys.map((k) => vectors.get(k)!)
    },
  }
}
