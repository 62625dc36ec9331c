/**
 * `npm run bench -- --only contradictions` (issue 31): memory that stays true. Every case of
 * bench/data/contradictions goes through the real extraction service, session by session, with
 * KnowHub's local OpenAI-compatible test server answering scripted decisions: what a correct
 * model would answer, derived from the case file (bench/contradictions-set.ts). So the figures
 * measure KnowHub's plumbing — candidate search, the SUPERSEDE decision's checks and
 * transaction, `valid_from` from message times, search's current view and `as_of` — not a
 * model's judgement.
 *
 * Reported per language and embedder, with supersession and without (every decision ADD):
 * - now hit@1: the new fact first for the question about now (goal >= 0.95);
 * - as-of hit@1: the old fact first for the question about before, searched `as_of` (goal >= 0.95);
 * - stale@5: the share of "now" questions whose top 5 holds the replaced fact (goal <= 2 %).
 */
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { openEvalHub, evalEmbedder, type EvalHub } from '../src/app/eval.js'
import { loadConfig } from '../src/cli/config.js'
import { LlmConfig } from '../src/core/config.js'
import { Principal } from '../src/core/principal.js'
import { startOpenAIStub } from '../test/helpers/openai-stub.js'
import { CONTRADICTION_LANGS, caseSessions, loadContradictions, scriptedModel, type ContradictionCase, type ScriptMode } from './contradictions-set.js'
import { printTable, round, type BenchResult } from './lib.js'

export interface ContradictionsBenchOptions {
  /** Embedders to run (default hashed and sentence); `openai`: the configured OpenAI-compatible model (KNOWHUB_EMBEDDER=openai …). */
  embedders?: ReadonlyArray<'hashed' | 'sentence' | 'openai'>
  /** Only the first N cases of each language. */
  limit?: number
  /** With supersession, the baseline where every decision is ADD, or both (default). */
  modes?: readonly ScriptMode[]
  /** Languages to run (default both). */
  langs?: ReadonlyArray<(typeof CONTRADICTION_LANGS)[number]>
  /** Only the cases with these ids. */
  ids?: readonly string[]
  /** For every miss, print what search answered with `explain` (the gate's evidence). */
  explain?: boolean
  /** Every outcome is told here (the command line writes them to a JSON file). */
  onOutcome?: (o: CaseOutcome & { lang: string; embedder: string; mode: ScriptMode }) => void
}

/** One case's outcome. */
export interface CaseOutcome {
  id: string
  now_hit: boolean
  stale: boolean
  before_hit: boolean
  superseded: boolean
  /** Ranked fact ids (or `?` for an entry of no fact) for the two questions. */
  now: string[]
  before: string[]
  /** With `explain`, for a missed question: each result's fact and the explain figures that decided it. */
  explained?: { now?: ExplainedResult[]; before?: ExplainedResult[] }
}

/** One result of a missed question, with the figures `explain` gives. */
export interface ExplainedResult {
  fact: string
  evidence?: string | undefined
  fulltext_strength: number | null
  vector_similarity: number | null
  relevance_probability?: number | undefined
  background_similarity?: number | undefined
  fused: number
  relevance: number
}

/** The principal of one case: its own user, agent and project, so cases never see each other. */
function casePrincipal(c: ContradictionCase): Principal {
  return Principal.parse({ user: `u-${c.id}`, agent: 'assistant', project: `p-${c.id}`, permissions: ['read', 'write'] })
}

/**
 * Runs one case: extraction session by session (save mode, messages with their timestamps), then
 * the two questions.
 */
export async function runCase(hub: EvalHub, c: ContradictionCase, setCurrent: (c: ContradictionCase) => void, explain = false): Promise<CaseOutcome> {
  setCurrent(c)
  const principal = casePrincipal(c)
  const entryFact = new Map<string, string>()
  let superseded = false
  for (const session of caseSessions(c)) {
    const messages = session.map((m) => ({ id: m.id, role: m.role, content: m.content, timestamp: m.date }))
    const result = await hub.extraction.extract({ messages, mode: 'save', context: { trace_id: `${c.id}-${session[0]!.date.slice(0, 10)}` } }, principal)
    for (const item of result.items) {
      const fact = c.facts.find((f) => f.content === item.content)
      if (item.id && fact) entryFact.set(item.id, fact.id)
      if (item.action === 'supersede') superseded = true
    }
  }
  const facts = (results: Array<{ id: string }>) => results.map((r) => entryFact.get(r.id) ?? '?')
  const now = facts((await hub.knowledge.search({ q: c.now.q, top_k: 5 }, principal)).results)
  const before = facts((await hub.knowledge.search({ q: c.before.q, top_k: 5, as_of: c.before.as_of }, principal)).results)
  const outcome: CaseOutcome = {
    id: c.id,
    now_hit: now[0] === c.now.expect,
    stale: now.includes(c.now.stale),
    before_hit: before[0] === c.before.expect,
    superseded,
    now,
    before,
  }
  if (explain && (!outcome.now_hit || outcome.stale || !outcome.before_hit)) {
    const explained = async (query: { q: string; as_of?: string }) =>
      (await hub.knowledge.search({ ...query, top_k: 5, explain: true }, principal)).results.map((r) => ({
        fact: entryFact.get(r.id) ?? '?',
        evidence: r.explain?.evidence,
        fulltext_strength: r.explain?.fulltext_strength ?? null,
        vector_similarity: r.explain?.vector_similarity ?? null,
        relevance_probability: r.explain?.relevance_probability,
        background_similarity: r.explain?.background_similarity,
        fused: r.explain?.fused ?? NaN,
        relevance: r.explain?.relevance ?? NaN,
      }))
    outcome.explained = {
      ...(!outcome.now_hit || outcome.stale ? { now: await explained({ q: c.now.q }) } : {}),
      ...(!outcome.before_hit ? { before: await explained({ q: c.before.q, as_of: c.before.as_of }) } : {}),
    }
  }
  return outcome
}

/** One line per explained result: `fact evidence s=strength v=similarity p=probability`. */
function explainLines(results: readonly ExplainedResult[] | undefined): string {
  if (!results) return ''
  if (results.length === 0) return '\n      (no results)'
  const f = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(3))
  return results
    .map(
      (r) =>
        `\n      ${r.fact} ${r.evidence ?? ''} s=${f(r.fulltext_strength)} v=${f(r.vector_similarity)} p=${f(r.relevance_probability)} bg=${f(r.background_similarity)} fused=${f(r.fused)}`,
    )
    .join('')
}

/** Rates of a group of outcomes. */
export function contradictionRates(outcomes: readonly CaseOutcome[]): { now_hit1: number; asof_hit1: number; stale5: number; superseded: number } {
  const share = (f: (o: CaseOutcome) => boolean) => (outcomes.length === 0 ? NaN : outcomes.filter(f).length / outcomes.length)
  return { now_hit1: share((o) => o.now_hit), asof_hit1: share((o) => o.before_hit), stale5: share((o) => o.stale), superseded: share((o) => o.superseded) }
}

const load = (): string => `load ${loadavg()[0]!.toFixed(1)}`

export async function runContradictionsBench(options: ContradictionsBenchOptions = {}): Promise<BenchResult[]> {
  const embedders = options.embedders ?? ['hashed', 'sentence']
  const cases = (options.langs ?? CONTRADICTION_LANGS).map((lang) => ({
    lang,
    cases: loadContradictions(lang)
      .filter((c) => !options.ids || options.ids.includes(c.id))
      .slice(0, options.limit),
  }))
  let current: ContradictionCase = cases[0]!.cases[0]!
  let mode: ScriptMode = 'supersede'
  const responders = { supersede: scriptedModel(() => current, 'supersede'), 'add-only': scriptedModel(() => current, 'add-only') }
  await using stub = await startOpenAIStub({ chat: (request) => responders[mode](request) })
  const results: BenchResult[] = []
  console.error('the model is a scripted stub answering what a correct model would, from the case file: these figures measure KnowHub, not a model')
  for (const embedderName of embedders) {
    for (const run of options.modes ?? (['supersede', 'add-only'] as const)) {
      mode = run
      const hub = await openEvalHub({
        embedder: await evalEmbedder(embedderName, embedderName === 'openai' ? loadConfig().embedder : { provider: 'hashed', dimension: 512 }),
        llm: LlmConfig.parse({ url: stub.url, model: 'scripted', timeoutMs: 10_000 }),
      })
      try {
        for (const { lang, cases: list } of cases) {
          const started = performance.now()
          const outcomes: CaseOutcome[] = []
          for (const c of list) {
            const outcome = await runCase(hub, c, (next) => (current = next), options.explain)
            outcomes.push(outcome)
            options.onOutcome?.({ ...outcome, lang, embedder: embedderName, mode: run })
          }
          const seconds = (performance.now() - started) / 1000
          const rates = contradictionRates(outcomes)
          const label = `${lang} ${embedderName} ${run === 'supersede' ? 'supersede' : 'baseline (all ADD)'}`
          const note = `${outcomes.length} cases, ${round(seconds, 1)} s, ${load()}, scripted model`
          results.push(
            { name: `${label}: now hit@1`, value: round(rates.now_hit1, 3), unit: 'rate', ...(run === 'supersede' ? { target: '>= 0.95' } : {}), note },
            { name: `${label}: as-of hit@1`, value: round(rates.asof_hit1, 3), unit: 'rate', ...(run === 'supersede' ? { target: '>= 0.95' } : {}), note },
            {
              name: `${label}: stale in top 5 (now)`,
              value: round(rates.stale5, 3),
              unit: 'share',
              ...(run === 'supersede' ? { target: '<= 0.02' } : {}),
              note,
            },
            { name: `${label}: cases superseded`, value: round(rates.superseded, 3), unit: 'share', note },
          )
          console.error(
            `${label}: now hit@1 ${round(rates.now_hit1, 3)}, as-of hit@1 ${round(rates.asof_hit1, 3)}, stale@5 ${round(rates.stale5, 3)}, superseded ${round(rates.superseded, 3)} (${note})`,
          )
          for (const o of outcomes.filter((o) => !o.now_hit || o.stale || !o.before_hit)) {
            console.error(`  ${embedderName}/${run} ${o.id}: now [${o.now.join(' ')}] before [${o.before.join(' ')}]${o.superseded ? '' : ' (not superseded)'}`)
            if (o.explained?.now) console.error(`    now:${explainLines(o.explained.now)}`)
            if (o.explained?.before) console.error(`    before:${explainLines(o.explained.before)}`)
          }
        }
      } finally {
        await hub.close()
      }
    }
  }
  return results
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      embedder: { type: 'string', multiple: true },
      lang: { type: 'string', multiple: true },
      mode: { type: 'string', multiple: true },
      id: { type: 'string', multiple: true },
      limit: { type: 'string' },
      explain: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    console.log(`usage: npx tsx bench/contradictions.ts [--embedder hashed|sentence|openai]… [--lang en|zh]… [--mode supersede|add-only]…
       [--id CASE]… [--limit N] [--explain] [--out FILE.json]
  --explain   for every miss, print the five results with the gate's evidence (explain=true)
  --out       write every case's outcome (ranked facts, and the explained results of misses) as JSON`)
    process.exit(0)
  }
  const outcomes: unknown[] = []
  const results = await runContradictionsBench({
    ...(values.embedder ? { embedders: values.embedder as Array<'hashed' | 'sentence' | 'openai'> } : {}),
    ...(values.lang ? { langs: values.lang as Array<(typeof CONTRADICTION_LANGS)[number]> } : {}),
    ...(values.mode ? { modes: values.mode as ScriptMode[] } : {}),
    ...(values.id ? { ids: values.id } : {}),
    ...(values.limit ? { limit: Number(values.limit) } : {}),
    explain: values.explain,
    onOutcome: (o) => outcomes.push(o),
  })
  printTable('contradictions', results)
  if (values.out) writeFileSync(values.out, JSON.stringify({ at: new Date().toISOString(), results, outcomes }, null, 2))
}
