/**
 * The Chinese anchor of the relevance gate, offline (docs/retrieval.md, "Chinese gate"): for
 * zh-agent's judged queries and the absent-topic questions, the best candidate's full-text
 * strength and its idf-weighted coverage of the query's character bigrams, and the recall@10 /
 * Chinese no-answer trade-off of anchor rules over them. Lists from bench/fusion-dump.ts.
 *
 *   npx tsx bench/zh-gate-lab.ts /tmp/h17/zh-agent-hashed.json
 */
import { readFileSync } from 'node:fs'
import { bm25Idf } from '../src/core/text/bm25.js'
import { cjkBigrams } from '../src/core/text/cjk.js'
import { latinWords } from '../src/core/text/tokenize.js'
import { recallAtK } from '../src/eval/metrics.js'
import { convOf } from '../src/eval/dataset.js'
import { fusionFor } from '../src/knowledge/fusion-weights.js'
import { fuseScores } from '../src/knowledge/rank.js'
import { DEFAULT_RELEVANCE_GATE, passesGate, queryGate, textStrength } from '../src/knowledge/relevance.js'
import type { Dump, DumpedQuery } from './fusion-dump.js'
import { indexes, search, type Index } from './ranking-lab.js'
import { hasCjk } from '../src/core/text/cjk.js'
import { EMBEDDER_CJK_PARTICLES, PACK_BIGRAM_PARTICLE, PACK_ZH_STOP_WORDS } from '../src/core/text/stop-words.js'
import { textQuery } from '../src/knowledge/document.js'
import { KNOWLEDGE_BM25, bm25, bm25Bound } from '../src/core/text/bm25.js'

/** Strength per document over `terms` (bound over the same terms among `boundTerms`). */
function searchTerms(index: Index, terms: string[], boundTerms: string[]): Map<string, number> {
  const n = index.docs.length
  const keep = new Set(terms)
  const bound = [...new Set([...terms.filter((t) => index.df.has(t)), ...boundTerms.filter((t) => keep.has(t))])]
    .map((t) => bm25Idf(n, index.df.get(t) ?? 0))
    .reduce((s, idf) => s + bm25Bound(KNOWLEDGE_BM25, idf), 0)
  const scorer = bm25(KNOWLEDGE_BM25, n, index.total)
  const out = new Map<string, number>()
  index.tf.forEach((tf, i) => {
    let sc = 0
    for (const t of terms) {
      const f = tf.get(t)
      if (f) sc += scorer.score(scorer.idf(index.df.get(t)!), f, index.len[i]!)
    }
    out.set(index.ids[i]!, bound > 0 ? sc / bound : 0)
  })
  return out
}

const units = (text: string) => new Set([...cjkBigrams(text), ...latinWords(text)])

interface Row {
  index: Index
  q: DumpedQuery
  absent: boolean
  fused: ReturnType<typeof fuseScores>
  strength: Map<string, number>
  cov: Map<string, number>
  multi: Map<string, number>
  bound: number
}

async function main(): Promise<void> {
  const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
  const { byConv, set } = await indexes(dump.set, Number(process.env.TITLE ?? 2))
  const convOfQuery = new Map(set.queries.map((q) => [q.id, convOf(q)]))
  const docUnits = new Map<Index, Map<string, Set<string>>>()
  const df = new Map<Index, Map<string, number>>()
  for (const index of byConv.values()) {
    const m = new Map(index.docs.map((d) => [d.id, units(`${d.meta.task ?? ''} ${d.text}`)]))
    docUnits.set(index, m)
    const f = new Map<string, number>()
    for (const u of m.values()) for (const x of u) f.set(x, (f.get(x) ?? 0) + 1)
    df.set(index, f)
  }
  const rows: Row[] = []
  const add = (q: DumpedQuery, index: Index, absent: boolean) => {
    if (!q.cjk) return
    const text = search(index, q.text, dump.depth.fulltext)
    const w = fusionFor(dump.embedder, true)
    const th = text.hits.map(([id, score]) => ({ id, score }))
    const vh = q.vector_hits.map(([id, score]) => ({ id, score }))
    const fused = fuseScores([
      { ids: th, weight: w.fulltext, ...(th.length < dump.depth.fulltext ? { floor: 0 } : {}) },
      { ids: vh, weight: w.vector },
    ])
    const qu = [...units(q.text)]
    const n = index.docs.length
    const idf = (x: string) => bm25Idf(n, df.get(index)!.get(x) ?? 0)
    const total = qu.reduce((s, x) => s + idf(x), 0)
    const cov = new Map(
      fused.map((c) => {
        const du = docUnits.get(index)!.get(c.id)!
        return [c.id, total > 0 ? qu.filter((x) => du.has(x)).reduce((s, x) => s + idf(x), 0) / total : 0]
      }),
    )
    // Strength over the query's terms of two or more characters only (single CJK characters left out).
    const multiQuery = textQuery(q.text).terms.filter((t) => !(t.length === 1 && hasCjk(t)))
    const multi = searchTerms(index, multiQuery, textQuery(q.text).boundTerms ?? textQuery(q.text).terms)
    rows.push({ index, q, absent, fused, bound: text.bound, cov, multi, strength: new Map(fused.map((c) => [c.id, textStrength(c, text.bound)])) })
  }
  for (const q of dump.judged) add(q, byConv.get(convOfQuery.get(q.id)!)!, false)
  for (const q of dump.absent) if ((q as { lang: string }).lang === 'zh') add(q, byConv.get(q.id.split('-').slice(2).join('-'))!, true)
  const judged = rows.filter((r) => !r.absent)
  const absent = rows.filter((r) => r.absent)
  console.log(`${judged.length} Chinese judged queries, ${absent.length} Chinese absent searches`)
  /** Recall@10 and no-answer for an anchor rule (followers as today). */
  const run = (anchor: (r: Row, id: string) => boolean, label: string) => {
    const rank = (r: Row) => {
      const gate = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: true, fulltextOnly: false, floor: undefined })
      if (!r.fused.some((c) => anchor(r, c.id))) return []
      const follow = { minTextStrength: gate.followTextStrength, minSimilarity: gate.minSimilarity }
      return r.fused
        .filter((c) => passesGate(c, r.bound, follow))
        .slice(0, 10)
        .map((c) => c.id)
    }
    const recall = judged.reduce((s, r) => s + recallAtK(rank(r), new Map(Object.entries(r.q.relevant ?? {})), 10), 0) / judged.length
    const na = absent.filter((r) => rank(r).length > 0).length / absent.length
    console.log(`${label.padEnd(40)} R@10 ${recall.toFixed(3)}  ZH no-answer ${(100 * na).toFixed(1)}%`)
    return { recall, na }
  }
  const current = (r: Row, id: string) => {
    const c = r.fused.find((x) => x.id === id)!
    return passesGate(c, r.bound, { minTextStrength: DEFAULT_RELEVANCE_GATE.minTextStrengthCjk, minSimilarity: DEFAULT_RELEVANCE_GATE.fallbackSimilarity })
  }
  run(current, 'current (strength 0.09 or sim 0.3)')
  run(() => true, 'no anchor (gate off, followers kept)')
  for (const t of [0.06, 0.08, 0.1, 0.12, 0.15]) run((r, id) => (r.strength.get(id) ?? 0) >= t, `strength >= ${t}`)
  for (const t of [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]) run((r, id) => (r.cov.get(id) ?? 0) >= t, `coverage >= ${t}`)
  for (const t of [0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12]) run((r, id) => (r.multi.get(id) ?? 0) >= t, `multi-char strength >= ${t}`)
  // The anchor must share a content term with the query: a Latin word, or a CJK term of two or
  // more characters that is not a function word (PACK_ZH_STOP_WORDS, EMBEDDER_CJK_PARTICLES).
  const content = (t: string) =>
    !hasCjk(t) || (t.length >= 2 && !PACK_ZH_STOP_WORDS.has(t) && !EMBEDDER_CJK_PARTICLES.has(t) && !(t.length === 2 && PACK_BIGRAM_PARTICLE.test(t)))
  const sharesContent = (r: Row, id: string) => {
    const tf = r.index.tf[r.index.ids.indexOf(id)]
    return tf !== undefined && textQuery(r.q.text).terms.some((t) => content(t) && tf.has(t))
  }
  const sim = (r: Row, id: string) => (r.fused.find((c) => c.id === id)!.positions[1]?.score ?? -1) >= DEFAULT_RELEVANCE_GATE.fallbackSimilarity
  for (const t of [0.06, 0.07, 0.08, 0.09, 0.1])
    run((r, id) => ((r.strength.get(id) ?? 0) >= t && sharesContent(r, id)) || sim(r, id), `strength >= ${t} and shared content, or sim`)
  // Held out: calibrate on the even-numbered queries, report the odd ones.
  for (const half of [0, 1]) {
    const keep = (list: Row[]) => list.filter((_, i) => i % 2 === half)
    const [j, a] = [judged.splice(0), absent.splice(0)]
    judged.push(...keep(j))
    absent.push(...keep(a))
    console.log(`half ${half}: ${judged.length} judged, ${absent.length} absent`)
    run(current, '  current')
    for (const t of [0.07, 0.08, 0.09])
      run((r, id) => ((r.strength.get(id) ?? 0) >= t && sharesContent(r, id)) || sim(r, id), `  strength >= ${t} and shared content, or sim`)
    judged.splice(0, judged.length, ...j)
    absent.splice(0, absent.length, ...a)
  }
  for (const t of [0.06, 0.07, 0.08, 0.09, 0.1])
    run((r, id) => (r.strength.get(id) ?? 0) >= t && sharesContent(r, id), `(no sim) strength >= ${t} and shared content`)
  // The best candidate must stand out from the rest: strength ≥ a and ≥ r × the k-th best.
  const kth = (r: Row, k: number) => [...r.strength.values()].sort((x, y) => y - x)[k - 1] ?? 0
  for (const k of [3, 5, 10])
    for (const a of [0.06, 0.07, 0.08])
      for (const ratio of [1.2, 1.5, 2])
        run((r, id) => (r.strength.get(id) ?? 0) >= a && (r.strength.get(id) ?? 0) >= ratio * kth(r, k), `strength >= ${a} and >= ${ratio} x ${k}th`)
  // What the current gate drops: judged queries whose best candidate fails the anchor.
  if (process.env.SHOW) {
    for (const r of judged) {
      const best = Math.max(...r.fused.map((c) => r.strength.get(c.id) ?? 0))
      const bestCov = Math.max(...r.fused.map((c) => r.cov.get(c.id) ?? 0))
      if (!r.fused.some((c) => current(r, c.id))) console.log(`dropped ${r.q.id} ${r.q.text} strength ${best.toFixed(3)} coverage ${bestCov.toFixed(3)}`)
    }
    for (const r of absent) {
      if (process.env.SHOW === '2' && r.fused.some((c) => current(r, c.id))) {
        const best = r.fused.reduce((a, c) => ((r.strength.get(c.id) ?? 0) > (r.strength.get(a.id) ?? 0) ? c : a))
        console.log(
          `answered ${r.q.text} strength ${(r.strength.get(best.id) ?? 0).toFixed(3)} coverage ${(r.cov.get(best.id) ?? 0).toFixed(3)} best ${best.id}`,
        )
      }
    }
  }
}

await main()
