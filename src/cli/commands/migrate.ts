/**
 * `knowhub migrate --to postgres://…`: copies this KnowHub database (the embedded one by
 * default) into an empty PostgreSQL database with a progress bar, then checks row counts and
 * a sample of rows on both sides (src/store/copy.ts). See docs/scale.md.
 */
import { Command } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import { withHub, type GlobalOptions } from '../context.js'
import { printJson, progress, type Io } from '../output.js'

/** `knowhub migrate --to URL [--json]`. */
export function migrateCommand(io: Io): Command {
  return new Command('migrate')
    .description('Copy this KnowHub database into an empty PostgreSQL database, then verify counts and a sample')
    .requiredOption('--to <url>', 'postgres://… of the target database (migrated here; it must hold no KnowHub data yet)')
    .option('--json', 'print {"tables":[{"name","rows"}],"rows","sampled"} as JSON')
    .addHelpText(
      'after',
      "\nSecrets of resources stay encrypted with this installation's key: start the servers with the same key (KNOWHUB_SECRET_KEY, or the key file).",
    )
    .action(async (options: { to: string; json?: boolean }, command: Command) => {
      if (!/^postgres(ql)?:\/\/\S+$/.test(options.to)) {
        throw new KnowHubError('validation_error', `--to must be a postgres:// or postgresql:// connection string, got "${options.to}"`)
      }
      const report = await withHub({ ...(command.optsWithGlobals() as GlobalOptions), bulk: true }, async (hub) => {
        if (hub.config.databaseUrl === options.to) throw new KnowHubError('validation_error', '--to names the database KnowHub is using already')
        const bar = progress(io, 'copying')
        try {
          const { copyHubToServer } = await import('../../app/migrate.js')
          return await copyHubToServer(hub, options.to, { onProgress: (p) => bar.update(p.done, p.total) })
        } finally {
          bar.stop()
        }
      })
      if (options.json) return printJson(io, report)
      for (const table of report.tables) io.out(`${table.name}: ${table.rows} rows`)
      io.out(`copied ${report.rows} rows; counts match, ${report.sampled} sampled rows are equal on both sides`)
      io.err("secrets stay encrypted with this installation's key: give the servers the same key (KNOWHUB_SECRET_KEY or the key file)")
    })
}
