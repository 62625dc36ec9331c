/**
 * The offline default embedder: USE lite + hashed n-grams (`sentence`), chosen by
 * the config schema's default; CJK text gets the n-gram part only.
 */
import { describe, expect, it } from 'vitest'
import { EmbedderConfig, KnowHubConfig } from '../../src/core/config.js'
import { createEmbedder } from '../../src/embed/factory.js'
import { isLargelyCjk, USE_DIMENSION } from '../../src/embed/use.js'

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!
  return dot
}

describe('sentence embedder (offline default)', () => {
  it('is the default of the config schema; hashed stays selectable', () => {
    expect(KnowHubConfig.parse({}).embedder).toEqual({ provider: 'sentence', hashedDimension: 512, semanticWeight: 0.7 })
    expect(EmbedderConfig.parse({ provider: 'hashed' })).toEqual({ provider: 'hashed', dimension: 512 })
    expect(() => EmbedderConfig.parse({ provider: 'sentence', semanticWeight: 2 })).toThrow()
  })

  it('embeds English by meaning and words, Chinese by n-grams only', async () => {
    const embedder = await createEmbedder(EmbedderConfig.parse({ provider: 'sentence' }))
    expect(embedder.model).toBe('use-lite+hashed-v2-512')
    expect(embedder.dimension).toBe(USE_DIMENSION + 512)
    const [bread, loaf, taxes, zh, zhNear] = await embedder.embed([
      'How do I bake bread at home?',
      'a simple recipe for a homemade loaf',
      'filing quarterly corporate tax returns',
      '用户偏好使用 TypeScript 而非 JavaScript',
      '用户喜欢 TypeScript 的类型安全',
    ])
    for (const v of [bread!, loaf!, taxes!, zh!]) expect(Math.abs(cosine(v, v) - 1)).toBeLessThan(1e-4)
    expect(cosine(bread!, loaf!)).toBeGreaterThan(cosine(bread!, taxes!))
    // USE lite never sees Chinese: the first 512 numbers stay 0.
    expect(isLargelyCjk('用户偏好使用 TypeScript 而非 JavaScript')).toBe(true)
    expect(zh!.subarray(0, USE_DIMENSION).every((x) => x === 0)).toBe(true)
    expect(cosine(zh!, zhNear!)).toBeGreaterThan(0.2)
  }, 60_000)
})
