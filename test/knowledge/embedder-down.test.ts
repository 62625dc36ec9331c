/**
 * A model server that hangs, fails or is gone never hangs a search (issue 40): past
 * `queryEmbedTimeoutMs`, or on an error, the search answers from the full-text list and says so
 * (`vectors: { status: 'skipped', reason: 'embedder_unavailable' }`, never cached), or with
 * `whenEmbedderFails: 'error'` fails at once with a clear `embedder_failed`. The scripted stub plays
 * the failing server (test/helpers/openai-stub.ts); one backend: the fallback is the service's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isKnowHubError } from '../../src/core/errors.js'
import { Principal } from '../../src/core/principal.js'
import { createOpenAIEmbedder } from '../../src/embed/openai.js'
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/service.js'
import type { Store } from '../../src/store/store.js'
import { rejection } from '../helpers/errors.js'
import { startOpenAIStub, type OpenAIStub } from '../helpers/openai-stub.js'
import { openTestStore } from '../helpers/stores.js'

const alice = Principal.parse({ user: 'alice', permissions: ['read', 'write'] })

describe('search when the model server is down or slow', () => {
  let store: Store
  let cleanup: () => Promise<void>
  let stub: OpenAIStub
  let degrading: KnowledgeService
  let failing: KnowledgeService

  beforeAll(async () => {
    ;({ store, cleanup } = await openTestStore('pglite'))
    stub = await startOpenAIStub({ dimension: 16 })
    const embedder = await createOpenAIEmbedder(
      { provider: 'openai', baseUrl: stub.url, model: 'stub-embed', dimension: 16, timeoutMs: 10_000 },
      { retry: { retries: 3, baseDelayMs: 10, maxDelayMs: 20 } },
    )
    degrading = await createKnowledgeService({ store, embedder, queryEmbedTimeoutMs: 300, searchCacheSize: 100, queryCacheSize: 0 })
    failing = await createKnowledgeService({ store, embedder, queryEmbedTimeoutMs: 300, whenEmbedderFails: 'error', queryCacheSize: 0 })
    await degrading.save({ task: 'rotate API keys', content: 'rotate keys every 90 days with the vault CLI', types: ['plan'] }, alice)
  })
  afterAll(async () => {
    await cleanup()
    await stub.close()
  })

  it('a hanging server: the full-text answer, flagged, within the timeout; the next search asks the model again', async () => {
    stub.hangNext(1)
    const started = performance.now()
    const response = await degrading.search({ q: 'rotate API keys' }, alice)
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(response.vectors).toEqual({ status: 'skipped', reason: 'embedder_unavailable' })
    expect(response.results.map((r) => r.task)).toEqual(['rotate API keys'])
    const again = await degrading.search({ q: 'rotate API keys' }, alice)
    expect(again.vectors).toBeUndefined()
  })

  it('a failing server (HTTP 500 on the request and its three retries): the full-text answer, flagged', async () => {
    stub.failNext(4, 500)
    const response = await degrading.search({ q: 'vault CLI keys' }, alice)
    expect(response.vectors).toEqual({ status: 'skipped', reason: 'embedder_unavailable' })
    expect(response.results).toHaveLength(1)
  })

  it('whenEmbedderFails: error — a clear embedder_failed at once', async () => {
    stub.hangNext(1)
    const started = performance.now()
    const error = await rejection(failing.search({ q: 'rotate API keys' }, alice))
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(isKnowHubError(error, 'embedder_failed')).toBe(true)
    expect(error.message).toMatch(/could not embed the query \(no answer within 300 ms\)/)
  })
})
