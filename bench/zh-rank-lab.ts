/**
 * Chinese ranking experiments offline (issue 17.4, docs/retrieval.md "The Chinese anchor"): the
 * whole zh-agent pipeline — BM25 rebuilt per conv with core's text analysis, the dump's vector
 * lists, the production fusion, the anchored gate with the content anchor — replayed with a
 * variant of the text analysis. Prints hybrid recall@10, MRR@10 and the Chinese no-answer rate.
 *
 *   npx tsx bench/zh-rank-lab.ts /tmp/h17/zh-agent-sentence.json
 *
 * Variants (env): U=w,… CJK character unigrams indexed at weight w (0 = off); SHOW=1 lists the
 * judged queries that miss a relevant entry and the absent questions that are answered.
 */
import { readFileSync } from 'node:fs'
import { KNOWLEDGE_BM25, bm25 } from '../src/core/text/bm25.js'
import { searchTerms } from '../src/core/text/index.js'
import { CJK_RUN, cjkSegments } from '../src/core/text/cjk.js'
import { convOf, loadRetrievalSet } from '../src/eval/dataset.js'
import { mean, mrrAtK, recallAtK } from '../src/eval/metrics.js'
import { searchDocument, textQuery } from '../src/knowledge/document.js'
import { fusionFor } from '../src/knowledge/fusion-weights.js'
import { fuseScores } from '../src/knowledge/rank.js'
import { contentTerms, DEFAULT_RELEVANCE_GATE, gateCandidates, queryGate, textStrength } from '../src/knowledge/relevance.js'
import type { Dump, DumpedQuery } from './fusion-dump.js'
import { SET_DIRS } from './fusion-dump.js'
import { scoreBound } from './lib.js'

/** The CJK characters of a text, one a character (NFKC). */
const cjkUnigrams = (text: string): string[] => [...(text.normalize('NFKC').match(CJK_RUN) ?? []).join('')]

interface Lab {
  /** Weight of CJK unigram terms in documents (0: none beyond what the analysis gives). */
  unigram: number
  /** Terms the query searches, and those counted in its bound. */
  query: (q: string) => { terms: string[]; boundTerms: string[] }
  /** Strength threshold of the CJK anchor. */
  cjk: number
  /** The query's content terms (default {@link contentTerms} of its terms). */
  content?: (q: string) => string[]
  /** Strength of an anchor that shares one content term only (default: the production gate's, at least `cjk`). */
  one?: number
}

interface Index {
  ids: string[]
  tf: Array<Map<string, number>>
  len: number[]
  df: Map<string, number>
  total: number
}

function buildIndex(docs: Array<{ id: string; text: string; meta: Record<string, unknown> }>, lab: Lab): Index {
  const index: Index = { ids: [], tf: [], len: [], df: new Map(), total: 0 }
  for (const doc of docs) {
    const task = (doc.meta.task as string | undefined) ?? doc.text
    const sd = searchDocument(task, doc.text, (doc.meta.tags as Record<string, string>) ?? {})
    const tf = new Map<string, number>()
    for (const t of sd.title) tf.set(t, (tf.get(t) ?? 0) + 2)
    for (const t of sd.body) tf.set(t, (tf.get(t) ?? 0) + 1)
    let len = sd.title.length + sd.body.length
    if (lab.unigram > 0) {
      const title = task.trim() === doc.text.trim() ? '' : task
      for (const [text, w] of [
        [title, 2],
        [doc.text, 1],
      ] as const)
        for (const u of cjkUnigrams(text)) {
          tf.set(`·${u}`, (tf.get(`·${u}`) ?? 0) + w * lab.unigram)
          len += lab.unigram
        }
    }
    for (const t of tf.keys()) index.df.set(t, (index.df.get(t) ?? 0) + 1)
    index.ids.push(doc.id)
    index.tf.push(tf)
    index.len.push(len)
    index.total += len
  }
  return index
}

function search(index: Index, terms: string[], boundTerms: string[]): { hits: Array<{ id: string; score: number }>; bound: number } {
  const n = index.ids.length
  const counted = new Set([...terms.filter((t) => index.df.has(t) && !t.startsWith('·')), ...boundTerms])
  const bound = scoreBound(n, index.df, counted)
  const scorer = bm25(KNOWLEDGE_BM25, n, index.total)
  const hits: Array<{ id: string; score: number }> = []
  index.tf.forEach((tf, i) => {
    let s = 0
    for (const t of terms) {
      const f = tf.get(t)
      if (f) s += scorer.score(scorer.idf(index.df.get(t)!), f, index.len[i]!)
    }
    if (s > 0) hits.push({ id: index.ids[i]!, score: s })
  })
  hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
  return { hits: hits.slice(0, 50), bound }
}

function rank(q: DumpedQuery, index: Index, dump: Dump, lab: Lab): string[] {
  const { terms, boundTerms } = lab.query(q.text)
  const text = search(index, terms, boundTerms)
  const w = fusionFor(dump.embedder, q.cjk)
  const floor = q.floor ?? undefined
  const vh = q.vector_hits.map(([id, score]) => ({ id, score }))
  const fused = fuseScores([
    { ids: text.hits, weight: w.fulltext, ...(text.hits.length < 50 ? { floor: 0 } : {}) },
    { ids: vh, weight: w.vector, ...(vh.length < 50 && floor !== undefined ? { floor } : {}) },
  ]).map((c) => ({ ...c, strength: c.positions[0] ? textStrength(c, text.bound) : null }))
  const gate = { ...queryGate(DEFAULT_RELEVANCE_GATE, { cjk: q.cjk, fulltextOnly: false, floor }) }
  if (q.cjk) {
    gate.minTextStrength = lab.cjk
    gate.followTextStrength = lab.cjk * DEFAULT_RELEVANCE_GATE.followStrength
    gate.oneTermTextStrength = Math.max(lab.cjk, lab.one ?? DEFAULT_RELEVANCE_GATE.minTextStrengthCjkOneTerm)
  }
  let shares: ((c: { id: string; strength: number | null }) => number) | undefined
  if (q.cjk) {
    const content = (lab.content ?? ((x: string) => contentTerms(textQuery(x).terms)))(q.text)
    const at = new Map(index.ids.map((id, i) => [id, i]))
    shares = (c) => {
      const tf = index.tf[at.get(c.id)!]!
      return content.filter((t) => tf.has(t)).length
    }
  }
  return gateCandidates(fused, text.bound, gate, shares)
    .slice(0, 10)
    .map((c) => c.id)
}

const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
const set = await loadRetrievalSet(SET_DIRS[dump.set]!)
const convOfQuery = new Map(set.queries.map((q) => [q.id, convOf(q)]))
const queryText = new Map(set.queries.map((q) => [q.id, q.text]))

function evaluate(label: string, lab: Lab): void {
  const groups = new Map<string, typeof set.docs>()
  for (const d of set.docs) groups.set(convOf(d), [...(groups.get(convOf(d)) ?? []), d])
  const byConv = new Map([...groups].map(([c, docs]) => [c, buildIndex(docs, lab)]))
  const recall: number[] = []
  const mrr: number[] = []
  const show = process.env.SHOW === '1'
  const half = process.env.HALF !== undefined ? Number(process.env.HALF) : undefined
  const inHalf = (_: unknown, i: number) => half === undefined || i % 2 === half
  for (const q of dump.judged.filter(inHalf)) {
    const ids = rank(q, byConv.get(convOfQuery.get(q.id)!)!, dump, lab)
    const rel = new Map(Object.entries(q.relevant ?? {}))
    recall.push(recallAtK(ids, rel, 10))
    mrr.push(mrrAtK(ids, rel, 10))
    if (show && recall.at(-1)! < 1) console.log(`  miss ${q.id} ${queryText.get(q.id)} R@10 ${recall.at(-1)!.toFixed(2)}`)
  }
  const na: Record<string, number[]> = {}
  for (const q of dump.absent.filter(inHalf)) {
    const ids = rank(q, byConv.get(q.id.split('-').slice(2).join('-'))!, dump, lab)
    ;(na[q.lang] ??= []).push(ids.length > 0 ? 1 : 0)
    if (show && q.lang === 'zh' && ids.length > 0) console.log(`  answered ${q.id} ${q.text}`)
  }
  console.log(
    `${label.padEnd(44)} R@10 ${mean(recall).toFixed(3)} MRR ${mean(mrr).toFixed(3)} no-answer EN ${(100 * mean(na.en ?? [])).toFixed(1)}% ZH ${(100 * mean(na.zh ?? [])).toFixed(1)}%`,
  )
}

const base = (q: string) => {
  const t = textQuery(q)
  return { terms: t.terms, boundTerms: t.boundTerms ?? t.terms }
}
const withUnigrams = (q: string) => {
  const t = base(q)
  return { terms: [...t.terms, ...new Set(cjkUnigrams(q).map((u) => `·${u}`))], boundTerms: t.boundTerms }
}
/** Content terms without the bigrams that span a multi-character word's edge (撑每 of 支撑每天). */
const inWordContent = (q: string) => {
  const { words } = cjkSegments(q)
  const singles = new Set(words.filter((w) => [...w].length === 1))
  const bigrams = new Set(cjkSegments(q).bigrams)
  return contentTerms(textQuery(q).terms).filter((t) => !bigrams.has(t) || [...t].every((ch) => singles.has(ch)))
}
const onlyWords = (q: string) => {
  const bigrams = new Set(cjkSegments(q).bigrams)
  return contentTerms(textQuery(q).terms).filter((t) => !bigrams.has(t))
}
if (process.env.GRID) {
  for (const cjk of [0.05, 0.06, 0.07, 0.08])
    for (const t1 of [0.09, 0.095, 0.1, 0.11]) evaluate(`two+ shared ${cjk}, one shared ${t1}`, { unigram: 0, query: base, cjk, one: t1 })
  process.exit(0)
}
if (process.env.ANCHOR) {
  for (const cjk of (process.env.CJK ?? '0.08').split(',').map(Number)) {
    evaluate(`inWord content cjk ${cjk}`, { unigram: 0, query: base, cjk, one: cjk, content: inWordContent })
    evaluate(`only words content cjk ${cjk}`, { unigram: 0, query: base, cjk, one: cjk, content: onlyWords })
    for (const t2 of [0.1, 0.12, 0.15, 0.2]) {
      evaluate(`one shared needs ${t2}, cjk ${cjk}`, { unigram: 0, query: base, cjk, one: t2 })
      evaluate(`inWord + one shared needs ${t2}, cjk ${cjk}`, { unigram: 0, query: base, cjk, content: inWordContent, one: t2 })
    }
  }
  process.exit(0)
}
const cjks = (process.env.CJK ?? '0.08').split(',').map(Number)
for (const cjk of cjks) {
  const one = process.env.ONE !== undefined ? Number(process.env.ONE) : undefined
  evaluate(`cjk ${cjk} one-term ${one ?? 'default'}`, { unigram: 0, query: base, cjk, one })
  for (const u of (process.env.U ?? '').split(',').filter(Boolean).map(Number))
    evaluate(`unigrams weight ${u} cjk ${cjk}`, { unigram: u, query: withUnigrams, cjk, one })
}
void searchTerms

if (process.env.DIAG) {
  const groups = new Map<string, typeof set.docs>()
  for (const d of set.docs) groups.set(convOf(d), [...(groups.get(convOf(d)) ?? []), d])
  const lab: Lab = { unigram: 0, query: base, cjk: 0.08, one: 0.08 }
  const byConv = new Map([...groups].map(([c, docs]) => [c, buildIndex(docs, lab)]))
  const diag = (q: DumpedQuery, conv: string, label: string) => {
    const index = byConv.get(conv)!
    const t = textQuery(q.text)
    const text = search(index, t.terms, t.boundTerms ?? t.terms)
    const content = contentTerms(t.terms)
    const best = text.hits[0]
    if (!best) return console.log(`${label} ${q.text} no hit`)
    const i = index.ids.indexOf(best.id)
    const shared = content.filter((c) => index.tf[i]!.has(c)).map((c) => `${c}:${index.df.get(c)}`)
    const rel = q.relevant ? Object.keys(q.relevant) : []
    const relStr = rel.map((id) => {
      const h = text.hits.find((x) => x.id === id)
      const j = index.ids.indexOf(id)
      return `${id}:${h ? (h.score / text.bound).toFixed(3) : '-'}[${content.filter((c) => index.tf[j]?.has(c)).join(',')}]`
    })
    console.log(
      `${label} ${q.text} | content ${content.join(',')} | best ${(best.score / text.bound).toFixed(3)} shares ${shared.join(',')} | rel ${relStr.join(' ')}`,
    )
  }
  for (const q of dump.judged) diag(q, convOfQuery.get(q.id)!, `J ${q.id}`)
  for (const q of dump.absent) if (q.lang === 'zh') diag(q, q.id.split('-').slice(2).join('-'), `A ${q.id}`)
}
