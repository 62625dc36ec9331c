/**
 * The Prometheus metrics of a server (`GET /metrics`), with prom-client (the Prometheus
 * client for Node that the Prometheus project lists; its default collectors give process
 * memory, CPU, event-loop lag and garbage collection). One registry per process, built by
 * the entry point that serves it and handed to the composition root, which passes the
 * parts down: an observer to the search, a hook to the LLM provider, a wrapper around the
 * embedder, and collectors that read the pool and the LLM totals at scrape time. Nothing
 * here is global: two hubs in one process (tests) keep their own figures.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { LlmCallObservation, SearchObserver } from '../core/observe.js'
import type { Embedder } from '../embed/embedder.js'
import type { EmbedPoolStats } from '../embed/use-pool.js'
import type { LlmProvider } from '../llm/index.js'
import type { PoolUse } from '../store/database.js'
import type { ReplicaStats } from '../store/replicas.js'

/** Buckets of request and stage durations, in seconds: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** LLM calls take longer: 50 ms to 2 min. */
const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

/** What the HTTP layer reports of each request. */
export interface HttpObserver {
  /** `route` is the matched route pattern (`/api/knowledge/:id`), never the raw path. */
  request(method: string, route: string, status: number, seconds: number): void
}

/** One registry and the observers that feed it. */
export interface HubMetrics {
  readonly registry: Registry
  readonly http: HttpObserver
  readonly search: SearchObserver
  /** For the LLM provider's `onCall`. */
  llmCall(call: LlmCallObservation): void
  /** The embedder, counting its calls in flight and their durations. */
  instrumentEmbedder(embedder: Embedder): Embedder
  /** Reads the provider's usage totals (calls, failures, tokens by task and model) at every scrape. */
  watchLlm(llm: LlmProvider): void
  /** Reads the PostgreSQL pool's use at every scrape. */
  watchPool(pool: () => PoolUse): void
  /** Reads the read replicas' routing figures at every scrape (`store.replicas.stats`). */
  watchReplicas(stats: () => ReplicaStats): void
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>
}

type Registers = Registry[]

/** A gauge recomputed at each scrape from every registered source (a source that answers undefined has nothing to show). */
function sourcedGauge<S>(registers: Registers, sources: ReadonlyArray<() => S | undefined>) {
  return (name: string, help: string, labelNames: readonly string[], fill: (gauge: Gauge, stats: S) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset()
        for (const read of sources) {
          const stats = read()
          if (stats !== undefined) fill(this, stats)
        }
      },
    })
}

/** Requests by method, route pattern and status, and their durations. */
function httpMetrics(registers: Registers): HttpObserver {
  const requests = new Counter({
    name: 'knowhub_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  })
  const requestSeconds = new Histogram({
    name: 'knowhub_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (to the response headers), by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })
  return {
    request(method, route, status, seconds) {
      const labels = { method, route, status: String(status) }
      requests.inc(labels)
      requestSeconds.observe(labels, seconds)
    },
  }
}

/** The search's stages and its response cache. */
function searchMetrics(registers: Registers): SearchObserver {
  const stageSeconds = new Histogram({
    name: 'knowhub_search_stage_duration_seconds',
    help: 'Stages of a computed search: fulltext and vector candidate lists, embed (query embedding), rank (records, rerank), total',
    labelNames: ['stage'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const cache = new Counter({
    name: 'knowhub_search_cache_total',
    help: 'Searches by response-cache outcome: hit, miss (computed), bypass (no cache: PostgreSQL, or turned off)',
    labelNames: ['outcome'] as const,
    registers,
  })
  return { stage: (stage, seconds) => stageSeconds.observe({ stage }, seconds), cache: (outcome) => cache.inc({ outcome }) }
}

/** LLM request durations (`llmCall`) and the providers' usage totals read at each scrape (`watchLlm`). */
function llmMetrics(registers: Registers): Pick<HubMetrics, 'llmCall' | 'watchLlm'> {
  const llmSeconds = new Histogram({
    name: 'knowhub_llm_request_duration_seconds',
    help: 'Duration of an LLM request (retries included), by task, model and outcome',
    labelNames: ['task', 'model', 'outcome'] as const,
    buckets: LLM_BUCKETS,
    registers,
  })
  const llms: LlmProvider[] = []
  const llmTotal = (name: string, help: string, field: 'calls' | 'failures' | 'prompt_tokens' | 'completion_tokens') =>
    new Gauge({
      name,
      help,
      labelNames: ['task', 'model'] as const,
      registers,
      // Gauges set from the provider's own totals (which only grow): `rate()` works as on a counter.
      collect() {
        this.reset()
        for (const llm of llms) for (const usage of llm.usage()) this.inc({ task: usage.task, model: usage.model }, usage[field])
      },
    })
  llmTotal('knowhub_llm_calls_total', 'LLM requests answered or failed, by task and model', 'calls')
  llmTotal('knowhub_llm_failures_total', 'LLM calls that failed (after retries) or gave an unusable answer, by task and model', 'failures')
  llmTotal('knowhub_llm_prompt_tokens_total', 'Prompt tokens the LLM counted, by task and model', 'prompt_tokens')
  llmTotal('knowhub_llm_completion_tokens_total', 'Completion tokens the LLM counted, by task and model', 'completion_tokens')
  return {
    llmCall(call) {
      llmSeconds.observe({ task: call.task, model: call.model, outcome: call.failed ? 'failure' : 'success' }, call.seconds)
    },
    watchLlm: (llm) => void llms.push(llm),
  }
}

/** The embedding model's thread pool, read at each scrape; registered with the first embedder that has one. */
function embedThreadMetrics(registers: Registers): (stats: () => EmbedPoolStats | undefined) => void {
  const threadPools: Array<() => EmbedPoolStats | undefined> = []
  const threadGauge = sourcedGauge(registers, threadPools)
  return (stats) => {
    if (threadPools.push(stats) > 1) return
    threadGauge(
      'knowhub_embed_threads',
      "The embedding model's threads: configured (the pool's size), running, busy (embedding a batch)",
      ['state'],
      (gauge, s) => {
        gauge.inc({ state: 'configured' }, s.size)
        gauge.inc({ state: 'running' }, s.running)
        gauge.inc({ state: 'busy' }, s.threads.filter((t) => t.busy).length)
      },
    )
    threadGauge(
      'knowhub_embed_queued_batches',
      'Batches of texts waiting for an embedding thread, by lane (query: calls of at most 4 texts; bulk)',
      ['lane'],
      (gauge, s) => {
        gauge.inc({ lane: 'query' }, s.queued.query)
        gauge.inc({ lane: 'bulk' }, s.queued.bulk)
      },
    )
    threadGauge('knowhub_embed_thread_texts', 'Texts each running embedding thread has embedded (warm-ups not counted)', ['thread'], (gauge, s) => {
      for (const t of s.threads) gauge.set({ thread: String(t.threadId) }, t.texts)
    })
    threadGauge('knowhub_embed_thread_busy_seconds', "Each running embedding thread's busy time (its event loop's active time)", ['thread'], (gauge, s) => {
      for (const t of s.threads) gauge.set({ thread: String(t.threadId) }, t.activeMs / 1000)
    })
    threadGauge('knowhub_embed_threads_replaced_total', 'Embedding threads that died and were replaced', [], (gauge, s) => gauge.inc(s.replaced))
  }
}

/** Embedding calls in flight, texts and durations: `instrumentEmbedder` wraps an embedder's `embed`. */
function embedMetrics(registers: Registers): HubMetrics['instrumentEmbedder'] {
  const embedInFlight = new Gauge({ name: 'knowhub_embed_in_flight', help: 'Embedding calls started and not finished (the embedding queue)', registers })
  const embedTexts = new Counter({ name: 'knowhub_embed_texts_total', help: 'Texts embedded', registers })
  const embedSeconds = new Histogram({
    name: 'knowhub_embed_duration_seconds',
    help: 'Duration of an embedding call (a batch of texts), waiting included',
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const watchEmbedThreads = embedThreadMetrics(registers)
  return (embedder) => {
    if (embedder.poolStats) watchEmbedThreads(() => embedder.poolStats?.())
    const embed: Embedder['embed'] = async (texts, embedOptions) => {
      embedInFlight.inc()
      const stop = embedSeconds.startTimer()
      try {
        const vectors = await embedder.embed(texts, embedOptions)
        embedTexts.inc(texts.length)
        return vectors
      } finally {
        stop()
        embedInFlight.dec()
      }
    }
    // Every other member (optional methods included, absent ones stay absent) is the embedder's own.
    return new Proxy(embedder, {
      get(target, property) {
        if (property === 'embed') return embed
        const value: unknown = Reflect.get(target, property, target)
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
      },
    })
  }
}

/** The PostgreSQL pool's use, read at each scrape; registered with the first pool (an embedded database has none, and shows no pool series). */
function poolMetrics(registers: Registers): HubMetrics['watchPool'] {
  const pools: Array<() => PoolUse> = []
  const poolGauge = (name: string, help: string, read: (use: PoolUse) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(pools.reduce((sum, pool) => sum + read(pool()), 0))
      },
    })
  return (pool) => {
    if (pools.push(pool) > 1) return
    poolGauge('knowhub_db_pool_connections', 'PostgreSQL connections open in the pool', (u) => u.total)
    poolGauge('knowhub_db_pool_idle', 'PostgreSQL connections idle in the pool', (u) => u.idle)
    poolGauge('knowhub_db_pool_waiting', 'Queries waiting for a PostgreSQL connection', (u) => u.waiting)
    poolGauge('knowhub_db_pool_max', 'Size of the PostgreSQL pool', (u) => u.max)
  }
}

/** The read replicas' routing figures, read at each scrape; registered with the first router (without replicas, no replica series). */
function replicaMetrics(registers: Registers): HubMetrics['watchReplicas'] {
  const routers: Array<() => ReplicaStats> = []
  const replicaGauge = sourcedGauge(registers, routers)
  const perReplica = (name: string, help: string, value: (r: ReplicaStats['replicas'][number]) => number | undefined) =>
    replicaGauge(name, help, ['replica'], (gauge, s) => {
      for (const r of s.replicas) {
        const v = value(r)
        if (v !== undefined) gauge.set({ replica: r.name }, v)
      }
    })
  return (stats) => {
    if (routers.push(stats) > 1) return
    // Gauges set from the router's own totals (which only grow): `rate()` works as on a counter.
    replicaGauge(
      'knowhub_db_reads_total',
      'Reads that may use a replica (searches, lists, gets), by where they went (a replica, or primary) and why',
      ['target', 'reason'],
      (gauge, s) => {
        for (const r of s.replicas) gauge.inc({ target: r.name, reason: 'replica' }, r.reads)
        for (const [reason, n] of Object.entries(s.primaryReads)) gauge.inc({ target: 'primary', reason }, n)
      },
    )
    perReplica('knowhub_replica_up', 'The replica answered its last poll as a standby (1) or not (0)', (r) => (r.up ? 1 : 0))
    perReplica('knowhub_replica_usable', 'The replica takes reads now: up and within the lag bound (1) or skipped (0)', (r) => (r.usable ? 1 : 0))
    perReplica(
      'knowhub_replica_lag_seconds',
      "How far the replica is behind the primary, in time (from the primary's WAL positions at each poll)",
      (r) => r.lagSeconds,
    )
    perReplica('knowhub_replica_lag_bytes', 'WAL bytes the replica has not replayed of what the primary had flushed at the last poll', (r) => r.lagBytes)
    perReplica('knowhub_replica_replay_paused', 'WAL replay is paused on the replica (pg_wal_replay_pause)', (r) => (r.paused ? 1 : 0))
    replicaGauge(
      'knowhub_replica_skipped_total',
      "Reads that passed a replica over, by reason: down (or not a standby), lagging (past the bound), behind_caller (has not replayed the caller's last write)",
      ['replica', 'reason'],
      (gauge, s) => {
        for (const r of s.replicas) for (const [reason, n] of Object.entries(r.skipped)) gauge.inc({ replica: r.name, reason }, n)
      },
    )
    replicaGauge(
      'knowhub_replica_pending_callers',
      'Callers whose last write a replica has not replayed yet (their reads stay on the primary)',
      [],
      (gauge, s) => {
        gauge.inc(s.pendingCallers)
      },
    )
  }
}

/**
 * A registry with the process's default metrics (prefixed `knowhub_`) and KnowHub's own: one
 * part per source (HTTP, search, LLM, embedder, pool, replicas), each registering its series.
 * @example
 * const metrics = createMetrics()
 * const hub = await openKnowHub(config, { metrics })
 * const server = await startServer({ hub }) // GET /metrics
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): HubMetrics {
  const registry = new Registry()
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'knowhub_' })
  const registers = [registry]
  const http = httpMetrics(registers)
  const search = searchMetrics(registers)
  const instrumentEmbedder = embedMetrics(registers)
  const llm = llmMetrics(registers)
  return {
    registry,
    http,
    search,
    ...llm,
    instrumentEmbedder,
    watchPool: poolMetrics(registers),
    watchReplicas: replicaMetrics(registers),
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() }
    },
  }
}
