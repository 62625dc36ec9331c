/**
 * The pool of USE lite threads (`src/embed/use-pool.ts`) with the real model from node_modules:
 * both threads work, the vectors are those of one thread, queries pass the batches of an import,
 * a thread that dies is replaced and its texts retried (or failed cleanly), and `close` ends
 * every thread.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/app/metrics.js'
import { isKnowHubError } from '../../src/core/errors.js'
import { BULK_BATCH, UsePool } from '../../src/embed/use-pool.js'
import { createSentenceEmbedder } from '../../src/embed/use.js'

const texts = Array.from(
  { length: 40 },
  (_, i) => `the deploy of service ${i} failed because the ${i % 2 ? 'database' : 'cache'} was unreachable after ${i} retries`,
)
const pools: UsePool[] = []
const pool = (threads: number) => {
  const created = UsePool.create({ threads })
  pools.push(created)
  return created
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()))
})

/** Resolves once `check` holds (polled every 10 ms). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('UsePool', () => {
  let reference: Float32Array[]

  it('spreads an import over both threads and returns the vectors one thread gives', async () => {
    const one = pool(1)
    reference = await one.embed(texts)
    expect(one.stats().threads.map((t) => t.texts)).toEqual([40])
    const two = pool(2)
    const vectors = await two.embed(texts)
    expect(vectors).toEqual(reference)
    const { threads } = two.stats()
    expect(threads).toHaveLength(2)
    // Both threads embedded batches of the import.
    for (const thread of threads) expect(thread.texts).toBeGreaterThanOrEqual(BULK_BATCH)
    expect(threads[0]!.texts + threads[1]!.texts).toBe(40)
    expect(threads.every((t) => t.loaded && t.activeMs > 0)).toBe(true)
    // Each thread reports its own memory: the model's WebAssembly memory is outside its heap.
    const memory = await two.memory()
    expect(memory).toHaveLength(2)
    for (const m of memory) expect(m.external + m.arrayBuffers).toBeGreaterThan(10 * 2 ** 20)
  }, 180_000)

  it('embeds a query before the waiting batches of an import', async () => {
    const one = pool(1)
    await one.warmUp()
    const order: string[] = []
    const bulk = one.embed(texts).then(() => order.push('import'))
    await until(() => one.stats().threads[0]!.busy)
    const query = one.embed(['why did the deploy fail?']).then(() => order.push('query'))
    await Promise.all([bulk, query])
    expect(order).toEqual(['query', 'import'])
  }, 180_000)

  it('replaces a thread that dies and retries its texts on another', async () => {
    const two = pool(2)
    await two.warmUp()
    const running = two.embed(texts)
    await until(() => two.stats().threads[0]!.busy)
    await two.crashThread(0)
    expect(await running).toEqual(reference)
    const stats = two.stats()
    expect(stats.replaced).toBe(1)
    expect(stats.threads).toHaveLength(2)
    expect(stats.running).toBe(2)
  }, 180_000)

  it('fails a batch cleanly when its threads keep dying, and keeps working', async () => {
    const one = pool(1)
    await one.warmUp()
    // Long texts: the thread is still embedding them when it is ended.
    const doomed = one.embed(Array.from({ length: 4 }, (_, i) => texts.join(' ').repeat(3) + i))
    // Each attempt’s thread dies while it embeds the text (after its warm-up).
    const killer = (async () => {
      for (let kills = 0; kills < 2; kills++) {
        await until(() => one.stats().threads[0]?.loaded === true && one.stats().threads[0]?.busy === true)
        await one.crashThread(0)
      }
    })()
    const error = await doomed.then(
      () => undefined,
      (e: unknown) => e,
    )
    await killer
    expect(isKnowHubError(error) && error.code).toBe('embedder_failed')
    expect(one.stats().replaced).toBe(2)
    expect(await one.embed(texts.slice(0, 3))).toEqual(reference.slice(0, 3))
  }, 180_000)

  it('ends every thread on close, and fails what still waits', async () => {
    const two = pool(2)
    await two.warmUp()
    expect(two.stats().running).toBe(2)
    const waiting = two.embed(texts).catch((e: unknown) => e)
    await two.close()
    expect(two.stats().running).toBe(0)
    const error = await waiting
    expect(isKnowHubError(error) && error.code).toBe('embedder_failed')
    expect(() => two.embed(['after close'])).toThrow(/closed/)
  }, 180_000)

  it('gives the sentence embedder the same vectors with one thread or two; closing it ends its threads', async () => {
    const one = await createSentenceEmbedder({ threads: 1 })
    const two = await createSentenceEmbedder({ threads: 2 })
    const mixed = [...texts.slice(0, 20), '用户偏好使用 TypeScript', ...texts.slice(20)]
    expect(await two.embed(mixed, { kind: 'document' })).toEqual(await one.embed(mixed, { kind: 'document' }))
    expect(two.poolStats()!.threads.filter((t) => t.texts > 0)).toHaveLength(2)
    await two.close!()
    expect(two.poolStats()).toBeUndefined()
    await one.close!()
  }, 180_000)

  it('shows its threads, their texts and the waiting batches in the metrics', async () => {
    const metrics = createMetrics({ defaultMetrics: false })
    const embedder = metrics.instrumentEmbedder(await createSentenceEmbedder({ threads: 2 }))
    try {
      await embedder.embed(texts, { kind: 'document' })
      const { body } = await metrics.scrape()
      expect(body).toContain('knowhub_embed_threads{state="configured"} 2')
      expect(body).toContain('knowhub_embed_threads{state="running"} 2')
      expect(body).toContain('knowhub_embed_threads{state="busy"} 0')
      expect(body).toContain('knowhub_embed_queued_batches{lane="bulk"} 0')
      const perThread = [...body.matchAll(/^knowhub_embed_thread_texts\{thread="\d+"\} (\d+)$/gm)].map((m) => Number(m[1]))
      expect(perThread).toHaveLength(2)
      expect(perThread.reduce((a, b) => a + b, 0)).toBe(40)
      expect(body).toContain('knowhub_embed_threads_replaced_total 0')
    } finally {
      await embedder.close!()
    }
  }, 180_000)
})
