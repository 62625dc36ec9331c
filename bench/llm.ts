/**
 * `npm run bench -- --only llm`: the learning loop against a real model on the labelled
 * extraction set (bench/data/extraction/, issue 43). Each conversation is extracted in save
 * mode by KnowHub's `openai` provider into its own scopes of one embedded hub (the entries a
 * contradiction starts from saved first), then judged by bench/llm-judge.ts. Per language:
 * entries saved, grounded share of the proposals, ungrounded entries saved (goal 0), facts
 * recovered, forbidden facts and secrets saved (goal 0), contradictions applied, model failures
 * by reason (none unhandled), calls, tokens and seconds.
 *
 * The model: `KNOWHUB_LLM_URL` and `KNOWHUB_LLM_MODEL` (and `KNOWHUB_LLM_API_KEY`) when set,
 * your own endpoint; else Gemma 3 270M on llama_cpp.server from `.cache/venv`
 * (`bash scripts/models-setup.sh`), started here on a free loopback port.
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { openKnowHub, type KnowHub } from '../src/app/open.js'
import { isKnowHubError } from '../src/core/errors.js'
import { Principal } from '../src/core/principal.js'
import { startModelServer, type ModelServer } from '../test/helpers/models.js'
import { ExtractionCase, judgeCase, type CaseScore, type JudgedEntry } from './llm-judge.js'
import { round, type BenchResult } from './lib.js'

export interface LlmBenchOptions {
  /** Conversations per language (default: all). */
  perLanguage?: number
}

/** What one extraction did, besides its score. */
interface CaseRun {
  score: CaseScore
  proposals: number
  ungroundedDropped: number
  /** Kept items written in the other language than the conversation (grounded all the same). */
  otherLanguage: number
  failure?: string
  /** What went wrong with the model and was handled (the result's `problems`), as `stage reason`. */
  problems: string[]
  seconds: number
  calls: number
  tokens: number
}

function readSet(lang: 'en' | 'zh'): ExtractionCase[] {
  const text = readFileSync(new URL(`./data/extraction/${lang}.jsonl`, import.meta.url), 'utf8')
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => ExtractionCase.parse(JSON.parse(line)))
}

/** The endpoint: the user's own (KNOWHUB_LLM_URL), else the local Gemma 3 270M server. */
async function endpoint(): Promise<{ url: string; model: string; apiKey?: string; close(): Promise<void> }> {
  const url = process.env.KNOWHUB_LLM_URL
  if (url) {
    const model = process.env.KNOWHUB_LLM_MODEL
    if (!model) throw new Error('KNOWHUB_LLM_URL is set: set KNOWHUB_LLM_MODEL too')
    const apiKey = process.env.KNOWHUB_LLM_API_KEY
    return { url, model, ...(apiKey ? { apiKey } : {}), close: async () => {} }
  }
  const server: ModelServer = await startModelServer('chat')
  return server
}

/** Saves the entries the case starts from, where extraction would place them. */
async function seed(hub: KnowHub, labelled: ExtractionCase, principal: Principal): Promise<Map<string, string>> {
  const seeded = new Map<string, string>()
  for (const e of labelled.existing ?? []) {
    const profile = e.types.includes('user_profile')
    const place = profile ? { scopes: [`user:${principal.user}`], owner: `user:${principal.user}` } : { scopes: [`project:${principal.project}`] }
    const saved = await hub.knowledge.save({ task: e.task, content: e.content, types: e.types, tags: e.tags ?? {}, ...place }, principal)
    seeded.set(saved.id, saved.content)
  }
  return seeded
}

const usageTotals = (hub: KnowHub) =>
  hub.llm!.usage().reduce((t, u) => ({ calls: t.calls + u.calls, tokens: t.tokens + u.prompt_tokens + u.completion_tokens }), { calls: 0, tokens: 0 })

async function runCase(hub: KnowHub, labelled: ExtractionCase): Promise<CaseRun> {
  const principal = Principal.parse({ user: labelled.id, agent: 'bench', project: labelled.id, permissions: ['read', 'write'] })
  const seeded = await seed(hub, labelled, principal)
  const before = usageTotals(hub)
  const started = performance.now()
  let proposals = 0
  let ungroundedDropped = 0
  let otherLanguage = 0
  let failure: string | undefined
  let problems: string[] = []
  try {
    const result = await hub.extraction.extract({ messages: labelled.messages, mode: 'save', context: { trace_id: labelled.id } }, principal)
    ungroundedDropped = result.dropped.filter((d) => d.reason.startsWith('ungrounded')).length
    proposals = result.items.length + ungroundedDropped
    otherLanguage = result.items.filter((i) => i.grounding?.other_language).length
    problems = result.problems.map((p) => `${p.stage} ${p.reason}`)
  } catch (error) {
    if (!isKnowHubError(error)) throw error
    failure = `${error.code}${typeof error.details?.reason === 'string' ? ` (${error.details.reason})` : ''}`
  }
  const seconds = (performance.now() - started) / 1000
  const after = usageTotals(hub)
  const { items } = await hub.knowledge.list({ limit: 100, include: ['superseded'] }, principal)
  const entries: JudgedEntry[] = items.map((e) => ({
    id: e.id,
    task: e.task,
    content: e.content,
    current: e.valid_to === null && e.status === 'active',
    ...(seeded.has(e.id) ? { seeded: seeded.get(e.id)! } : {}),
  }))
  const score = await judgeCase(labelled, entries)
  return {
    score,
    proposals,
    ungroundedDropped,
    otherLanguage,
    ...(failure ? { failure } : {}),
    problems,
    seconds,
    calls: after.calls - before.calls,
    tokens: after.tokens - before.tokens,
  }
}

/** The figures of one language. */
function report(lang: string, runs: readonly CaseRun[], note: string): BenchResult[] {
  const sum = (f: (r: CaseRun) => number) => runs.reduce((s, r) => s + f(r), 0)
  const proposals = sum((r) => r.proposals)
  const contradictions = runs.filter((r) => r.score.contradictionApplied !== undefined)
  const failures = new Map<string, number>()
  for (const r of runs) if (r.failure) failures.set(r.failure, (failures.get(r.failure) ?? 0) + 1)
  const failed = [...failures].map(([reason, n]) => `${reason} ×${n}`).join(', ')
  const handled = new Map<string, number>()
  for (const p of runs.flatMap((r) => r.problems)) handled.set(p, (handled.get(p) ?? 0) + 1)
  const row = (name: string, value: number, unit: string, target?: string, extra?: string): BenchResult => ({
    name: `${lang}: ${name}`,
    value,
    unit,
    ...(target ? { target } : {}),
    note: extra ? `${extra}; ${note}` : note,
  })
  return [
    row('conversations', runs.length, 'conversations'),
    row(
      'entries saved',
      sum((r) => r.score.saved),
      'entries',
    ),
    row(
      'grounded share of proposals',
      proposals === 0 ? 0 : round((proposals - sum((r) => r.ungroundedDropped)) / proposals, 3),
      'share',
      undefined,
      `${proposals} proposals`,
    ),
    row(
      'kept answers in the other language (grounded)',
      sum((r) => r.otherLanguage),
      'entries',
    ),
    row(
      'ungrounded entries saved active',
      sum((r) => r.score.ungrounded.length),
      'entries',
      '0',
    ),
    row(
      'facts recovered',
      sum((r) => r.score.factsRecovered),
      `of ${sum((r) => r.score.facts)}`,
    ),
    row(
      'forbidden facts saved',
      sum((r) => r.score.forbiddenSaved.length),
      'facts',
      '0',
      'chit-chat, guesses and secrets',
    ),
    row(
      'secrets saved',
      sum((r) => r.score.secretsSaved.length),
      'secrets',
      '0',
    ),
    row('contradictions applied', contradictions.filter((r) => r.score.contradictionApplied).length, `of ${contradictions.length}`),
    row(
      'model problems handled (a reason, nothing written for them)',
      runs.reduce((n, r) => n + r.problems.length, 0),
      'problems',
      undefined,
      [...handled].map(([p, n]) => `${p} ×${n}`).join(', ') || 'none',
    ),
    row('extractions failed (an llm_* error: the endpoint failed or was too slow)', runs.filter((r) => r.failure).length, 'extractions', '0', failed || 'none'),
    row(
      'LLM calls',
      sum((r) => r.calls),
      'calls',
    ),
    row(
      'tokens',
      sum((r) => r.tokens),
      'tokens',
      undefined,
      'prompt + completion',
    ),
    row(
      'seconds',
      round(
        sum((r) => r.seconds),
        1,
      ),
      's',
      undefined,
      `median ${round(median(runs.map((r) => r.seconds)), 1)} s a conversation`,
    ),
  ]
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)]!
}

export async function runLlmBench(options: LlmBenchOptions = {}): Promise<BenchResult[]> {
  const model = await endpoint()
  const hub = await openKnowHub({
    dataDir: 'memory://',
    embedder: { provider: 'hashed', dimension: 256 },
    search: { cacheSize: 0 },
    // Generous per request: llama_cpp.server keeps working on a request the client gave up on, and the next ones queue behind it.
    llm: { url: model.url, model: model.model, ...(model.apiKey ? { apiKey: model.apiKey } : {}), timeoutMs: 180_000, callTimeoutMs: 300_000, retries: 1 },
  })
  const results: BenchResult[] = []
  try {
    for (const lang of ['en', 'zh'] as const) {
      const cases = readSet(lang).slice(0, options.perLanguage)
      const load = loadavg()[0]!.toFixed(1)
      const runs: CaseRun[] = []
      for (const labelled of cases) {
        const run = await runCase(hub, labelled)
        runs.push(run)
        const s = run.score
        process.stderr.write(
          `${labelled.id}: ${s.saved} saved, facts ${s.factsRecovered}/${s.facts}, forbidden ${s.forbiddenSaved.length}, ungrounded ${s.ungrounded.length}${s.contradictionApplied === undefined ? '' : `, contradiction ${s.contradictionApplied}`}${run.failure ? `, failed ${run.failure}` : ''}, ${run.seconds.toFixed(1)} s\n`,
        )
      }
      const health = hub.llm!.health()
      const note = `${model.model}, structured output ${health.structured_output.current}, load ${load}→${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString().slice(0, 16)}Z`
      results.push(...report(lang, runs, note))
    }
    const failures = Object.entries(hub.llm!.health().failures).map(([reason, n]) => `${reason} ${n}`)
    results.push({ name: 'model failures counted by the provider', value: failures.length, unit: 'reasons', note: failures.join(', ') || 'none' })
  } finally {
    await hub.close()
    await model.close()
  }
  return results
}
