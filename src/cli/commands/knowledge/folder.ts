/**
 * The knowledge folder from the command line (docs/knowledge-folder.md):
 * `knowhub export --layout folder DIR`, `knowhub import DIR` and `knowhub sync DIR [--watch]`.
 * Each reads or writes the folder here (src/knowledge/folder/disk.ts) and calls one session
 * operation, in this process or on the server.
 */
import { watch } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { Command } from 'commander'
import type { KnowHubBackend } from '../../../core/backend.js'
import { KnowHubError } from '../../../core/errors.js'
import type { FolderImportReport, FolderSyncResult } from '../../../core/knowledge-folder.js'
import { withSession } from '../../context.js'
import { intOption, serverOptions, sessionOptions } from '../../options.js'
import { printError, printJson, type Io } from '../../output.js'

/** `knowhub export --layout folder DIR`: the caller's knowledge folder, written into DIR. */
export async function runFolderExport(io: Io, dir: string, options: { json?: boolean }, command: Command): Promise<void> {
  const { writeExportedFolder } = await import('../../../knowledge/folder/disk.js')
  const result = await withSession({ ...sessionOptions(command), bulk: true, readsOnly: true }, io, async (session) =>
    writeExportedFolder(dir, await session.folder.export()),
  )
  if (options.json) return printJson(io, { dir, ...result })
  io.err(`exported ${result.files} files to ${dir} (${result.written} written, ${result.removed} removed, the rest unchanged)`)
}

/** The problems of a report, one line each: `file[index] field: [code] message`. */
function problemLines(report: FolderImportReport): string[] {
  return report.errors.map((e) => `${e.file}${e.index === null ? '' : `[${e.index}]`}${e.field ? ` ${e.field}` : ''}: [${e.code}] ${e.message}`)
}

/** Prints an import's plan or result for a person. */
export function printFolderReport(io: Io, report: FolderImportReport, options: { partial?: boolean; prune?: boolean }): void {
  for (const line of problemLines(report)) io.err(line)
  for (const note of report.notes) io.err(`note: ${note}`)
  const list = (word: string, changes: { id: string; file: string }[]) => {
    for (const c of changes.slice(0, 50)) io.out(`${word} ${c.id}  ${c.file}`)
    if (changes.length > 50) io.out(`${word} … and ${changes.length - 50} more`)
  }
  list(report.applied ? 'added' : 'add', report.added)
  list(report.applied ? 'changed' : 'change', report.changed)
  list(
    report.applied && options.prune ? 'archived' : options.prune ? 'archive' : 'removed',
    options.prune ? (report.applied ? report.archived : report.removed) : report.removed,
  )
  const archive = options.prune
    ? `${report.applied ? 'archived' : 'would archive'} ${report.applied ? report.archived.length : report.removed.length}`
    : `removed ${report.removed.length} (not archived: --prune archives them)`
  const summary = `added ${report.added.length}, changed ${report.changed.length}, unchanged ${report.unchanged}, ${archive}, errors ${report.errors.length}`
  if (report.dry_run) io.out(`plan (dry run, nothing written): ${summary}`)
  else if (!report.applied) io.out(`nothing imported: ${summary} (fix the files${options.partial ? '' : ' or use --partial'})`)
  else io.out(`imported: ${summary}`)
}

/** `knowhub import DIR`: a knowledge folder into the store. */
export async function runFolderImport(
  io: Io,
  dir: string,
  options: { json?: boolean; partial?: boolean; dryRun?: boolean; prune?: boolean },
  command: Command,
): Promise<void> {
  const { readKnowledgeFolder } = await import('../../../knowledge/folder/disk.js')
  const { files } = await readKnowledgeFolder(dir)
  if (!files.some((f) => /^(global|users|agents|projects|teams)\//.test(f.path) || f.path === 'README.md')) {
    throw new KnowHubError(
      'validation_error',
      `${dir} is a folder but not a knowledge folder (it has no global/, users/, agents/, projects/ or teams/): give a JSONL file, a knowledge folder (docs/knowledge-folder.md), or - for stdin`,
      { dir },
    )
  }
  const report = await withSession({ ...sessionOptions(command), bulk: true }, io, (session) =>
    session.folder.import(files, { dry_run: options.dryRun ?? false, partial: options.partial ?? false, prune: options.prune ?? false }),
  )
  if (options.json) printJson(io, report)
  else printFolderReport(io, report, options)
  if (report.errors.length > 0) process.exitCode = 1
}

/** What one sync step prints: the import's problems and notes, the conflicts, a summary. */
function printSync(io: Io, result: FolderSyncResult, options: { prune?: boolean; dryRun?: boolean }): void {
  const { report } = result
  for (const line of problemLines(report)) io.err(line)
  for (const note of report.notes) io.err(`note: ${note}`)
  for (const c of result.conflicts) io.err(`conflict: ${c.id} changed in ${c.file} and in the store: both kept, see ${c.note}`)
  const removed = options.prune
    ? `archived ${report.applied ? report.archived.length : report.removed.length}`
    : `removed from the folder ${report.removed.length} (written back: --prune archives them)`
  const summary = `to the store: added ${report.added.length}, changed ${report.changed.length}, ${removed}; to the folder: ${result.exported.length}; conflicts ${result.conflicts.length}; errors ${report.errors.length}`
  io.out(options.dryRun ? `plan (dry run, nothing written): ${summary}` : report.errors.length > 0 ? `nothing synced: ${summary}` : `synced: ${summary}`)
}

/** One sync step: read the folder, sync through the session, write what comes back. */
async function syncOnce(session: KnowHubBackend, dir: string, options: { prune?: boolean; dryRun?: boolean }): Promise<FolderSyncResult> {
  const { readKnowledgeFolder, writeKnowledgeFolder, writeSyncState } = await import('../../../knowledge/folder/disk.js')
  await mkdir(dir, { recursive: true })
  const { files, state } = await readKnowledgeFolder(dir)
  const result = await session.folder.sync({ files, state: state ?? null, prune: options.prune ?? false, dry_run: options.dryRun ?? false })
  if (!options.dryRun && result.report.errors.length === 0 && result.files.length > 0) {
    await writeKnowledgeFolder(dir, result.files, result.remove)
    await writeSyncState(dir, result.state)
  }
  return result
}

/** `knowhub sync DIR [--prune] [--dry-run] [--watch]`: a knowledge folder and the store, both ways. */
export function syncCommand(io: Io): Command {
  return serverOptions(new Command('sync'))
    .description('Sync a knowledge folder and the store both ways (docs/knowledge-folder.md): an entry changed on both sides is a conflict that keeps both')
    .argument('<dir>', 'the knowledge folder (created if missing)')
    .option('--prune', 'archive the entries deleted from the folder since the last sync (default: write them back)')
    .option('--dry-run', 'print what would change and write nothing')
    .option('--watch', 'keep syncing: after each change in the folder (debounced) and every --interval seconds')
    .option('--interval <seconds>', 'with --watch: how often to pick up changes in the store', intOption('--interval'), 30)
    .option('--json', 'print the result as JSON (the folder files left out)')
    .action(async (dir: string, options: { prune?: boolean; dryRun?: boolean; watch?: boolean; interval: number; json?: boolean }, command: Command) => {
      const print = (result: FolderSyncResult) => {
        if (options.json) printJson(io, { ...result, files: result.files.map((f) => f.path) })
        else printSync(io, result, options)
        if (result.report.errors.length > 0) process.exitCode = 1
      }
      await withSession({ ...sessionOptions(command), bulk: true }, io, async (session) => {
        print(await syncOnce(session, dir, options))
        if (!options.watch) return
        await watchFolder(io, dir, options.interval, async () => print(await syncOnce(session, dir, options)))
      })
    })
}

/**
 * Runs `step` after each change in `dir` (debounced 500 ms; hidden names and temporary files
 * ignored, so the sync's own writes settle) and every `intervalSeconds`, one step at a time,
 * until SIGINT or SIGTERM.
 */
async function watchFolder(io: Io, dir: string, intervalSeconds: number, step: () => Promise<void>): Promise<void> {
  io.err(`watching ${dir} (Ctrl-C to stop)`)
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const schedule = (delay: number) => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      running = running.then(step).catch((error: unknown) => printError(io, error))
    }, delay)
  }
  const watcher = watch(dir, { recursive: true }, (_event, name) => {
    const path = name?.toString() ?? ''
    if (path.split(/[\\/]/).some((part) => part.startsWith('.')) || path.endsWith('.tmp')) return
    schedule(500)
  })
  const interval = setInterval(() => schedule(0), intervalSeconds * 1000)
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  watcher.close()
  clearInterval(interval)
  clearTimeout(timer)
  await running
}
