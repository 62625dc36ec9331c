/**
 * `npm run bench -- --only packs-qa`: resolver quality on the packs-qa set
 * (bench/data/packs-qa/: 12 packs, English and Chinese, every profile and
 * runtime mode; judgements task → facts that must reach the context).
 *
 * Per budget (300, 800, 4,000 tokens): fact recall (a required fact's text is
 * in the resolved context), judgement recall (all of its facts are),
 * false-missing rate (answerable judgements whose context holds every fact
 * but `missing` still names something), gap detection (judgements asking for
 * a fact no pack has that get a `missing` entry), and tokens used.
 *
 * Side by side with the standard's reference CLI: with KNOWHUB_BENCH_AK_REF set
 * to its `bin/agentknowledge-ref.mjs` (limecloud/agentknowledge, not shipped
 * here), every judgement also runs `resolve-context PACK --query TASK` for each
 * of its packs; the files it selects, read in its order, are scored the same
 * way: with no budget (all of them), and as a client with a budget would use
 * them (whole files in order while they fit).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { PackIndexCache, loadPack, resolveContext, type LoadedPack } from '../src/packs/index.js'
import { countTokens } from '../src/core/text/token-count.js'
import { round, writeResults, type BenchResult } from './lib.js'

const DATA = join(import.meta.dirname, 'data', 'packs-qa')
const BUDGETS = [300, 800, 4000]

/** One judgement: the task, the packs to resolve over, the facts its context must hold. */
interface Judgement {
  id: string
  packs: string[]
  task: string
  facts: string[]
  expect_missing?: boolean
}

/** What one budget measured. */
export interface QaBudgetReport {
  budget: number
  fact_recall: number
  judgement_recall: number
  false_missing_rate: number
  gap_detection: number
  tokens_mean: number
  failures: { id: string; task: string; absent: string[]; missing: string[] }[]
  false_missing: { id: string; task: string; missing: string[] }[]
}

const normalise = (text: string): string => text.replace(/\s+/gu, ' ').toLowerCase()

/** Loads the set's packs and judgements. */
export async function loadQaSet(): Promise<{ packs: Map<string, LoadedPack>; judgements: Judgement[] }> {
  const packs = new Map<string, LoadedPack>()
  for (const entry of readdirSync(DATA, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const loaded = await loadPack(join(DATA, entry.name), { scope: 'extra' })
    if (!loaded.ok) throw new Error(`packs-qa: ${entry.name} did not load: ${JSON.stringify(loaded.rejected.issues)}`)
    packs.set(loaded.pack.item.name, loaded.pack)
  }
  const judgements = readFileSync(join(DATA, 'judgements.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Judgement)
  return { packs, judgements }
}

/** Fact and judgement recall over one run of the set: each judgement's context is added once. */
function recallTally() {
  let facts = 0
  let found = 0
  let whole = 0
  let answerable = 0
  return {
    /** Counts `context` for `j` and returns the facts it lacks. */
    add(j: Judgement, context: string): string[] {
      const text = normalise(context)
      const absent = j.facts.filter((f) => !text.includes(normalise(f)))
      facts += j.facts.length
      found += j.facts.length - absent.length
      if (!j.expect_missing) {
        answerable++
        if (absent.length === 0) whole++
      }
      return absent
    },
    factRecall: () => round(facts === 0 ? 1 : found / facts, 3),
    judgementRecall: () => round(answerable === 0 ? 1 : whole / answerable, 3),
    answerable: () => answerable,
  }
}

/** Runs every judgement at one budget. */
export async function runQaBudget(
  packs: Map<string, LoadedPack>,
  judgements: readonly Judgement[],
  budget: number,
  cache: PackIndexCache,
): Promise<QaBudgetReport> {
  const recall = recallTally()
  let falseMissing = 0
  let absentAsked = 0
  let gapsFound = 0
  let tokens = 0
  const report: QaBudgetReport = {
    budget,
    fact_recall: 0,
    judgement_recall: 0,
    false_missing_rate: 0,
    gap_detection: 0,
    tokens_mean: 0,
    failures: [],
    false_missing: [],
  }
  for (const j of judgements) {
    const selected = j.packs.map((name) => {
      const pack = packs.get(name)
      if (!pack) throw new Error(`packs-qa ${j.id}: unknown pack ${name}`)
      return pack
    })
    const r = await resolveContext({ task: j.task, packs: selected, budget, confirmed: true, cache })
    tokens += r.tokens
    const absent = recall.add(j, r.context)
    if (j.expect_missing) {
      absentAsked++
      if (r.missing.length > 0) gapsFound++
      continue
    }
    if (absent.length > 0) report.failures.push({ id: j.id, task: j.task, absent, missing: r.missing })
    if (absent.length === 0 && r.missing.length > 0) {
      falseMissing++
      report.false_missing.push({ id: j.id, task: j.task, missing: r.missing })
    }
  }
  report.fact_recall = recall.factRecall()
  report.judgement_recall = recall.judgementRecall()
  report.false_missing_rate = round(recall.answerable() === 0 ? 0 : falseMissing / recall.answerable(), 3)
  report.gap_detection = round(absentAsked === 0 ? 1 : gapsFound / absentAsked, 3)
  report.tokens_mean = round(tokens / Math.max(1, judgements.length), 0)
  return report
}

/** What the reference CLI's selection holds, per budget (0 = no budget). */
export interface ReferenceReport {
  budget: number
  fact_recall: number
  judgement_recall: number
  tokens_mean: number
  over_budget: number
}

/** The files the reference CLI selects for one task and pack, as text in its order. */
function referenceSelection(cli: string, pack: LoadedPack, task: string): string[] {
  const out = execFileSync(process.execPath, [cli, 'resolve-context', pack.realRoot, '--query', task], { encoding: 'utf8' })
  const parsed = JSON.parse(out) as { selected_files?: string[] }
  return (parsed.selected_files ?? []).map((file) => readFileSync(join(pack.realRoot, file), 'utf8'))
}

/** Scores the reference CLI's selections at each budget (0 = every selected file). */
export function runReference(cli: string, packs: Map<string, LoadedPack>, judgements: readonly Judgement[], budgets: readonly number[]): ReferenceReport[] {
  const selections = judgements.map((j) => j.packs.flatMap((name) => referenceSelection(cli, packs.get(name)!, j.task)))
  return [0, ...budgets].map((budget) => {
    const recall = recallTally()
    let tokens = 0
    let over = 0
    judgements.forEach((j, i) => {
      const files = selections[i]!
      const all = countTokens(files.join('\n\n'))
      if (budget > 0 && all > budget) over++
      let used = 0
      const kept: string[] = []
      for (const text of files) {
        const cost = countTokens(text)
        if (budget > 0 && used + cost > budget) break
        kept.push(text)
        used += cost
      }
      tokens += used
      recall.add(j, kept.join('\n\n'))
    })
    return {
      budget,
      fact_recall: recall.factRecall(),
      judgement_recall: recall.judgementRecall(),
      tokens_mean: round(tokens / Math.max(1, judgements.length), 0),
      over_budget: round(over / Math.max(1, judgements.length), 3),
    }
  })
}

/** The packs-qa benchmark: one table row per measure and budget; failures in bench/results/packs-qa.json. */
export async function runPacksQaBench(): Promise<BenchResult[]> {
  const { packs, judgements } = await loadQaSet()
  const cache = new PackIndexCache()
  const reports: QaBudgetReport[] = []
  for (const budget of BUDGETS) reports.push(await runQaBudget(packs, judgements, budget, cache))
  const results: BenchResult[] = []
  const note = `${packs.size} packs, ${judgements.length} judgements`
  for (const r of reports) {
    results.push({ name: `fact recall @${r.budget}`, value: r.fact_recall, unit: 'ratio', ...(r.budget === 800 ? { target: '≥ 0.95' } : {}), note })
    results.push({ name: `judgement recall @${r.budget}`, value: r.judgement_recall, unit: 'ratio' })
    results.push({ name: `false-missing rate @${r.budget}`, value: r.false_missing_rate, unit: 'ratio' })
    results.push({ name: `gap detection @${r.budget}`, value: r.gap_detection, unit: 'ratio', note: 'tasks asking for a fact no pack has' })
    results.push({ name: `tokens used @${r.budget}`, value: r.tokens_mean, unit: 'tokens (mean)' })
  }
  const cli = process.env.KNOWHUB_BENCH_AK_REF
  const reference = cli ? runReference(cli, packs, judgements, BUDGETS) : []
  for (const r of reference) {
    const at = r.budget === 0 ? 'no budget' : `@${r.budget}`
    const ref = 'reference CLI resolve-context'
    results.push({ name: `${ref} fact recall ${at}`, value: r.fact_recall, unit: 'ratio', note: `judgement recall ${r.judgement_recall}` })
    results.push({
      name: `${ref} tokens used ${at}`,
      value: r.tokens_mean,
      unit: 'tokens (mean)',
      ...(r.budget > 0 ? { note: `selection over budget in ${Math.round(r.over_budget * 100)}% of tasks` } : {}),
    })
  }
  writeResults('packs-qa-detail', results, { reports, reference })
  return results
}
