/**
 * The composition root: builds the store, embedder, LLM provider and every service once
 * from a config. Entry points (CLI, server, MCP, evaluation) receive the built hub;
 * nothing else wires dependencies.
 */
import { join } from 'node:path'
import { createAdminService, type AdminService } from '../admin/admin.js'
import { hubStatus, type HubStatus } from '../admin/status.js'
import { createAgentService, type AgentService } from '../agent/service.js'
import { createSessionService, type SessionService } from '../auth/sessions.js'
import { createTokenService, type TokenService } from '../auth/tokens.js'
import type { Clock } from '../core/clock.js'
import { KnowHubConfig } from '../core/config.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { parseWith } from '../core/validate.js'
import type { Embedder } from '../embed/embedder.js'
import { createEmbedder, type EmbedderDeps } from '../embed/factory.js'
import { createKnowledgeService, DEFAULT_NEIGHBOUR_LIFT, type KnowledgeService, type SearchOptions } from '../knowledge/service.js'
import { createExtractionService, type ExtractionService } from '../knowledge/extract/extract.js'
import { groundingOptions } from '../knowledge/grounding.js'
import { createSlimService, type SlimService } from '../knowledge/slim/slim.js'
import { createOpenAIChat, type LlmProvider } from '../llm/index.js'
import type { PackService } from '../packs/service.js'
import { openKeyring, type SecretKeyring } from '../resources/key-file.js'
import { openSecretBox } from '../resources/key-check.js'
import { createSecretReveal, type SecretReveal } from '../resources/reveal.js'
import { createResourceService, type ResourceService } from '../resources/service.js'
import { openStore, type Store } from '../store/store.js'
import type { HubMetrics } from './metrics.js'
import { openPacks, type PackSource } from './packs.js'
import { packageVersion } from './version.js'
import { erasureService, type ErasureService } from '../users/erasure.js'
import { usersService, type UsersService } from '../users/profile.js'

export interface KnowHub {
  readonly config: KnowHubConfig
  /** KnowHub's version (package.json), written into backups. */
  readonly version: string
  readonly store: Store
  readonly embedder: Embedder
  /** The chat model of the learning features; undefined until one is configured. */
  readonly llm: LlmProvider | undefined
  readonly knowledge: KnowledgeService
  /** Near-duplicate merging and its undo. */
  readonly slim: SlimService
  readonly resources: ResourceService
  /** Knowledge packs: catalog, activation, resolution (discovered on first use). */
  readonly packs: PackService
  /** Knowledge extraction from conversations (needs the LLM). */
  readonly extraction: ExtractionService
  /** The key of secrets at rest and where it came from (`keyFile` undefined: from config, or ephemeral for memory://). */
  readonly secrets: SecretKeyring
  /** API tokens (the server's authentication). */
  readonly tokens: TokenService
  /** Status, tokens by role, reown and backups, each checked against the role table (`/api/status`, `/api/tokens`, the dashboard's Tokens page). */
  readonly admin: AdminService
  /** The dashboard's sign-in sessions (server-side ids for API tokens). */
  readonly sessions: SessionService
  /** Reveals a secret to a person (the dashboard's reveal), recorded in the audit of secret reads. */
  readonly reveal: SecretReveal
  /** Agent contexts (seed 004), goal trees with knowledge focus (seed 003), compaction. */
  readonly agent: AgentService
  /** Forgetting a user and retention purges (issue 31; checked against the role table). */
  readonly erasure: ErasureService
  /** Users' profiles, current view (checked against the role table). */
  readonly users: UsersService
  /** The Prometheus registry this hub reports to (`GET /metrics`), when the opener gave one. */
  readonly metrics: HubMetrics | undefined
  /** Where the data is, which embedder, how many entries (`knowhub status`). */
  status(): Promise<HubStatus>
  close(): Promise<void>
}

/** What a caller may put in place of the configured parts (tests, the evaluation). */
export interface OpenDeps {
  logger?: Logger
  clock?: Clock
  fetch?: typeof fetch
  /** An embedder to use instead of the configured one (closed with the hub). */
  embedder?: Embedder
  /** Told the progress of the `local` embedder's opt-in model download (the CLI's progress bar). */
  onModelDownload?: EmbedderDeps['onDownload']
  /** Search tuning beyond the config (the evaluation's fusion and caches). */
  search?: SearchOptions
  /** Where `hub.packs` looks: discovery flags over the `packs` config (default: the current folder and your home), or `false` for none. */
  packs?: PackSource
  /** An LLM provider to use instead of the configured one (tests, benchmarks). */
  llm?: LlmProvider
  /** First backoff delay of the configured LLM's retries in ms (default 500). */
  llmRetryBaseDelayMs?: number
  /**
   * Start loading the embedder's model at once, beside opening the database, for a caller
   * that will embed soon (a server, a search); a failure is logged and the first embed retries.
   * The texts to embed, when known (a search's query), spare a model none of them needs.
   */
  warmEmbedder?: boolean | readonly string[]
  /**
   * A Prometheus registry (`createMetrics` of ./metrics.ts) that the search, the embedder, the
   * LLM provider and the PostgreSQL pool report to; a server serves it at `GET /metrics`.
   */
  metrics?: HubMetrics
}

/** The configured chat model, its token usage added to the store's counters; undefined without `llm`. */
function buildLlm(config: KnowHubConfig, store: Store, logger: Logger, deps: OpenDeps): LlmProvider | undefined {
  if (!config.llm) return undefined
  const now = (): Date => (deps.clock ?? { now: () => new Date() }).now()
  return createOpenAIChat(config.llm, {
    logger,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.llmRetryBaseDelayMs !== undefined ? { retryBaseDelayMs: deps.llmRetryBaseDelayMs } : {}),
    onUsage: (usage) => store.llmUsage.add(usage, now()),
    ...(deps.metrics ? { onCall: deps.metrics.llmCall } : {}),
  })
}

/**
 * Opens KnowHub: store (embedded PGlite in `dataDir`, or PostgreSQL at `databaseUrl`),
 * the configured embedder and every service.
 * @example
 * const hub = await openKnowHub({ dataDir: '.knowhub' })
 * await hub.knowledge.search({ q: 'selenium login' }, hub.config.principal)
 * await hub.close()
 */
export async function openKnowHub(config: unknown = {}, deps: OpenDeps = {}): Promise<KnowHub> {
  const parsed = parseWith(KnowHubConfig, config, 'configuration')
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ? { clock: deps.clock } : {}
  const secrets = openKeyring({ key: parsed.secrets.key, keyFile: parsed.secrets.keyFile, dataDir: parsed.dataDir, logger })
  const { metrics } = deps
  const configured =
    deps.embedder ??
    (await createEmbedder(parsed.embedder, {
      logger,
      modelCacheDir: join(parsed.dataDir, 'models'),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(deps.onModelDownload ? { onDownload: deps.onModelDownload } : {}),
    }))
  const embedder = metrics ? metrics.instrumentEmbedder(configured) : configured
  if (deps.warmEmbedder) {
    const texts = deps.warmEmbedder === true ? undefined : deps.warmEmbedder
    embedder.warmUp?.(texts).catch((error: Error) => logger.warn('embedder.warmup_failed', { message: error.message }))
  }
  const fulltext = parsed.search.fulltext === 'auto' ? undefined : parsed.search.fulltext
  const store = await openStore({
    dataDir: parsed.dataDir,
    ...(parsed.databaseUrl ? { databaseUrl: parsed.databaseUrl } : {}),
    ...(fulltext ? { fulltext } : {}),
    ...(parsed.embedded.sharedBuffers ? { sharedBuffers: parsed.embedded.sharedBuffers } : {}),
    ...(parsed.replicas.urls.length > 0 ? { replicas: parsed.replicas } : {}),
    logger,
  })
  try {
    const secretBox = await openSecretBox(store, secrets.key, {
      readOnly: parsed.secrets.readOnly,
      keySource: secrets.source === 'config' ? 'KNOWHUB_SECRET_KEY' : secrets.source === 'file' ? `key file ${secrets.keyFile}` : 'an ephemeral key',
      logger,
    })
    const llm = deps.llm ?? buildLlm(parsed, store, logger, deps)
    // What the learning loop keeps: only what its source supports (issue 43).
    const grounding = groundingOptions(parsed.llm?.grounding, embedder)
    if (metrics && llm) metrics.watchLlm(llm)
    const pool = store.db.pool?.bind(store.db)
    if (metrics && pool) metrics.watchPool(pool)
    if (metrics && store.replicas) metrics.watchReplicas(store.replicas.stats)
    const knowledge = await createKnowledgeService({
      store,
      embedder,
      logger,
      maxContentBytes: parsed.maxContentBytes,
      searchCacheSize: parsed.search.cacheSize,
      routing: {
        mode: parsed.search.routing,
        shortlist: parsed.search.routingShortlist,
        timeoutMs: parsed.search.routingTimeoutMs,
        cacheSize: parsed.search.routingCacheSize,
      },
      llm,
      grounding,
      ...(parsed.search.minSimilarity !== undefined ? { minSimilarity: parsed.search.minSimilarity } : {}),
      whileModelLoads: parsed.search.whileModelLoads === 'full-text' ? 'full-text' : 'wait',
      queryEmbedTimeoutMs: parsed.search.queryEmbedTimeoutMs,
      whenEmbedderFails: parsed.search.whenEmbedderFails,
      ...(parsed.search.neighbours ? { neighbours: DEFAULT_NEIGHBOUR_LIFT } : {}),
      ...(metrics ? { observer: metrics.search } : {}),
      ...deps.search,
      ...clock,
    })
    const resources = createResourceService({ store, secrets: secretBox, logger, ...clock })
    const packs = openPacks(parsed, { ...(deps.packs === undefined ? {} : { source: deps.packs }), embedder, logger, ...clock })
    const extraction = createExtractionService({ knowledge, resources, store, llm, grounding, logger, ...clock })
    // On a shared PostgreSQL another KnowHub server may revoke a token: remember verified
    // tokens for 250 ms only, so a revocation holds everywhere well within a second (docs/scale.md).
    const tokens = createTokenService({ db: store.db, logger, ...(parsed.databaseUrl ? { cacheTtlMs: 250 } : {}), ...clock })
    const version = packageVersion()
    const hub: KnowHub = {
      config: parsed,
      version,
      store,
      embedder,
      llm,
      knowledge,
      slim: createSlimService({ store, embedder, logger, maxContentBytes: parsed.maxContentBytes, llm, grounding, ...clock }),
      resources,
      extraction,
      packs,
      secrets,
      tokens,
      erasure: erasureService({ store, knowledge, tokens, logger, ...clock }),
      users: usersService({ store, tokens, ...clock }),
      admin: createAdminService({ status: () => hub.status(), tokens, knowledge, store, resources, version }),
      sessions: createSessionService({ db: store.db, tokens }),
      reveal: createSecretReveal({ resources }),
      // Compaction summarises with the hub's LLM and extracts from the compacted span with the extraction service.
      agent: createAgentService({
        store,
        knowledge,
        packs,
        llm,
        extract: (input, principal) => extraction.extract(input, principal),
        config: parsed.agent,
        logger,
        ...clock,
      }),
      metrics,
      status: () => hubStatus(hub),
      async close() {
        await store.close()
        await embedder.close?.()
      },
    }
    return hub
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
}
