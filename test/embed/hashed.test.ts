import { describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { cosine, l2normalize } from '../../src/embed/vector.js'

const embedder = createHashedEmbedder({ dimension: 512 })

async function similarity(a: string, b: string): Promise<number> {
  const [x, y] = await embedder.embed([a, b], { kind: 'document' })
  return cosine(x!, y!)
}

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
}

describe('hashed embedder', () => {
  it('names the model with its version and dimension', () => {
    expect(embedder.model).toBe('hashed-ngram-v2-512')
    expect(embedder.dimension).toBe(512)
    expect(createHashedEmbedder({ dimension: 64 }).model).toBe('hashed-ngram-v2-64')
  })

  it('returns one L2-normalised vector of exactly `dimension` floats per text', async () => {
    const texts = ['The quick brown fox', '用户偏好 TypeScript', 'x', '12345', 'Ünïcödé wörds and ＦＵＬＬＷＩＤＴＨ']
    const vectors = await embedder.embed(texts, { kind: 'document' })
    expect(vectors).toHaveLength(texts.length)
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array)
      expect(vector).toHaveLength(512)
      expect(norm(vector)).toBeCloseTo(1, 5)
    }
    const small = createHashedEmbedder({ dimension: 64 })
    const [v] = await small.embed(['dimension follows the option'], { kind: 'document' })
    expect(v).toHaveLength(64)
    expect(norm(v!)).toBeCloseTo(1, 5)
  })

  it('is deterministic: same text, same vector, across calls and instances', async () => {
    const text = 'Caroline went to the LGBTQ support group on 7 May 2023. 她很开心。'
    const [a] = await embedder.embed([text], { kind: 'document' })
    const [b] = await createHashedEmbedder({ dimension: 512 })
      .embed(['something else first', text], { kind: 'document' })
      .then((v) => v.slice(1))
    expect(Array.from(b!)).toEqual(Array.from(a!))
  })

  it('handles long texts with thousands of features the same way in any order of calls', async () => {
    const long = Array.from({ length: 3000 }, (_, i) => `word${i.toString(36)}x lorem${i % 97}`).join(' ')
    const fresh = createHashedEmbedder({ dimension: 512 })
    const [first] = await fresh.embed([long], { kind: 'document' })
    const [, again] = await embedder.embed(['warm the tables up', long], { kind: 'document' })
    expect(Array.from(again!)).toEqual(Array.from(first!))
    expect(norm(first!)).toBeCloseTo(1, 5)
    // Repeating a text changes term frequencies only sublinearly.
    const [twice] = await embedder.embed([`${long} ${long}`], { kind: 'document' })
    expect(cosine(first!, twice!)).toBeGreaterThan(0.95)
  })

  it('pins the exact vector, so any change to the features is noticed (bump HASHED_VERSION)', async () => {
    const [v] = await embedder.embed(['running shoes for the marathon'], { kind: 'document' })
    const nonZero = Array.from(v!)
      .map((value, index) => [index, Math.round(value * 1e4)] as const)
      .filter(([, value]) => value !== 0)
    // 3 stems, 2 bigrams, 3 words' char 3/4-grams: a fixed set of slots.
    expect(nonZero.length).toBeGreaterThan(20)
    expect(nonZero.slice(0, 6)).toMatchInlineSnapshot(`
      [
        [
          26,
          994,
        ],
        [
          38,
          1326,
        ],
        [
          41,
          994,
        ],
        [
          58,
          1326,
        ],
        [
          60,
          1326,
        ],
        [
          74,
          -1326,
        ],
      ]
    `)
  })

  it('gives the zero vector, not NaN, for empty and stop-word-only text', async () => {
    const vectors = await embedder.embed(['', '   ', 'the and of', '的了'], { kind: 'document' })
    for (const vector of vectors) {
      expect(vector).toHaveLength(512)
      expect(vector.every((value) => value === 0)).toBe(true)
    }
    expect(await embedder.embed([], { kind: 'document' })).toEqual([])
  })

  it('ranks an English paraphrase sharing stems above unrelated text', async () => {
    const query = 'When did Caroline go to the LGBTQ support group?'
    const related = await similarity(query, 'Caroline attended an LGBTQ support group meeting yesterday')
    const unrelated = await similarity(query, 'Melanie painted a sunrise over the lake last week')
    expect(related).toBeGreaterThan(0.4)
    expect(related).toBeGreaterThan(unrelated + 0.3)

    const morphology = await similarity('I went running in the parks', 'She runs in a park every morning')
    const other = await similarity('I went running in the parks', 'The quarterly tax report is due')
    expect(morphology).toBeGreaterThan(other + 0.2)
  })

  it('joins common irregular forms to their base form (went ~ go, bought ~ buy)', async () => {
    const [go, went, camp] = await embedder.embed(['When did Melanie go?', 'Melanie went.', 'Melanie camped.'], { kind: 'document' })
    const [buy, bought, sold] = await embedder.embed(['buy', 'bought', 'sold'], { kind: 'document' })
    expect(cosine(go!, went!)).toBeGreaterThan(cosine(go!, camp!) + 0.2)
    expect(cosine(buy!, bought!)).toBeGreaterThan(cosine(buy!, sold!) + 0.3)
  })

  it('tolerates typos through character n-grams', async () => {
    const typo = await similarity('I recieve newsletters', 'I receive newsletters')
    const unrelated = await similarity('I recieve newsletters', 'I bake sourdough bread')
    expect(typo).toBeGreaterThan(0.4)
    expect(typo).toBeGreaterThan(unrelated + 0.3)
  })

  it('drops English stop words, so function words alone do not make texts similar', async () => {
    expect(await similarity('what is the one that you did', 'which of them would you have done')).toBeLessThan(0.2)
  })

  it('makes Chinese sentences that share words more similar than unrelated ones', async () => {
    const query = '我昨天去公园跑步了'
    const related = await similarity(query, '他每天早上在公园里跑步')
    const unrelated = await similarity(query, '公司的季度财报明天发布')
    expect(related).toBeGreaterThan(0.3)
    expect(related).toBeGreaterThan(unrelated + 0.2)

    const mixed = await similarity('用户喜欢使用 TypeScript 编写代码', '这个用户偏好 TypeScript')
    expect(mixed).toBeGreaterThan(await similarity('用户喜欢使用 TypeScript 编写代码', '今天天气很好'))
  })

  it('keeps English and Chinese texts apart', async () => {
    expect(Math.abs(await similarity('I like running in the park', '我喜欢在公园跑步'))).toBeLessThan(0.15)
  })

  it('rejects a bad dimension with a config_error', () => {
    for (const dimension of [0, 4, 1.5, Number.NaN, 100_000]) {
      try {
        createHashedEmbedder({ dimension })
        expect.unreachable(`accepted ${dimension}`)
      } catch (error) {
        expect(isKnowHubError(error, 'config_error')).toBe(true)
      }
    }
  })

  it('honours an already aborted signal', async () => {
    await expect(embedder.embed(['x'], { kind: 'document', signal: AbortSignal.abort() })).rejects.toThrow()
  })
})

describe('vector helpers', () => {
  it('computes cosine and normalises without NaN', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0)
    expect(cosine([1, 1], [2, 2])).toBeCloseTo(1, 10)
    expect(cosine([0, 0], [1, 1])).toBe(0)
    expect(Array.from(l2normalize([3, 4]))).toEqual([Math.fround(0.6), Math.fround(0.8)])
    expect(Array.from(l2normalize([0, 0]))).toEqual([0, 0])
    expect(() => cosine([1], [1, 2])).toThrow(/1 and 2/)
  })
})
