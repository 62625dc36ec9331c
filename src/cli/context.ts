import pino from 'pino'
import { openKnowHub, type KnowHub } from '../app/open.js'
import type { PackSource } from '../app/packs.js'
import type { Logger } from '../core/logger.js'
import { cliEnv, loadConfig, processEnv } from './config.js'

/**
 * A pino logger on stderr, behind the library Logger interface. The default level is
 * KNOWHUB_LOG_LEVEL, else `error`: one-shot commands report problems themselves, in words,
 * and a JSON warning line beside that message would say it twice. Long-running commands
 * pass their own default (`warn` for `knowhub mcp`, `info` for `knowhub start`).
 * @example
 * const logger = createCliLogger(cliEnv().logLevel ?? 'warn')
 */
export function createCliLogger(level = cliEnv().logLevel ?? 'error'): Logger {
  const log = pino({ level, redact: { paths: ['*.apiKey', '*.secure_body', '*.token', '*.password'], censor: '[redacted]' } }, pino.destination(2))
  return {
    debug: (message, fields) => log.debug(fields ?? {}, message),
    info: (message, fields) => log.info(fields ?? {}, message),
    warn: (message, fields) => log.warn(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
  }
}

/** Global options every command accepts. */
export interface GlobalOptions {
  config?: string
}

/**
 * Opens KnowHub from env + config file, runs `fn`, and always closes it. A one-shot command
 * (the default) searches in SQL when the config says `search.fulltext: auto`: building the
 * in-memory index would cost more than the one search it serves. `longRunning` commands
 * (the server, the MCP server) keep `auto`, which is the in-memory index on the embedded database.
 */
export async function withHub<T>(options: GlobalOptions & { longRunning?: boolean; packs?: PackSource }, fn: (hub: KnowHub) => Promise<T>): Promise<T> {
  const config = loadConfig(processEnv(), options.config ? { configFile: options.config } : {})
  if (!options.longRunning && config.search.fulltext === 'auto') config.search.fulltext = 'sql'
  const hub = await openKnowHub(config, {
    logger: createCliLogger(cliEnv().logLevel ?? (options.longRunning ? 'warn' : 'error')),
    ...(options.packs === undefined ? {} : { packs: options.packs }),
  })
  try {
    return await fn(hub)
  } finally {
    await hub.close()
  }
}
