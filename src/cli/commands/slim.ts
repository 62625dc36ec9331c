/**
 * `knowhub slim` (merge near-duplicate entries, deterministically) and `knowhub unmerge ID`.
 */
import { Command } from 'commander'
import { withSession } from '../context.js'
import { numberOption, serverOptions, sessionOptions } from '../options.js'
import { oneLine, printJson, type Io } from '../output.js'

/** The slim and unmerge commands, added to the root program. */
export function slimCommands(io: Io): Command[] {
  const slim = serverOptions(new Command('slim'))
    .description('Merge near-duplicate entries you manage into one (originals kept as merged; undo with unmerge)')
    .option('--threshold <n>', 'cosine similarity of the vectors, 0.5-1', numberOption('--threshold'), 0.9)
    .option('--min-overlap <n>', 'word overlap (Jaccard) of task + content, 0-1', numberOption('--min-overlap'), 0.5)
    .option('--limit <n>', 'compare a window of N visible entries, newest first (at most 5000)', numberOption('--limit'), 2000)
    .option('--cursor <cursor>', 'continue with the next, older window (the cursor a previous run printed)')
    .option('--dry-run', 'only show the plan')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  knowhub slim --dry-run\n  knowhub slim --threshold 0.93')
    .action(async (options, command: Command) => {
      const result = await withSession(sessionOptions(command), io, (session) =>
        session.knowledge.slim({
          threshold: options.threshold,
          min_overlap: options.minOverlap,
          limit: options.limit,
          dry_run: Boolean(options.dryRun),
          ...(options.cursor ? { cursor: options.cursor } : {}),
        }),
      )
      if (options.json) return printJson(io, result)
      io.out(`compared ${result.considered} entries; threshold ${result.threshold}, overlap ${result.min_overlap}`)
      if (result.groups.length === 0) io.out('no near-duplicates to merge')
      for (const group of result.groups) {
        io.out(`${result.dry_run ? 'would merge' : `merged into ${group.kept_id}:`} ${group.merged_ids.join(', ')}  (similarity ≥ ${group.similarity})`)
        if (result.dry_run && group.merged_content) io.out(`  merged text (${group.merge}): ${oneLine(group.merged_content, 300)}`)
      }
      for (const skip of result.skipped) io.out(`skipped [${skip.reason}] ${skip.ids.join(', ')}: ${skip.message}`)
      if (!result.dry_run && result.merged > 0) io.out(`${result.merged} entries marked merged; undo one group with: knowhub unmerge <merged id>`)
      if (result.next_cursor) io.out(`older entries were not compared: continue with --cursor ${result.next_cursor} (or raise --limit)`)
    })

  const unmerge = serverOptions(new Command('unmerge'))
    .description('Undo a merge: restore the originals and archive the merged entry')
    .argument('<id>', 'the merged entry (kept_id of slim)')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const result = await withSession(sessionOptions(command), io, (session) => session.knowledge.unmerge(id))
      if (options.json) return printJson(io, result)
      io.out(`restored ${result.restored_ids.join(', ')}; archived ${result.id}`)
    })

  return [slim, unmerge]
}
