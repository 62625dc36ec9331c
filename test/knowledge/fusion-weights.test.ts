/**
 * Fusion weights per embedder and query script (issue 17.5): the learned table, and the
 * weights a search really uses (the fused score of a candidate only the vectors found).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEvalHub, type EvalHub } from '../../src/app/eval.js'
import { Principal } from '../../src/core/principal.js'
import { createHashedEmbedder } from '../../src/embed/hashed.js'
import { DEFAULT_FUSION, fusionFor, LEARNED_FUSION_WEIGHTS } from '../../src/knowledge/search/fusion-weights.js'

describe('learned fusion weights', () => {
  it('weighs the vector list by embedder and script, and falls back to the default for an unknown embedder', () => {
    expect(fusionFor('hashed-ngram-v2-512', false)).toEqual({ method: 'score', fulltext: 1, vector: 0.3 })
    expect(fusionFor('use-lite+hashed-v2-512', false).vector).toBe(0.7)
    expect(fusionFor('use-lite+hashed-v2-512', true).vector).toBe(0.5)
    expect(fusionFor('openai:text-embedding-3-small', false)).toEqual(DEFAULT_FUSION)
    for (const entry of LEARNED_FUSION_WEIGHTS) {
      for (const weight of [entry.latin, entry.cjk]) expect(weight).toBeGreaterThan(0)
    }
  })
})

describe('the weights a search uses', () => {
  const alice = Principal.parse({ user: 'alice', permissions: ['read', 'write'] })
  const login = { task: 'Log in to site A with Selenium', content: 'undetected_chromedriver avoids bot checks; add random delays', types: ['tool'] }
  let learned: EvalHub
  let fixed: EvalHub
  beforeAll(async () => {
    // Two embedded databases: opened side by side (each takes tens of seconds on a loaded machine).
    ;[learned, fixed] = await Promise.all([
      openEvalHub({ embedder: createHashedEmbedder({ dimension: 256 }) }),
      openEvalHub({ embedder: createHashedEmbedder({ dimension: 256 }), service: { fusion: { method: 'score', fulltext: 1, vector: 0.9 } } }),
    ])
    for (const hub of [learned, fixed]) {
      await hub.knowledge.save(login, alice)
      await hub.knowledge.save({ task: 'Deploy with pnpm in Docker', content: 'run corepack enable before pnpm install', types: ['tool'] }, alice)
    }
  }, 180_000)
  afterAll(async () => {
    await learned?.close()
    await fixed?.close()
  })

  // A misspelt query shares no search term with the entry: only the vectors find it, first of
  // their list, so its fused score is the vector list's weight.
  it('gives a candidate only the vectors found the learned vector weight of the embedder', async () => {
    const { results } = await learned.knowledge.search({ q: 'seleniumm chromedrivr', explain: true }, alice)
    expect(results[0]?.task).toBe(login.task)
    expect(results[0]?.explain?.fulltext_rank).toBeNull()
    expect(results[0]?.explain?.fused).toBeCloseTo(fusionFor(learned.embedder.model, false).vector)
  })

  it('uses fixed weights when the search is configured with them', async () => {
    const { results } = await fixed.knowledge.search({ q: 'seleniumm chromedrivr', explain: true }, alice)
    expect(results[0]?.explain?.fused).toBeCloseTo(0.9)
  })
})
