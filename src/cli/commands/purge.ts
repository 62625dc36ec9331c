/**
 * `knowhub purge --merged-older-than 90d --archived-older-than 30d [--dry-run]`: deletes slimmed
 * originals and archived entries for good (issue 31; docs/operations.md, "Retention") and prints
 * the receipt. The hub operator: the whole hub; an org admin: what its ids reach.
 */
import { Command } from 'commander'
import type { PurgeReceipt } from '../../core/erasure.js'
import { withSession } from '../context.js'
import { heldWarning } from './forget.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

function summary(r: PurgeReceipt): string {
  const verb = r.dry_run ? 'Would delete' : 'Deleted'
  const cut = [r.merged_before ? `merged before ${r.merged_before}` : '', r.archived_before ? `archived before ${r.archived_before}` : '']
    .filter(Boolean)
    .join(', ')
  return `${verb} ${r.erased.merged} merged and ${r.erased.archived} archived entries (${cut}; reach: ${r.reach}), with ${r.erased.versions} versions and ${r.erased.feedback_cases} feedback cases${r.dry_run ? '; dry run, nothing changed' : `; ${r.cleanup.tables.length} tables rewritten in ${r.cleanup.ms} ms`}`
}

/** The `purge` command. */
export function purgeCommand(io: Io): Command {
  return serverOptions(new Command('purge'))
    .description('Delete slimmed originals (merged) and archived entries older than an age, for good (admin)')
    .option('--merged-older-than <age>', 'merged entries merged longer ago than this, e.g. 90d (d, h or m)')
    .option('--archived-older-than <age>', 'archived entries archived longer ago than this, e.g. 30d')
    .option('--dry-run', 'count what would be deleted; change nothing')
    .option('--json', 'print the receipt as JSON')
    .action(async (options: { mergedOlderThan?: string; archivedOlderThan?: string; dryRun?: boolean; json?: boolean }, command: Command) => {
      const receipt = await withSession(sessionOptions(command), io, (session) =>
        session.admin.purge({
          ...(options.mergedOlderThan ? { merged_older_than: options.mergedOlderThan } : {}),
          ...(options.archivedOlderThan ? { archived_older_than: options.archivedOlderThan } : {}),
          ...(options.dryRun ? { dry_run: true } : {}),
        }),
      )
      if (options.json) return printJson(io, receipt)
      io.out(summary(receipt))
      const held = heldWarning(receipt.cleanup)
      if (held) io.out(held)
    })
}
