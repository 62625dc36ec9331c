/**
 * `knowhub export | import | reindex`: whole-store operations, with progress on long work.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { Command, Option } from 'commander'
import { KnowHubError } from '../../../core/errors.js'
import { withHub, withSession } from '../../context.js'
import { globals, serverOptions, sessionOptions } from '../../options.js'
import { printJson, progress, type Io } from '../../output.js'
import { runFolderExport, runFolderImport } from './folder.js'

/** `knowhub export [-o FILE]`: JSONL of every visible entry; `--layout folder DIR`: the knowledge folder (./folder.ts). */
export function exportCommand(io: Io): Command {
  return serverOptions(new Command('export'))
    .description('Export visible entries (with histories and versions) as JSONL, or as a knowledge folder (--layout folder DIR)')
    .argument('[dir]', 'with --layout folder: the folder to write (docs/knowledge-folder.md)')
    .addOption(
      new Option('--layout <layout>', 'jsonl (one entry a line) or folder (seed 002: global/, users/<id>/…)').choices(['jsonl', 'folder']).default('jsonl'),
    )
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--json', 'with --out, print {"exported","file"} as JSON (stdout is JSONL already without it); errors as JSON')
    .action(async (dir: string | undefined, options, command: Command) => {
      if (options.layout === 'folder') {
        if (!dir) throw new KnowHubError('validation_error', 'give the folder to write: knowhub export --layout folder DIR')
        return runFolderExport(io, dir, options, command)
      }
      if (dir) throw new KnowHubError('validation_error', `a folder (${dir}) is written with --layout folder; JSONL goes to stdout or -o FILE`)
      const count = await withSession({ ...sessionOptions(command), bulk: true, readsOnly: true }, io, async (session) => {
        const stream = options.out ? createWriteStream(options.out) : process.stdout
        let count = 0
        for await (const line of session.knowledge.exportJsonl()) {
          if (stream.destroyed) break // the reader went away (`knowhub export | head`)
          if (!stream.write(`${line}\n`)) await once(stream, 'drain')
          count++
        }
        if (options.out) {
          stream.end()
          await once(stream, 'finish')
        }
        return count
      })
      if (!options.out) return
      if (options.json) printJson(io, { exported: count, file: options.out })
      else io.err(`exported ${count} entries to ${options.out}`)
    })
}

/** True when `path` is a folder (a knowledge folder to import). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** A file to import, checked before anything opens: a missing one or a folder is said in words. */
function assertReadableFile(file: string): void {
  let isFile: boolean
  try {
    isFile = statSync(file).isFile()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new KnowHubError(
      code === 'ENOENT' ? 'not_found' : 'validation_error',
      code === 'ENOENT' ? `There is no file ${file} to import (give a JSONL file, or - for stdin)` : `Cannot read ${file}: ${(error as Error).message}`,
      { file },
    )
  }
  if (!isFile) throw new KnowHubError('validation_error', `${file} is not a file (give a JSONL file, or - for stdin)`, { file })
}

/** `knowhub import FILE [--partial] [--on-conflict]`: JSONL as written by export, or POST /api/knowledge bodies. */
export function importCommand(io: Io): Command {
  return serverOptions(new Command('import'))
    .description('Import entries from JSONL: lines as written by export, or POST /api/knowledge bodies (task, content, types…), detected per line')
    .argument('<file>', 'JSONL file ("-" for stdin), or a knowledge folder')
    .option('--partial', 'import the valid lines even if some are bad (default: all or nothing)')
    .addOption(new Option('--on-conflict <action>', 'when an id exists already').choices(['error', 'skip', 'replace']).default('error'))
    .option('--json', 'print the report as JSON')
    .option('--dry-run', 'a knowledge folder: print the plan (added / changed / unchanged / would archive) and write nothing')
    .option('--prune', 'a knowledge folder: archive the active entries removed from its files')
    .addHelpText(
      'after',
      '\nA folder (docs/knowledge-folder.md) is read as a knowledge folder: new entries are added, changed ones get a new version.\nA line with an "id" is an exported entry, imported as it was (histories and versions too); a line without one is\nthe body POST /api/knowledge takes, e.g. {"task":"Log in to site A","content":"Use the test account","types":["tool"]},\nsaved as a new entry (scopes and owner default to yours).',
    )
    .action(async (file: string, options, command: Command) => {
      if (file !== '-' && isFolder(file)) return runFolderImport(io, file, options, command)
      if (options.dryRun || options.prune) throw new KnowHubError('validation_error', '--dry-run and --prune are for a knowledge folder (give a folder)')
      if (file !== '-') assertReadableFile(file)
      const report = await withSession({ ...sessionOptions(command), bulk: true }, io, async (session) => {
        const input = file === '-' ? process.stdin : createReadStream(file, 'utf8')
        const lines = createInterface({ input, crlfDelay: Infinity })
        const bar = progress(io, 'importing')
        // The slow parts without a bar say so: reading and checking every line before the first
        // write, and the search statistics and commit after the last one.
        io.err(`importing: reading and checking ${file === '-' ? 'standard input' : file}…`)
        try {
          return await session.knowledge.importJsonl(lines, {
            mode: options.partial ? 'partial' : 'atomic',
            on_conflict: options.onConflict,
            onProgress: (done, total) => {
              bar.update(done, total)
              if (done === total && total > 0) {
                bar.stop()
                io.err('importing: finishing (search statistics, commit)…')
              }
            },
          })
        } finally {
          bar.stop()
        }
      })
      if (options.json) printJson(io, report)
      else {
        for (const e of report.errors) io.err(`line ${e.line}: [${e.code}] ${e.message}`)
        io.out(
          `imported ${report.imported}, skipped ${report.skipped}, bad lines ${report.errors.length}${report.errors.length > 0 && !options.partial ? ' (nothing imported: fix the lines or use --partial)' : ''}`,
        )
      }
      if (report.errors.length > 0) process.exitCode = 1
    })
}

/** `knowhub reindex`: re-embed every entry with the configured embedder. */
export function reindexCommand(io: Io): Command {
  return new Command('reindex')
    .description('Re-embed every entry with the configured embedder (after changing it)')
    .option('--json', 'print {"reindexed","embedder":{"model","dimension"}} as JSON')
    .option('--vectors', 'only convert real[] vectors to pgvector + HNSW after installing pgvector (no re-embedding; JSON {"status","vectors"})')
    .action(async (options: { json?: boolean; vectors?: boolean }, command: Command) => {
      if (options.vectors) {
        const conversion = await withHub({ ...globals(command), bulk: true }, (hub) => hub.store.convertVectors())
        if (options.json) return printJson(io, { status: conversion.status, vectors: conversion.vectors })
        return io.out(
          conversion.status === 'converted'
            ? `converted ${conversion.vectors} vectors to pgvector with an HNSW index`
            : conversion.status === 'already'
              ? 'vectors already use pgvector'
              : 'no vectors stored yet',
        )
      }
      const result = await withHub({ ...globals(command), bulk: true }, async (hub) => {
        const bar = progress(io, 'reindexing')
        try {
          const reindexed = await hub.knowledge.reindex({ onProgress: bar.update })
          return { reindexed, embedder: { model: hub.embedder.model, dimension: hub.embedder.dimension } }
        } finally {
          bar.stop()
        }
      })
      if (options.json) return printJson(io, result)
      io.out(`re-embedded ${result.reindexed} entries`)
    })
}
