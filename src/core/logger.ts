/** Structured fields attached to a log line. Never put secrets here. */
export type LogFields = Record<string, unknown>

/**
 * The logger libraries receive. Messages are fixed strings; data goes in fields.
 * Entry points pass a pino logger; libraries default to {@link noopLogger}.
 * @example
 * logger.warn('store.vector.fallback', { reason: 'pgvector not installed' })
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

/** A logger that drops everything: the default for library code. */
export const noopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}
