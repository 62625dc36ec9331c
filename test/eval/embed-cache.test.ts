import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import type { Embedder } from '../../src/embed/embedder.js'
import { cachedEmbedder } from '../../src/eval/embed-cache.js'

const dir = mkdtempSync(join(tmpdir(), 'knowhub-embed-cache-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The hashed embedder, counting the texts it is asked to embed. */
function counting(): Embedder & { texts: string[] } {
  const inner = createHashedEmbedder({ dimension: 64 })
  const texts: string[] = []
  return {
    model: inner.model,
    dimension: inner.dimension,
    similarityFloor: (q) => inner.similarityFloor?.(q),
    texts,
    async embed(batch) {
      texts.push(...batch)
      return inner.embed(batch, { kind: 'document' })
    },
  }
}

describe('cachedEmbedder (evaluation runs)', () => {
  it('embeds each text once, and a later run over the same file embeds nothing again', async () => {
    const file = join(dir, 'vectors')
    const first = counting()
    const cached = cachedEmbedder(first, file)
    const [a, b, again] = await cached.embed(['pgvector index', 'selenium login', 'pgvector index'], { kind: 'document' })
    expect(first.texts).toEqual(['pgvector index', 'selenium login'])
    await cached.embed(['selenium login'], { kind: 'document' })
    expect(first.texts).toHaveLength(2)
    expect(again).toEqual(a)

    const second = counting()
    const reread = cachedEmbedder(second, file)
    const [b2, c] = await reread.embed(['selenium login', 'docker compose'], { kind: 'document' })
    expect(second.texts).toEqual(['docker compose'])
    expect(Array.from(b2!)).toEqual(Array.from(b!))
    expect(Array.from(c!)).toEqual(Array.from((await createHashedEmbedder({ dimension: 64 }).embed(['docker compose'], { kind: 'document' }))[0]!))
    expect(reread.hits).toBe(1)
    expect(reread.model).toBe(first.model)
    expect(reread.similarityFloor?.('x')).toBe(first.similarityFloor?.('x'))
  })

  it('ignores vectors of another dimension in the file', async () => {
    const file = join(dir, 'mixed')
    await cachedEmbedder(counting(), file).embed(['one text'], { kind: 'document' })
    const wider = createHashedEmbedder({ dimension: 128 })
    const texts: string[] = []
    const other = cachedEmbedder(
      { model: counting().model, dimension: 128, embed: async (t) => (texts.push(...t), wider.embed(t, { kind: 'document' })) },
      file,
    )
    const [v] = await other.embed(['one text'], { kind: 'document' })
    expect(texts).toEqual(['one text'])
    expect(v).toHaveLength(128)
  })
})
