/**
 * Calibrates the precision gate (docs/retrieval.md, "The precision gate"): loads each retrieval set
 * once, then runs every judged query and every no-answer query through the real knowledge
 * search for each gate setting of a grid, and prints per setting:
 *
 * - recall@10 (top_k 10: the recall gate, unless `--precision-top-k`), the hit rate (a relevant
 *   entry among the results of top_k 5) and the unrelated share of what top_k 3 and 5 return (results not judged relevant over results
 *   returned; on sets whose judgements are incomplete, as LoCoMo's, an upper bound);
 * - the no-answer rate: the share of searches about absent topics (`bench/data/no-answer-en`,
 *   `-zh`, and a set's own `absent.jsonl` when it has one) that returned anything.
 *
 * Sets: `turns-dev`, `facts-dev` (LoCoMo), `zh-agent`, `lme` (LongMemEval dev half),
 * `small-stores` (`bench/data/small-stores`) or any folder in the retrieval-set format.
 *
 *   npx tsx scripts/gate-calibration.ts --embedder sentence --embed-cache /tmp/sentence.vectors \
 *     --sets small-stores,zh-agent,facts-dev,turns-dev \
 *     --grid 'textStrength=0.08,0.1,0.12 agreementMargin=0.05,0.1 meaningMargin=0.1,0.15,0.2'
 *
 * `--grid` names fields of the gate's `own` thresholds (`OwnEvidenceGate`) with the values to
 * try; every combination runs. `--recall` adds the recall gate (`mode: recall`) as a row,
 * `--neighbours` turns the dialogue-neighbour lift on. Nothing is written but stdout (`--out`:
 * the rows as JSON too).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { loadConfig } from '../src/cli/config.js'
import { convOf, loadRetrievalSet } from '../src/eval/dataset.js'
import { cachedEmbedder } from '../src/eval/embed-cache.js'
import { loadIntoKnowledge, type LoadedSet } from '../src/eval/harness.js'
import { DEFAULT_RELEVANCE_GATE, type OwnEvidenceGate, type RelevanceGate } from '../src/knowledge/search/relevance.js'
import { DEFAULT_NEIGHBOUR_LIFT } from '../src/knowledge/search/neighbours.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { ROOT, SETS, queryTexts } from './eval-sets.js'

/** Every combination of the grid's values over the default own-evidence thresholds. */
function settings(grid: string | undefined): Array<Partial<OwnEvidenceGate>> {
  let out: Array<Partial<OwnEvidenceGate>> = [{}]
  for (const part of (grid ?? '').split(/\s+/).filter(Boolean)) {
    const [key, values] = part.split('=') as [keyof OwnEvidenceGate, string]
    out = out.flatMap((s) => values.split(',').map((v) => ({ ...s, [key]: Number(v) })))
  }
  return out
}

interface Row {
  set: string
  setting: string
  'recall@10': number
  hit5: number
  unrelated3: number
  unrelated5: number
  no_answer_en: number
  no_answer_zh: number
}

async function measure(
  search: (q: string, principal: ReturnType<LoadedSet['principal']>, topK: number) => Promise<string[]>,
  loaded: LoadedSet,
  absent: { en: string[]; zh: string[] },
): Promise<Omit<Row, 'set' | 'setting'>> {
  const set = loaded.set
  const judged = set.queries.filter((q) => set.qrels.has(q.id))
  let recall = 0
  let hits = 0
  const returned = { 3: 0, 5: 0 }
  const unrelated = { 3: 0, 5: 0 }
  for (const q of judged) {
    const rel = set.qrels.get(q.id)!
    const relevant = [...rel].filter(([, grade]) => grade > 0).map(([id]) => id)
    const ranked10 = await search(q.text, loaded.principalOf(q), 10)
    recall += relevant.length === 0 ? 0 : ranked10.filter((id) => relevant.includes(id)).length / relevant.length
    // top_k 5 is the precision gate's (PRECISION_TOP_K); 3 is its first three.
    const ranked = await search(q.text, loaded.principalOf(q), 5)
    if (ranked.slice(0, 5).some((id) => relevant.includes(id))) hits++
    for (const k of [3, 5] as const) {
      const top = ranked.slice(0, k)
      returned[k] += top.length
      unrelated[k] += top.filter((id) => !relevant.includes(id)).length
    }
  }
  const convs = [...new Set(set.docs.map((d) => convOf(d)))]
  const answered = async (texts: string[]) => {
    let n = 0
    for (const text of texts) for (const conv of convs) if ((await search(text, loaded.principal(conv), 5)).length > 0) n++
    return texts.length * convs.length === 0 ? 0 : n / (texts.length * convs.length)
  }
  return {
    'recall@10': recall / judged.length,
    hit5: hits / judged.length,
    unrelated3: returned[3] ? unrelated[3] / returned[3] : 0,
    unrelated5: returned[5] ? unrelated[5] / returned[5] : 0,
    no_answer_en: await answered(absent.en),
    no_answer_zh: await answered(absent.zh),
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sets: { type: 'string', default: 'small-stores,zh-agent,facts-dev,turns-dev' },
      embedder: { type: 'string', default: 'sentence' },
      'embed-cache': { type: 'string' },
      grid: { type: 'string' },
      recall: { type: 'boolean', default: false },
      neighbours: { type: 'boolean', default: false },
      'no-absent': { type: 'boolean', default: false },
      show: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  })
  const base = await evalEmbedder(values.embedder as EvalEmbedderName, loadConfig().embedder)
  const embedder = values['embed-cache'] ? cachedEmbedder(base, values['embed-cache']) : base
  const grid = settings(values.grid)
  const rows: Row[] = []
  const fixed = (n: number) => n.toFixed(3)
  console.log(['set', 'setting', 'R@10', 'hit@5', 'unrel@3', 'unrel@5', 'noans EN', 'noans ZH'].join('\t'))
  for (const name of values.sets.split(',')) {
    const dir = SETS[name] ?? name
    const set = await loadRetrievalSet(dir)
    const ownAbsent = queryTexts(join(dir, 'absent.jsonl'))
    const absent = values['no-absent']
      ? { en: [], zh: [] }
      : {
          en: [...queryTexts(join(ROOT, 'bench', 'data', 'no-answer-en', 'queries.jsonl')), ...ownAbsent.filter((t) => !/[\u4e00-\u9fff]/u.test(t))],
          zh: [...queryTexts(join(ROOT, 'bench', 'data', 'no-answer-zh', 'queries.jsonl')), ...ownAbsent.filter((t) => /[\u4e00-\u9fff]/u.test(t))],
        }
    const hub = await openEvalHub({ embedder })
    try {
      const loaded = await loadIntoKnowledge(hub.knowledge, set)
      const runs: Array<{ label: string; gate: RelevanceGate; mode: 'hybrid' | 'recall' }> = grid.map((own) => ({
        label: Object.keys(own).length ? JSON.stringify(own) : 'default',
        gate: { ...DEFAULT_RELEVANCE_GATE, own: { ...DEFAULT_RELEVANCE_GATE.own, ...own } },
        mode: 'hybrid',
      }))
      if (values.recall) runs.push({ label: 'recall gate', gate: DEFAULT_RELEVANCE_GATE, mode: 'recall' })
      for (const run of runs) {
        const knowledge = await createKnowledgeService({
          store: hub.store,
          embedder,
          gate: run.gate,
          neighbours: values.neighbours ? DEFAULT_NEIGHBOUR_LIFT : false,
          searchCacheSize: 0,
        })
        const search = async (q: string, principal: ReturnType<LoadedSet['principal']>, topK: number) => {
          const { results } = await knowledge.search({ q, top_k: topK, mode: run.mode, explain: values.show }, principal)
          if (values.show && topK === 5) {
            const e = (n: number | null | undefined) => (n === null || n === undefined ? '-' : n.toFixed(2))
            const shown = results.map(
              (r) =>
                `${loaded.docOf.get(r.id) ?? r.id}(${r.explain?.evidence} s${e(r.explain?.fulltext_strength)} v${e(r.explain?.vector_similarity)} bg${e(r.explain?.background_similarity)})`,
            )
            console.log(`  ${q} -> ${shown.join(' ')}`)
          }
          return results.map((r) => loaded.docOf.get(r.id) ?? r.id)
        }
        const row: Row = { set: name, setting: run.label, ...(await measure(search, loaded, absent)) }
        rows.push(row)
        console.log(
          [row.set, row.setting, row['recall@10'], row.hit5, row.unrelated3, row.unrelated5, row.no_answer_en, row.no_answer_zh]
            .map((v) => (typeof v === 'number' ? fixed(v) : v))
            .join('\t'),
        )
      }
    } finally {
      await hub.close()
    }
  }
  if (values.out) writeFileSync(values.out, JSON.stringify(rows, null, 2))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
