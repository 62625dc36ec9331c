/**
 * `knowhub eval DIR`: evaluates retrieval on a normalised retrieval set (corpus.jsonl,
 * queries.jsonl, qrels.jsonl) in a fresh temporary store. The command is defined here; the
 * evaluation itself (src/cli/commands/eval-run.ts) loads only when it runs.
 */
import { Command, Option } from 'commander'
import type { EvalEmbedderName } from '../../app/eval.js'
import { KnowHubError } from '../../core/errors.js'
import type { EvalMode } from '../../eval/harness.js'
import type { GlobalOptions } from '../context.js'
import type { Io } from '../output.js'
import type { EvalOptions } from './eval-run.js'

export type { EvalReport } from './eval-run.js'

/** The retrieval modes (EVAL_MODES of src/eval/harness.ts), without loading the harness. */
const MODES = ['hybrid', 'fulltext', 'vector'] as const satisfies readonly EvalMode[]
/** The embedders (EVAL_EMBEDDERS of src/app/eval.ts), without loading them. */
const EMBEDDERS = ['config', 'hashed', 'sentence', 'openai'] as const satisfies readonly EvalEmbedderName[]
// Compile-time checks that no mode or embedder is missing from the lists above.
type Missing<All, Listed> = Exclude<All, Listed> extends never ? true : never
const complete: [Missing<EvalMode, (typeof MODES)[number]>, Missing<EvalEmbedderName, (typeof EMBEDDERS)[number]>] = [true, true]
void complete

function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1 || n > max) throw new KnowHubError('validation_error', `${name} must be an integer from 1 to ${max}, got "${value}"`)
    return n
  }
}

/** The `eval` command. */
export function evalCommand(io: Io): Command {
  return new Command('eval')
    .description('Evaluate retrieval on a normalised retrieval set (corpus.jsonl, queries.jsonl, qrels.jsonl) in a fresh temporary store')
    .argument('<dir>', 'folder of the retrieval set')
    .addOption(new Option('--mode <mode>', 'retrieval mode; "all" runs every mode and hybrid without the rerank').choices([...MODES, 'all']).default('hybrid'))
    .option('--no-rerank', 'order by relevance only (skip the quality rerank)')
    .option('--no-gate', 'turn the relevance gate off (to measure what it costs or saves)')
    .option('--self-calibrate', "read the embedder's similarities by the self-calibration rule, as for a model KnowHub has no table for (docs/retrieval.md)")
    .option('--neighbours', 'dialogue neighbours on (search.neighbours: for sets of raw dialogue turns, as LoCoMo and LongMemEval)')
    .option('-k, --top-k <n>', 'results per query (metrics @10 need 10)', positiveInt('--top-k', 100), 10)
    .option('-n, --limit <n>', 'evaluate only the first N judged queries', positiveInt('--limit'))
    .addOption(
      new Option('--routing <mode>', 'semantic routing by the configured LLM for every query (llm), or none (off, the default)').choices(['off', 'llm']),
    )
    .addOption(
      new Option('--embedder <name>', 'embedder: the configured one, hashed n-grams, USE lite + n-grams, or the configured OpenAI-compatible model (openai)')
        .choices([...EMBEDDERS])
        .default('config'),
    )
    .option('--per-query', 'also report each query: its ranked document ids and recall@10 (JSON), or the queries not fully found (table)')
    .option('--out <file>', 'also write the JSON report to a file')
    .option('--json', 'print the JSON report instead of the table')
    .option(
      '--absent <files...>',
      'also search these queries (JSONL files, or folders with a queries.jsonl: topics absent from the set) in every conv and report the share answered',
    )
    .option('--embed-cache <file>', 'keep computed vectors in this file and reuse them in later runs (same embedder: the same vectors, without the wait)')
    .option('--feedback', 'also measure feedback robustness (random helpful and harmful cases, near-duplicate pairs); runs last')
    .addHelpText(
      'after',
      [
        '',
        'Each document becomes a knowledge entry in scope project:<meta.conv>; each query is searched',
        'as a principal that sees only its own conv. The store is a temporary embedded database,',
        'removed afterwards: your own knowledge base is never touched.',
        '',
        'Examples:',
        '  knowhub eval bench/data/zh-agent',
        '  knowhub eval ../shared/corpus/locomo/facts-dev --mode all --limit 200 --out facts.json',
        '  knowhub eval bench/data/zh-agent --absent bench/data/no-answer-zh/queries.jsonl --feedback',
        '  knowhub eval bench/data/small-stores --embedder hashed   (judged completely: also precision@3/@5,',
        '      the unrelated share of what is returned, hit@5 and context precision; see docs/retrieval.md)',
      ].join('\n'),
    )
    .action(async (dirArg: string, options: EvalOptions, command: Command) => {
      // The harness, the evaluation hub and the embedders load only when an evaluation runs: `knowhub --help` stays fast.
      const { runEval } = await import('./eval-run.js')
      await runEval(io, dirArg, options, command.optsWithGlobals() as GlobalOptions)
    })
}
