/**
 * The log-field redaction the server applies to everything it logs: the value of any
 * field named like a secret is replaced, at any depth.
 */
import { noopLogger, type LogFields, type Logger } from '../core/logger.js'

const SECRET_KEY = /secure_body|secret|token|password|passwd|authorization|api_?key|cookie/i
const MAX_DEPTH = 6

function redact(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return '[truncated]'
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? '[redacted]' : redact(v, depth + 1)
  return out
}

/**
 * Replaces the value of any field named like a secret (secure_body, token, password, …), at any depth.
 * @example
 * redactFields({ token: 'kh_x', id: 'a' }) // { token: '[redacted]', id: 'a' }
 */
export function redactFields(fields: LogFields): LogFields {
  return redact(fields, 0) as LogFields
}

/**
 * A logger that redacts secret-named fields before passing them on. The server wraps
 * whatever logger it is given with this.
 * @example
 * const logger = redactingLogger(deps.logger ?? noopLogger)
 */
export function redactingLogger(logger: Logger): Logger {
  // Nothing is written: nothing to redact (a copy of every access-log line's fields saved).
  if (logger === noopLogger) return noopLogger
  return {
    debug: (message, fields) => logger.debug(message, fields && redactFields(fields)),
    info: (message, fields) => logger.info(message, fields && redactFields(fields)),
    warn: (message, fields) => logger.warn(message, fields && redactFields(fields)),
    error: (message, fields) => logger.error(message, fields && redactFields(fields)),
  }
}
