/**
 * `knowhub mcp`: KnowHub as an MCP server over stdio, acting as the configured local
 * principal on the embedded database (or DATABASE_URL). stdout is the protocol
 * channel: logs go to stderr, nothing else is printed.
 */
import { Command } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import type { Embedder } from '../../embed/embedder.js'
import type { PackSource } from '../../app/packs.js'
import type { PackService } from '../../packs/service.js'
import type { KnowHubBackend } from '../../core/backend.js'
import { folderHolder } from '../../app/locate.js'
import { createCliLogger, heldError, withHub, type GlobalOptions } from '../context.js'
import { cliEnv, processEnv } from '../env.js'
import { collect } from '../options.js'
import { toolDefaults } from '../tool-options.js'
import type { Io } from '../output.js'

interface McpOptions {
  project?: string
  home?: string
  user?: boolean
  packs?: boolean
  client?: string
  path?: string[]
  builtin?: string
  scope?: string[]
  owner?: string
  agentId?: string
  submittedBy?: string
  url?: string
  token?: string
}

/** Resolves when stdin ends or closes, or on SIGINT/SIGTERM. */
function untilStdinEnds(): Promise<string> {
  return new Promise((done) => {
    const finish = (why: string) => () => {
      process.stdin.off('end', onEnd)
      process.stdin.off('close', onClose)
      process.off('SIGINT', onInt)
      process.off('SIGTERM', onTerm)
      done(why)
    }
    const onEnd = finish('stdin_end')
    const onClose = finish('stdin_close')
    const onInt = finish('SIGINT')
    const onTerm = finish('SIGTERM')
    process.stdin.once('end', onEnd)
    process.stdin.once('close', onClose)
    process.once('SIGINT', onInt)
    process.once('SIGTERM', onTerm)
  })
}

/**
 * `knowhub mcp [--project DIR] [--scope S]… [--owner O] [--agent-id ID]`.
 * @example
 * // claude mcp add knowhub -- knowhub mcp   (a global knowhub: npm link in the KnowHub folder)
 * program.addCommand(mcpCommand(io))
 */
export function mcpCommand(_io: Io): Command {
  return new Command('mcp')
    .description('Run KnowHub as an MCP server over stdio (tools: knowledge_* and resource_*, plus knowledge_pack_* when packs are found)')
    .option('--project <dir>', 'project folder scanned for knowledge packs (default: the current folder)')
    .option('--home <dir>', 'home folder scanned for knowledge packs (default: your home)')
    .option('--no-user', 'do not scan the home folder for knowledge packs')
    .option('--no-packs', 'no knowledge packs at all (no pack tools or resources)')
    .option('--client <name>', 'client-native pack folder name: .<name>/knowledge (default knowhub)')
    .option('--path <dir>', 'extra pack folder (repeatable)', collect)
    .option('--builtin <dir>', 'built-in pack folder (lowest precedence)')
    .option(
      '--scope <scope>',
      'default scope of saved entries and resources (repeatable; default: tools.scopes of the config file, else your user scope)',
      collect,
    )
    .option('--owner <owner>', 'default owner of saved entries and resources (kind:id; default: tools.owner, else you)')
    .option('--agent-id <id>', 'default source.agent_id of saved entries (default: tools.agentId, else KNOWHUB_AGENT)')
    .option('--submitted-by <who>', 'default source.submitted_by of saved entries (default: tools.submittedBy)')
    .option(
      '--url <url>',
      'use a running KnowHub server at this URL instead of opening the database (env KNOWHUB_URL); needed while `knowhub start` holds the embedded database',
    )
    .option('--token <token>', "API token for --url (env KNOWHUB_TOKEN; not needed in the server's local mode)")
    .addHelpText(
      'after',
      '\nstdout carries the MCP protocol; logs go to stderr (KNOWHUB_LOG_LEVEL).\nExample (Claude Code, after `npm link` in the KnowHub folder): claude mcp add knowhub -e KNOWHUB_DATA_DIR=$HOME/.knowhub -- knowhub mcp\nWithout a global command: node /absolute/path/to/knowhub/bin/knowhub.js mcp. Not npx: outside the KnowHub folder, npx would fetch the unrelated npm package named knowhub.',
    )
    .action(async (options: McpOptions, command: Command) => {
      // Loaded when the command runs: `knowhub --help` stays fast.
      const [{ StdioServerTransport }, { createMcpServer }, { clientBackend }, { createClient }, { localBackend }, { openPacks }, { packageVersion }] =
        await Promise.all([
          import('@modelcontextprotocol/sdk/server/stdio.js'),
          import('../../mcp/server.js'),
          import('../../client/backend.js'),
          import('../../client/client.js'),
          import('../../app/backend.js'),
          import('../../app/packs.js'),
          import('../../app/version.js'),
        ])
      const env = cliEnv()
      const logger = createCliLogger(env.logLevel ?? 'warn')
      const globals = command.optsWithGlobals() as GlobalOptions
      const config = (await import('../config.js')).loadConfig(processEnv(), globals.config ? { configFile: globals.config } : {})
      // The `packs` section of the config file adds folders, types and limits; flags win.
      const packSource: PackSource = options.packs === false ? false : options
      const serve = async (backend: KnowHubBackend, packService: PackService, embedder?: Embedder): Promise<void> => {
        // The `tools` section of the config file gives the tool defaults; flags win. Without them the tools ask the
        // hub who the caller is (seed 003's defaults: its org, its agent; src/tools/save-defaults.ts).
        const defaults = toolDefaults(config.tools, options)
        const { packs } = await packService.discover()
        const server = createMcpServer({ backend, packService, defaults, logger, version: packageVersion(), ...(embedder ? { embedder } : {}) })
        const stopped = untilStdinEnds()
        await server.connect(new StdioServerTransport())
        logger.info('mcp.started', { transport: 'stdio', packs: packs.length, remote: options.url !== undefined })
        const why = await stopped
        logger.info('mcp.stopping', { reason: why })
        await server.close()
      }
      // A KnowHub server holding the embedded database: forward to it (its lock file gives the address and local key).
      const holder = options.url || env.url ? undefined : folderHolder(config)
      if (holder?.owner?.url)
        _io.err(`knowhub mcp: the KnowHub server at ${holder.owner.url} (process ${holder.owner.pid}) holds ${config.dataDir}: forwarding to it`)
      else if (holder) throw heldError(config, holder)
      const url = options.url ?? env.url ?? holder?.owner?.url
      if (url) {
        const token = options.token ?? (options.url || env.url ? env.token : holder?.owner?.key)
        const client = createClient({ baseUrl: url, ...(token ? { token } : {}) })
        await client.healthz().catch((error: unknown) => {
          throw new KnowHubError('config_error', `Cannot reach the KnowHub server at ${url}: ${(error as Error).message}`, { url })
        })
        await serve(clientBackend(client), openPacks(config, { source: packSource, logger }))
        return
      }
      await withHub({ ...globals, longRunning: true, packs: packSource }, async (hub) => {
        const warming = hub.knowledge.warmUp().catch((error: Error) => logger.warn('mcp.warmup_failed', { message: error.message }))
        try {
          await serve(localBackend(hub, hub.config.principal), hub.packs, hub.embedder)
        } finally {
          await warming
        }
      })
    })
}
