/**
 * `knowhub save | edit | show | list | archive | restore | delete`: one entry at a time, or a page of them.
 */
import { readFileSync } from 'node:fs'
import { Command, Option } from 'commander'
import { KnowHubError } from '../../../core/errors.js'
import type { KnowledgeEntry, KnowledgeVersion } from '../../../core/knowledge.js'
import { KNOWLEDGE_TYPES } from '../../../core/vocabulary.js'
import { withSession } from '../../context.js'
import { collect, csv, intOption, serverOptions, sessionOptions, tagFilter } from '../../options.js'
import { oneLine, printJson, type Io } from '../../output.js'

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
  io.out(
    `valid:   from ${entry.valid_from}${entry.valid_to ? ` to ${entry.valid_to}` : ''}${entry.superseded_by ? `, superseded by ${entry.superseded_by}` : ''}${entry.supersedes ? `, supersedes ${entry.supersedes}` : ''}${entry.expires_at ? `, expires ${entry.expires_at}` : ''}`,
  )
  io.out(`created: ${entry.created_at}  updated: ${entry.updated_at}`)
  io.out('')
  io.out(entry.content)
}

/** `knowhub save`: a new entry. */
export function saveCommand(io: Io): Command {
  return serverOptions(new Command('save'), '--server')
    .description('Save a new knowledge entry')
    .requiredOption('--task <text>', 'the scenario: what was being done, in what situation')
    .option('--content <text>', 'the knowledge itself ("-" reads stdin)')
    .option('--file <path>', 'read the content from a file')
    .addOption(new Option('--type <type>', `a type (repeatable): ${KNOWLEDGE_TYPES.join(', ')}`).argParser(collect).makeOptionMandatory())
    .option('--tag <key=value>', 'a tag (repeatable)', collect, [])
    .option('--scope <scope>', 'a visibility scope, e.g. org:acme (repeatable; default: your user scope)', collect)
    .option('--owner <kind:id>', 'owner (default: you)')
    .option('--score <n>', 'quality score 1-5', intOption('--score'), 3)
    .option('--source-name <name>', 'source name')
    .option('--source-category <category>', 'source category (paper, exp, skill, book…)', 'exp')
    .option('--url <url>', 'a source URL (repeatable)', collect, [])
    .option('--resource <id>', 'a referenced resource id (repeatable)', collect, [])
    .option('--valid-from <date>', 'when the fact became true (ISO date; default: now)')
    .option('--expires <date>', 'when it leaves search and the agent context (ISO date)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  knowhub save --task "Log in to site A" --content "Use the test account" --type tool --scope org:acme')
    .action(async (options, command: Command) => {
      const entry = await withSession(sessionOptions(command), io, (session) =>
        session.knowledge.save({
          task: options.task,
          content: readContent(options),
          types: options.type,
          tags: parseTags(options.tag),
          ...(options.scope ? { scopes: options.scope } : {}),
          ...(options.owner ? { owner: options.owner } : {}),
          score: options.score,
          source: { name: options.sourceName ?? '', category: options.sourceCategory, urls: options.url },
          resource_ids: options.resource,
          ...(options.validFrom ? { valid_from: options.validFrom } : {}),
          ...(options.expires ? { expires_at: options.expires } : {}),
        }),
      )
      if (options.json) printJson(io, entry)
      else io.out(`saved ${entry.id}`)
    })
}

/** `knowhub edit ID`: change task, content, types, tags or scopes (the API's PATCH); the previous text is kept as a version. */
export function editCommand(io: Io): Command {
  return serverOptions(new Command('edit'))
    .description('Edit an entry (owner or admin): task, content, types, tags, scopes; the previous version is kept')
    .argument('<id>', 'knowledge id')
    .option('--task <text>', 'the new task')
    .option('--content <text>', 'the new content ("-" reads stdin)')
    .option('--file <path>', 'read the new content from a file')
    .option('--type <type>', `the new types (repeatable; replaces them): ${KNOWLEDGE_TYPES.join(', ')}`, collect)
    .option('--tag <key=value>', 'the new tags (repeatable; replaces every tag)', collect)
    .option('--no-tags', 'remove every tag')
    .option('--scope <scope>', 'the new scopes (repeatable; replaces them)', collect)
    .option('--reason <text>', 'why (kept with the previous version)')
    .option('--json', 'print the entry as JSON')
    .addHelpText(
      'after',
      '\nExample (ID is a placeholder: use an id from `knowhub list`):\n  knowhub edit ID --content "Use the staging test account" --reason "the old account was removed"',
    )
    .action(async (id: string, options, command: Command) => {
      const content = options.content !== undefined || options.file ? readContent(options) : undefined
      const tags = options.tags === false ? {} : options.tag ? parseTags(options.tag) : undefined
      const body = {
        ...(options.task !== undefined ? { task: options.task } : {}),
        ...(content !== undefined ? { content } : {}),
        ...(options.type ? { types: options.type } : {}),
        ...(tags ? { tags } : {}),
        ...(options.scope ? { scopes: options.scope } : {}),
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
      }
      if (Object.keys(body).every((k) => k === 'reason'))
        throw new KnowHubError('validation_error', 'nothing to change: give --task, --content/--file, --type, --tag/--no-tags or --scope')
      const entry = await withSession(sessionOptions(command), io, (session) => session.knowledge.edit(id, body))
      if (options.json) return printJson(io, entry)
      io.out(`edited ${entry.id} (now v${entry.version})`)
    })
}

/** The fields a version keeps, as lines a diff can compare: an edit of tags, types or scopes alone shows too. */
function versionText(v: Pick<KnowledgeVersion, 'task' | 'content' | 'types' | 'tags' | 'scopes' | 'resource_ids'>): string {
  const tags = Object.entries(v.tags)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ')
  const lines = [`task: ${v.task}`, `types: ${v.types.join(', ')}`, `tags: ${tags}`, `scopes: ${v.scopes.join(', ')}`]
  if (v.resource_ids.length > 0) lines.push(`resources: ${v.resource_ids.join(', ')}`)
  return `${lines.join('\n')}\n\n${v.content}\n`
}

/** Each previous version in full, then what changed from it to the next one (a unified diff of its task, types, tags, scopes, resources and content). */
async function printVersions(io: Io, versions: KnowledgeVersion[], current: KnowledgeEntry): Promise<void> {
  const { createTwoFilesPatch } = await import('diff')
  const texts = [...versions, current].map((v) => ({ version: v.version, text: versionText(v) }))
  versions.forEach((v, i) => {
    io.out(`\n--- version ${v.version} (${v.created_at}, replaced: ${v.reason})\n${v.content}`)
    const next = texts[i + 1]!
    const patch = createTwoFilesPatch(`version ${v.version}`, `version ${next.version}`, texts[i]!.text, next.text, '', '', { context: 2 })
    io.out(`\n${patch.split('\n').slice(2).join('\n').trimEnd()}`)
  })
}

/** `knowhub show ID [--versions]`: one entry in full. */
export function showCommand(io: Io): Command {
  return serverOptions(new Command('show'))
    .description('Show one entry in full')
    .argument('<id>', 'knowledge id')
    .option('--versions', 'also show previous versions, each with a diff to the next')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const { entry, versions } = await withSession({ ...sessionOptions(command), readsOnly: true }, io, async (session) => ({
        entry: await session.knowledge.get(id),
        versions: options.versions ? await session.knowledge.versions(id) : undefined,
      }))
      if (options.json) return printJson(io, versions ? { ...entry, versions } : entry)
      printEntry(io, entry)
      if (versions) await printVersions(io, versions, entry)
    })
}

/** `knowhub list`: entries, newest first, a page at a time. */
export function listCommand(io: Io): Command {
  return serverOptions(new Command('list'))
    .description('List knowledge entries, newest first')
    .option('-n, --limit <n>', 'how many', intOption('--limit'), 10)
    .option('--types <list>', 'comma-separated types', csv)
    .option('--scopes <list>', 'comma-separated scopes', csv)
    .option('--status <list>', 'comma-separated statuses: active, merged, archived', csv, ['active'])
    .option('--visibility <list>', 'only entries of these visibilities: private, shared, org, public (comma-separated)', csv)
    .option('--tag <key=value>', 'only entries with this tag (repeatable: every one must hold)', collect, [])
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const page = await withSession({ ...sessionOptions(command), readsOnly: true }, io, (session) =>
        session.knowledge.list({
          limit: options.limit,
          status: options.status,
          ...(options.types ? { types: options.types } : {}),
          ...(options.scopes ? { scopes: options.scopes } : {}),
          ...(options.visibility ? { visibility: options.visibility } : {}),
          ...(options.tag.length > 0 ? { tags: tagFilter(options.tag) } : {}),
          ...(options.cursor ? { cursor: options.cursor } : {}),
        }),
      )
      if (options.json) return printJson(io, page)
      if (page.items.length === 0) io.out('no entries')
      for (const e of page.items) io.out(`${e.id}  [${e.types.join(', ')}]  ${e.scopes.join(',')}  ${oneLine(e.task, 70)}`)
      if (page.next_cursor) io.out(`\nmore: knowhub list --cursor ${page.next_cursor}`)
    })
}

/** `knowhub archive|restore|delete ID`: the entry's lifecycle (owner or admin). */
export function lifecycleCommand(io: Io, name: 'archive' | 'restore' | 'delete', description: string): Command {
  return serverOptions(new Command(name))
    .description(description)
    .argument('<id>', 'knowledge id')
    .option('--json', name === 'delete' ? 'print JSON ({"id","deleted":true}, as the API)' : 'print the entry as JSON')
    .action((id: string, options: { json?: boolean }, command: Command) => runLifecycle(io, name, id, options, command))
}

/** Archives, restores or deletes entry `id` and prints the result (also `knowhub restore ID`, which shares its name with restoring a backup). */
export async function runLifecycle(io: Io, name: 'archive' | 'restore' | 'delete', id: string, options: { json?: boolean }, command: Command): Promise<void> {
  const entry = await withSession(sessionOptions(command), io, async (session): Promise<KnowledgeEntry | undefined> =>
    name === 'delete' ? void (await session.knowledge.delete(id)) : session.knowledge[name](id),
  )
  if (options.json) return printJson(io, entry ?? { id, deleted: true })
  io.out(`${name}d ${id}`)
}
