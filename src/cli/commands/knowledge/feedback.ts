/**
 * `knowhub feedback ID`: a helpful or harmful case, a new score, or evolve; `knowhub evolve ID
 * --feedback …`: the LLM rewrite alone.
 */
import { Command } from 'commander'
import { KnowHubError } from '../../../core/errors.js'
import { withSession } from '../../context.js'
import { intOption, serverOptions, sessionOptions } from '../../options.js'
import { printJson, type Io } from '../../output.js'

/** `knowhub feedback ID --helpful|--harmful [--task] [--outcome] [--score] [--evolve]`. */
export function feedbackCommand(io: Io): Command {
  return serverOptions(new Command('feedback'))
    .description('Record feedback on an entry: helpful/harmful case, new score, or evolve')
    .argument('<id>', 'knowledge id')
    .option('--helpful', 'add a helpful case')
    .option('--harmful', 'add a harmful case')
    .option('--task <text>', 'the task the entry was used for')
    .option('--outcome <text>', 'what happened')
    .option('--reason <text>', 'why it was harmful')
    .option('--score <n>', 'set the score (1-5)', intOption('--score'))
    .option('--evolve <feedback>', 'rewrite the content from this feedback (needs an LLM)')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      if (options.helpful && options.harmful) throw new KnowHubError('validation_error', 'use --helpful or --harmful, not both')
      const kase = {
        ...(options.task ? { task: options.task } : {}),
        ...(options.outcome ? { outcome: options.outcome } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
      }
      const entry = await withSession(sessionOptions(command), io, (session) =>
        session.knowledge.feedback(id, {
          ...(options.helpful ? { add_helpful_case: kase } : {}),
          ...(options.harmful ? { add_harmful_case: kase } : {}),
          ...(options.score !== undefined ? { update_score: options.score } : {}),
          ...(options.evolve ? { evolve_feedback: options.evolve } : {}),
        }),
      )
      if (options.json) return printJson(io, entry)
      io.out(`${entry.id}: score ${entry.eval.score}, helpful ${entry.eval.helpful}, harmful ${entry.eval.harmful}`)
    })
}

/**
 * `knowhub supersede OLD --by NEW [--valid-to DATE]` (issue 31): entry OLD stops being current
 * (its `valid_to` is set, `superseded_by` names NEW); search answers with NEW from then on, and
 * `search --include superseded` or `--as-of` still finds OLD.
 */
export function supersedeCommand(io: Io): Command {
  return serverOptions(new Command('supersede'))
    .description('Mark an entry as replaced by another (it leaves search; --include superseded or --as-of still find it)')
    .argument('<old>', 'the id of the entry that is no longer true')
    .requiredOption('--by <id>', 'the id of the entry that replaces it')
    .option('--valid-to <date>', 'when the old entry stopped being true (default: when the new one started, else now)')
    .option('--json', 'print JSON')
    .action(async (old: string, options, command: Command) => {
      const { superseded, current } = await withSession(sessionOptions(command), io, (session) =>
        session.knowledge.supersede(old, { by: options.by, ...(options.validTo ? { valid_to: options.validTo } : {}) }),
      )
      if (options.json) return printJson(io, { superseded, current })
      io.out(`${superseded.id} is superseded by ${current.id} (valid until ${superseded.valid_to ?? 'now'})`)
    })
}

/** `knowhub evolve ID --feedback TEXT`: the LLM rewrites the content (owner or admin); the previous version is kept. */
export function evolveCommand(io: Io): Command {
  return serverOptions(new Command('evolve'))
    .description('Rewrite an entry with the LLM from feedback (owner or admin; the previous version is kept: show --versions)')
    .argument('<id>', 'knowledge id')
    .requiredOption('--feedback <text>', 'what to improve')
    .option('--json', 'print JSON')
    .action(async (id: string, options, command: Command) => {
      const entry = await withSession(sessionOptions(command), io, (session) => session.knowledge.feedback(id, { evolve_feedback: options.feedback }))
      if (options.json) return printJson(io, entry)
      if (entry.evolve && entry.evolve.status !== 'applied') {
        // The model's rewrite was not kept (issue 43): say why, leave the entry as it was, and fail.
        io.err(`not evolved (${entry.evolve.status}): ${entry.evolve.reason ?? 'no reason given'}; ${entry.id} stays at version ${entry.version}`)
        process.exitCode = 1
        return
      }
      io.out(`evolved ${entry.id} to version ${entry.version}`)
      io.out(entry.content)
    })
}
