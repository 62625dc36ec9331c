/**
 * `knowhub agent compact NAME --history FILE`: past the threshold, the LLM summarises the
 * older history into the agent's compact.md (the previous memory kept) and extraction runs
 * on it. The history file is JSON: an array of `{ role, content }`, or `{ "messages": [...] }`.
 */
import { readFile } from 'node:fs/promises'
import { Command } from 'commander'
import { KnowHubError } from '../../../core/errors.js'
import { readConfig, withSession } from '../../context.js'
import { intOption, serverOptions, sessionOptions } from '../../options.js'
import { printJson, type Io } from '../../output.js'

/** The messages of a history file (JSON array, or an object with `messages`). */
async function readHistory(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch((error: Error) => {
    throw new KnowHubError('validation_error', `Cannot read the history file ${path}: ${error.message}`, { path })
  })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new KnowHubError('validation_error', `The history file ${path} is not JSON: give an array of { role, content } or { "messages": [...] }`, { path })
  }
  return Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown } | null)?.messages
}

/** `knowhub agent compact NAME --history FILE [--threshold N] [--keep-recent N] [--trace ID] [--json]`. */
export function agentCompactCommand(io: Io): Command {
  return serverOptions(new Command('compact'))
    .description('Compact a long history into the agent’s compact.md with the LLM (past the threshold), then extract knowledge from it')
    .argument('<name>', 'the agent')
    .requiredOption('--history <file>', 'JSON: an array of { role, content }, or { "messages": [...] }')
    .option('--threshold <tokens>', 'compact past this many tokens (default agent.compactThreshold, 70000)', intOption('--threshold'))
    .option('--keep-recent <tokens>', 'recent tokens kept as they are (default a quarter of the threshold)', intOption('--keep-recent'))
    .option('--trace <id>', 'the trace the history belongs to (recorded by extraction)')
    .option('--home <dir>', 'the agent home on this machine')
    .option('--stored', 'the agent stored on the server (its compact.md document), not the folder on this machine')
    .option('--json', 'print JSON')
    .action(async (name: string, options, command: Command) => {
      const history = await readHistory(options.history)
      const where = sessionOptions(command)
      const config = options.stored ? undefined : (await readConfig(where)).agent
      const besideNote = options.stored
        ? `compacting the agent "${name}" stored there`
        : `that server's LLM compacts; the memory of the agent "${name}" is read and written here, on this machine`
      const result = await withSession({ ...where, besideNote }, io, (session) =>
        session.agent.compact(
          {
            agent: name,
            history: history as never,
            ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
            ...(options.keepRecent !== undefined ? { keep_recent: options.keepRecent } : {}),
            ...(options.trace !== undefined ? { trace_id: options.trace } : {}),
            ...(options.home !== undefined ? { home: options.home } : {}),
            stored: options.stored === true,
          },
          config,
        ),
      )
      if (options.json) return printJson(io, result)
      if (!result.compacted) return io.out(`${result.tokens} tokens, under the threshold of ${result.threshold}: nothing to compact`)
      io.out(`compacted ${result.summarized_messages} messages (${result.tokens} tokens in all) into ${result.memory_path} (${result.memory_tokens} tokens)`)
      if (result.previous_version) io.out(`previous memory kept as ${result.previous_version}`)
      io.out(`kept ${result.kept.length} recent messages`)
      const extraction = result.extraction
      if (extraction)
        io.out(
          `extraction: ${extraction.status}${extraction.ids.length > 0 ? ` (${extraction.ids.join(', ')})` : ''}${extraction.message ? `: ${extraction.message}` : ''}`,
        )
    })
}
