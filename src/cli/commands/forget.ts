/**
 * `knowhub forget user:ID [--dry-run]`: erases a user everywhere (issue 31; docs/operations.md,
 * "Forgetting a user") and prints the receipt: counts only, never content. The hub operator (the
 * CLI on the server machine), or an org admin's token for a user of its org. Through the server
 * when one holds the data folder, like `reown`.
 */
import { Command } from 'commander'
import type { FileCleanup, ForgetReceipt } from '../../core/erasure.js'
import { withSession } from '../context.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

/** The receipt as lines: each kind with a count, then the cleanup. */
export function receiptLines(r: ForgetReceipt): string[] {
  const counts = Object.entries(r.erased).filter(([, n]) => n > 0)
  const head = `${r.dry_run ? 'Would erase' : 'Erased'} ${r.subject}: ${counts.length === 0 ? 'nothing (no data of this user)' : counts.map(([k, n]) => `${n} ${k.replaceAll('_', ' ')}`).join(', ')}`
  const tail = r.dry_run
    ? 'Dry run: nothing changed.'
    : `Files: ${r.cleanup.tables.length} tables rewritten (VACUUM FULL), WAL ${r.cleanup.wal}, ${r.cleanup.ms} ms; caches emptied: ${r.caches.join(', ') || 'none'}.`
  const held = heldWarning(r.cleanup)
  return held ? [head, tail, held] : [head, tail]
}

/** A warning when sessions that began before the erasure outlasted the rewrite's wait (PostgreSQL). */
export function heldWarning(cleanup: FileCleanup): string | undefined {
  if (cleanup.older_sessions === 0) return undefined
  return `Warning: ${cleanup.older_sessions} database session(s) still read from before the erasure after ${cleanup.waited_ms} ms; the rows they may read stay in the table files until the next VACUUM FULL of ${cleanup.tables.join(', ')} (docs/operations.md, "Done means gone").`
}

/** The `forget` command. */
export function forgetCommand(io: Io): Command {
  return serverOptions(new Command('forget'))
    .description(
      'Forget a user everywhere: entries, versions, feedback, resources and secrets, tokens, goals, agent documents, audit rows (hub operator; org admin: its users)',
    )
    .argument('<principal>', 'user:ID (or just ID)')
    .option('--dry-run', 'count what would be erased; change nothing')
    .option('--force', 'forget even when nothing of this user is stored (records the erasure, rewrites the tables); without it such a forget is refused')
    .option('--json', 'print the receipt as JSON')
    .addHelpText(
      'after',
      '\nThe receipt has counts, never content. See docs/operations.md, "Forgetting a user", for what stays on disk for a while.\n  knowhub forget user:bob --dry-run\n  knowhub forget user:bob',
    )
    .action(async (principal: string, options: { dryRun?: boolean; force?: boolean; json?: boolean }, command: Command) => {
      const subject = principal.includes(':') ? principal : `user:${principal}`
      const receipt = await withSession(sessionOptions(command), io, (session) =>
        session.admin.forget(subject, { dryRun: options.dryRun === true, force: options.force === true }),
      )
      if (options.json) return printJson(io, receipt)
      for (const line of receiptLines(receipt)) io.out(line)
    })
}
