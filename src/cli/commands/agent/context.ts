/**
 * `knowhub agent context NAME`: the agent's assembled starting context (seed 004): the
 * messages, then the budget report; `--json` prints `{ messages, report }`.
 */
import { resolve } from 'node:path'
import { Command, Option } from 'commander'
import { processEnv } from '../../env.js'
import { readConfig, withSession } from '../../context.js'
import { collect, globals, intOption, serverOptions, sessionOptions } from '../../options.js'
import { printJson, type Io } from '../../output.js'

/** `knowhub agent context NAME [--task] [--file …] [--budget] [--home] [--template] [--language] [--json]`. */
export function agentContextCommand(io: Io): Command {
  return serverOptions(new Command('context'))
    .description('Assemble an agent’s starting context: system prompt, compact memory, knowledge within a token budget (and write its function index)')
    .argument('<name>', 'the agent (its folder in the agent home)')
    .option('--task <text>', 'the task: entries related to it are added')
    .option('--file <path>', 'a knowledge file inside the agent folder (repeatable)', collect, [])
    .option('--budget <tokens>', 'token budget of the whole context', intOption('--budget'))
    .option('--home <dir>', 'the agent home on this machine (default: agent.home, KNOWHUB_AGENT_HOME or ~/.agent)')
    .option('--template <file>', 'a system-prompt template instead of the agent’s own or the default')
    .option(
      '--project <dir>',
      'the agent’s project folder (default: this directory): seed 004’s knowledge/self_awareness.md and knowledge/minimal/system/system_prompt_minimal.md there come before the shipped defaults',
    )
    .option('--stored', 'the agent stored on the server (its documents in the store, /api/agents/NAME), not the folder on this machine')
    .addOption(new Option('--language <lang>', 'language of the defaults and labels').choices(['en', 'zh']))
    .option('--json', 'print JSON: { messages, report }')
    .addHelpText(
      'after',
      '\nThe agent folder is read by this command, on this machine, also beside a running server (which gives the knowledge and packs).\n' +
        'Example:\n  knowhub agent context book_agent --task "Write chapter 3" --budget 8000',
    )
    .action(async (name: string, options, command: Command) => {
      const where = sessionOptions(command)
      const config = options.stored ? undefined : (await readConfig(where)).agent
      const besideNote = options.stored
        ? `assembling the context of the agent "${name}" stored there`
        : `reading the agent folder "${name}" here, on this machine; knowledge and packs come from that server`
      // In this process on a data folder no server holds: say where the knowledge comes from (an empty folder gives none).
      const localNote = 'the agent’s KnowHub knowledge comes from that folder, opened in this process (start the server, or pass --url, to use a running hub)'
      const result = await withSession({ ...where, besideNote, localNote }, io, (session) =>
        session.agent.context(
          {
            agent: name,
            knowledgeFiles: options.file,
            ...(options.task !== undefined ? { task: options.task } : {}),
            ...(options.budget !== undefined ? { budget: options.budget } : {}),
            ...(options.home !== undefined ? { home: options.home } : {}),
            ...(options.template !== undefined ? { template: options.template } : {}),
            ...(options.stored ? {} : { project: resolve(options.project ?? '.') }),
            ...(options.language !== undefined ? { language: options.language } : {}),
            stored: options.stored === true,
          },
          config,
        ),
      )
      if (options.json) return printJson(io, result)
      for (const message of result.messages) io.out(`===== ${message.role} =====\n${message.content}\n`)
      const { report } = result
      io.out(`===== report: ${report.used} of ${report.budget} tokens =====`)
      for (const part of report.parts) {
        const items = part.items !== undefined ? `  ${part.included_items ?? 0}/${part.items} entries` : ''
        io.out(
          `${part.status.padEnd(9)} ${part.name.padEnd(20)} ${String(part.tokens).padStart(6)} / ${part.original_tokens}${items}${part.reason ? `  (${part.reason})` : ''}`,
        )
      }
      const index = report.function_index
      io.out(
        `function index: ${index.path} (${index.functions} functions${index.written === false && report.source === 'folder' ? '; not written: the agent folder does not exist' : ''})`,
      )
    })
}

/** `knowhub agent index NAME [--file …] [--home]`: regenerates knowledge_function_index.json. */
export function agentIndexCommand(io: Io): Command {
  return new Command('index')
    .description('Regenerate the agent’s knowledge_function_index.json from its knowledge files')
    .argument('<name>', 'the agent')
    .option('--file <path>', 'a knowledge file inside the agent folder (repeatable)', collect, [])
    .option('--home <dir>', 'the agent home')
    .option('--project <dir>', 'the agent’s project folder (default: this directory): its knowledge/self_awareness.md comes before the shipped default')
    .addOption(new Option('--language <lang>', 'language of the default self-awareness file').choices(['en', 'zh']))
    .option('--json', 'print the index as JSON')
    .action(async (name: string, options, command: Command) => {
      // Files only: no database is opened, so it runs beside a server holding the data folder.
      const config = (await import('../../config.js')).loadConfig(processEnv(), globals(command).config ? { configFile: globals(command).config } : {})
      const { indexAgentFunctions } = await import('../../../app/agent-files.js')
      const result = await indexAgentFunctions(config, {
        agent: name,
        knowledgeFiles: options.file,
        ...(options.home !== undefined ? { home: options.home } : {}),
        project: resolve(options.project ?? '.'),
        ...(options.language !== undefined ? { language: options.language } : {}),
      })
      if (options.json) return printJson(io, result.index)
      io.out(`wrote ${result.path}: ${result.functions} functions`)
      for (const f of Object.values(result.index.functions)) io.out(`  @${f.name}  ${f.func_type.padEnd(8)} ${f.path}:${f.line}  ${f.summary}`)
      for (const d of result.index.duplicates) io.out(`  duplicate @${d.name} at ${d.path}:${d.line} (the first declaration wins)`)
    })
}
