import { z } from 'zod'
import { Principal } from './principal.js'

/** Which embedding provider to use. */
export const EmbedderConfig = z.discriminatedUnion('provider', [
  z.object({
    provider: z.literal('hashed'),
    /** Vector size of the offline hashed n-gram embedder. */
    dimension: z.number().int().min(64).max(4096).default(512),
  }),
  z.object({
    provider: z.literal('openai'),
    /** Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1 (Ollama). */
    baseUrl: z.url(),
    model: z.string().min(1),
    apiKey: z.string().optional(),
    /** Requested dimension (sent as `dimensions` when set); otherwise learned from the first response. */
    dimension: z.number().int().positive().optional(),
    batchSize: z.number().int().positive().max(2048).default(64),
    timeoutMs: z.number().int().positive().default(30_000),
  }),
  z.object({
    provider: z.literal('local'),
    /** Folder of a local ONNX sentence-embedding model (transformers.js layout). Nothing is downloaded. */
    path: z.string().min(1),
    pooling: z.enum(['mean', 'cls']).default('mean'),
  }),
])
export type EmbedderConfig = z.output<typeof EmbedderConfig>

/**
 * KnowHub's configuration. Only entry points read env vars and files; they build
 * this object and pass it (or parts of it) down.
 */
export const KnowHubConfig = z.object({
  /** Folder of the embedded database and other local state. */
  dataDir: z.string().default('.knowhub'),
  /** When set, a PostgreSQL server is used instead of the embedded database. */
  databaseUrl: z.string().optional(),
  embedder: EmbedderConfig.default({ provider: 'hashed', dimension: 512 }),
  /** The principal used by the CLI and by the server in local mode. */
  principal: Principal.default({ user: 'local', permissions: ['read', 'write', 'secrets:read', 'admin'] }),
  /** Largest accepted entry content, in bytes. */
  maxContentBytes: z.number().int().positive().default(1_048_576),
})
export type KnowHubConfig = z.output<typeof KnowHubConfig>
