/**
 * A fresh knowledge service for an evaluation: an embedded store in its own
 * folder and the embedder under test, wired as the composition root wires them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EmbedderConfig } from '../core/config.js'
import type { Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import { createEmbedder } from '../embed/factory.js'
import { createHashedEmbedder } from '../embed/hashed.js'
import { createSentenceEmbedder } from '../embed/use.js'
import { createKnowledgeService, type KnowledgeService, type KnowledgeServiceDeps } from '../knowledge/service.js'
import { openStore, type Store } from '../store/store.js'

/** Embedders the evaluation can name: the configured one, or a built-in offline one. */
export const EVAL_EMBEDDERS = ['config', 'hashed', 'sentence'] as const
export type EvalEmbedderName = (typeof EVAL_EMBEDDERS)[number]

/** An evaluation's store, embedder and knowledge service; `close()` removes a temp folder. */
export interface EvalHub {
  store: Store
  embedder: Embedder
  knowledge: KnowledgeService
  dataDir: string
  close(): Promise<void>
}

/**
 * Creates the named embedder: `config` (the configured provider), `hashed` (hashed
 * n-grams, 512) or `sentence` (USE lite + hashed n-grams).
 */
export async function evalEmbedder(name: EvalEmbedderName, config: EmbedderConfig, logger?: Logger): Promise<Embedder> {
  if (name === 'hashed') return createHashedEmbedder({ dimension: 512 })
  if (name === 'sentence') return createSentenceEmbedder()
  return createEmbedder(config, logger ? { logger } : {})
}

/**
 * Opens a fresh embedded store (in `dataDir`, or a temp folder removed on close) and
 * the knowledge service over it.
 * @example
 * const hub = await openEvalHub({ embedder: createHashedEmbedder({ dimension: 512 }) })
 * try { … } finally { await hub.close() }
 */
export async function openEvalHub(options: {
  embedder: Embedder
  dataDir?: string
  logger?: Logger
  service?: Partial<Pick<KnowledgeServiceDeps, 'fusion' | 'textRanking' | 'searchDepth' | 'minSimilarity'>>
}): Promise<EvalHub> {
  const temporary = options.dataDir === undefined
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'knowhub-eval-'))
  const store = await openStore({ dataDir, ...(options.logger ? { logger: options.logger } : {}) })
  try {
    // No query-vector or response cache: every query pays its own embedding and search, so
    // each mode's latency is what a query never seen before costs.
    const knowledge = await createKnowledgeService({
      store,
      embedder: options.embedder,
      queryCacheSize: 0,
      searchCacheSize: 0,
      ...(options.logger ? { logger: options.logger } : {}),
      ...options.service,
    })
    return {
      store,
      embedder: options.embedder,
      knowledge,
      dataDir,
      async close() {
        await store.close()
        await options.embedder.close?.()
        if (temporary) rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await store.close().catch(() => {})
    if (temporary) rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
}
