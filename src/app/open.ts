/**
 * The composition root: builds the store, embedder and services from a config.
 * Entry points (CLI, server, MCP) call this; nothing else wires dependencies.
 */
import type { Clock } from '../core/clock.js'
import { KnowHubConfig } from '../core/config.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { parseWith } from '../core/validate.js'
import type { Embedder } from '../embed/embedder.js'
import { createEmbedder } from '../embed/factory.js'
import { createKnowledgeService, type KnowledgeService } from '../knowledge/service.js'
import { join } from 'node:path'
import { SecretKey, checkSecretKey, createSecretBox, loadOrCreateKey } from '../resources/secrets.js'
import { createResourceService, type ResourceService } from '../resources/service.js'
import { openStore, type Store } from '../store/store.js'
import { createTokenService, type TokenService } from '../auth/tokens.js'

export interface KnowHub {
  readonly config: KnowHubConfig
  readonly store: Store
  readonly embedder: Embedder
  readonly knowledge: KnowledgeService
  readonly resources: ResourceService
  /** The key of secrets at rest and where it came from (`keyFile` undefined: from config, or ephemeral for memory://). */
  readonly secrets: { readonly key: SecretKey; readonly keyFile: string | undefined; readonly source: 'config' | 'file' | 'ephemeral' }
  /** API tokens (the server's authentication). */
  readonly tokens: TokenService
  close(): Promise<void>
}

/**
 * Opens KnowHub: store (embedded PGlite in `dataDir`, or PostgreSQL at `databaseUrl`),
 * the configured embedder and the services.
 * @example
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * await hub.knowledge.search({ q: 'selenium login' }, hub.config.principal)
 * await hub.close()
 */
export async function openKnowHub(config: unknown = {}, deps: { logger?: Logger; clock?: Clock; fetch?: typeof fetch } = {}): Promise<KnowHub> {
  const parsed = parseWith(KnowHubConfig, config, 'configuration')
  const logger = deps.logger ?? noopLogger
  const keyFile = parsed.secrets.key
    ? undefined
    : (parsed.secrets.keyFile ?? (parsed.dataDir.startsWith('memory://') ? undefined : join(parsed.dataDir, 'secret.key')))
  const secretKey = parsed.secrets.key || keyFile ? loadOrCreateKey({ key: parsed.secrets.key, keyFile, logger }) : SecretKey.generate()
  const embedder = await createEmbedder(parsed.embedder, { logger, ...(deps.fetch ? { fetch: deps.fetch } : {}) })
  const fulltext = parsed.search.fulltext === 'auto' ? undefined : parsed.search.fulltext
  const store = await openStore({
    dataDir: parsed.dataDir,
    ...(parsed.databaseUrl ? { databaseUrl: parsed.databaseUrl } : {}),
    ...(fulltext ? { fulltext } : {}),
    logger,
  })
  try {
    await checkSecretKey(store, secretKey, logger)
    const knowledge = await createKnowledgeService({
      store,
      embedder,
      logger,
      maxContentBytes: parsed.maxContentBytes,
      searchCacheSize: parsed.search.cacheSize,
      ...(parsed.search.minSimilarity !== undefined ? { minSimilarity: parsed.search.minSimilarity } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
    })
    return {
      config: parsed,
      store,
      embedder,
      knowledge,
      resources: createResourceService({ store, secrets: createSecretBox(secretKey), logger, ...(deps.clock ? { clock: deps.clock } : {}) }),
      secrets: { key: secretKey, keyFile, source: parsed.secrets.key ? 'config' : keyFile ? 'file' : 'ephemeral' },
      tokens: createTokenService({ db: store.db, logger, ...(deps.clock ? { clock: deps.clock } : {}) }),
      async close() {
        await store.close()
        await embedder.close?.()
      },
    }
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
}
