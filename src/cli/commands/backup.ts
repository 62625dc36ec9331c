/**
 * `knowhub backup FILE` and `knowhub restore FILE`: the embedded database to a file and back
 * (src/admin/backup.ts, src/store/backup.ts). A backup runs on the server that holds the data
 * folder when one does (consistent while it keeps writing); a restore never does.
 */
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Command } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import { KNOWLEDGE_ID } from '../../core/ids.js'
import { runLifecycle } from './knowledge/entries.js'
import { readConfig, withSession, type GlobalOptions } from '../context.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`
}

/** Writes `bytes` to `file` atomically (a temporary file beside it, then a rename). */
function writeAtomically(file: string, bytes: Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(temporary, bytes, { mode: 0o600 })
    renameSync(temporary, file)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
}

/** `knowhub backup FILE`. */
function backupCommand(io: Io): Command {
  return serverOptions(new Command('backup'))
    .description('Back up the embedded database to FILE (consistent while `knowhub start` runs: the server writes the backup)')
    .argument('<file>', 'the backup file to write (replaced atomically when it exists)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      [
        '',
        'When a KnowHub server holds the data folder, the backup is taken by that server (POST /api/admin/backup, admin only;',
        "beside it the lock file's local key is used); otherwise this process opens the folder and dumps it.",
        'The file holds the database only: keep the secret key (KNOWHUB_SECRET_KEY or <data dir>/secret.key) with it.',
        'On a PostgreSQL server (DATABASE_URL) use pg_dump / pg_restore instead (docs/operations.md).',
        'Restore with: knowhub restore FILE',
      ].join('\n'),
    )
    .action(async (file: string, options: { json?: boolean }, command: Command) => {
      const session = sessionOptions(command)
      const target = resolve(file)
      if (!session.url && (await readConfig(session)).databaseUrl) {
        const { PG_DUMP_HINT } = await import('../../admin/backup.js')
        throw new KnowHubError('validation_error', `knowhub backup copies the embedded database; ${PG_DUMP_HINT}`)
      }
      const started = Date.now()
      io.err('knowhub: backing up the embedded database…')
      const bytes = await withSession(session, io, (s) => s.admin.backup())
      writeAtomically(target, bytes)
      const { backupManifest } = await import('../../admin/backup.js')
      const manifest = await backupManifest(bytes)
      const report = {
        file: target,
        bytes: bytes.byteLength,
        migrations: manifest.migrations.length,
        secret_key_ids: manifest.secret_key_ids,
        created_at: manifest.created_at,
        seconds: Math.round((Date.now() - started) / 100) / 10,
      }
      if (options.json) return printJson(io, report)
      io.out(`Backed up the embedded database to ${target} (${size(report.bytes)}, ${report.migrations} migrations, ${report.seconds} s)`)
      if (manifest.secret_key_ids.length > 0)
        io.out(
          `Secrets in it are encrypted with key ${manifest.secret_key_ids.join(', ')}: keep that key (KNOWHUB_SECRET_KEY or the key file) with the backup.`,
        )
    })
}

/** Whether `knowhub restore ARG` names a backup file rather than a knowledge entry id. */
function namesBackupFile(arg: string, options: { dataDir?: string; force?: boolean }): boolean {
  if (options.dataDir !== undefined || options.force === true) return true
  if (existsSync(arg)) return statSync(arg).isFile()
  return !KNOWLEDGE_ID.test(arg) || /\.(backup|tgz|tar\.gz)$/i.test(arg)
}

/** `knowhub restore FILE [--force] [--data-dir DIR]`, and `knowhub restore ID` (an archived entry). */
function restoreCommand(io: Io): Command {
  return serverOptions(new Command('restore'))
    .description(
      'Restore a backup made by `knowhub backup` into the embedded database (a new or empty data folder, or --force); with an entry id: make an archived or merged entry active again',
    )
    .argument('<file|id>', 'a backup file, or a knowledge entry id')
    .option('--data-dir <dir>', 'backup: the data folder to restore into (default KNOWHUB_DATA_DIR, else ./.knowhub)')
    .option('--force', 'backup: replace an existing database (never one a running process holds)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      [
        '',
        'A backup file: before anything is replaced it is checked (format, length, checksum, schema not newer than this',
        'KnowHub), loaded into a new folder beside the database and opened; only then is it renamed into place, so a',
        'damaged or truncated file changes nothing. A folder held by a running server is never replaced: stop it first.',
        'Secrets need the key they were encrypted with: set KNOWHUB_SECRET_KEY or copy the key file into the data folder.',
        'Restoring never runs on a server (--url and --token are for restoring an entry).',
        '',
        'An entry id (knowledge-…; an argument that is no file): the entry becomes active again (owner or admin).',
      ].join('\n'),
    )
    .action(async (file: string, options: { dataDir?: string; force?: boolean; json?: boolean }, command: Command) => {
      if (!namesBackupFile(file, options)) return runLifecycle(io, 'restore', file, options, command)
      const config = await readConfig(command.optsWithGlobals() as GlobalOptions)
      if (options.dataDir) config.dataDir = options.dataDir
      const { restoreDataFolder, PG_RESTORE_HINT } = await import('../../admin/backup.js')
      if (config.databaseUrl) throw new KnowHubError('validation_error', PG_RESTORE_HINT)
      const source = resolve(file)
      if (!existsSync(source) || !statSync(source).isFile()) throw new KnowHubError('not_found', `No backup file ${source}`)
      const bytes = readFileSync(source)
      const started = Date.now()
      io.err(`knowhub: checking ${source} (${size(bytes.byteLength)})…`)
      const { manifest, counts, dbDir } = await restoreDataFolder(config, bytes, {
        force: options.force === true,
        onProgress: (step, detail) =>
          io.err(
            step === 'checked'
              ? `knowhub: backup ok: ${detail}; loading it into a new folder…`
              : step === 'loaded'
                ? `knowhub: the restored database opens: ${detail}; putting it in place…`
                : `knowhub: restored into ${detail}`,
          ),
      })
      const report = {
        file: source,
        data_dir: resolve(config.dataDir),
        database: dbDir,
        counts,
        manifest,
        seconds: Math.round((Date.now() - started) / 100) / 10,
      }
      if (options.json) return printJson(io, report)
      io.out(
        `Restored ${source} into ${resolve(dbDir)}: ${counts.knowledge} entries, ${counts.resources} resources, ${counts.tokens} tokens (${report.seconds} s)`,
      )
      if (manifest.secret_key_ids.length > 0)
        io.out(
          `Its secrets need key ${manifest.secret_key_ids.join(', ')}: KnowHub refuses to start with another one (set KNOWHUB_SECRET_KEY or copy the key file).`,
        )
    })
}

/** `knowhub backup` and `knowhub restore`. */
export function backupCommands(io: Io): Command[] {
  return [backupCommand(io), restoreCommand(io)]
}
