/**
 * Picks the embedding provider named by the config.
 */
import type { EmbedderConfig } from '../core/config.js'
import { noopLogger, type Logger } from '../core/logger.js'
import type { Embedder } from './embedder.js'
import { createHashedEmbedder } from './hashed.js'
import { createLocalEmbedder, type LocalEmbedderDeps } from './local.js'
import { createOpenAIEmbedder, type RetryPolicy } from './openai.js'
import { createSentenceEmbedder } from './use.js'

/** What {@link createEmbedder} passes on to the providers. */
export interface EmbedderDeps {
  logger?: Logger
  /** The fetch the OpenAI-compatible provider uses (default: the global one). */
  fetch?: typeof globalThis.fetch
  /** Retry policy of the OpenAI-compatible provider. */
  retry?: RetryPolicy
  /** Where the `local` provider keeps a model named on a hub (`<dataDir>/models`). */
  modelCacheDir?: string
  /** Told the progress of the `local` provider's opt-in download. */
  onDownload?: LocalEmbedderDeps['onDownload']
}

/**
 * Creates the configured embedder: `sentence` (offline default: USE lite + hashed n-grams,
 * loads its bundled weights once per process), `hashed` (offline, no model, no I/O),
 * `openai` (any OpenAI-compatible `/v1/embeddings`; probes the dimension when
 * it is not configured) or `local` (an ONNX model folder through the optional
 * `@huggingface/transformers`).
 * @example
 * const embedder = await createEmbedder(config.embedder, { logger })
 * const vectors = await embedder.embed(['first text', 'second text'])
 */
export async function createEmbedder(config: EmbedderConfig, deps: EmbedderDeps = {}): Promise<Embedder> {
  const logger = deps.logger ?? noopLogger
  let embedder: Embedder
  switch (config.provider) {
    case 'sentence':
      embedder = await createSentenceEmbedder({
        hashedDimension: config.hashedDimension,
        semanticWeight: config.semanticWeight,
        ...(config.threads === undefined ? {} : { threads: config.threads }),
      })
      break
    case 'hashed':
      embedder = createHashedEmbedder({ dimension: config.dimension })
      break
    case 'openai':
      embedder = await createOpenAIEmbedder(config, deps)
      break
    case 'local':
      embedder = await createLocalEmbedder(config, {
        logger,
        ...(deps.modelCacheDir ? { modelCacheDir: deps.modelCacheDir } : {}),
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
        ...(deps.onDownload ? { onDownload: deps.onDownload } : {}),
      })
      break
  }
  logger.info('embed.ready', { provider: config.provider, model: embedder.model, dimension: embedder.dimension })
  return embedder
}
