/**
 * `knowhub packs list | show | activate | resolve | init | validate | validate-run | doctor`:
 * the knowledge-pack client on the command line. Thin: the commander
 * definitions are here; each subcommand (commands/packs/*.ts) makes one call
 * into the packs service, built from the flags and the `packs` config, and
 * prints human text or `--json`.
 */
import { Command, InvalidArgumentError } from 'commander'
import { noopLogger, type Logger } from '../../../core/logger.js'
import type { Embedder } from '../../../embed/embedder.js'
import { GROUNDING_POLICIES, RESOLVE_INTENTS, STANDARD_PACK_TYPES } from '../../../packs/vocabulary.js'
import type { PackService } from '../../../packs/service.js'
import type { PackFlags } from '../../../packs/discover/options.js'
import type { KnowHubConfig } from '../../../core/config.js'
import { processEnv } from '../../env.js'
import { printError, printJsonError, processIo, type Io } from '../../output.js'
import type { PacksAction, PacksOptions } from './action.js'
import { activateAction } from './activate.js'
import { doctorAction } from './doctor.js'
import { initAction } from './init.js'
import { listAction } from './list.js'
import { resolveAction } from './resolve.js'
import { showAction } from './show.js'
import { approveAction, disableAction, enableAction } from './state.js'
import { validateAction } from './validate.js'
import { validateRunAction } from './validate-run.js'

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer')
  return n
}

function oneOf<T extends string>(values: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${values.join(', ')}`)
    return value as T
  }
}

/**
 * The packs service of one invocation, built by the composition root without a
 * database: discovery from the flags and the `packs` config (flags win), usage
 * logging from `--log-dir` / `--log-pack-runs` and the config, and the
 * configured embedder with `--embed`.
 */
async function packServiceFor(options: PacksOptions, config: KnowHubConfig, logger: Logger, embedder: Embedder | undefined): Promise<PackService> {
  const flags = options as PackFlags
  // Loaded when a subcommand runs: `knowhub --help` stays fast.
  const { openPacks } = await import('../../../app/packs.js')
  return openPacks(config, {
    source: { ...flags, includeArchived: flags.includeArchived === true },
    usageLog: {
      ...(typeof options.logDir === 'string' ? { logDir: options.logDir } : {}),
      ...(typeof options.logPackRuns === 'boolean' ? { logPackRuns: options.logPackRuns } : {}),
    },
    ...(embedder ? { embedder } : {}),
    logger,
  })
}

/** Wraps a subcommand action: config, packs service and embedder for the invocation; errors printed with their code, exit code 1. */
type Run = (action: (invocation: PacksAction) => Promise<void>) => (...params: unknown[]) => Promise<void>

function runner(io: Io, logger: Logger, env: Record<string, string | undefined>): Run {
  return (action) =>
    async (...params: unknown[]): Promise<void> => {
      const command = params[params.length - 1] as Command
      const args = params.slice(0, -2).filter((p): p is string => typeof p === 'string')
      const opts = command.optsWithGlobals() as PacksOptions
      try {
        // The config file (`--config`: the global option), its `packs` section and KNOWHUB_PACK_PATHS; flags win.
        const config = (await import('../../config.js')).loadConfig(env, typeof opts.config === 'string' ? { configFile: opts.config } : {})
        const embedder = opts.embed === true ? await (await import('../../../embed/factory.js')).createEmbedder(config.embedder, { logger }) : undefined
        try {
          await action({ packs: await packServiceFor(opts, config, logger, embedder), opts, args, io })
        } finally {
          await embedder?.close?.()
        }
      } catch (error) {
        if (opts.json === true) printJsonError(io, error)
        else printError(io, error)
        process.exitCode = 1
      }
    }
}

/** The subcommands, each a thin action over the packs service. */
function addSubcommands(packs: Command, run: Run): void {
  packs
    .command('list')
    .description('List the available packs (the catalog)')
    .option('--xml', 'print the <available_knowledge_packs> catalog and its instruction')
    .option(
      '--lang <lang>',
      'language of the --xml instruction: en | zh | auto (Chinese when at least half of the packs are)',
      oneOf(['en', 'zh', 'auto'] as const),
      'auto',
    )
    .action(run(listAction))

  packs.command('show').description('Show one pack: metadata, diagnostics and resources').argument('<name>', 'pack name').action(run(showAction))

  packs
    .command('activate')
    .description('Activate a pack: print its wrapped guide (tool mode) or its location (file mode)')
    .argument('<name>', 'pack name')
    .option('--mode <mode>', 'tool | file', oneOf(['tool', 'file'] as const), 'tool')
    .option('--confirm', 'confirm use of a disputed pack')
    .action(run(activateAction))

  packs
    .command('resolve')
    .description('Resolve the runtime context for a task within a token budget')
    .argument('<task>', 'the task text')
    .option('--pack <name>', 'pack to use (repeatable; default: packs whose description matches the task)', collect)
    .option('--budget <tokens>', 'token budget', positiveInt, 8000)
    .option('--grounding <policy>', 'required | recommended | none (off is read as none)', oneOf(GROUNDING_POLICIES))
    .option('--intent <intent>', `task intent (${RESOLVE_INTENTS.join(' | ')}); detected when absent`, oneOf(RESOLVE_INTENTS))
    .option('--confirm', 'confirm use of disputed packs')
    .option('--log-dir <dir>', 'append usage records to <dir>/knowledge-usage.jsonl (default: packs.logDir)')
    .option('--log-pack-runs', "also append usage records to each pack's runs/usage.jsonl (default: packs.useRunsDir)")
    .option('--no-log-pack-runs', "do not write into the packs' runs/ (when the config turns it on)")
    .option('--embed', 'blend in similarity from the configured embedder (no database is opened; slow: section vectors are not kept between calls)')
    .action(run(resolveAction))

  packs
    .command('init')
    .description('Create a new document-first pack (KNOWLEDGE.md, a primary document, one split) with placeholder text')
    .argument('<name>', 'pack name: lowercase letters, digits and single hyphens (also the folder name)')
    .option('--dir <dir>', "folder in which <name>/ is created (default: the project's .agents/knowledge, where packs list looks)")
    .option('--type <type>', `pack type: a standard type (${STANDARD_PACK_TYPES.join(', ')}) or custom:<name>`, 'domain-reference')
    .option('--language <tag>', 'language of the content (en, de, zh-CN, …)', 'en')
    .action(run(initAction))

  packs
    .command('validate')
    .description('Validate a pack folder or a folder of packs; exits 1 on errors (for CI)')
    .argument('<path>', 'pack folder, KNOWLEDGE.md, folder of packs, or the name of a pack where `packs list` looks')
    .action(run(validateAction))

  packs
    .command('validate-run')
    .description(
      'Check a record file (runs/compile-*.json, runs/context-*.json, context-resolutions.jsonl, evals/*.json, indexes/source-map.json) against the standard schemas; exits 1 on errors',
    )
    .argument('<file>', 'the record file')
    .action(run(validateRunAction))

  packs
    .command('enable')
    .description('Enable a pack (by name or path), persisted in the packs state file')
    .argument('<name>', 'pack name or path')
    .action(run(enableAction))
  packs
    .command('disable')
    .description('Disable a pack (by name or path): hidden from the catalog, refused by name')
    .argument('<name>', 'pack name or path')
    .action(run(disableAction))
  packs
    .command('approve')
    .description('Approve a project pack for use (trust gate, packs.requireApproval), recorded with its digest')
    .argument('<name>', 'pack name or path')
    .action(run(approveAction))

  packs.command('doctor').description('Show every scanned location, shadowed, rejected and archived packs, and scan problems').action(run(doctorAction))
}

/**
 * The `packs` command with its subcommands. Errors are printed with their
 * code and set `process.exitCode = 1`; `validate` sets it when any pack has
 * an error.
 * @example
 * program.addCommand(packsCommand({ logger }))
 * // knowhub packs resolve "What is the enterprise price?" --pack acme-product-brief --budget 4000
 */
export function packsCommand(options: { logger?: Logger; io?: Io; env?: Record<string, string | undefined> } = {}): Command {
  const io = options.io ?? processIo
  const logger = options.logger ?? noopLogger
  const env = options.env ?? processEnv()

  const packs = new Command('packs')
    .description('Knowledge packs (KNOWLEDGE.md): discover, validate, catalog, activate, resolve context')
    .option('--project <dir>', 'project folder (default: current folder)')
    .option('--home <dir>', 'home folder for the user scope (default: your home)')
    .option('--no-user', 'do not scan the user scope')
    .option('--client <name>', 'client name for .<client>/knowledge folders (default: packs.clientName, else knowhub)')
    .option('--path <dir>', 'extra pack folder (repeatable)', collect)
    .option('--builtin <dir>', 'built-in pack folder (lowest precedence)')
    .option('--include-archived', 'show archived packs')
    .option('--allow-type <type>', 'accept a non-standard pack type (repeatable; * for all)', collect)
    .option('--max-depth <n>', 'deepest folder level scanned per location', positiveInt)
    .option('--max-dirs <n>', 'most folders scanned per location', positiveInt)
    .option('--gitignore', 'skip folders ignored by .gitignore')
    .option('--no-gitignore', 'do not read .gitignore files (when the config turns it on)')
    .option('--json', 'print JSON (errors too: {"error":{"code","message","details"}} on stdout)')
    .addHelpText(
      'after',
      '\nThe `packs` section of the config file (--config, KNOWHUB_CONFIG or ./knowhub.config.json) and KNOWHUB_PACK_PATHS add folders, types, limits and usage logs; flags win.',
    )

  addSubcommands(packs, runner(io, logger, env))
  return packs
}
