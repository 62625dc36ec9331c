/**
 * `knowhub save | search | list | show | feedback | archive | restore | delete | export | import | reindex`.
 * Each parses options, calls one service function and prints the result.
 */
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { Command, Option } from 'commander'
import { KnowHubError } from '../../core/errors.js'
import { KNOWLEDGE_TYPES, type KnowledgeEntry } from '../../core/knowledge.js'
import { withHub, type GlobalOptions } from '../context.js'
import { oneLine, printJson, progress, type Io } from '../output.js'

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]
const csv = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

function int(name: string) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n)) throw new KnowHubError('validation_error', `${name} must be an integer, got "${value}"`)
    return n
  }
}

function parseTags(pairs: string[]): Record<string, string> {
  const tags: Record<string, string> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new KnowHubError('validation_error', `--tag must be key=value, got "${pair}"`)
    tags[pair.slice(0, at)] = pair.slice(at + 1)
  }
  return tags
}

function readContent(options: { content?: string; file?: string }): string {
  if (options.file) return readFileSync(options.file, 'utf8')
  if (options.content === '-') return readFileSync(0, 'utf8')
  if (options.content === undefined) throw new KnowHubError('validation_error', 'give the content with --content TEXT, --content - (stdin) or --file PATH')
  return options.content
}

function printEntry(io: Io, entry: KnowledgeEntry): void {
  io.out(`${entry.id}  [${entry.types.join(', ')}]  ${entry.status}  v${entry.version}`)
  io.out(`task:    ${entry.task}`)
  io.out(`scopes:  ${entry.scopes.join(', ')}    owner: ${entry.owner}`)
  io.out(`eval:    score ${entry.eval.score}  helpful ${entry.eval.helpful}  harmful ${entry.eval.harmful}  confidence ${entry.eval.confidence}`)
  if (Object.keys(entry.tags).length > 0) io.out(`tags:    ${JSON.stringify(entry.tags)}`)
  if (entry.resource_ids.length > 0) io.out(`resources: ${entry.resource_ids.join(', ')}`)
  if (entry.merged_into) io.out(`merged into: ${entry.merged_into}`)
  io.out(`created: ${entry.created_at}  updated: ${entry.updated_at}`)
  io.out('')
  io.out(entry.content)
}

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions
}

/** The knowledge-entry commands, added to the root program. */
export function knowledgeCommands(io: Io): Command[] {
  const save = new Command('save')
    .description('Save a new knowledge entry')
    .requiredOption('--task <text>', 'the scenario: what was being done, in what situation')
    .option('--content <text>', 'the knowledge itself ("-" reads stdin)')
    .option('--file <path>', 'read the content from a file')
    .addOption(new Option('--type <type>', `a type (repeatable): ${KNOWLEDGE_TYPES.join(', ')}`).argParser(collect).makeOptionMandatory())
    .option('--tag <key=value>', 'a tag (repeatable)', collect, [])
    .option('--scope <scope>', 'a visibility scope, e.g. org:acme (repeatable; default: your user scope)', collect)
    .option('--owner <kind:id>', 'owner (default: you)')
    .option('--score <n>', 'quality score 1-5', int('--score'), 3)
    .option('--source-name <name>', 'source name')
    .option('--source-category <category>', 'source category (paper, exp, skill, book…)', 'exp')
    .option('--url <url>', 'a source URL (repeatable)', collect, [])
    .option('--resource <id>', 'a referenced resource id (repeatable)', collect, [])
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  knowhub save --task "Log in to site A" --content "Use the test account" --type tool --scope org:acme')
    .action(async (options, command: Command) => {
      const entry = await withHub(globals(command), (hub) =>
        hub.knowledge.save(
          {
            task: options.task,
            content: readContent(options),
            types: options.type,
            tags: parseTags(options.tag),
            ...(options.scope ? { scopes: options.scope } : {}),
            ...(options.owner ? { owner: options.owner } : {}),
            score: options.score,
            source: { name: options.sourceName ?? '', category: options.sourceCategory, urls: options.url },
            resource_ids: options.resource,
          },
          hub.config.principal,
        ),
      )
      if (options.json) printJson(io, entry)
      else io.out(`saved ${entry.id}`)
    })

  const search = new Command('search')
    .description('Search knowledge (hybrid full-text + vector, then quality rerank)')
    .argument('<query>', 'what you are looking for')
    .option('-k, --top-k <n>', 'number of results', int('--top-k'), 5)
    .option('--min-score <n>', 'drop entries scored below this', int('--min-score'), 3)
    .option('--types <list>', 'comma-separated types', csv)
    .addOption(new Option('--mode <mode>', 'retrieval mode').choices(['hybrid', 'fulltext', 'vector']).default('hybrid'))
    .option('--no-rerank', 'order by relevance only (skip the quality rerank)')
    .option('--explain', 'show each stage’s scores')
    .option('--json', 'print JSON (the API’s response shape)')
    .action(async (query: string, options, command: Command) => {
      const response = await withHub(globals(command), (hub) =>
        hub.knowledge.search(
          {
            q: query,
            top_k: options.topK,
            min_score: options.minScore,
            ...(options.types ? { types: options.types } : {}),
            mode: options.mode,
            rerank: options.rerank,
            explain: Boolean(options.explain),
          },
          hub.config.principal,
        ),
      )
      if (options.json) return printJson(io, response)
      if (response.count === 0) return io.out('no results')
      response.results.forEach((r, i) => {
        io.out(`${i + 1}. ${r.id}  quality ${r.quality_score}  [${r.types.join(', ')}]`)
        io.out(`   ${oneLine(r.task)}`)
        io.out(`   ${oneLine(r.content)}`)
        if (r.explain) io.out(`   explain: ${JSON.stringify(r.explain)}`)
      })
    })

  const list = new Command('list')
    .description('List knowledge entries, newest first')
    .option('-n, --limit <n>', 'how many', int('--limit'), 10)
    .option('--types <list>', 'comma-separated types', csv)
    .option('--scopes <list>', 'comma-separated scopes', csv)
    .option('--status <list>', 'comma-separated statuses: active, merged, archived', csv, ['active'])
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const page = await withHub(globals(command), (hub) =>
        hub.knowledge.list(
          {
            limit: options.limit,
            status: options.status,
            ...(options.types ? { types: options.types } : {}),
            ...(options.scopes ? { scopes: options.scopes } : {}),
            ...(options.cursor ? { cursor: options.cursor } : {}),
          },
          hub.config.principal,
        ),
      )
      if (options.json) return printJson(io, page)
      if (page.items.length === 0) io.out('no entries')
      for (const e of page.items) io.out(`${e.id}  [${e.types.join(', ')}]  ${e.scopes.join(',')}  ${oneLine(e.task, 70)}`)
      if (page.next_cursor) io.out(`\nmore: knowhub list --cursor ${page.next_cursor}`)
    })

  const show = new Command('show')
    .description('Show one entry in full')
    .argument('<id>', 'knowledge id')
    .option('--versions', 'also show previous versions')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const { entry, versions } = await withHub(globals(command), async (hub) => ({
        entry: await hub.knowledge.get(id, hub.config.principal),
        versions: options.versions ? await hub.knowledge.versions(id, hub.config.principal) : undefined,
      }))
      if (options.json) return printJson(io, versions ? { ...entry, versions } : entry)
      printEntry(io, entry)
      for (const v of versions ?? []) io.out(`\n--- version ${v.version} (${v.created_at}, replaced: ${v.reason})\n${v.content}`)
    })

  const feedback = new Command('feedback')
    .description('Record feedback on an entry: helpful/harmful case, new score, or evolve')
    .argument('<id>', 'knowledge id')
    .option('--helpful', 'add a helpful case')
    .option('--harmful', 'add a harmful case')
    .option('--task <text>', 'the task the entry was used for')
    .option('--outcome <text>', 'what happened')
    .option('--reason <text>', 'why it was harmful')
    .option('--score <n>', 'set the score (1-5)', int('--score'))
    .option('--evolve <feedback>', 'rewrite the content from this feedback (needs an LLM)')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      if (options.helpful && options.harmful) throw new KnowHubError('validation_error', 'use --helpful or --harmful, not both')
      const kase = {
        ...(options.task ? { task: options.task } : {}),
        ...(options.outcome ? { outcome: options.outcome } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
      }
      const entry = await withHub(globals(command), (hub) =>
        hub.knowledge.feedback(
          id,
          {
            ...(options.helpful ? { add_helpful_case: kase } : {}),
            ...(options.harmful ? { add_harmful_case: kase } : {}),
            ...(options.score !== undefined ? { update_score: options.score } : {}),
            ...(options.evolve ? { evolve_feedback: options.evolve } : {}),
          },
          hub.config.principal,
        ),
      )
      if (options.json) return printJson(io, entry)
      io.out(`${entry.id}: score ${entry.eval.score}, helpful ${entry.eval.helpful}, harmful ${entry.eval.harmful}`)
    })

  const lifecycle = (name: 'archive' | 'restore' | 'delete', description: string) =>
    new Command(name)
      .description(description)
      .argument('<id>', 'knowledge id')
      .option('--json', name === 'delete' ? 'print JSON ({"id","deleted":true}, as the API)' : 'print the entry as JSON')
      .action(async (id: string, options: { json?: boolean }, command: Command) => {
        const entry = await withHub(globals(command), async (hub): Promise<KnowledgeEntry | undefined> =>
          name === 'delete' ? void (await hub.knowledge.delete(id, hub.config.principal)) : hub.knowledge[name](id, hub.config.principal),
        )
        if (options.json) return printJson(io, entry ?? { id, deleted: true })
        io.out(`${name}d ${id}`)
      })

  const exportCmd = new Command('export')
    .description('Export visible entries (with histories and versions) as JSONL')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--json', 'with --out, print {"exported","file"} as JSON (stdout is JSONL already without it); errors as JSON')
    .action(async (options, command: Command) => {
      const count = await withHub(globals(command), async (hub) => {
        const stream = options.out ? createWriteStream(options.out) : process.stdout
        let count = 0
        for await (const line of hub.knowledge.exportJsonl(hub.config.principal)) {
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

  const importCmd = new Command('import')
    .description('Import entries from JSONL (as written by export)')
    .argument('<file>', 'JSONL file ("-" for stdin)')
    .option('--partial', 'import the valid lines even if some are bad (default: all or nothing)')
    .addOption(new Option('--on-conflict <action>', 'when an id exists already').choices(['error', 'skip', 'replace']).default('error'))
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options, command: Command) => {
      const report = await withHub(globals(command), async (hub) => {
        const input = file === '-' ? process.stdin : createReadStream(file, 'utf8')
        const lines = createInterface({ input, crlfDelay: Infinity })
        const bar = progress(io, 'importing')
        try {
          return await hub.knowledge.importJsonl(lines, hub.config.principal, {
            mode: options.partial ? 'partial' : 'atomic',
            onConflict: options.onConflict,
            onProgress: bar.update,
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

  const reindex = new Command('reindex')
    .description('Re-embed every entry with the configured embedder (after changing it)')
    .option('--json', 'print {"reindexed","embedder":{"model","dimension"}} as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const result = await withHub(globals(command), async (hub) => {
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

  return [
    save,
    search,
    list,
    show,
    feedback,
    lifecycle('archive', 'Archive an entry: hidden from search and list, kept in full'),
    lifecycle('restore', 'Make an archived or merged entry active again'),
    lifecycle('delete', 'Delete an entry and its history for good'),
    exportCmd,
    importCmd,
    reindex,
  ]
}
