/**
 * `knowhub/embed`: turning texts into vectors. Node-only (the local provider
 * reads model folders).
 */
export type { Embedder, EmbedOptions } from './embedder.js'
export { createEmbedder, type EmbedderDeps } from './factory.js'
export { createHashedEmbedder, HASHED_VERSION, type HashedEmbedderOptions } from './hashed.js'
export { createOpenAIEmbedder, type OpenAIEmbedderConfig, type OpenAIEmbedderDeps, type RetryPolicy } from './openai.js'
export { createLocalEmbedder, TRANSFORMERS_INSTALL, TRANSFORMERS_PACKAGE, type LocalEmbedderConfig, type LocalEmbedderDeps } from './local.js'
export { cosine, l2normalize } from './vector.js'
