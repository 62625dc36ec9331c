/**
 * Option parsers every command shares (commander's `argParser` functions) and the global
 * options of a command.
 */
import type { Command } from 'commander'
import { KnowHubError } from '../core/errors.js'
import type { GlobalOptions, SessionOptions } from './context.js'

/**
 * Collects a repeatable option into a list.
 * @example
 * new Command('save').option('--type <type>', 'a type (repeatable)', collect)
 */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

/**
 * A comma-separated list, blanks dropped.
 * @example
 * csv('tool, strategy') // ['tool', 'strategy']
 */
export const csv = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

/**
 * A parser of integers that names the option in its error.
 * @example
 * new Command('list').option('-n, --limit <n>', 'how many', intOption('--limit'), 10)
 */
export function intOption(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value)
    if (!Number.isInteger(n)) throw new KnowHubError('validation_error', `${name} must be an integer, got "${value}"`)
    return n
  }
}

/**
 * A parser of finite numbers that names the option in its error.
 * @example
 * new Command('slim').option('--threshold <n>', 'cosine similarity', numberOption('--threshold'), 0.9)
 */
export function numberOption(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value)
    if (!Number.isFinite(n)) throw new KnowHubError('validation_error', `${name} must be a number, got "${value}"`)
    return n
  }
}

/**
 * The options of the root program a subcommand inherits (`--config`).
 * @example
 * const hub = await withHub(globals(command), (hub) => …)
 */
export function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions
}

/**
 * Adds `--url` and `--token` to a command that may run on a KnowHub server (`save`, whose
 * `--url` is a source URL, takes `--server` instead).
 * @example
 * const list = serverOptions(new Command('list'))
 */
export function serverOptions(command: Command, flag: '--url' | '--server' = '--url'): Command {
  return command
    .option(
      `${flag} <url>`,
      'run on the KnowHub server at this URL (env KNOWHUB_URL; default: the server holding the data folder, if one does, else this process)',
    )
    .option('--token <token>', "API token for that server (env KNOWHUB_TOKEN; not needed in its local mode or beside it: the lock file's key)")
}

/**
 * The options that decide where a command runs (see `withSession`).
 * @example
 * await withSession(sessionOptions(command), io, (session) => session.admin.status())
 */
export function sessionOptions(command: Command): SessionOptions {
  const all = command.optsWithGlobals() as SessionOptions & { server?: string; url?: unknown }
  const url = typeof all.server === 'string' ? all.server : typeof all.url === 'string' ? all.url : undefined
  return { ...(all.config ? { config: all.config } : {}), ...(url ? { url } : {}), ...(all.token ? { token: all.token } : {}) }
}

/**
 * `--tag key=value` options as the API's tag filter (`key:value` pairs); a value without `=` is refused.
 * @example
 * tagFilter(['category=preference']) // ['category:preference']
 */
export function tagFilter(values: readonly string[]): string[] {
  return values.map((value) => {
    const at = value.indexOf('=')
    if (at <= 0) throw new KnowHubError('validation_error', `--tag takes key=value, not "${value}"`, { option: '--tag' })
    return `${value.slice(0, at)}:${value.slice(at + 1)}`
  })
}
