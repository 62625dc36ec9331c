/**
 * Learns the precision gate's relevance check (src/knowledge/search/gate-weights.ts; docs/retrieval.md,
 * "The learned relevance check") from a dump of `scripts/gate-features.ts` on a completely judged
 * set (`bench/data/small-stores`), for one embedder:
 *
 *   npx tsx scripts/gate-features.ts --embedder sentence --embed-cache /tmp/small.vectors --out /tmp/f-sentence.jsonl
 *   npx tsx scripts/gate-learn.ts /tmp/f-sentence.jsonl [--max-hit-loss 0.01] [--l2 1] [--inject-cost 1]
 *
 * For Latin-script and CJK queries apart, it fits a logistic model (Newton's method, L2 on
 * standardised figures) of "related" over the candidates the rule-based precision gate keeps at
 * top_k 5 (`kept` in the dump) after the first — the anchor or best candidate, which the check
 * leaves to the anchor rule — from the four figures of `relevanceFeatures` — the same function
 * search uses. The threshold is the one with the lowest unrelated share at 5 whose hit rate at 5
 * is at most `--max-hit-loss` under the rules' own, measured on held-out stores. It prints:
 *
 * - leave-one-store-out: the unrelated share and hit rate of the rules alone and at each threshold;
 * - two halves (even and odd stores): weights and threshold chosen on one half only (its
 *   threshold by leave-one-store-out within it), judged on the other;
 * - the model fitted on every store, with its threshold, as the entry of `LEARNED_RELEVANCE`.
 *
 * Then the **answer check** (`answer` in `LEARNED_RELEVANCE`): a second model, of whether the
 * first result (the first candidate the rules keep: what the query's answer rests on) is related,
 * from its strength, relative strength, z and `lead` (its similarity over the runner-up's), fitted
 * on each query's first kept candidate. Under its threshold the search returns nothing. It is
 * judged on top of the check above (its held-out probabilities and chosen threshold), with the
 * same rule for the threshold (`--max-hit-loss` under the check's hit rate, held out), and the same
 * report: leave-one-store-out curve, halves, the entry. A script whose curve lowers nothing gets
 * threshold 0 (no check: leave `answer` out for it); ship it only where the halves confirm the
 * gain too (hashed English chose 0.59 for 13.7% → 13.2% held out, and the halves 0 and a loss: not
 * shipped). The check runs only when the vector list holds the whole visible store, as in every
 * small store of the set.
 *
 * Then the **injection bar** (`injection` in `LEARNED_RELEVANCE`): a third model, of whether each
 * result of the default search (`now` in the dump: the rules and both checks above, at top_k 5 —
 * what the agent context and goal focus inject), the first included, is related, from all five
 * figures. Its threshold is the one that maximises, held out by store, the related entries carried
 * minus `--inject-cost` (default 1) × the unrelated ones: an entry put into a context unasked costs
 * as much as a related one is worth (search's own thresholds accept about three unrelated results a
 * hit). It prints the held-out curve (all queries, and the set's tasks apart: unrelated share, hit
 * rate, answerable queries left empty, related entries lost), the halves, the bar at cost 1, 2 and
 * 3, and the entry. A script whose best bar is 0 gets none (leave it out of `injection`).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { queryFigures, relevanceFeatures, relevanceProbability, type RelevanceFeatures, type RelevanceModel } from '../src/knowledge/search/gate-weights.js'

interface DumpCandidate {
  doc: string
  strength: number | null
  similarity: number | null
}
interface DumpQuery {
  qid: string
  conv: string
  kind: string
  cjk: boolean
  related: string[]
  kept: string[]
  /** What the default search returns at top_k 5 (the rules and both learned checks): what injection carries today. */
  now: string[]
  best_strength: number
  vector_list: number[]
  candidates: DumpCandidate[]
}

type Feature = keyof RelevanceFeatures
/** The figures the check of each kept candidate reads. */
const FEATURES: readonly Feature[] = ['strength', 'relativeStrength', 'z', 'rank']
/** The figures the answer check reads (the first result's place is almost always 0). */
const ANSWER_FEATURES: readonly Feature[] = ['strength', 'relativeStrength', 'z', 'lead']
/** The figures the injection bar reads: every figure, since it judges the first result and the others alike. */
const INJECTION_FEATURES: readonly Feature[] = ['strength', 'relativeStrength', 'z', 'rank', 'lead']

/**
 * Every result of the default search at top_k 5 (`now`: what the agent context and goal focus
 * inject today), the first included, with its figures for the injection bar. A result not among
 * the dump's candidates (never seen) has no figures and is left out of the fit.
 */
function injectionRows(q: DumpQuery): Array<{ doc: string; x: number[]; related: boolean }> {
  const figures = queryFigures(q.vector_list, q.best_strength)
  return q.now.flatMap((doc) => {
    const place = q.candidates.findIndex((c) => c.doc === doc)
    if (place < 0) return []
    const c = q.candidates[place]!
    const f = relevanceFeatures({ strength: c.strength, similarity: c.similarity, place }, figures)
    return [{ doc, x: INJECTION_FEATURES.map((k) => f[k]), related: q.related.includes(doc) }]
  })
}

/**
 * Each candidate the rules keep after their first (the anchor or the best candidate, which shows
 * the query has an answer and is not checked), with its figures and whether it is related.
 */
function rows(q: DumpQuery): Array<{ doc: string; x: number[]; related: boolean }> {
  const figures = queryFigures(q.vector_list, q.best_strength)
  return q.candidates.flatMap((c, place) => {
    if (!q.kept.includes(c.doc) || c.doc === q.kept[0]) return []
    const f = relevanceFeatures({ strength: c.strength, similarity: c.similarity, place }, figures)
    return [{ doc: c.doc, x: FEATURES.map((k) => f[k]), related: q.related.includes(c.doc) }]
  })
}

/** The first candidate the rules keep (what the answer rests on), with its figures for the answer check. */
function answerRows(q: DumpQuery): Array<{ doc: string; x: number[]; related: boolean }> {
  const figures = queryFigures(q.vector_list, q.best_strength)
  const place = q.candidates.findIndex((c) => c.doc === q.kept[0])
  if (place < 0) return []
  const c = q.candidates[place]!
  const f = relevanceFeatures({ strength: c.strength, similarity: c.similarity, place }, figures)
  return [{ doc: c.doc, x: ANSWER_FEATURES.map((k) => f[k]), related: q.related.includes(c.doc) }]
}

/** Solves A·x = b (Gaussian elimination with partial pivoting; A is small and positive definite). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length
  const m = a.map((row, i) => [...row, b[i]!])
  for (let i = 0; i < n; i++) {
    let pivot = i
    for (let r = i + 1; r < n; r++) if (Math.abs(m[r]![i]!) > Math.abs(m[pivot]![i]!)) pivot = r
    ;[m[i], m[pivot]] = [m[pivot]!, m[i]!]
    for (let r = i + 1; r < n; r++) {
      const factor = m[r]![i]! / m[i]![i]!
      for (let c = i; c <= n; c++) m[r]![c]! -= factor * m[i]![c]!
    }
  }
  const x = new Array<number>(n).fill(0)
  for (let i = n - 1; i >= 0; i--) {
    let sum = m[i]![n]!
    for (let c = i + 1; c < n; c++) sum -= m[i]![c]! * x[c]!
    x[i] = sum / m[i]![i]!
  }
  return x
}

/** Logistic regression by Newton's method with L2 `l2` on standardised features; weights in raw units. */
function fit(data: Array<{ x: number[]; related: boolean }>, l2: number, features: readonly Feature[] = FEATURES): Omit<RelevanceModel, 'threshold'> {
  const d = features.length
  const mean = features.map((_, j) => data.reduce((s, r) => s + r.x[j]!, 0) / data.length)
  const sd = features.map((_, j) => Math.sqrt(data.reduce((s, r) => s + (r.x[j]! - mean[j]!) ** 2, 0) / data.length) || 1)
  const xs = data.map((r) => [...r.x.map((v, j) => (v - mean[j]!) / sd[j]!), 1])
  const y = data.map((r) => (r.related ? 1 : 0))
  let w = new Array<number>(d + 1).fill(0)
  for (let iteration = 0; iteration < 50; iteration++) {
    const g = new Array<number>(d + 1).fill(0)
    const h = Array.from({ length: d + 1 }, () => new Array<number>(d + 1).fill(0))
    xs.forEach((x, i) => {
      const p = 1 / (1 + Math.exp(-x.reduce((s, v, j) => s + v * w[j]!, 0)))
      for (let j = 0; j <= d; j++) {
        g[j]! += (p - y[i]!) * x[j]!
        for (let k = 0; k <= d; k++) h[j]![k]! += p * (1 - p) * x[j]! * x[k]!
      }
    })
    for (let j = 0; j < d; j++) {
      g[j]! += l2 * w[j]!
      h[j]![j]! += l2
    }
    const step = solve(h, g)
    w = w.map((v, j) => v - step[j]!)
    if (Math.max(...step.map(Math.abs)) < 1e-9) break
  }
  const bias = w[d]! - features.reduce((s, _, j) => s + (w[j]! * mean[j]!) / sd[j]!, 0)
  const weight = (k: Feature) => (features.includes(k) ? w[features.indexOf(k)]! / sd[features.indexOf(k)]! : 0)
  return { bias, strength: weight('strength'), relativeStrength: weight('relativeStrength'), z: weight('z'), rank: weight('rank'), lead: weight('lead') }
}

/**
 * Unrelated share and hit rate at 5 of the queries, keeping the rules' first result and what `keep`
 * accepts of the others — all of it only when `answered` accepts the first.
 */
function score(
  queries: readonly DumpQuery[],
  keep: (q: DumpQuery, doc: string) => boolean,
  answered: (q: DumpQuery) => boolean = () => true,
): { unrelated: number; returned: number; hit: number } {
  let returned = 0
  let unrelated = 0
  let hits = 0
  let answerable = 0
  for (const q of queries) {
    const results = q.kept.length > 0 && answered(q) ? q.kept.filter((doc, i) => i === 0 || keep(q, doc)) : []
    returned += results.length
    unrelated += results.filter((doc) => !q.related.includes(doc)).length
    if (q.related.length > 0) {
      answerable++
      if (results.some((doc) => q.related.includes(doc))) hits++
    }
  }
  return { unrelated: returned ? unrelated / returned : 0, returned, hit: answerable ? hits / answerable : 0 }
}

/** Each query's kept candidates' probabilities under a model. */
function probabilities(queries: readonly DumpQuery[], model: Omit<RelevanceModel, 'threshold'>): Map<DumpQuery, Map<string, number>> {
  const m = { ...model, threshold: 0 }
  return new Map(
    queries.map((q) => {
      const figures = queryFigures(q.vector_list, q.best_strength)
      return [
        q,
        new Map(
          q.candidates.map((c, place) => [
            c.doc,
            relevanceProbability(m, relevanceFeatures({ strength: c.strength, similarity: c.similarity, place }, figures)),
          ]),
        ),
      ]
    }),
  )
}

/** Leave-one-store-out probabilities: each store's queries scored by a model fitted on the others. */
function heldOut(queries: readonly DumpQuery[], l2: number, answer: boolean | 'injection' = false): Map<DumpQuery, Map<string, number>> {
  const out = new Map<DumpQuery, Map<string, number>>()
  for (const store of new Set(queries.map((q) => q.conv))) {
    const train = queries.filter((q) => q.conv !== store)
    const model =
      answer === 'injection'
        ? fit(train.flatMap(injectionRows), l2, INJECTION_FEATURES)
        : answer
          ? fit(train.flatMap(answerRows), l2, ANSWER_FEATURES)
          : fit(train.flatMap(rows), l2)
    for (const [q, p] of probabilities(
      queries.filter((q) => q.conv === store),
      model,
    ))
      out.set(q, p)
  }
  return out
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`

const THRESHOLDS = Array.from({ length: 81 }, (_, i) => i / 100)
/** The injection bar's thresholds: up to 0.95 (a bar stricter than the checks above). */
const INJECTION_THRESHOLDS = Array.from({ length: 96 }, (_, i) => i / 100)

/** What injection carries at one bar: the unrelated share, hit rate, empty answerable queries, related entries lost. */
interface Injected {
  returned: number
  unrelated: number
  hit: number
  empty: number
  lost: number
  answered: number
}

/** The results of `now` that clear the injection bar `t` (probabilities `p`; a result without one is left out). */
function inject(queries: readonly DumpQuery[], p: Map<DumpQuery, Map<string, number>>, t: number): Injected {
  let returned = 0
  let unrelated = 0
  let hits = 0
  let answerable = 0
  let empty = 0
  let lost = 0
  let answered = 0
  for (const q of queries) {
    const carried = q.now.filter((doc) => (p.get(q)?.get(doc) ?? 0) >= t)
    returned += carried.length
    unrelated += carried.filter((doc) => !q.related.includes(doc)).length
    lost += q.now.filter((doc) => q.related.includes(doc) && !carried.includes(doc)).length
    if (q.related.length > 0) {
      answerable++
      if (carried.some((doc) => q.related.includes(doc))) hits++
      else if (carried.length === 0) empty++
    } else if (carried.length > 0) answered++
  }
  return { returned, unrelated: returned ? unrelated / returned : 0, hit: answerable ? hits / answerable : 0, empty, lost, answered }
}

/**
 * The injection bar's threshold: the one that maximises what injection is worth, held out —
 * related entries carried minus `cost` × unrelated ones (an entry the agent did not ask for and
 * will follow costs `cost` times what a related one is worth; ties: the lower bar). A script whose
 * best bar is 0 gets none.
 */
function chooseInjectionThreshold(queries: readonly DumpQuery[], p: Map<DumpQuery, Map<string, number>>, cost: number): number {
  const worth = (s: Injected) => s.returned * (1 - s.unrelated) - cost * s.returned * s.unrelated
  let best = { threshold: 0, worth: worth(inject(queries, p, 0)) }
  for (const threshold of INJECTION_THRESHOLDS) {
    const w = worth(inject(queries, p, threshold))
    if (w > best.worth + 1e-9) best = { threshold, worth: w }
  }
  return best.threshold
}

const injectedLine = (label: string, s: Injected) =>
  `${label.padEnd(34)} unrelated ${pct(s.unrelated).padStart(6)} of ${String(s.returned).padStart(3)}  hit ${s.hit.toFixed(3)}  empty ${String(s.empty).padStart(3)}  related lost ${String(s.lost).padStart(3)}  no-answer answered ${s.answered}`

/** The threshold with the lowest unrelated share whose hit rate is at most `maxLoss` under the rules'. */
function chooseThreshold(
  queries: readonly DumpQuery[],
  p: Map<DumpQuery, Map<string, number>>,
  maxLoss: number,
  judge: (threshold: number) => ReturnType<typeof score> = (threshold) => score(queries, (q, doc) => (p.get(q)?.get(doc) ?? 0) >= threshold),
  base: ReturnType<typeof score> = score(queries, () => true),
): number {
  const rules = base
  let best = { threshold: 0, unrelated: rules.unrelated }
  for (const threshold of THRESHOLDS) {
    const s = judge(threshold)
    if (s.hit >= rules.hit - maxLoss - 1e-9 && s.unrelated < best.unrelated - 1e-9) best = { threshold, unrelated: s.unrelated }
  }
  return best.threshold
}

const line = (label: string, s: ReturnType<typeof score>) =>
  `${label.padEnd(28)} unrel@5 ${pct(s.unrelated).padStart(6)} (${s.returned} returned)  hit@5 ${s.hit.toFixed(3)}`

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'max-hit-loss': { type: 'string', default: '0.01' },
      l2: { type: 'string', default: '1' },
      'inject-cost': { type: 'string', default: '1' },
    },
  })
  const maxLoss = Number(values['max-hit-loss'])
  const cost = Number(values['inject-cost'])
  const l2 = Number(values.l2)
  const all = positionals.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as DumpQuery),
  )
  const judged = all.filter((q) => q.kind !== 'absent')
  const entries: string[] = []
  const answers: string[] = []
  const injections: string[] = []
  for (const script of ['latin', 'cjk'] as const) {
    const queries = judged.filter((q) => q.cjk === (script === 'cjk'))
    console.log(`\n== ${script}: ${queries.length} queries, ${new Set(queries.map((q) => q.conv)).size} stores`)
    const p = heldOut(queries, l2)
    console.log(
      line(
        'rules alone',
        score(queries, () => true),
      ),
    )
    for (const threshold of THRESHOLDS.filter((t) => Math.round(t * 100) % 5 === 0 && t <= 0.6))
      console.log(
        line(
          `held-out, threshold ${threshold.toFixed(2)}`,
          score(queries, (q, doc) => (p.get(q)?.get(doc) ?? 0) >= threshold),
        ),
      )
    const stores = [...new Set(queries.map((q) => q.conv))].sort()
    const halves = [stores.filter((_, i) => i % 2 === 0), stores.filter((_, i) => i % 2 === 1)]
    halves.forEach((train, h) => {
      const trainQueries = queries.filter((q) => train.includes(q.conv))
      const test = queries.filter((q) => !train.includes(q.conv))
      const threshold = chooseThreshold(trainQueries, heldOut(trainQueries, l2), maxLoss)
      const model = fit(trainQueries.flatMap(rows), l2)
      const pt = probabilities(test, model)
      console.log(`half ${h + 1} → judged on half ${2 - h} (${test.length} queries), threshold ${threshold.toFixed(2)} chosen on half ${h + 1}:`)
      console.log(
        line(
          '  rules alone',
          score(test, () => true),
        ),
      )
      console.log(
        line(
          '  rules + learned check',
          score(test, (q, doc) => (pt.get(q)?.get(doc) ?? 0) >= threshold),
        ),
      )
    })
    const threshold = chooseThreshold(queries, p, maxLoss)
    const model = fit(queries.flatMap(rows), l2)
    console.log(
      line(
        `all stores, threshold ${threshold.toFixed(2)} (held-out)`,
        score(queries, (q, doc) => (p.get(q)?.get(doc) ?? 0) >= threshold),
      ),
    )
    const r = (n: number) => Number(n.toFixed(3))
    entries.push(
      `${script}: { bias: ${r(model.bias)}, strength: ${r(model.strength)}, relativeStrength: ${r(model.relativeStrength)}, z: ${r(model.z)}, rank: ${r(model.rank)}, threshold: ${threshold} }`,
    )

    // The answer check, on top of the check above (held out, at its chosen threshold).
    const keep = (probs: Map<DumpQuery, Map<string, number>>, t: number) => (q: DumpQuery, doc: string) => (probs.get(q)?.get(doc) ?? 0) >= t
    const first = (probs: Map<DumpQuery, Map<string, number>>, t: number) => (q: DumpQuery) => (probs.get(q)?.get(q.kept[0]!) ?? 0) >= t
    const checked = score(queries, keep(p, threshold))
    const pa = heldOut(queries, l2, true)
    console.log(`-- answer check (${script}), on top of the check at ${threshold.toFixed(2)}`)
    console.log(line('check alone (held-out)', checked))
    for (const t of THRESHOLDS.filter((t) => Math.round(t * 100) % 5 === 0 && t <= 0.6))
      console.log(line(`held-out, threshold ${t.toFixed(2)}`, score(queries, keep(p, threshold), first(pa, t))))
    halves.forEach((train, h) => {
      const trainQueries = queries.filter((q) => train.includes(q.conv))
      const test = queries.filter((q) => !train.includes(q.conv))
      const tc = chooseThreshold(trainQueries, heldOut(trainQueries, l2), maxLoss)
      const pc = heldOut(trainQueries, l2)
      const pat = heldOut(trainQueries, l2, true)
      const ta = chooseThreshold(trainQueries, pat, maxLoss, (t) => score(trainQueries, keep(pc, tc), first(pat, t)), score(trainQueries, keep(pc, tc)))
      const check = probabilities(test, fit(trainQueries.flatMap(rows), l2))
      const answer = probabilities(test, fit(trainQueries.flatMap(answerRows), l2, ANSWER_FEATURES))
      console.log(`half ${h + 1} → judged on half ${2 - h} (${test.length} queries), answer threshold ${ta.toFixed(2)} chosen on half ${h + 1}:`)
      console.log(line('  check alone', score(test, keep(check, tc))))
      console.log(line('  check + answer check', score(test, keep(check, tc), first(answer, ta))))
    })
    const ta = chooseThreshold(queries, pa, maxLoss, (t) => score(queries, keep(p, threshold), first(pa, t)), checked)
    const am = fit(queries.flatMap(answerRows), l2, ANSWER_FEATURES)
    console.log(line(`all stores, answer threshold ${ta.toFixed(2)} (held-out)`, score(queries, keep(p, threshold), first(pa, ta))))
    answers.push(
      `${script}: { bias: ${r(am.bias)}, strength: ${r(am.strength)}, relativeStrength: ${r(am.relativeStrength)}, z: ${r(am.z)}, rank: 0, lead: ${r(am.lead ?? 0)}, threshold: ${ta} }`,
    )

    // The injection bar: every result of the default search (the first included), for what is injected unasked.
    const pi = heldOut(queries, l2, 'injection')
    const tasks = queries.filter((q) => q.kind === 'task')
    console.log(`-- injection bar (${script}), over what the default search returns at top_k 5 (held out by store; tasks: ${tasks.length})`)
    for (const t of INJECTION_THRESHOLDS.filter((t) => Math.round(t * 100) % 5 === 0))
      console.log(`${injectedLine(`held-out, bar ${t.toFixed(2)}`, inject(queries, pi, t))}   tasks: ${injectedLine('', inject(tasks, pi, t)).trim()}`)
    halves.forEach((train, h) => {
      const trainQueries = queries.filter((q) => train.includes(q.conv))
      const test = queries.filter((q) => !train.includes(q.conv))
      const ti = chooseInjectionThreshold(trainQueries, heldOut(trainQueries, l2, 'injection'), cost)
      const pt = probabilities(test, fit(trainQueries.flatMap(injectionRows), l2, INJECTION_FEATURES))
      console.log(`half ${h + 1} → judged on half ${2 - h} (${test.length} queries), bar ${ti.toFixed(2)} chosen on half ${h + 1}:`)
      console.log(injectedLine('  search (no bar)', inject(test, pt, 0)))
      console.log(injectedLine('  with the bar', inject(test, pt, ti)))
    })
    const ti = chooseInjectionThreshold(queries, pi, cost)
    console.log(`(the bar at cost 1, 2, 3: ${[1, 2, 3].map((k) => chooseInjectionThreshold(queries, pi, k).toFixed(2)).join(', ')})`)
    const im = fit(queries.flatMap(injectionRows), l2, INJECTION_FEATURES)
    console.log(injectedLine(`all stores, bar ${ti.toFixed(2)} (held-out)`, inject(queries, pi, ti)))
    console.log(injectedLine(`  tasks only`, inject(tasks, pi, ti)))
    injections.push(
      `${script}: { bias: ${r(im.bias)}, strength: ${r(im.strength)}, relativeStrength: ${r(im.relativeStrength)}, z: ${r(im.z)}, rank: ${r(im.rank)}, lead: ${r(im.lead ?? 0)}, threshold: ${ti} }`,
    )
  }
  console.log(`\nLEARNED_RELEVANCE entry:\n{ model: /…/, ${entries.join(', ')}, answer: { ${answers.join(', ')} }, injection: { ${injections.join(', ')} } }`)
}

main()
