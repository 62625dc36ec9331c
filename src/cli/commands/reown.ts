/**
 * `knowhub reown --from OWNER [--to OWNER] [--scope SCOPE]… [--dry-run]`: hands every entry of
 * one owner to another and/or shares them with more scopes (admin) — e.g. the entries saved
 * in local mode (`user:local`) after the server switched to token mode. Through the server
 * when one holds the data folder, like `token create`.
 */
import { Command } from 'commander'
import type { ReownResult } from '../../core/knowledge.js'
import { withSession } from '../context.js'
import { collect } from '../options.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

/** `alice` is `user:alice`; `agent:x`, `org:acme`, … stay as written. */
function asOwner(value: string): string {
  return value.includes(':') ? value : `user:${value}`
}

function summary(r: ReownResult): string {
  const what = [r.to !== r.from ? `to ${r.to}` : '', r.added_scopes.length > 0 ? `shared with ${r.added_scopes.join(', ')}` : ''].filter(Boolean).join(', ')
  const verb = r.dry_run ? 'would change' : 'changed'
  const rest = r.owned - r.changed
  return `${r.from} owns ${r.owned} entr${r.owned === 1 ? 'y' : 'ies'}: ${verb} ${r.changed} (${what})${rest > 0 ? `, ${rest} already had that owner and those scopes` : ''}${r.dry_run ? '; dry run, nothing changed' : `; each keeps its previous version ("${r.reason}")`}`
}

/** The `reown` command. */
export function reownCommand(io: Io): Command {
  return serverOptions(new Command('reown'))
    .description('Give every entry of one owner to another owner and/or share them with more scopes (admin)')
    .requiredOption('--from <owner>', 'the current owner: a user id (local = the local principal) or kind:id')
    .option('--to <owner>', "the new owner: a user id or kind:id; its scope replaces the old owner's in each entry")
    .option('--scope <scope>', 'a scope to add to each entry, e.g. org:acme or team:infra (repeatable)', collect)
    .option('--reason <text>', 'kept with each previous version (default: "reown: FROM -> TO, shared with …")')
    .option('--dry-run', 'report what would change; change nothing')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nEntries saved in local mode belong to user:local. After creating tokens (token mode), hand them to a user and share them:\n  knowhub reown --from local --to alice --scope org:acme --dry-run\n  knowhub reown --from local --to alice --scope org:acme',
    )
    .action(async (options: { from: string; to?: string; scope?: string[]; reason?: string; dryRun?: boolean; json?: boolean }, command: Command) => {
      const result = await withSession(sessionOptions(command), io, (session) =>
        session.admin.reown({
          from: asOwner(options.from),
          ...(options.to ? { to: asOwner(options.to) } : {}),
          ...(options.scope ? { scopes: options.scope } : {}),
          ...(options.reason ? { reason: options.reason } : {}),
          ...(options.dryRun ? { dry_run: true } : {}),
        }),
      )
      if (options.json) return printJson(io, result)
      io.out(summary(result))
      if (result.dry_run && result.ids.length > 0) for (const id of result.ids) io.out(`  ${id}`)
    })
}
