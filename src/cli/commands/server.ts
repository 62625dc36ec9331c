/**
 * `knowhub start` (alias `serve`): runs the HTTP server until SIGINT/SIGTERM and
 * prints its URL.
 */
import cluster from 'node:cluster'
import { resolve } from 'node:path'
import { Command } from 'commander'
import { removePaths, uncreatedDataPaths } from '../../app/locate.js'
import { KnowHubError } from '../../core/errors.js'
import { toolDefaults } from '../tool-options.js'
import { cliEnv, workerEnv } from '../env.js'
import { createCliLogger, readConfig, withHub, type GlobalOptions } from '../context.js'
import type { Io } from '../output.js'

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new KnowHubError('validation_error', `--port must be an integer 0-65535, got "${value}"`)
  return n
}

function embedThreads(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new KnowHubError('validation_error', `--embed-threads must be an integer 1-64, got "${value}"`)
  return n
}

function workerCount(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new KnowHubError('validation_error', `--workers must be an integer 1-256, got "${value}"`)
  return n
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off('SIGINT', done)
      process.off('SIGTERM', done)
      resolve(signal)
    }
    process.on('SIGINT', done)
    process.on('SIGTERM', done)
  })
}

/** `knowhub start|serve [--host] [--port]`. */
export function serverCommand(io: Io): Command {
  return new Command('start')
    .alias('serve')
    .description('Run the HTTP API server (embedded database, 127.0.0.1:8420 by default)')
    .option('--host <address>', 'address to listen on (default 127.0.0.1; a non-loopback address needs an API token first)')
    .option('--port <n>', 'port (default 8420; 0 picks a free one)', port)
    .option('--project <dir>', 'project folder scanned for knowledge packs offered at /mcp (default: the current folder)')
    .option('--no-packs', 'offer no knowledge packs at /mcp')
    .option('--workers <n>', 'server processes sharing the port, each with its own services (PostgreSQL only; default 1)', workerCount)
    .option('--embed-threads <n>', "threads that run the sentence embedder's model (default: the cores minus one, at least one)", embedThreads)
    .addHelpText(
      'after',
      '\nWithout any API token the server runs in local mode: it listens on 127.0.0.1 only and every request acts as the configured local principal.\nCreate tokens with `knowhub token create` to serve other machines.\nThe `tools` section of the config file sets the defaults of the agent tools at /mcp (scopes, owner, agentId, submittedBy).',
    )
    .action(async (options: { host?: string; port?: number; project?: string; packs?: boolean; workers?: number; embedThreads?: number }, command: Command) => {
      const logger = createCliLogger(cliEnv().logLevel ?? 'info')
      if ((options.workers ?? 1) > 1 && cluster.isPrimary) {
        const config = await readConfig(command.optsWithGlobals() as GlobalOptions)
        if (!config.databaseUrl) {
          throw new KnowHubError(
            'config_error',
            `--workers ${options.workers} needs PostgreSQL (DATABASE_URL): the embedded database (PGlite) runs inside one process, its only writer, so a second server process cannot open it. Run one process (--workers 1), or move the data to PostgreSQL (knowhub migrate --to postgres://…).`,
            { workers: options.workers },
          )
        }
        const { superviseWorkers } = await import('../workers.js')
        io.out(`KnowHub: ${options.workers} server processes sharing the port (pid ${process.pid} supervises them; each prints its address)`)
        return superviseWorkers({ workers: options.workers!, logger, stop: untilSignal(), env: workerEnv() })
      }
      const packs = options.packs === false ? false : options.project ? { project: options.project } : {}
      const [{ startServer }, { createDashboard }] = await Promise.all([import('../../server/serve.js'), import('../../server/dashboard/index.js')])
      // A start that fails (a port in use) removes the data folder, database and key it made (issue 42).
      const created = uncreatedDataPaths(await readConfig(command.optsWithGlobals() as GlobalOptions))
      let listening = false
      try {
        await withHub(
          {
            ...(command.optsWithGlobals() as GlobalOptions),
            longRunning: true,
            whileModelLoads: 'full-text',
            packs,
            metrics: true,
            ...(options.embedThreads === undefined ? {} : { embedThreads: options.embedThreads }),
          },
          async (hub) => {
            // Found once at start; every /mcp request (each gets its own MCP server) shares hub.packs and its index cache.
            const { packs } = await hub.packs.discover()
            const server = await startServer({
              hub,
              logger,
              mcp: { packService: hub.packs, defaults: toolDefaults(hub.config.tools) },
              compactHeapAfterWarmUp: true,
              dashboard: (api) => createDashboard({ hub, apiAuthenticate: api.authenticate, latency: api.latency, packs: hub.packs }),
              ...(options.host ? { host: options.host } : {}),
              ...(options.port !== undefined ? { port: options.port } : {}),
            })
            listening = true
            io.out(
              `KnowHub listening on ${server.url} — dashboard at ${server.url}/, API reference at ${server.url}/docs (${server.local ? 'local mode: no API token exists, requests act as the local principal' : 'token mode: requests need an API token'}); MCP at ${server.url}/mcp with ${packs.length} knowledge pack${packs.length === 1 ? '' : 's'}`,
            )
            io.out(`  data: ${databaseLabel(hub.config)} · embedder: ${hub.embedder.model} · logs: stderr (KNOWHUB_LOG_FORMAT=json|pretty)`)
            const signal = await untilSignal()
            logger.info('server.stopping', { signal })
            await server.close()
          },
        )
      } catch (error) {
        if (!listening) removePaths(created)
        throw error
      } finally {
        // A worker of `--workers`: its channel to the supervisor would keep it alive (also after a failed start).
        if (cluster.isWorker) process.disconnect?.()
      }
    })
}

/** Where the data lives, for the banner: the embedded database's folder, or the PostgreSQL server without its password. */
function databaseLabel(config: { dataDir: string; databaseUrl?: string | undefined }): string {
  if (!config.databaseUrl) return `${resolve(config.dataDir)} (embedded database)`
  try {
    const url = new URL(config.databaseUrl)
    return `PostgreSQL at ${url.host}${url.pathname}`
  } catch {
    return 'PostgreSQL (DATABASE_URL)'
  }
}
