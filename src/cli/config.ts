/**
 * The only place that reads the config file. It builds a KnowHubConfig from it and the
 * environment (env.ts) and hands it to the composition root.
 */
import { readFileSync, existsSync } from 'node:fs'
import { delimiter } from 'node:path'
import { KnowHubError } from '../core/errors.js'
import { KnowHubConfig } from '../core/config.js'
import { parseWith, type ValidationIssue } from '../core/validate.js'
import { processEnv, type ENV_VARS, type Env } from './env.js'

export { ENV_VARS, cliEnv, processEnv, type CliEnv } from './env.js'

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

/** How a variable's text becomes a configuration value. */
type EnvKind = 'text' | 'number' | 'flag' | 'list' | 'paths' | 'pack-access'

/**
 * Which environment variable sets which configuration path, and how: the one table that
 * drives loadConfig and names the variable in its errors. The environment wins over the file.
 */
const CONFIG_ENV: readonly { variable: keyof typeof ENV_VARS; path: string; kind?: EnvKind }[] = [
  { variable: 'KNOWHUB_DATA_DIR', path: 'dataDir' },
  { variable: 'DATABASE_URL', path: 'databaseUrl' },
  { variable: 'DATABASE_REPLICA_URLS', path: 'replicas.urls', kind: 'list' },
  { variable: 'KNOWHUB_REPLICA_MAX_LAG_MS', path: 'replicas.maxLagMs', kind: 'number' },
  { variable: 'KNOWHUB_REPLICA_POLL_MS', path: 'replicas.pollMs', kind: 'number' },
  { variable: 'KNOWHUB_SHARED_BUFFERS', path: 'embedded.sharedBuffers' },
  { variable: 'KNOWHUB_AGENT_HOME', path: 'agent.home' },
  { variable: 'KNOWHUB_SECRET_KEY', path: 'secrets.key' },
  { variable: 'KNOWHUB_SECRET_KEY_FILE', path: 'secrets.keyFile' },
  { variable: 'KNOWHUB_SECRETS_READ_ONLY', path: 'secrets.readOnly', kind: 'flag' },
  { variable: 'KNOWHUB_EMBEDDER', path: 'embedder.provider' },
  { variable: 'KNOWHUB_EMBED_DIM', path: 'embedder.dimension', kind: 'number' },
  { variable: 'KNOWHUB_EMBED_URL', path: 'embedder.baseUrl' },
  { variable: 'KNOWHUB_EMBED_MODEL', path: 'embedder.model' },
  { variable: 'KNOWHUB_EMBED_API_KEY', path: 'embedder.apiKey' },
  { variable: 'KNOWHUB_EMBED_PATH', path: 'embedder.path' },
  { variable: 'KNOWHUB_EMBED_CONVENTION', path: 'embedder.convention' },
  { variable: 'KNOWHUB_EMBED_QUERY_PREFIX', path: 'embedder.convention.queryPrefix' },
  { variable: 'KNOWHUB_EMBED_DOCUMENT_PREFIX', path: 'embedder.convention.documentPrefix' },
  { variable: 'KNOWHUB_EMBED_QUERY_INPUT_TYPE', path: 'embedder.convention.queryInputType' },
  { variable: 'KNOWHUB_EMBED_DOCUMENT_INPUT_TYPE', path: 'embedder.convention.documentInputType' },
  { variable: 'KNOWHUB_EMBED_CONCURRENCY', path: 'embedder.concurrency', kind: 'number' },
  { variable: 'KNOWHUB_EMBED_DOWNLOAD', path: 'embedder.download', kind: 'flag' },
  { variable: 'KNOWHUB_EMBED_HUB_URL', path: 'embedder.hubUrl' },
  { variable: 'KNOWHUB_EMBED_THREADS', path: 'embedder.threads', kind: 'number' },
  { variable: 'KNOWHUB_LLM_URL', path: 'llm.url' },
  { variable: 'KNOWHUB_LLM_MODEL', path: 'llm.model' },
  { variable: 'KNOWHUB_LLM_API_KEY', path: 'llm.apiKey' },
  { variable: 'KNOWHUB_HOST', path: 'server.host' },
  { variable: 'KNOWHUB_PORT', path: 'server.port', kind: 'number' },
  { variable: 'KNOWHUB_BODY_LIMIT', path: 'server.bodyLimit', kind: 'number' },
  { variable: 'KNOWHUB_RATE_LIMIT', path: 'server.rateLimit', kind: 'number' },
  { variable: 'KNOWHUB_TRUSTED_PROXIES', path: 'server.trustedProxies', kind: 'list' },
  { variable: 'KNOWHUB_PACK_PATHS', path: 'packs.paths', kind: 'paths' },
  { variable: 'KNOWHUB_PACK_ACCESS', path: 'packs.access', kind: 'pack-access' },
  { variable: 'KNOWHUB_USER', path: 'principal.user' },
  { variable: 'KNOWHUB_AGENT', path: 'principal.agent' },
  { variable: 'KNOWHUB_PROJECT', path: 'principal.project' },
  { variable: 'KNOWHUB_TEAM', path: 'principal.team' },
  { variable: 'KNOWHUB_ORG', path: 'principal.org' },
]

/** A variable's value as its kind reads it; `current` is what the file set at that path. */
function envValue(variable: string, raw: string, kind: EnvKind, current: unknown): unknown {
  switch (kind) {
    case 'number': {
      const value = Number(raw)
      if (!Number.isFinite(value)) throw new KnowHubError('config_error', `${variable} must be a number, got "${raw}"`)
      return value
    }
    case 'flag':
      return ['1', 'true', 'yes'].includes(raw.toLowerCase())
    case 'list':
      return raw
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
    case 'paths':
      return [...raw.split(delimiter).filter(Boolean), ...(Array.isArray(current) ? current : [])]
    case 'pack-access':
      return [...packAccessFromEnv(raw), ...(Array.isArray(current) ? current : [])]
    case 'text':
      return raw
  }
}

/** Reads or sets a dotted path in a plain object, making the objects on the way. */
function atPath(target: Record<string, unknown>, path: string): { get: () => unknown; set: (value: unknown) => void } {
  const keys = path.split('.')
  const last = keys.pop()!
  let node = target
  for (const key of keys) {
    const next = node[key]
    node = node[key] = next !== null && typeof next === 'object' && !Array.isArray(next) ? (next as Record<string, unknown>) : {}
  }
  return { get: () => node[last], set: (value) => (node[last] = value) }
}

/**
 * Builds the configuration from the config file and environment (env wins).
 * Embedder variables apply with KNOWHUB_EMBEDDER (naming another provider than the file's
 * drops the file's embedder settings); any principal variable gives the local principal
 * every permission unless the file lists them.
 * @example
 * const config = loadConfig(process.env)
 */
export function loadConfig(env: Env = processEnv(), options: { configFile?: string } = {}): KnowHubConfig {
  const file = readConfigFile(env, options.configFile)
  const config = structuredClone(file) as Record<string, unknown>
  const provider = env.KNOWHUB_EMBEDDER
  if (provider && (file.embedder as { provider?: unknown } | undefined)?.provider !== provider) config.embedder = {}
  // The embedding threads apply to the sentence embedder, the default one, with or without KNOWHUB_EMBEDDER.
  const sentence = (provider ?? (file.embedder as { provider?: unknown } | undefined)?.provider ?? 'sentence') === 'sentence'
  const given = CONFIG_ENV.filter(({ variable, path }) => env[variable] && (path === 'embedder.threads' ? sentence : provider || !path.startsWith('embedder.')))
  if (given.some(({ path }) => path.startsWith('principal.')))
    config.principal = { permissions: ['read', 'write', 'secrets:read', 'admin', 'hub:admin'], ...(file.principal as object | undefined) }
  for (const { variable, path, kind = 'text' } of given) {
    const slot = atPath(config, path)
    slot.set(envValue(variable, env[variable]!, kind, slot.get()))
  }
  const embedder = config.embedder as { provider?: unknown; threads?: unknown } | undefined
  if (embedder && embedder.provider === undefined && embedder.threads !== undefined) embedder.provider = 'sentence'
  try {
    return parseWith(KnowHubConfig, config, 'configuration')
  } catch (error) {
    throw nameTheVariables(error, env)
  }
}

/** `ROOT=SCOPE,SCOPE;ROOT=SCOPE` (KNOWHUB_PACK_ACCESS) as `packs.access` rules; a part without `=` is a `config_error`. */
function packAccessFromEnv(value: string): { root: string; allow: string[] }[] {
  return value
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.lastIndexOf('=')
      const root = part.slice(0, Math.max(at, 0)).trim()
      const allow = part
        .slice(at + 1)
        .split(',')
        .map((scope) => scope.trim())
        .filter(Boolean)
      if (at < 0 || root === '' || allow.length === 0)
        throw new KnowHubError('config_error', `KNOWHUB_PACK_ACCESS: "${part}" is not ROOT=SCOPE[,SCOPE] (e.g. /srv/packs/acme=org:acme,user:bob)`)
      return { root, allow }
    })
}

/**
 * A configuration error names what the user set: an issue at a path an environment variable
 * set (e.g. `embedder.baseUrl` from KNOWHUB_EMBED_URL) is reported as that variable.
 */
function nameTheVariables(error: unknown, env: Env): unknown {
  if (!(error instanceof KnowHubError) || error.code !== 'validation_error') return error
  const issues = (error.details as { issues?: ValidationIssue[] } | undefined)?.issues ?? []
  const named = issues.map((issue) => {
    const variable = CONFIG_ENV.find(({ path }) => issue.path === path || issue.path.startsWith(`${path}.`))?.variable
    return variable && env[variable] !== undefined ? { ...issue, path: `${variable} (${issue.path})` } : issue
  })
  const first = named[0]
  const more = named.length > 1 ? ` (and ${named.length - 1} more)` : ''
  return new KnowHubError('config_error', `Invalid configuration: ${first ? `${first.path}: ${first.message}` : 'invalid'}${more}`, { issues: named })
}
