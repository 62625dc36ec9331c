/**
 * `knowhub extract FILE`: knowledge from a conversation saved as JSON (an array of
 * OpenAI-style messages, or `{ "messages": […], "context": {…} }`). Proposes by default;
 * `--save` writes. Beside a running server (or with --url) it runs there, with the server's LLM.
 */
import { readFileSync } from 'node:fs'
import { Command } from 'commander'
import { KnowHubError } from '../../../core/errors.js'
import type { ExtractInput } from '../../../core/extract.js'
import { withSession } from '../../context.js'
import { serverOptions, sessionOptions } from '../../options.js'
import { oneLine, printJson, type Io } from '../../output.js'

/** The request body from the file's JSON and the options. */
function extractBody(file: string, options: { save?: boolean; traceId?: string }): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new KnowHubError('validation_error', `Cannot read ${file} as JSON: ${(error as Error).message}`, { file })
  }
  const body: Record<string, unknown> = Array.isArray(parsed)
    ? { messages: parsed }
    : typeof parsed === 'object' && parsed !== null
      ? { ...parsed }
      : { messages: parsed }
  if (options.save) body.mode = 'save'
  if (options.traceId) body.context = { ...(body.context as object | undefined), trace_id: options.traceId }
  return body
}

/** `knowhub extract FILE [--save] [--trace-id ID] [--json]`. */
export function extractCommand(io: Io): Command {
  return serverOptions(new Command('extract'))
    .description('Extract knowledge from a conversation (a JSON file of OpenAI-style messages) with the LLM; proposes unless --save')
    .argument('<file>', 'JSON: an array of messages, or {"messages": [...], "context": {...}}')
    .option('--save', 'write the proposals (ADD, UPDATE, SUPERSEDE or NOOP against existing entries)')
    .option('--trace-id <id>', 'the trace the conversation belongs to (kept as source.trace_id)')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { save?: boolean; traceId?: string; json?: boolean }, command: Command) => {
      const body = extractBody(file, options)
      const result = await withSession(sessionOptions(command), io, (session) => session.knowledge.extract(body as ExtractInput)) // checked by the extraction service
      if (options.json) return printJson(io, result)
      if (result.items.length === 0) io.out('nothing worth keeping found')
      for (const item of result.items) {
        io.out(
          `${result.mode === 'save' ? item.action : `would ${item.action}`} ${item.id ?? '(new)'} [${item.types.join(',')}] ${oneLine(item.task)} — ${item.reason}`,
        )
      }
      for (const refusal of result.refused) io.out(`refused ${refusal.action} of ${refusal.existing_id ?? '(no id)'}: ${oneLine(refusal.reason)}`)
      for (const drop of result.dropped) io.out(`not kept: ${oneLine(drop.task)} — ${oneLine(drop.reason)}`)
      for (const problem of result.problems ?? []) io.out(`model problem (${problem.stage}, ${problem.reason}): ${oneLine(problem.detail)}`)
      if (result.secrets_found > 0)
        io.out(
          `secrets kept out of the entries: ${result.secrets_found}${result.resources_created.length ? ` (in ${result.resources_created.join(', ')})` : ''}`,
        )
      io.out(`llm calls: ${result.llm_calls}`)
    })
}
