/**
 * The `knowhub` command line. Thin: parses arguments, calls services, prints.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError } from 'commander'
import { packageVersion } from '../app/version.js'
import { KnowHubError } from '../core/errors.js'
import { ENV_VARS, timingEnv } from './env.js'
import { beginTiming } from './timing.js'
import { knowledgeCommands } from './commands/knowledge/index.js'
import { statusCommand, whoamiCommand } from './commands/status.js'
import { resourceCommands } from './commands/resource.js'
import { slimCommands } from './commands/slim.js'
import { packsCommand } from './commands/packs/packs.js'
import { serverCommand } from './commands/server.js'
import { tokenCommand } from './commands/token.js'
import { reownCommand } from './commands/reown.js'
import { forgetCommand } from './commands/forget.js'
import { purgeCommand } from './commands/purge.js'
import { evalCommand } from './commands/eval.js'
import { mcpCommand } from './commands/mcp.js'
import { migrateCommand } from './commands/migrate.js'
import { agentCommand } from './commands/agent/index.js'
import { backupCommands } from './commands/backup.js'
import { printError, printJsonError, processIo, type Io } from './output.js'

/** Builds the program (exported for in-process tests). */
export function buildProgram(io: Io = processIo): Command {
  const program = new Command('knowhub')
    .description('KnowHub: a knowledge hub for AI agents — knowledge packs, knowledge entries with scoped visibility and hybrid search.')
    .version(packageVersion(), '-V, --version', 'print the version (package.json) and exit')
    .option('--config <file>', 'JSON config file (default: ./knowhub.config.json when present)')
    .option('--allow-download', 'let the local embedder download its model (embedder.model) once into <data dir>/models (embedder.download)')
    .addHelpText(
      'after',
      `\nEnvironment:\n${Object.entries(ENV_VARS)
        .map(([k, v]) => `  ${k.padEnd(22)} ${v}`)
        .join('\n')}`,
    )
  for (const command of [
    ...knowledgeCommands(io),
    statusCommand(io),
    whoamiCommand(io),
    ...resourceCommands(io),
    ...slimCommands(io),
    packsCommand({ io }),
    serverCommand(io),
    tokenCommand(io),
    reownCommand(io),
    forgetCommand(io),
    purgeCommand(io),
    evalCommand(io),
    mcpCommand(io),
    migrateCommand(io),
    ...backupCommands(io),
    agentCommand(io),
  ])
    program.addCommand(command)
  // addCommand() does not pass these settings down: apply them to every command.
  const configure = (command: Command): void => {
    command.configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) }).showHelpAfterError('(run with --help for usage)')
    command.commands.forEach(configure)
  }
  configure(program)
  return program
}

/** Whether `--json` is among the arguments (before a `--`): errors found before an action runs. */
function argvWantsJson(argv: readonly string[]): boolean {
  const args = argv.slice(2)
  const end = args.indexOf('--')
  return (end < 0 ? args : args.slice(0, end)).includes('--json')
}

/** Commander errors that are not failures: help and version output. */
const COMMANDER_OUTPUT = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version'])

let stdoutGuarded = false

/**
 * A reader that goes away (`knowhub --help | head`) closes stdout: writing to it fails with
 * EPIPE, which Node raises as an unhandled 'error' event. The output simply ends instead.
 */
function endQuietlyOnEpipe(): void {
  if (stdoutGuarded) return
  stdoutGuarded = true
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
}

const isEpipe = (error: unknown): boolean => (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE'

/**
 * Runs the CLI with `argv` (process.argv form). Sets `process.exitCode` on failure (1, or
 * commander's code for usage errors). With `--json`, every failure is printed as
 * `{"error":{"code","message","details"}}` on stdout, where the JSON output goes; without it,
 * as `error [code]: message` on stderr.
 * @example
 * await main(process.argv)
 */
export async function main(argv: string[], io: Io = processIo): Promise<void> {
  const timing = beginTiming(timingEnv())
  timing.mark('main')
  try {
    await runProgram(argv, io)
  } finally {
    timing.report(io)
  }
}

async function runProgram(argv: string[], io: Io): Promise<void> {
  if (io === processIo) endQuietlyOnEpipe()
  const program = buildProgram(io)
  // The action's own parsed options decide once it runs; before that (usage errors, bad option values) the arguments do.
  let json = argvWantsJson(argv)
  program.hook('preAction', (_program, action) => {
    json = action.opts().json === true
  })
  const override = (command: Command): void => {
    command.exitOverride()
    // With --json, usage errors are printed as JSON below instead of commander's text.
    command.configureOutput({ outputError: (text, write) => (json ? undefined : write(text)) })
    command.commands.forEach(override)
  }
  override(program)
  try {
    await program.parseAsync(argv)
  } catch (error) {
    if (isEpipe(error)) return
    if (error instanceof CommanderError) {
      // commander has printed its message (or the help) already, unless --json
      process.exitCode = error.exitCode
      if (json && error.exitCode !== 0 && !COMMANDER_OUTPUT.has(error.code)) {
        printJsonError(io, new KnowHubError('validation_error', error.message.replace(/^error: /, ''), { reason: error.code }))
      }
      return
    }
    if (json) printJsonError(io, error)
    else printError(io, error)
    process.exitCode = 1
  }
}

/** True when this module is the program being run (`tsx src/cli/main.ts …`, i.e. `npm run dev`), not an import. */
function isEntryModule(): boolean {
  const entry = process.argv[1]
  if (!entry) return false
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isEntryModule()) await main(process.argv)
