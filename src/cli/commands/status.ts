import { Command } from 'commander'
import { withSession } from '../context.js'
import { serverOptions, sessionOptions } from '../options.js'
import { printJson, type Io } from '../output.js'

/** Where an embedder's query/document convention came from, in words. */
const CONVENTION_SOURCE = {
  config: 'as configured',
  table: "KnowHub's table of known models",
  unknown: 'a model KnowHub does not know: embedded alike unless embedder.convention says otherwise',
} as const

/** `knowhub status`: where the data is, which embedder, how many entries. */
export function statusCommand(io: Io): Command {
  return serverOptions(new Command('status'))
    .description('Show the database, embedder and number of entries')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const status = await withSession({ ...sessionOptions(command), readsOnly: true }, io, (session) => session.admin.status())
      if (options.json) return printJson(io, status)
      io.out(
        `database:  ${status.database}${status.location ? ` (${status.location})` : ''}${status.pgvector ? ', pgvector' : ', exact vector search (no pgvector)'}`,
      )
      io.out(`embedder:  ${status.embedder.model} (${status.embedder.dimension} dimensions), vectors ${status.vectors}`)
      const { convention, calibration } = status.embedder
      if (convention) io.out(`           queries and documents: ${convention.name} (${CONVENTION_SOURCE[convention.source]})`)
      if (calibration) io.out(`           calibration: ${calibration.name}`)
      io.out(`entries:   ${status.entries}${status.reach === 'org' ? ` (visible to org ${status.principal.org ?? '-'})` : ''}`)
      io.out(
        `llm:       ${status.llm ? `${status.llm.model}, routing ${status.llm.routing}${learnsOn(status.llm.learning)}` : 'none (routing, evolve, LLM slimming and extraction are off; nothing is learned at compaction or when a goal completes)'}`,
      )
      const health = status.llm?.health
      if (health) {
        const { current, refused } = health.structured_output
        const failures = Object.entries(health.failures).map(([reason, n]) => `${reason} ${n}`)
        io.out(`  structured output: ${current}${refused.length > 0 ? ` (the endpoint refused ${refused.join(', ')})` : ''}`)
        io.out(`  failures since start: ${failures.length > 0 ? failures.join(', ') : 'none'}; answers cut at max_tokens: ${health.truncated_answers}`)
      }
      for (const u of status.llm?.usage ?? []) {
        io.out(
          `  ${u.task.padEnd(8)} ${u.model}: ${u.calls} calls (${u.failures} failed), ${u.prompt_tokens} prompt + ${u.completion_tokens} completion tokens`,
        )
      }
      const p = status.principal
      io.out(
        `principal: ${['user', 'agent', 'project', 'team', 'org'].flatMap((k) => (p[k as 'user'] ? [`${k}:${p[k as 'user']}`] : [])).join(' ')} (${p.permissions.join(', ')})`,
      )
    })
}

/** `knowhub whoami`: the principal and role the hub sees (the token's, beside a server). */
export function whoamiCommand(io: Io): Command {
  return serverOptions(new Command('whoami'))
    .description('Show who the hub takes you for: your principal and role')
    .option('--json', 'print JSON')
    .action(async (options, command: Command) => {
      const me = await withSession(sessionOptions(command), io, (session) => session.users.me())
      if (options.json) return printJson(io, me)
      const p = me.principal
      io.out(
        `${['user', 'agent', 'project', 'team', 'org'].flatMap((k) => (p[k as 'user'] ? [`${k}:${p[k as 'user']}`] : [])).join(' ') || '-'} (${me.role}: ${p.permissions.join(', ')})`,
      )
    })
}

/** When the hub learns by itself (seed 002's triggers), as status prints it. */
function learnsOn(learning: { on_compaction: boolean; on_goal_complete: boolean } | undefined): string {
  if (!learning) return ''
  const when = [learning.on_compaction ? 'compaction' : '', learning.on_goal_complete ? 'a goal completing' : ''].filter(Boolean)
  return when.length > 0 ? `; learns at ${when.join(' and ')}` : ''
}
