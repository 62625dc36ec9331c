/**
 * The only place that reads environment variables and the config file. It
 * builds a KnowHubConfig and hands it to the composition root.
 */
import { readFileSync, existsSync } from 'node:fs'
import { delimiter } from 'node:path'
import { KnowHubError } from '../core/errors.js'
import { KnowHubConfig } from '../core/config.js'
import { parseWith, type ValidationIssue } from '../core/validate.js'

/** Environment variables KnowHub reads (documented in the README). */
export const ENV_VARS = {
  KNOWHUB_CONFIG: 'path of a JSON config file (default: ./knowhub.config.json when present)',
  KNOWHUB_DATA_DIR: 'folder of the embedded database (default ./.knowhub)',
  DATABASE_URL: 'PostgreSQL connection string: use a server instead of the embedded database',
  KNOWHUB_EMBEDDER: 'sentence (default, offline) | hashed (offline, lighter) | openai | local',
  KNOWHUB_EMBED_DIM: 'vector dimension (hashed: default 512; openai: requested dimensions)',
  KNOWHUB_EMBED_URL: 'OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1',
  KNOWHUB_EMBED_MODEL: 'embedding model name for the openai provider',
  KNOWHUB_EMBED_API_KEY: 'API key for the openai provider',
  KNOWHUB_EMBED_PATH: 'folder of a local ONNX model for the local provider',
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
  KNOWHUB_HOST: 'server: address to listen on (default 127.0.0.1; others need an API token)',
  KNOWHUB_PORT: 'server: port (default 8420)',
  KNOWHUB_BODY_LIMIT: 'server: largest request body in bytes (default 2097152)',
  KNOWHUB_RATE_LIMIT: 'server: requests per second per token (default 50; 0 = off)',
  KNOWHUB_TRUSTED_PROXIES: 'server: reverse proxies (comma-separated addresses or CIDR ranges) whose X-Forwarded-For names the client',
  KNOWHUB_URL: 'a KnowHub server that one-shot commands and `knowhub mcp` run on (default: the server holding the data folder, if any)',
  KNOWHUB_TOKEN: 'the API token for KNOWHUB_URL',
  KNOWHUB_AGENT_HOME: 'the agent home: each agent in <home>/<name>/ (default ~/.agent)',
  KNOWHUB_PACK_PATHS: `extra knowledge-pack folders, separated by "${delimiter}" (before packs.paths of the config file)`,
} as const

type Env = Record<string, string | undefined>

/** The process environment: the one place that reads it. */
export function processEnv(): Env {
  return process.env
}

/** Settings of the CLI itself (not of the hub), from the environment. */
export interface CliEnv {
  /** KNOWHUB_LOG_LEVEL */
  logLevel: string | undefined
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
    logFormat: logFormat(env.KNOWHUB_LOG_FORMAT),
    url: env.KNOWHUB_URL || undefined,
    token: env.KNOWHUB_TOKEN || undefined,
    agent: env.KNOWHUB_AGENT || undefined,
  }
}

function logFormat(value: string | undefined): 'json' | 'pretty' | undefined {
  if (!value) return undefined
  if (value === 'json' || value === 'pretty') return value
  throw new KnowHubError('config_error', `KNOWHUB_LOG_FORMAT must be json or pretty, got "${value}"`)
}

function readConfigFile(env: Env, explicit?: string): Record<string, unknown> {
  const path = explicit ?? env.KNOWHUB_CONFIG ?? (existsSync('knowhub.config.json') ? 'knowhub.config.json' : undefined)
  if (!path) return {}
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the file must hold a JSON object')
    return value as Record<string, unknown>
  } catch (error) {
    throw new KnowHubError('config_error', `Cannot read config file ${path}: ${(error as Error).message}`, { path })
  }
}

function number(env: Env, name: string): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!Number.isFinite(value)) throw new KnowHubError('config_error', `${name} must be a number, got "${raw}"`)
  return value
}

/**
 * Builds the configuration from the config file and environment (env wins).
 * @example
 * const config = loadConfig(process.env)
 */
export function loadConfig(env: Env = process.env, options: { configFile?: string } = {}): KnowHubConfig {
  const file = readConfigFile(env, options.configFile)
  const config: Record<string, unknown> = { ...file }
  if (env.KNOWHUB_DATA_DIR) config.dataDir = env.KNOWHUB_DATA_DIR
  if (env.DATABASE_URL) config.databaseUrl = env.DATABASE_URL
  if (env.KNOWHUB_AGENT_HOME) config.agent = { ...(file.agent as object | undefined), home: env.KNOWHUB_AGENT_HOME }
  if (env.KNOWHUB_SECRET_KEY || env.KNOWHUB_SECRET_KEY_FILE || env.KNOWHUB_SECRETS_READ_ONLY)
    config.secrets = {
      ...(file.secrets as object | undefined),
      ...(env.KNOWHUB_SECRET_KEY ? { key: env.KNOWHUB_SECRET_KEY } : {}),
      ...(env.KNOWHUB_SECRET_KEY_FILE ? { keyFile: env.KNOWHUB_SECRET_KEY_FILE } : {}),
      ...(env.KNOWHUB_SECRETS_READ_ONLY ? { readOnly: ['1', 'true', 'yes'].includes(env.KNOWHUB_SECRETS_READ_ONLY.toLowerCase()) } : {}),
    }
  const provider = env.KNOWHUB_EMBEDDER
  if (provider) {
    const fileEmbedder = (file.embedder ?? {}) as Record<string, unknown>
    const base = fileEmbedder.provider === provider ? fileEmbedder : {}
    const dimension = number(env, 'KNOWHUB_EMBED_DIM')
    config.embedder = {
      ...base,
      provider,
      ...(dimension !== undefined ? { dimension } : {}),
      ...(env.KNOWHUB_EMBED_URL ? { baseUrl: env.KNOWHUB_EMBED_URL } : {}),
      ...(env.KNOWHUB_EMBED_MODEL ? { model: env.KNOWHUB_EMBED_MODEL } : {}),
      ...(env.KNOWHUB_EMBED_API_KEY ? { apiKey: env.KNOWHUB_EMBED_API_KEY } : {}),
      ...(env.KNOWHUB_EMBED_PATH ? { path: env.KNOWHUB_EMBED_PATH } : {}),
    }
  }
  const llm = { url: env.KNOWHUB_LLM_URL, model: env.KNOWHUB_LLM_MODEL, apiKey: env.KNOWHUB_LLM_API_KEY }
  if (Object.values(llm).some(Boolean)) {
    config.llm = { ...(file.llm as object | undefined), ...Object.fromEntries(Object.entries(llm).filter(([, value]) => value)) }
  }
  const server: Record<string, unknown> = { ...(file.server as object | undefined) }
  if (env.KNOWHUB_HOST) server.host = env.KNOWHUB_HOST
  if (env.KNOWHUB_TRUSTED_PROXIES)
    server.trustedProxies = env.KNOWHUB_TRUSTED_PROXIES.split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
  for (const [name, key] of [
    ['KNOWHUB_PORT', 'port'],
    ['KNOWHUB_BODY_LIMIT', 'bodyLimit'],
    ['KNOWHUB_RATE_LIMIT', 'rateLimit'],
  ] as const) {
    const value = number(env, name)
    if (value !== undefined) server[key] = value
  }
  if (Object.keys(server).length > 0) config.server = server
  const packPaths = (env.KNOWHUB_PACK_PATHS ?? '').split(delimiter).filter(Boolean)
  if (packPaths.length > 0) {
    const filePacks = (file.packs ?? {}) as Record<string, unknown>
    const filePaths = Array.isArray(filePacks.paths) ? (filePacks.paths as unknown[]) : []
    config.packs = { ...filePacks, paths: [...packPaths, ...filePaths] }
  }
  const ids = { user: env.KNOWHUB_USER, agent: env.KNOWHUB_AGENT, project: env.KNOWHUB_PROJECT, team: env.KNOWHUB_TEAM, org: env.KNOWHUB_ORG }
  if (Object.values(ids).some(Boolean)) {
    const filePrincipal = (file.principal ?? {}) as Record<string, unknown>
    const principal: Record<string, unknown> = { permissions: ['read', 'write', 'secrets:read', 'admin'], ...filePrincipal }
    for (const [key, value] of Object.entries(ids)) if (value) principal[key] = value
    config.principal = principal
  }
  try {
    return parseWith(KnowHubConfig, config, 'configuration')
  } catch (error) {
    throw nameTheVariables(error, env)
  }
}

/** Which environment variable sets which configuration path (only the ones that take a value as given). */
const ENV_PATHS: Record<string, string> = {
  dataDir: 'KNOWHUB_DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  'agent.home': 'KNOWHUB_AGENT_HOME',
  'secrets.key': 'KNOWHUB_SECRET_KEY',
  'secrets.keyFile': 'KNOWHUB_SECRET_KEY_FILE',
  'embedder.provider': 'KNOWHUB_EMBEDDER',
  'embedder.dimension': 'KNOWHUB_EMBED_DIM',
  'embedder.baseUrl': 'KNOWHUB_EMBED_URL',
  'embedder.model': 'KNOWHUB_EMBED_MODEL',
  'embedder.apiKey': 'KNOWHUB_EMBED_API_KEY',
  'embedder.path': 'KNOWHUB_EMBED_PATH',
  'llm.url': 'KNOWHUB_LLM_URL',
  'llm.model': 'KNOWHUB_LLM_MODEL',
  'llm.apiKey': 'KNOWHUB_LLM_API_KEY',
  'server.host': 'KNOWHUB_HOST',
  'server.port': 'KNOWHUB_PORT',
  'server.bodyLimit': 'KNOWHUB_BODY_LIMIT',
  'server.rateLimit': 'KNOWHUB_RATE_LIMIT',
  'principal.user': 'KNOWHUB_USER',
  'principal.agent': 'KNOWHUB_AGENT',
  'principal.project': 'KNOWHUB_PROJECT',
  'principal.team': 'KNOWHUB_TEAM',
  'principal.org': 'KNOWHUB_ORG',
}

/**
 * A configuration error names what the user set: an issue at a path an environment variable
 * set (e.g. `embedder.baseUrl` from KNOWHUB_EMBED_URL) is reported as that variable.
 */
function nameTheVariables(error: unknown, env: Env): unknown {
  if (!(error instanceof KnowHubError) || error.code !== 'validation_error') return error
  const issues = (error.details as { issues?: ValidationIssue[] } | undefined)?.issues ?? []
  const named = issues.map((issue) => {
    const variable = ENV_PATHS[issue.path]
    return variable && env[variable] !== undefined ? { ...issue, path: `${variable} (${issue.path})` } : issue
  })
  const first = named[0]
  const more = named.length > 1 ? ` (and ${named.length - 1} more)` : ''
  return new KnowHubError('config_error', `Invalid configuration: ${first ? `${first.path}: ${first.message}` : 'invalid'}${more}`, { issues: named })
}
