/**
 * Calibration of the relevance gate (docs/retrieval.md, "Relevance gate"): loads a retrieval
 * set, runs every judged query and every no-answer query (bench/data/no-answer-en and
 * no-answer-zh, in every conv) with the gate off and `explain` on, and prints, for a grid of
 * full-text strength thresholds and fallback similarity floors, the recall@10 that would
 * remain and the share of no-answer queries that would still return something.
 *
 *   npx tsx scripts/gate-calibration.ts [--sets turns-dev,facts-dev,zh-agent] [--embedder hashed|sentence]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { KnowHubConfig } from '../src/core/config.js'
import { isLargelyCjk } from '../src/core/text/index.js'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { convOf, loadRetrievalSet } from '../src/eval/dataset.js'
import { loadIntoKnowledge } from '../src/eval/harness.js'
import { recallAtK } from '../src/eval/metrics.js'

const ROOT = resolve(import.meta.dirname, '..')
const DIRS: Record<string, string> = {
  'turns-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'turns-dev'),
  'facts-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'facts-dev'),
  'zh-agent': join(ROOT, 'bench', 'data', 'zh-agent'),
}
const noAnswer = (name: string) =>
  readFileSync(join(ROOT, 'bench', 'data', name, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text)

interface Hit {
  doc: string
  strength: number | null
  sim: number | null
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sets: { type: 'string' }, embedder: { type: 'string' }, sims: { type: 'string' } } })
  const embedderName = (values.embedder ?? 'hashed') as EvalEmbedderName
  const strengths = [0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3]
  const sims = (values.sims ?? '0.25,0.3,0.35,0.4,1.01').split(',').map(Number)
  for (const name of (values.sets ?? Object.keys(DIRS).join(',')).split(',')) {
    const set = await loadRetrievalSet(DIRS[name]!)
    const embedder = await evalEmbedder(embedderName, KnowHubConfig.parse({}).embedder)
    const hub = await openEvalHub({ embedder, service: { gate: false } })
    try {
      const loaded = await loadIntoKnowledge(hub.knowledge, set)
      const run = async (q: string, conv: string): Promise<Hit[]> => {
        const r = await hub.knowledge.search({ q, top_k: 30, explain: true, min_score: 0 }, loaded.principal(conv))
        return r.results.map((x) => ({
          doc: loaded.docOf.get(x.id) ?? x.id,
          strength: x.explain!.fulltext_strength,
          sim: x.explain!.vector_similarity,
        }))
      }
      const judged: Array<{ hits: Hit[]; rel: Map<string, number>; cjk: boolean }> = []
      for (const q of set.queries.filter((q) => set.qrels.has(q.id)))
        judged.push({ hits: await run(q.text, convOf(q)), rel: set.qrels.get(q.id)!, cjk: isLargelyCjk(q.text) })
      const convs = [...new Set(set.docs.map((d) => convOf(d)))]
      const none: Array<{ lang: string; hits: Hit[]; cjk: boolean }> = []
      for (const lang of ['en', 'zh'])
        for (const q of noAnswer(`no-answer-${lang}`)) for (const conv of convs) none.push({ lang, hits: await run(q, conv), cjk: isLargelyCjk(q) })
      if (process.env.GATE_DUMP)
        writeFileSync(`${process.env.GATE_DUMP}-${name}.json`, JSON.stringify({ judged: judged.map((j) => ({ ...j, rel: [...j.rel.keys()] })), none }))
      const floor = (q: string, cjk: boolean, fallback: number) =>
        cjk ? (embedder.similarityFloor?.('中文') ?? fallback) : (embedder.similarityFloor?.(q) ?? fallback)
      console.log(`\n${name} (${embedder.model}): recall@10 | no-answer EN | no-answer ZH`)
      for (const fb of sims) {
        for (const st of strengths) {
          const pass = (h: Hit, cjk: boolean) => (h.strength ?? -1) >= st || (h.sim ?? -Infinity) >= floor('x', cjk, fb)
          const recall = judged.map((j) =>
            recallAtK(
              j.hits.filter((h) => pass(h, j.cjk)).map((h) => h.doc),
              j.rel,
              10,
            ),
          )
          // the share of relevant entries found in the top 10 without the gate that the gate keeps
          const kept = judged.flatMap((j) =>
            j.hits
              .slice(0, 10)
              .filter((h) => j.rel.has(h.doc))
              .map((h) => (pass(h, j.cjk) ? 1 : 0)),
          )
          const rate = (lang: string) => {
            const qs = none.filter((n) => n.lang === lang)
            return qs.filter((n) => n.hits.some((h) => pass(h, n.cjk))).length / qs.length
          }
          const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN)
          console.log(
            `fallback sim ${fb.toFixed(2)} strength ${st.toFixed(2)}: ${mean(recall).toFixed(3)} (kept ${mean(kept).toFixed(3)}) | ${rate('en').toFixed(3)} | ${rate('zh').toFixed(3)}`,
          )
        }
      }
    } finally {
      await hub.close()
    }
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
