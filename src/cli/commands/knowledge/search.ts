/**
 * `knowhub search QUERY`: hybrid search, as the API answers it.
 */
import { Command, Option } from 'commander'
import { withSession } from '../../context.js'
import { collect, csv, intOption, serverOptions, sessionOptions, tagFilter } from '../../options.js'
import { oneLine, printJson, type Io } from '../../output.js'
import { SEARCH_ORDERS } from '../../../core/vocabulary.js'

/** `knowhub search QUERY [--top-k] [--types] [--mode] [--explain] [--as-of] [--include]`. */
export function searchCommand(io: Io): Command {
  return serverOptions(new Command('search'))
    .description('Search knowledge (hybrid full-text + vector, then quality rerank)')
    .argument('<query>', 'what you are looking for')
    .option('-k, --top-k <n>', 'number of results', intOption('--top-k'), 5)
    .option('--min-score <n>', 'drop entries scored below this', intOption('--min-score'), 3)
    .option('--types <list>', 'comma-separated types', csv)
    .addOption(
      new Option('--mode <mode>', 'retrieval mode; recall: hybrid, also returning candidates that follow a strong first result (a top-k above 5 does too)')
        .choices(['hybrid', 'fulltext', 'vector', 'recall'])
        .default('hybrid'),
    )
    .option('--no-rerank', 'order by relevance only (skip the quality rerank)')
    .option('--explain', 'show each stage’s scores')
    .addOption(new Option('--routing <mode>', 'semantic routing by the LLM for this search (default: search.routing)').choices(['off', 'llm']))
    .option('--as-of <date>', 'what was valid at this date (ISO, e.g. 2026-03-01) instead of now')
    .option('--include <list>', 'also return entries that are not current: superseded, expired (comma-separated)', csv)
    .addOption(
      new Option('--order <order>', 'relevance (default), scope (seed 002: user > project > agent > team > org > public) or quality (seed 003)')
        .choices([...SEARCH_ORDERS])
        .default('relevance'),
    )
    .option('--visibility <list>', 'only entries of these visibilities: private, shared, org, public (comma-separated)', csv)
    .option('--tag <key=value>', 'only entries with this tag (repeatable: every one must hold)', collect, [])
    .option('--json', 'print JSON (the API’s response shape)')
    .action(async (query: string, options, command: Command) => {
      const response = await withSession({ ...sessionOptions(command), readsOnly: true, embeds: options.mode !== 'fulltext' && [query] }, io, (session) =>
        session.knowledge.search({
          q: query,
          top_k: options.topK,
          min_score: options.minScore,
          ...(options.types ? { types: options.types } : {}),
          mode: options.mode,
          rerank: options.rerank,
          explain: Boolean(options.explain),
          ...(options.routing ? { routing: options.routing } : {}),
          ...(options.asOf ? { as_of: options.asOf } : {}),
          ...(options.include ? { include: options.include } : {}),
          ...(options.order !== 'relevance' ? { order: options.order } : {}),
          ...(options.visibility ? { visibility: options.visibility } : {}),
          ...(options.tag.length > 0 ? { tags: tagFilter(options.tag) } : {}),
        }),
      )
      if (options.json) return printJson(io, response)
      if (response.routing) io.out(`routing: ${response.routing.status}${response.routing.reason ? ` (${response.routing.reason})` : ''}`)
      if (response.count === 0) return io.out('no results')
      response.results.forEach((r, i) => {
        const history = r.superseded
          ? `  superseded${r.superseded_by ? ` by ${r.superseded_by}` : ''}${r.valid_to ? ` on ${r.valid_to}` : ''}`
          : r.expired
            ? '  expired'
            : ''
        io.out(`${i + 1}. ${r.id}  quality ${r.quality_score}  [${r.types.join(', ')}]${history}`)
        io.out(`   ${oneLine(r.task)}`)
        io.out(`   ${oneLine(r.content)}`)
        if (r.explain) io.out(`   explain: ${JSON.stringify(r.explain)}`)
      })
    })
}
