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
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { PackIndexCache, loadPack, resolveContext, type LoadedPack } from '../src/packs/index.js'
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

/** Runs every judgement at one budget. */
export async function runQaBudget(
  packs: Map<string, LoadedPack>,
  judgements: readonly Judgement[],
  budget: number,
  cache: PackIndexCache,
): Promise<QaBudgetReport> {
  let facts = 0
  let found = 0
  let whole = 0
  let answerable = 0
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
    const context = normalise(r.context)
    const absent = j.facts.filter((f) => !context.includes(normalise(f)))
    facts += j.facts.length
    found += j.facts.length - absent.length
    if (j.expect_missing) {
      absentAsked++
      if (r.missing.length > 0) gapsFound++
      continue
    }
    answerable++
    if (absent.length === 0) whole++
    else report.failures.push({ id: j.id, task: j.task, absent, missing: r.missing })
    if (absent.length === 0 && r.missing.length > 0) {
      falseMissing++
      report.false_missing.push({ id: j.id, task: j.task, missing: r.missing })
    }
  }
  report.fact_recall = round(facts === 0 ? 1 : found / facts, 3)
  report.judgement_recall = round(answerable === 0 ? 1 : whole / answerable, 3)
  report.false_missing_rate = round(answerable === 0 ? 0 : falseMissing / answerable, 3)
  report.gap_detection = round(absentAsked === 0 ? 1 : gapsFound / absentAsked, 3)
  report.tokens_mean = round(tokens / Math.max(1, judgements.length), 0)
  return report
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
  writeResults('packs-qa-detail', results, { reports })
  return results
}
