/**
 * The only place that reads environment variables: the ones KnowHub reads (documented in
 * `--help` and the README) and the CLI's own settings. Without the configuration schema, so that `--help` and commands
 * that run on a server never load it; config.ts builds the configuration from these.
 */
import { delimiter } from 'node:path'
import { KnowHubError } from '../core/errors.js'

/** Environment variables KnowHub reads (documented in the README). */
export const ENV_VARS = {
  KNOWHUB_CONFIG: 'path of a JSON config file (default: ./knowhub.config.json when present)',
  KNOWHUB_DATA_DIR: 'folder of the embedded database (default ./.knowhub)',
  DATABASE_URL: 'PostgreSQL connection string: use a server instead of the embedded database',
  DATABASE_REPLICA_URLS: 'comma-separated connection strings of streaming replicas of DATABASE_URL that take searches, lists and reads',
  KNOWHUB_REPLICA_MAX_LAG_MS: 'a replica further behind the primary than this is skipped (default 5000)',
  KNOWHUB_REPLICA_POLL_MS: 'how often the primary and the replicas are polled for their WAL positions (default 250)',
  KNOWHUB_SHARED_BUFFERS: 'shared_buffers of the embedded database, e.g. 64MB (default 16MB)',
  KNOWHUB_EMBEDDER: 'sentence (default, offline) | hashed (offline, lighter) | openai | local',
  KNOWHUB_EMBED_DIM: 'vector dimension (hashed: default 512; openai: requested dimensions)',
  KNOWHUB_EMBED_URL: 'OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1',
  KNOWHUB_EMBED_MODEL: 'embedding model name for the openai provider',
  KNOWHUB_EMBED_API_KEY: 'API key for the openai provider',
  KNOWHUB_EMBED_PATH: 'folder of a local ONNX model for the local provider (or KNOWHUB_EMBED_MODEL: a model on a hub, org/name)',
  KNOWHUB_EMBED_DOWNLOAD: 'local: 1 allows the one download of KNOWHUB_EMBED_MODEL into <data dir>/models, checksums checked (default: refused)',
  KNOWHUB_EMBED_HUB_URL: 'local: the Hugging Face-compatible hub to download from (default https://huggingface.co)',
  KNOWHUB_EMBED_CONVENTION:
    'how queries and documents differ for the openai or local model: auto (default: the table of known models) | none | e5 | e5-input-type | e5-instruct | nomic | bge-en | bge-zh',
  KNOWHUB_EMBED_QUERY_PREFIX: 'a prefix before every query (instead of KNOWHUB_EMBED_CONVENTION), e.g. "search_query: "',
  KNOWHUB_EMBED_DOCUMENT_PREFIX: 'a prefix before every stored text (instead of KNOWHUB_EMBED_CONVENTION), e.g. "search_document: "',
  KNOWHUB_EMBED_QUERY_INPUT_TYPE: 'openai: the input_type sent with queries (instead of a prefix), e.g. query',
  KNOWHUB_EMBED_DOCUMENT_INPUT_TYPE: 'openai: the input_type sent with stored texts (instead of a prefix), e.g. passage',
  KNOWHUB_EMBED_CONCURRENCY: "openai: embedding requests in flight at once during imports and reindex (default 2: the model server's cores)",
  KNOWHUB_EMBED_THREADS: "threads that run the sentence embedder's model (default: the cores minus one, at least one)",
  KNOWHUB_LLM_URL: 'OpenAI-compatible chat API root for routing, evolve, slim and extraction, e.g. https://openrouter.ai/api/v1',
  KNOWHUB_LLM_MODEL: 'the chat model, e.g. google/gemini-2.0-flash-001 (llm.models in the config file: one per task)',
  KNOWHUB_LLM_API_KEY: 'API key of the chat endpoint',
  KNOWHUB_USER: 'local principal: user id (default "local")',
  KNOWHUB_AGENT: 'local principal: agent id',
  KNOWHUB_PROJECT: 'local principal: project id',
  KNOWHUB_TEAM: 'local principal: team id',
  KNOWHUB_ORG: 'local principal: org id',
  KNOWHUB_SECRET_KEY: 'key of secrets at rest: 32 bytes as base64 or hex (default: the key file)',
  KNOWHUB_SECRET_KEY_FILE: 'key file of secrets at rest (default <data dir>/secret.key, created with mode 0600)',
  KNOWHUB_SECRETS_READ_ONLY: '1: start even when the stored secrets need another key, refusing every secret write (default: refuse to start)',
  KNOWHUB_LOG_LEVEL: 'debug | info | warn | error (default: error for one-shot commands, which report problems in words; warn for mcp; info for start)',
  KNOWHUB_LOG_FORMAT: 'json | pretty: log lines as JSON or for people (default: pretty on a terminal, JSON otherwise)',
  KNOWHUB_TIMING: '1: a command prints where its time went (start, open, model, command, close; wall and CPU ms) as one JSON line on stderr',
  KNOWHUB_HOST: 'server: address to listen on (default 127.0.0.1; others need an API token)',
  KNOWHUB_PORT: 'server: port (default 8420)',
  KNOWHUB_BODY_LIMIT: 'server: largest request body in bytes (default 2097152)',
  KNOWHUB_RATE_LIMIT: 'server: requests per second per token (default 50; 0 = off)',
  KNOWHUB_TRUSTED_PROXIES: 'server: reverse proxies (comma-separated addresses or CIDR ranges) whose X-Forwarded-For names the client',
  KNOWHUB_URL: 'a KnowHub server that one-shot commands and `knowhub mcp` run on (default: the server holding the data folder, if any)',
  KNOWHUB_TOKEN: 'the API token for KNOWHUB_URL',
  KNOWHUB_AGENT_HOME: 'the agent home: each agent in <home>/<name>/ (default ~/.agent)',
  KNOWHUB_PACK_PATHS: `extra knowledge-pack folders, separated by "${delimiter}" (before packs.paths of the config file)`,
  KNOWHUB_PACK_ACCESS:
    'server: who sees which pack folders, ROOT=SCOPE,SCOPE;ROOT=SCOPE (e.g. /srv/packs/acme=org:acme,user:bob; before packs.access of the config file)',
} as const

/** Environment variables by name. */
export type Env = Record<string, string | undefined>

/** The process environment: the one place that reads it. */
export function processEnv(): Env {
  return process.env
}

/** Settings of the CLI itself (not of the hub), from the environment. */
export interface CliEnv {
  /** KNOWHUB_LOG_LEVEL */
  logLevel: string | undefined
  /** KNOWHUB_TIMING=1 */
  timing: boolean
  /** KNOWHUB_LOG_FORMAT: json | pretty (undefined: decided by whether stderr is a terminal). */
  logFormat: 'json' | 'pretty' | undefined
  /** KNOWHUB_URL: a running KnowHub server to talk to. */
  url: string | undefined
  /** KNOWHUB_TOKEN: the API token for `url`. */
  token: string | undefined
  /** KNOWHUB_AGENT: the local principal's agent id. */
  agent: string | undefined
}

/**
 * The CLI's own settings from the environment.
 * @example
 * const { logLevel } = cliEnv()
 */
export function cliEnv(env: Env = process.env): CliEnv {
  return {
    logLevel: env.KNOWHUB_LOG_LEVEL || undefined,
    timing: env.KNOWHUB_TIMING === '1',
    logFormat: logFormat(env.KNOWHUB_LOG_FORMAT),
    url: env.KNOWHUB_URL || undefined,
    token: env.KNOWHUB_TOKEN || undefined,
    agent: env.KNOWHUB_AGENT || undefined,
  }
}

/** KNOWHUB_TIMING=1, read alone (before anything that may refuse a setting: the timing reports even a failed command). */
export function timingEnv(env: Env = process.env): boolean {
  return env.KNOWHUB_TIMING === '1'
}

/**
 * The environment of `knowhub start --workers` processes on top of the supervisor's: glibc's
 * malloc arenas bounded to 2 unless MALLOC_ARENA_MAX is set (docs/scale.md, Memory).
 */
export function workerEnv(env: Env = process.env): Record<string, string> {
  return { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || '2' }
}

function logFormat(value: string | undefined): 'json' | 'pretty' | undefined {
  if (!value) return undefined
  if (value === 'json' || value === 'pretty') return value
  throw new KnowHubError('config_error', `KNOWHUB_LOG_FORMAT must be json or pretty, got "${value}"`)
}
