/**
 * Searches while the embedder's model loads, on a real server (PGlite, real HTTP): with
 * `search.whileModelLoads: full-text` a hybrid search is answered at once from the full-text
 * list and says so (`vectors: skipped, embedder_loading`), `/healthz` reports the embedder
 * `loading`; once the model is ready the same search is hybrid (no cached full-text answer).
 * With `wait` the search waits for the model. The model's load is held back by a gate in
 * front of the real hashed embedder, so nothing here depends on how fast a model loads.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openKnowHub, type KnowHub } from '../../src/app/open.js'
import type { Embedder } from '../../src/embed/embedder.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { startServer, type RunningServer } from '../../src/server/serve.js'
import { client } from '../server/helpers.js'

/** The hashed embedder behind a gate: like a model that loads until `release()`. */
function heldBackEmbedder(): Embedder & { release(): void } {
  const inner = createHashedEmbedder({ dimension: 64 })
  let loaded = false
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  return {
    model: inner.model,
    dimension: inner.dimension,
    ...(inner.similarityFloor ? { similarityFloor: (query: string) => inner.similarityFloor!(query) } : {}),
    warmUp: () => gate,
    ready: () => loaded,
    async embed(texts, options) {
      await gate
      return inner.embed(texts, options)
    },
    release() {
      loaded = true
      release()
    },
  }
}

const SECRET = { key: Buffer.alloc(32, 7).toString('base64') }
const SEARCH = `/api/knowledge/search?q=${encodeURIComponent('selenium login')}&min_score=0&explain=true`

interface Served {
  hub: KnowHub
  server: RunningServer
  embedder: ReturnType<typeof heldBackEmbedder>
}

let dir: string
const open: Served[] = []

/** A server on the folder's entries whose embedder's model has not loaded yet. */
async function serve(whileModelLoads: 'full-text' | 'wait'): Promise<Served> {
  const embedder = heldBackEmbedder()
  const hub = await openKnowHub({ dataDir: dir, secrets: SECRET, search: { whileModelLoads } }, { embedder })
  const server = await startServer({ hub, host: '127.0.0.1', port: 0 })
  const served = { hub, server, embedder }
  open.push(served)
  return served
}

async function stop(served: Served): Promise<void> {
  await served.server.close()
  await served.hub.close()
  open.splice(open.indexOf(served), 1)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'knowhub-model-loading-'))
  // The entries are saved with the same (hashed) model, loaded: the servers below find their vectors.
  const hub = await openKnowHub({ dataDir: dir, secrets: SECRET, embedder: { provider: 'hashed', dimension: 64 } })
  const me = hub.config.principal
  for (const [task, content] of [
    ['Log in to site A with Selenium', 'undetected_chromedriver avoids the bot check'],
    ['Deploy with pnpm in Docker', 'corepack enable before pnpm install'],
    ['Parse PDF tables', 'camelot lattice mode for ruled tables'],
    ['Retry HTTP calls with backoff', 'exponential backoff with jitter, capped at 30 s'],
    ['Rotate API keys monthly', 'keep keys in the vault, never in the repository'],
  ])
    await hub.knowledge.save({ task, content, types: ['tool'] }, me)
  await hub.close()
})

afterAll(async () => {
  for (const served of [...open]) {
    served.embedder.release()
    await stop(served).catch(() => {})
  }
  rmSync(dir, { recursive: true, force: true })
})

type Hit = { task: string; explain: { fulltext_rank: number | null; vector_rank: number | null } }

describe('search while the model loads', () => {
  it('full-text: answered at once from the full-text list, said so; hybrid once /healthz says ready', async () => {
    const served = await serve('full-text')
    const api = client(served.server.url)
    expect((await api.get('/healthz')).body).toMatchObject({ status: 'ok', embedder: 'loading' })

    const loading = await api.get(SEARCH)
    expect(loading.status).toBe(200)
    expect(loading.body.vectors).toEqual({ status: 'skipped', reason: 'embedder_loading' })
    const first = loading.body.results as Hit[]
    expect(first[0]?.task).toBe('Log in to site A with Selenium')
    expect(first.every((hit) => hit.explain.vector_rank === null && hit.explain.fulltext_rank !== null)).toBe(true)
    // A search that asks for full-text only is not a degraded one.
    expect((await api.get(`${SEARCH}&mode=fulltext`)).body.vectors).toBeUndefined()

    served.embedder.release()
    await expect.poll(async () => (await api.get('/healthz')).body.embedder).toBe('ready')
    // The same search again: not the full-text answer from a cache, but hybrid.
    const ready = await api.get(SEARCH)
    expect(ready.body.vectors).toBeUndefined()
    const hits = ready.body.results as Hit[]
    expect(hits[0]?.task).toBe('Log in to site A with Selenium')
    expect(hits[0]?.explain.vector_rank).toBe(1)
    await stop(served)
  })

  it('wait: a hybrid search waits for the model, then answers with both lists', async () => {
    const served = await serve('wait')
    const api = client(served.server.url)
    let settled = false
    const pending = api.get(SEARCH).finally(() => (settled = true))
    // A full-text search does not need the model and is answered meanwhile.
    expect((await api.get(`${SEARCH}&mode=fulltext`)).status).toBe(200)
    expect(settled).toBe(false)
    served.embedder.release()
    const answered = await pending
    expect(answered.body.vectors).toBeUndefined()
    expect((answered.body.results as Hit[])[0]?.explain.vector_rank).toBe(1)
    await stop(served)
  })
})
