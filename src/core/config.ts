import { z } from 'zod'
import { EmbedConventionConfig } from './embed-convention.js'
import { LLM_TASKS, StructuredFormat } from './llm.js'
import { Owner, Permission, Principal, Scope } from './principal.js'

/** Which embedding provider to use. */
export const EmbedderConfig = z.discriminatedUnion('provider', [
  z.object({
    provider: z.literal('sentence'),
    /**
     * The offline default: Universal Sentence Encoder lite (English, weights shipped in an npm
     * package) concatenated with the hashed n-gram vector; CJK text gets the n-gram part only.
     * Size of the hashed part: the vector has 512 more numbers.
     */
    hashedDimension: z.number().int().min(64).max(4096).default(512),
    /** Share of an English cosine that comes from USE lite, 0 to 1. */
    semanticWeight: z.number().min(0).max(1).default(0.7),
    /**
     * Threads that run USE lite, each with its own copy of the model (~30 MB); imports and
     * query embeddings spread over them. Default: the cores minus one, at least one.
     */
    threads: z.number().int().min(1).max(64).optional(),
  }),
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
    /**
     * Requests in flight at once when many texts are embedded (an import, a reindex): sized to the
     * model server's cores (docs/embeddings.md, "Speed"). Default 2.
     */
    concurrency: z.number().int().min(1).max(64).default(2),
    timeoutMs: z.number().int().positive().default(30_000),
    /**
     * How queries and documents differ for the model (docs/embeddings.md, "Queries and documents"):
     * `auto` (default) — KnowHub's table of known models (e5, nomic, bge…; an unknown model: none);
     * a name from that table; or `{ queryPrefix, documentPrefix }` / `{ queryInputType, documentInputType }`.
     */
    convention: EmbedConventionConfig.default('auto'),
  }),
  z.object({
    provider: z.literal('local'),
    /** Folder of a local ONNX sentence-embedding model (transformers.js layout). Give this or `model`. */
    path: z.string().min(1).optional(),
    /**
     * A model on a Hugging Face-compatible hub (`Xenova/multilingual-e5-small`), kept in
     * `<dataDir>/models/<org>/<name>`: downloaded on first use only with `download: true`.
     */
    model: z.string().min(1).optional(),
    /** Allows the one download of `model` (checksums checked, progress shown); refused by default (`--allow-download`). */
    download: z.boolean().default(false),
    /** The hub `model` is downloaded from (a mirror, or a local server). */
    hubUrl: z.url().default('https://huggingface.co'),
    /** The model's revision on the hub (a branch, tag or commit). */
    revision: z.string().min(1).default('main'),
    pooling: z.enum(['mean', 'cls']).default('mean'),
    /** As for `openai`, matched against the folder's name; input types do not apply (no server reads them). */
    convention: EmbedConventionConfig.default('auto'),
  }),
])
export type EmbedderConfig = z.output<typeof EmbedderConfig>

/**
 * The chat model of the learning features (docs/llm.md): any OpenAI-compatible endpoint
 * (OpenAI, OpenRouter, Ollama, vLLM, LM Studio). Without it those features answer
 * `llm_not_configured` and change nothing.
 * @example
 * LlmConfig.parse({ url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b', models: { routing: 'qwen2.5:3b' } })
 */
export const LlmConfig = z.object({
  /** API root, e.g. https://openrouter.ai/api/v1 or http://127.0.0.1:11434/v1 (`/chat/completions` is appended). */
  url: z.url(),
  /** The default model, e.g. `google/gemini-2.0-flash-001`. */
  model: z.string().min(1),
  /** Sent as `Authorization: Bearer …`; never logged, never in an error. */
  apiKey: z.string().min(1).optional(),
  /** A model per task, overriding `model`: routing, evolve, slim, extract, compact. */
  models: z.partialRecord(z.enum(LLM_TASKS), z.string().min(1)).default({}),
  /** Timeout of one request (default 60 s); routing has its own, shorter one (`search.routingTimeoutMs`). */
  timeoutMs: z.number().int().positive().default(60_000),
  /** Retries on timeouts, network errors, 429 and 5xx, with exponential backoff (default 2). */
  retries: z.number().int().min(0).max(10).default(2),
  /** Requests in flight at once, per process (default 4); more wait their turn. */
  concurrency: z.number().int().min(1).max(256).default(4),
  /**
   * How structured answers are asked for first (docs/llm.md): `json_schema` (the response format
   * with the schema), `json_object_schema` (JSON mode with the schema: llama.cpp's server),
   * `json_object` (JSON mode) or `text` (the schema in the prompt). An endpoint that refuses a form
   * is asked in the next one from then on (`knowhub status` says which). Either way the answer is
   * validated, with one repair request when it fails.
   */
  structuredOutput: StructuredFormat.default('json_schema'),
  /** Most tokens a model may answer per request (`max_tokens`; default 1024): a small model that rambles stops there. */
  maxTokens: z.number().int().min(16).max(131_072).default(1024),
  /**
   * Longest time one call of a feature may take, its retries, format fallbacks and repair request
   * included (default 120 s): then `llm_timeout`. `timeoutMs` caps each request within it.
   */
  callTimeoutMs: z.number().int().positive().default(120_000),
  /**
   * What the learning loop keeps (docs/llm.md, "Grounding"): an extracted, evolved or merged text
   * whose content words are less than `minCoverage` found in its source is not saved; with a
   * semantic embedding model, half that coverage and a similarity of `minSimilarity` suffice.
   */
  grounding: z.object({ minCoverage: z.number().min(0).max(1).default(0.6), minSimilarity: z.number().min(-1).max(1).default(0.85) }).prefault({}),
  /** Sampling temperature (default 0: the most repeatable answers). */
  temperature: z.number().min(0).max(2).default(0),
})
export type LlmConfig = z.output<typeof LlmConfig>

/** The HTTP server's settings (see docs/server.md). */
export const ServerConfig = z.object({
  /** Address to bind. Without any API token only loopback addresses are allowed. */
  host: z.string().min(1).default('127.0.0.1'),
  /** TCP port (0 picks a free one). */
  port: z.number().int().min(0).max(65535).default(8420),
  /** Largest accepted request body, in bytes (413 beyond). */
  bodyLimit: z
    .number()
    .int()
    .positive()
    .default(2 * 1_048_576),
  /** Sustained requests per second allowed per token (or for the local principal); 0 turns the limit off. */
  rateLimit: z.number().min(0).default(50),
  /** Requests a token may make at once above the sustained rate (token-bucket size). */
  rateBurst: z.number().int().min(1).default(200),
  /** On SIGTERM/SIGINT: how long requests in flight may take to finish before their connections are cut (ms). */
  shutdownTimeoutMs: z.number().int().min(0).default(10_000),
  /** Extra Host header values accepted in local mode (DNS-rebinding protection), e.g. `knowhub.local:8420`. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Reverse proxies (addresses or CIDR ranges, e.g. `127.0.0.1`, `10.0.0.0/8`) whose `X-Forwarded-For` names the client; none by default. */
  trustedProxies: z.array(z.string().min(1)).default([]),
})
export type ServerConfig = z.output<typeof ServerConfig>

/** How searches run (see docs/retrieval.md). */
export const SearchConfig = z.object({
  /**
   * Where full-text search runs: `memory` (an in-memory BM25 index of the embedded database,
   * built on the first search and kept in step with the table), `sql` (BM25 in SQL), or
   * `auto`: `memory` for long-running processes on the embedded database (`knowhub start`,
   * `knowhub mcp`, the library), `sql` for one-shot CLI commands and PostgreSQL servers. On a
   * PostgreSQL server `memory` is an option (issue 32): full text from the in-memory index, kept
   * current from the change log across processes, vectors from pgvector; it costs the process
   * about 1.5 GB per million entries (docs/scale.md), so it is never chosen by `auto`.
   */
  fulltext: z.enum(['auto', 'memory', 'sql']).default('auto'),
  /** Search responses kept while the knowledge table is unchanged (0: off). Embedded database only. */
  cacheSize: z.number().int().min(0).max(100_000).default(1000),
  /**
   * Candidates found only by vector similarity are dropped below this cosine similarity.
   * Default: the embedder's measured floor (`sentence` 0.3, `hashed` 0.2 at 512 dimensions;
   * none for `openai` and `local`, whose models KnowHub cannot calibrate).
   */
  minSimilarity: z.number().min(-1).max(1).optional(),
  /**
   * Semantic routing (seed 003, stage 1): `llm` lets the LLM pick 2×top_k candidates from a
   * hybrid shortlist (id, types, first 100 characters of task); `off` (default) keeps the
   * hybrid order. A request may override it (`routing=llm|off`). Needs `llm`.
   */
  routing: z.enum(['off', 'llm']).default('off'),
  /** How many hybrid candidates the routing model sees (default 50). */
  routingShortlist: z.number().int().min(1).max(500).default(50),
  /** How long a search waits for the routing model before it keeps the hybrid order (default 3000 ms). */
  routingTimeoutMs: z.number().int().positive().default(3000),
  /** Routing decisions kept while the knowledge table is unchanged (0: off). */
  routingCacheSize: z.number().int().min(0).max(100_000).default(1000),
  /**
   * A hybrid search while the embedder's model is still loading (the sentence embedder's, about
   * 1-2 s after start): `full-text` answers from the full-text list alone at once and says so
   * (`vectors: { status: 'skipped', reason: 'embedder_loading' }`); `wait` waits for the model.
   * `auto` (default): `full-text` for `knowhub start`, `wait` everywhere else (the library,
   * `knowhub mcp`, one-shot commands). `/healthz` reports `embedder: loading | ready`.
   */
  whileModelLoads: z.enum(['auto', 'full-text', 'wait']).default('auto'),
  /**
   * Dialogue neighbours (docs/retrieval-log.md, "Dialogue neighbours"): for a store of raw dialogue
   * turns, where the entry after a matched turn in its trace (`source.trace_id`) is often the
   * other speaker's answer, `true` lets the best candidates lift the entries before and after
   * them. Off by default: in a hub, entries that share a trace are separate pieces of knowledge.
   */
  neighbours: z.boolean().default(false),
  /**
   * How long a search waits for its query's embedding from a model server (`openai`, `local`; ms,
   * default 5000). Past it, or when the server fails, the search follows `whenEmbedderFails`.
   */
  queryEmbedTimeoutMs: z.number().int().positive().max(600_000).default(5000),
  /**
   * A hybrid search whose query embedding fails or times out: `full-text` (default) answers from
   * the full-text list alone and says so (`vectors: { status: 'skipped', reason: 'embedder_unavailable' }`,
   * never cached); `error` answers `embedder_failed`.
   */
  whenEmbedderFails: z.enum(['full-text', 'error']).default('full-text'),
})
export type SearchConfig = z.output<typeof SearchConfig>

/**
 * Who may see the packs under one folder on a server (`knowhub start`: HTTP, `/mcp`, the
 * dashboard). A pack under `root` (the longest matching root decides) is shown only to a
 * principal holding one of the `allow` scopes (`user:ID`, `org:ID`, `team:ID`, `project:ID`,
 * `agent:ID`; `public`: every principal) and, when set, `permission`. To anyone else it does
 * not exist (`not_found`, absent from the catalog). Packs under no rule are every principal's.
 * @example
 * PackAccessRule.parse({ root: '/srv/packs/acme', allow: ['org:acme', 'user:bob'] })
 */
export const PackAccessRule = z.strictObject({
  /** A pack folder (absolute, or relative to the server's working folder). */
  root: z.string().min(1),
  /** Scopes that see the packs under `root`; `public`: every principal. */
  allow: z.array(Scope).min(1),
  /** A permission the principal must also hold (e.g. `admin`). */
  permission: Permission.optional(),
})
export type PackAccessRule = z.output<typeof PackAccessRule>

/**
 * Knowledge packs for `knowhub packs`, `knowhub mcp` and `knowhub start` (see
 * docs/packs.md). The defaults are the discovery defaults; command-line flags win.
 * @example
 * PacksConfig.parse({ paths: ['/shared/packs'], allowedTypes: ['site-rules'] })
 */
export const PacksConfig = z.object({
  /** Extra pack folders, scanned after the project and user scopes, in precedence order. */
  paths: z.array(z.string().min(1)).default([]),
  /** A built-in pack folder, lowest precedence. */
  builtinDir: z.string().min(1).optional(),
  /** Non-standard pack `type` values to accept (`*` accepts all). */
  allowedTypes: z.array(z.string().min(1)).default([]),
  /** Client-native folder name: `.<clientName>/knowledge` beside `.agents/knowledge`. */
  clientName: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u, 'letters, digits, dot, dash and underscore only')
    .default('knowhub'),
  /** Deepest folder level scanned below each location. */
  maxDepth: z.number().int().min(0).max(64).default(6),
  /** Most folders scanned per location. */
  maxDirs: z.number().int().min(1).default(2000),
  /** Skip folders ignored by .gitignore files (from the project folder down). */
  respectGitignore: z.boolean().default(false),
  /** Folder where `knowhub packs resolve` appends usage records (`knowledge-usage.jsonl`); none when unset. */
  logDir: z.string().min(1).optional(),
  /** Also append usage records to each pack's `runs/usage.jsonl`. */
  useRunsDir: z.boolean().default(false),
  /** Trust gate: project packs need `knowhub packs approve NAME` (recorded per digest) before activation or resolution. */
  requireApproval: z.boolean().default(false),
  /** Where enable/disable choices and approvals are kept (default `<dataDir>/packs-state.json`). */
  stateFile: z
    .string()
    .min(1)
    .optional() /** Who sees which pack roots through the server (default: every principal sees every pack). See {@link PackAccessRule}. */,
  access: z.array(PackAccessRule).default([]),
})
export type PacksConfig = z.output<typeof PacksConfig>

/**
 * Defaults the agent tools fill in when the model leaves a parameter out, for `knowhub mcp`
 * (stdio) and `/mcp` on `knowhub start`; `knowhub mcp`'s `--scope`, `--owner`, `--agent-id`
 * and `--submitted-by` win. Unset values fall back to the server's defaults (scopes: the
 * caller's own user scope; owner: the caller). See docs/mcp.md.
 * @example
 * ToolsConfig.parse({ scopes: ['project:app'], agentId: 'coder' })
 */
export const ToolsConfig = z.object({
  /** Scopes of saved entries and resources. */
  scopes: z.array(Scope).min(1).optional(),
  /** Owner of saved entries and resources (`kind:id`). */
  owner: Owner.optional(),
  /** `source.agent_id` of saved entries (`knowhub mcp` falls back to KNOWHUB_AGENT). */
  agentId: z.string().min(1).optional(),
  /** `source.submitted_by` of saved entries. */
  submittedBy: z.string().min(1).optional(),
})
export type ToolsConfig = z.output<typeof ToolsConfig>

/**
 * The agent context (seed 004): where agents live, the language of the shipped defaults,
 * the token budget of an assembly, the compaction threshold and the file size limit.
 */
export const AgentConfig = z.object({
  /** The agent home (each agent in `<home>/<name>/`); default `~/.agent`. */
  home: z.string().min(1).optional(),
  /** Language of the default template, self-awareness file and labels. */
  language: z.enum(['en', 'zh']).default('en'),
  /** Token budget of an assembled context when the caller gives none. */
  budget: z.number().int().min(1).max(2_000_000).default(16_000),
  /** Tokens of history past which `compact` summarises the older part (seed 004: 70k). */
  compactThreshold: z.number().int().min(100).default(70_000),
  /** Largest knowledge, template or memory file read (bytes). */
  maxFileBytes: z.number().int().positive().default(1_048_576),
  /** Most user-profile entries offered to the budget. */
  profileLimit: z.number().int().min(0).max(1000).default(50),
  /** Most task-related entries offered to the budget. */
  relatedLimit: z.number().int().min(0).max(50).default(5),
  /** A folder with `<language>/system_prompt.md` and `self_awareness.md` replacing the shipped defaults. */
  defaultsDir: z.string().min(1).optional(),
})
export type AgentConfig = z.output<typeof AgentConfig>

/**
 * KnowHub's configuration. Only entry points read env vars and files; they build
 * this object and pass it (or parts of it) down.
 */
/** The embedded database (PGlite). */
export const EmbeddedConfig = z.object({
  /**
   * PostgreSQL's `shared_buffers` for the embedded database, e.g. `64MB`. Default: `16MB` (a
   * server answers searches from its in-memory indexes; one-shot commands read a few pages).
   */
  sharedBuffers: z
    .string()
    .regex(/^[1-9][0-9]*(kB|MB|GB)$/u, 'a size such as 16MB, 512kB or 1GB')
    .optional(),
})
export type EmbeddedConfig = z.output<typeof EmbeddedConfig>

export const ReplicasConfig = z.object({
  /** Connection strings of the replicas (`DATABASE_REPLICA_URLS`, comma-separated); none by default. Needs `databaseUrl`. */
  urls: z.array(z.string().min(1)).default([]),
  /** A replica further behind the primary than this (ms) is skipped; a caller's reads wait for its writes at most this long plus two polls. */
  maxLagMs: z.number().int().positive().default(5_000),
  /** How often the primary and each replica are polled for their WAL positions (ms): one statement each, not one per request. */
  pollMs: z.number().int().min(10).max(60_000).default(250),
})
export type ReplicasConfig = z.output<typeof ReplicasConfig>

export const KnowHubConfig = z.object({
  /** Folder of the embedded database and other local state. */
  dataDir: z.string().default('.knowhub'),
  /** When set, a PostgreSQL server is used instead of the embedded database. */
  databaseUrl: z.string().optional(),
  /** The embedded database's settings (ignored with `databaseUrl`). */
  embedded: EmbeddedConfig.default({}),
  /** Streaming replicas of the `databaseUrl` server for searches, lists and reads (docs/scale.md, "Read replicas"). */
  replicas: ReplicasConfig.default({ urls: [], maxLagMs: 5_000, pollMs: 250 }),
  /** The embedder; default `sentence` (offline, see docs/embeddings.md). `hashed` is the lighter offline choice. */
  embedder: EmbedderConfig.default({ provider: 'sentence', hashedDimension: 512, semanticWeight: 0.7 }),
  /**
   * Key of the secrets at rest (resources' secure_body, AES-256-GCM): `key` is 32 bytes in
   * base64 or hex; otherwise `keyFile` (default `<dataDir>/secret.key`, created with mode 0600).
   * KnowHub refuses to start when stored secrets were encrypted with another key, unless
   * `readOnly` (`KNOWHUB_SECRETS_READ_ONLY=1`): then every secret write is refused instead.
   * Never print this part of the config.
   */
  secrets: z
    .object({ key: z.string().min(1).optional(), keyFile: z.string().min(1).optional(), readOnly: z.boolean().default(false) })
    .default({ readOnly: false }),
  /** The principal used by the CLI and by the server in local mode. */
  // The local principal is the hub operator (src/auth/policy.ts): it runs the hub on its machine.
  principal: Principal.default({ user: 'local', permissions: ['read', 'write', 'secrets:read', 'admin', 'hub:admin'] }),
  /** Largest accepted entry content, in bytes. */
  maxContentBytes: z.number().int().positive().default(1_048_576),
  /** How searches run. */
  search: SearchConfig.default(SearchConfig.parse({})),
  /** The HTTP server (`knowhub start`). */
  server: ServerConfig.default(ServerConfig.parse({})),
  /** Knowledge packs: extra folders, accepted types, scan limits, usage logs. */
  packs: PacksConfig.default(PacksConfig.parse({})),
  /** Defaults of the agent tools (MCP over stdio and HTTP): scopes, owner, agentId, submittedBy. */
  tools: ToolsConfig.default({}),
  /** The chat model of routing, evolve, slim, extraction and compaction (absent: those answer `llm_not_configured`). Never print `llm.apiKey`. */
  llm: LlmConfig.optional(),
  /** The agent context: home, language, budget, compaction threshold. */
  agent: AgentConfig.default(AgentConfig.parse({})),
})
export type KnowHubConfig = z.output<typeof KnowHubConfig>
