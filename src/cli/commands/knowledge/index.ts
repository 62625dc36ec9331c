/**
 * `knowhub save | edit | search | list | show | feedback | evolve | supersede | extract | archive | delete | export | import | sync | reindex`
 * (and `restore ID`, in ../backup.ts beside restoring a backup file).
 * Each parses options, calls one service function and prints the result.
 */
import type { Command } from 'commander'
import type { Io } from '../../output.js'
import { editCommand, lifecycleCommand, listCommand, saveCommand, showCommand } from './entries.js'
import { evolveCommand, feedbackCommand, supersedeCommand } from './feedback.js'
import { extractCommand } from './extract.js'
import { searchCommand } from './search.js'
import { exportCommand, importCommand, reindexCommand } from './transfer.js'
import { syncCommand } from './folder.js'

/**
 * The knowledge-entry commands, added to the root program.
 * @example
 * for (const command of knowledgeCommands(io)) program.addCommand(command)
 */
export function knowledgeCommands(io: Io): Command[] {
  return [
    saveCommand(io),
    editCommand(io),
    searchCommand(io),
    listCommand(io),
    showCommand(io),
    feedbackCommand(io),
    evolveCommand(io),
    supersedeCommand(io),
    extractCommand(io),
    lifecycleCommand(io, 'archive', 'Archive an entry: hidden from search and list, kept in full'),
    // `knowhub restore ID` (an archived or merged entry) is part of `knowhub restore ID|FILE` (../backup.ts).
    lifecycleCommand(io, 'delete', 'Delete an entry and its history for good'),
    exportCommand(io),
    importCommand(io),
    syncCommand(io),
    reindexCommand(io),
  ]
}
