/**
 * `knowhub agent …`: an agent's starting context, its function index and compaction.
 */
import { Command } from 'commander'
import type { Io } from '../../output.js'
import { agentCompactCommand } from './compact.js'
import { agentContextCommand, agentIndexCommand } from './context.js'

/** The `agent` command group. */
export function agentCommand(io: Io): Command {
  return new Command('agent')
    .description('Agent contexts (seed 004): assemble the starting context, index knowledge functions, compact history')
    .addCommand(agentContextCommand(io))
    .addCommand(agentIndexCommand(io))
    .addCommand(agentCompactCommand(io))
}
