/**
 * The `knowhub` command line. Thin: parses arguments, calls services, prints.
 */
import { Command, CommanderError } from 'commander'
import { ENV_VARS } from './config.js'
import { knowledgeCommands } from './commands/knowledge.js'
import { statusCommand } from './commands/status.js'
import { resourceCommands } from './commands/resource.js'
import { slimCommands } from './commands/slim.js'
import { packsCommand } from './commands/packs.js'
import { serverCommand } from './commands/server.js'
import { tokenCommand } from './commands/token.js'
import { evalCommand } from './commands/eval.js'
import { mcpCommand } from './commands/mcp.js'
import { printError, processIo, type Io } from './output.js'

/** Builds the program (exported for in-process tests). */
export function buildProgram(io: Io = processIo): Command {
  const program = new Command('knowhub')
    .description('KnowHub: a knowledge hub for AI agents — knowledge packs, knowledge entries with scoped visibility and hybrid search.')
    .option('--config <file>', 'JSON config file (default: ./knowhub.config.json when present)')
    .addHelpText('after', `\nEnvironment:\n${Object.entries(ENV_VARS).map(([k, v]) => `  ${k.padEnd(22)} ${v}`).join('\n')}`)
  for (const command of [...knowledgeCommands(io), statusCommand(io), ...resourceCommands(io), ...slimCommands(io), packsCommand({ io }), serverCommand(io), tokenCommand(io), evalCommand(io), mcpCommand(io)]) program.addCommand(command)
  // addCommand() does not pass these settings down: apply them to every command.
  const configure = (command: Command): void => {
    command.configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) }).showHelpAfterError('(run with --help for usage)')
    command.commands.forEach(configure)
  }
  configure(program)
  return program
}

/** Runs the CLI with `argv` (process.argv form). Sets `process.exitCode` on failure. */
export async function main(argv: string[], io: Io = processIo): Promise<void> {
  const program = buildProgram(io)
  const override = (command: Command): void => {
    command.exitOverride()
    command.commands.forEach(override)
  }
  override(program)
  try {
    await program.parseAsync(argv)
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has printed its message (or the help) already
      process.exitCode = error.exitCode
      return
    }
    printError(io, error)
    process.exitCode = 1
  }
}
