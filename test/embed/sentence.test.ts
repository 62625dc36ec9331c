/**
 * The offline default embedder: USE lite + hashed n-grams (`sentence`), chosen by
 * the config schema's default; CJK text gets the n-gram part only.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { describe, expect, it } from 'vitest'
import { EmbedderConfig, KnowHubConfig } from '../../src/core/config.js'
import { createEmbedder } from '../../src/embed/factory.js'
import { isLargelyCjk, SENTENCE_ANCHOR_FLOOR, USE_DIMENSION } from '../../src/embed/use.js'

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

  it('asks more similarity of an English entry that shares no word with the query than of one that does', async () => {
    const embedder = await createEmbedder(EmbedderConfig.parse({ provider: 'sentence' }))
    expect(embedder.similarityFloor?.('How deep is the Mariana Trench?')).toBe(0.3)
    expect(embedder.anchorFloor?.('How deep is the Mariana Trench?')).toBe(SENTENCE_ANCHOR_FLOOR)
    expect(SENTENCE_ANCHOR_FLOOR).toBeGreaterThan(0.3)
    // Chinese text is compared by its n-grams alone: their rule (the floor) applies.
    expect(embedder.anchorFloor?.('马里亚纳海沟有多深')).toBeUndefined()
  })

  it('embeds English by meaning and words, Chinese by n-grams only', async () => {
    const embedder = await createEmbedder(EmbedderConfig.parse({ provider: 'sentence' }))
    expect(embedder.model).toBe('use-lite+hashed-v2-512')
    expect(embedder.dimension).toBe(USE_DIMENSION + 512)
    const [bread, loaf, taxes, zh, zhNear] = await embedder.embed(
      [
        'How do I bake bread at home?',
        'a simple recipe for a homemade loaf',
        'filing quarterly corporate tax returns',
        '用户偏好使用 TypeScript 而非 JavaScript',
        '用户喜欢 TypeScript 的类型安全',
      ],
      { kind: 'document' },
    )
    for (const v of [bread!, loaf!, taxes!, zh!]) expect(Math.abs(cosine(v, v) - 1)).toBeLessThan(1e-4)
    expect(cosine(bread!, loaf!)).toBeGreaterThan(cosine(bread!, taxes!))
    // USE lite never sees Chinese: the first 512 numbers stay 0.
    expect(isLargelyCjk('用户偏好使用 TypeScript 而非 JavaScript')).toBe(true)
    expect(zh!.subarray(0, USE_DIMENSION).every((x) => x === 0)).toBe(true)
    expect(cosine(zh!, zhNear!)).toBeGreaterThan(0.2)
  }, 60_000)

  it('runs USE lite off the main thread: the event loop stays free while it embeds', async () => {
    const embedder = await createEmbedder(EmbedderConfig.parse({ provider: 'sentence' }))
    // Not ready until USE lite has loaded (a server answers full-text-only meanwhile, search.whileModelLoads).
    expect(embedder.ready!()).toBe(false)
    await embedder.warmUp!()
    expect(embedder.ready!()).toBe(true)
    const texts = Array.from({ length: 96 }, (_, i) => `how do I configure the build pipeline for service number ${i} with caching and retries`)
    // Event-loop utilisation: the share of the time this thread was busy rather than waiting.
    // Inference on this thread keeps it near 1 however loaded the machine is; in a worker the
    // thread only waits.
    const before = performance.eventLoopUtilization()
    const vectors = await embedder.embed(texts, { kind: 'document' })
    const busy = performance.eventLoopUtilization(before)
    expect(vectors).toHaveLength(96)
    expect(vectors.every((v) => v.length === embedder.dimension && v.some((x) => x !== 0))).toBe(true)
    expect(busy.utilization).toBeLessThan(0.5)
  }, 60_000)

  it('a warm-up never keeps a finished process alive; an embed in flight does', () => {
    const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url))
    const factory = fileURLToPath(new URL('../../src/embed/factory.ts', import.meta.url))
    const script = (body: string): string =>
      `import { createEmbedder } from ${JSON.stringify(factory)}
      const embedder = await createEmbedder({ provider: 'sentence', hashedDimension: 512, semanticWeight: 0.7 })
      let state = 'waiting'
      process.on('exit', () => console.log(state))
      ${body}`
    const run = (body: string): string => {
      const child = spawnSync(tsx, ['--input-type=module', '-e', script(body)], { encoding: 'utf8', timeout: 60_000 })
      expect(child.status, child.stderr).toBe(0)
      return child.stdout.trim()
    }
    // The warm-up is still loading when the script ends: the process exits without it.
    expect(run(`embedder.warmUp().then(() => { state = 'warmed' })`)).toBe('waiting')
    // Nothing awaits this embed either, but the process stays until it answers.
    expect(run(`embedder.embed(['keep me alive']).then((v) => { state = 'embedded ' + v[0].length })`)).toBe('embedded 1024')
  }, 120_000)
})
