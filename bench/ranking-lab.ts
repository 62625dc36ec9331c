/**
 * Ranking experiments offline (issue 17.4, docs/retrieval.md "Temporal, field and entity
 * experiments"): rebuilds each conv's BM25 index in memory from the set's documents with core's
 * text analysis and scorer (the embedded store's in-memory index does the same per scope), takes
 * the vector lists of a bench/fusion-dump.ts dump (so no embedding), and replays fusion, the
 * relevance gate and a variant of the ranking with the production functions. Prints recall@10,
 * nDCG@10 and MRR@10 per LoCoMo category and the no-answer rates.
 *
 *   npx tsx bench/ranking-lab.ts /tmp/h17/turns-dev-sentence.json [VARIANT=…]
 *
 * Variants (env): TITLE=w (title weight), DATE=b (date boost), ENT=l (entity expansion),
 * ZHCOV=c (CJK anchor needs bigram coverage c). EXP=next (dialogue neighbours: K= top k, L= next
 * turn's share, P= previous turn's), EXP=both (candidates in both lists lifted by B2=), EXP=miss
 * (CAT=, N=: the misses of a category); QSTOP=w,… (query words dropped), K1= and BM25B= (BM25).
 */
import { readFileSync } from 'node:fs'
import { KNOWLEDGE_BM25 as BASE_BM25, bm25 } from '../src/core/text/bm25.js'
import { absoluteDate, dateMatches, namedDates } from '../src/core/text/dates.js'
import { mean, mrrAtK, ndcgAtK, recallAtK } from '../src/eval/metrics.js'
import { convOf, loadRetrievalSet, type RetrievalSet } from '../src/eval/dataset.js'
import { searchDocument, textQuery } from '../src/knowledge/document.js'
import { searchTerms } from '../src/core/text/index.js'
import { fusionFor } from '../src/knowledge/fusion-weights.js'
import { fuseScores, type Fused } from '../src/knowledge/rank.js'
import { DEFAULT_RELEVANCE_GATE, gateCandidates, queryGate, textStrength } from '../src/knowledge/relevance.js'
import type { Dump, DumpedQuery } from './fusion-dump.js'
import { SET_DIRS } from './fusion-dump.js'
import { scoreBound } from './lib.js'

const env = (name: string, fallback: number) => (process.env[name] !== undefined ? Number(process.env[name]) : fallback)

type Doc = RetrievalSet['docs'][number]
export interface Index {
  ids: string[]
  tf: Array<Map<string, number>>
  len: number[]
  df: Map<string, number>
  total: number
  docs: Doc[]
}

/** One conv's index, as the store would build it (task/content rule of the eval harness). */
export function buildIndex(docs: Doc[], titleWeight: number): Index {
  const index: Index = { ids: [], tf: [], len: [], df: new Map(), total: 0, docs }
  for (const doc of docs) {
    const task = doc.meta.task ?? doc.text
    const sd = searchDocument(task, doc.text, doc.meta.tags ?? {})
    const tf = new Map<string, number>()
    for (const t of sd.title) tf.set(t, (tf.get(t) ?? 0) + titleWeight)
    for (const t of sd.body) tf.set(t, (tf.get(t) ?? 0) + 1)
    for (const t of tf.keys()) index.df.set(t, (index.df.get(t) ?? 0) + 1)
    const len = sd.title.length + sd.body.length
    index.ids.push(doc.id)
    index.tf.push(tf)
    index.len.push(len)
    index.total += len
  }
  return index
}

/** BM25 over the index: the top `limit` and the query's bound (store/text-query.ts). */
const KNOWLEDGE_BM25 = { k1: Number(process.env.K1 ?? BASE_BM25.k1), b: Number(process.env.BM25B ?? BASE_BM25.b) }
const QSTOP = new Set((process.env.QSTOP ?? '').split(',').filter(Boolean))
export function search(index: Index, q: string, limit = 50, extra: Map<string, number> = new Map()): { hits: Array<[string, number]>; bound: number } {
  const kept = QSTOP.size ? q.replace(/[A-Za-z']+/g, (w) => (QSTOP.has(w.toLowerCase()) ? ' ' : w)) : q
  const { terms, boundTerms = terms } = textQuery(kept)
  const n = index.ids.length
  const counted = new Set([...terms.filter((t) => index.df.has(t)), ...boundTerms])
  const bound = scoreBound(n, index.df, counted, KNOWLEDGE_BM25)
  const scorer = bm25(KNOWLEDGE_BM25, n, index.total)
  const weights = new Map<string, number>(terms.map((t) => [t, 1]))
  for (const [t, w] of extra) if (!weights.has(t)) weights.set(t, w)
  const scores: Array<[string, number]> = []
  index.tf.forEach((tf, i) => {
    let s = 0
    for (const [t, w] of weights) {
      const f = tf.get(t)
      if (f) s += w * scorer.score(scorer.idf(index.df.get(t)!), f, index.len[i]!)
    }
    if (s > 0) scores.push([index.ids[i]!, s])
  })
  scores.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  return { hits: scores.slice(0, limit), bound }
}

export interface Variant {
  /** Reorders or rescores the gated candidates of one query (ids are document ids). */
  post?: (q: DumpedQuery, gated: Fused[], index: Index) => Fused[]
  /** Extra weighted query terms from a first round (entity expansion). */
  expand?: (q: DumpedQuery, first: Array<[string, number]>, index: Index) => Map<string, number>
  /** A CJK query's anchor check (in addition to the gate's). */
  anchor?: (q: DumpedQuery, gated: Fused[], index: Index) => boolean
}

/** The ranked document ids of one query. */
export function rank(q: DumpedQuery, index: Index, dump: Dump, variant: Variant): string[] {
  let text = search(index, q.text, dump.depth.fulltext)
  if (variant.expand) {
    const extra = variant.expand(q, text.hits, index)
    if (extra.size > 0) text = { hits: search(index, q.text, dump.depth.fulltext, extra).hits, bound: text.bound }
  }
  const w = fusionFor(dump.embedder, q.cjk)
  const floor = q.floor ?? undefined
  const th = text.hits.map(([id, score]) => ({ id, score }))
  const vh = q.vector_hits.map(([id, score]) => ({ id, score }))
  const fused = fuseScores([
    { ids: th, weight: w.fulltext, ...(th.length < dump.depth.fulltext ? { floor: 0 } : {}) },
    { ids: vh, weight: w.vector, ...(vh.length < dump.depth.vector && floor !== undefined ? { floor } : {}) },
  ])
  const gate = queryGate(DEFAULT_RELEVANCE_GATE, { cjk: q.cjk, fulltextOnly: false, floor })
  let gated = gateCandidates(fused, text.bound, gate)
  if (gated.length && variant.anchor && !variant.anchor(q, gated, index)) gated = []
  if (variant.post) gated = variant.post(q, gated, index)
  return gated
    .slice()
    .sort((a, b) => b.fused - a.fused || (a.id < b.id ? -1 : 1))
    .slice(0, 10)
    .map((c) => c.id)
}

/** Indexes per conv of a set. */
export async function indexes(set: string, titleWeight: number): Promise<{ byConv: Map<string, Index>; set: RetrievalSet }> {
  const data = await loadRetrievalSet(SET_DIRS[set]!)
  const groups = new Map<string, Doc[]>()
  for (const d of data.docs) groups.set(convOf(d), [...(groups.get(convOf(d)) ?? []), d])
  return { byConv: new Map([...groups].map(([c, docs]) => [c, buildIndex(docs, titleWeight)])), set: data }
}

/** Scores a variant over a dump: per category R@10 / nDCG@10 / MRR@10 and no-answer. */
export async function evaluate(dump: Dump, variant: Variant, titleWeight = env('TITLE', 2)): Promise<Record<string, number>> {
  const { byConv, set } = await indexes(dump.set, titleWeight)
  const convOfQuery = new Map(set.queries.map((q) => [q.id, convOf(q)]))
  const out: Record<string, number[]> = {}
  const push = (k: string, v: number) => (out[k] ??= []).push(v)
  for (const q of dump.judged) {
    const ids = rank(q, byConv.get(convOfQuery.get(q.id)!)!, dump, variant)
    const rel = new Map(Object.entries(q.relevant ?? {}))
    for (const cat of ['all', `cat${String(q.category ?? '-')}`]) {
      push(`${cat} R@10`, recallAtK(ids, rel, 10))
      push(`${cat} nDCG`, ndcgAtK(ids, rel, 10))
      push(`${cat} MRR`, mrrAtK(ids, rel, 10))
    }
  }
  for (const q of dump.absent) {
    const conv = q.id.split('-').slice(2).join('-')
    push(`no-answer ${(q as { lang: string }).lang}`, rank(q, byConv.get(conv)!, dump, variant).length > 0 ? 1 : 0)
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, mean(v)]))
}

export function print(label: string, r: Record<string, number>): void {
  const keys = Object.keys(r).sort()
  console.log(`${label}: ${keys.map((k) => `${k} ${r[k]!.toFixed(3)}`).join(' | ')}`)
}

/** Sanity check: the rebuilt BM25 lists equal the store's (the dump's). */
export async function check(dump: Dump): Promise<void> {
  const { byConv, set } = await indexes(dump.set, 2)
  const convOfQuery = new Map(set.queries.map((q) => [q.id, convOf(q)]))
  let same = 0
  for (const q of dump.judged) {
    const mine = search(byConv.get(convOfQuery.get(q.id)!)!, q.text, dump.depth.fulltext)
      .hits.slice(0, 10)
      .map(([id]) => id)
    const theirs = q.text_hits.slice(0, 10).map(([id]) => id)
    if (mine.join() === theirs.join()) same++
  }
  console.log(`${dump.set}: rebuilt BM25 top 10 equal to the store's for ${same} of ${dump.judged.length} queries`)
}

export { textStrength }

/** Date boost: candidates dated on a date the query names get `b` × the best fused score. */
export function dateBoost(b: number, options: { years?: boolean; slack?: number } = {}): Variant {
  const dates = new Map<Index, Map<string, Date | undefined>>()
  return {
    post(q, gated, index) {
      const named = namedDates(q.text).filter((d) => options.years !== false || d.month !== undefined)
      if (named.length === 0 || gated.length === 0) return gated
      let byId = dates.get(index)
      if (!byId) dates.set(index, (byId = new Map(index.docs.map((d) => [d.id, typeof d.meta.date === 'string' ? absoluteDate(d.meta.date) : undefined]))))
      const best = Math.max(...gated.map((c) => c.fused))
      return gated.map((c) => {
        const at = byId.get(c.id)
        return at && named.some((n) => dateMatches(at, n, options.slack ?? 1)) ? { ...c, fused: c.fused + b * best } : c
      })
    },
  }
}

const TIME_WORDS =
  /\b(yesterday|today|tonight|tomorrow|ago|last (?:week|weekend|month|year|night|summer|winter|spring|fall|time)|next (?:week|weekend|month|year)|this (?:week|weekend|month|year|morning|summer)|weekend|recently|years?|months?|weeks?|(?:19|20)\d\d|january|february|march|april|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i

/** "When …?" questions: candidates that say when something happened gain `b` × the best fused score. */
export function whenBoost(b: number): Variant {
  return {
    post(q, gated, index) {
      if (!/^\s*(when|how long)\b/i.test(q.text) || gated.length === 0) return gated
      const text = new Map(index.docs.map((d) => [d.id, d.text]))
      const best = Math.max(...gated.map((c) => c.fused))
      return gated.map((c) => (TIME_WORDS.test(text.get(c.id) ?? '') ? { ...c, fused: c.fused + b * best } : c))
    },
  }
}

/** Both variants' post steps in turn. */
export function both(a: Variant, b: Variant): Variant {
  return { post: (q, g, i) => b.post!(q, a.post!(q, g, i), i) }
}

/**
 * Entity expansion: the capitalised words (not sentence-initial, not in the query) of the first
 * round's top `k` documents, added as query terms of weight `l` (speakers' names left out).
 */
export function entityExpansion(l: number, k = 3, minDocs = 2): Variant {
  return {
    expand(q, first, index) {
      const text = new Map(index.docs.map((d) => [d.id, d.text]))
      const speakers = new Set(index.docs.map((d) => String(d.meta.speaker ?? '').toLowerCase()))
      const inQuery = new Set(searchTerms(q.text))
      const counts = new Map<string, number>()
      for (const [id] of first.slice(0, k)) {
        const body = (text.get(id) ?? '').replace(/^[^:]{1,40}:\s*/, '')
        const names = new Set<string>()
        for (const m of body.matchAll(/(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b/g)) {
          const term = searchTerms(m[1]!)[0]
          if (term && !inQuery.has(term) && !speakers.has(m[1]!.toLowerCase()) && !['I', 'The'].includes(m[1]!)) names.add(term)
        }
        for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1)
      }
      return new Map([...counts].filter(([, c]) => c >= minDocs).map(([t]) => [t, l]))
    },
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
  const exp = process.env.EXP ?? 'base'
  if (exp === 'base') {
    await check(dump)
    print('baseline', await evaluate(dump, {}))
  }
  if (exp === 'date')
    for (const b of (process.env.B ?? '0.1,0.2,0.3,0.5').split(',').map(Number)) {
      print(`date ${b}`, await evaluate(dump, dateBoost(b)))
      print(`date ${b} no years`, await evaluate(dump, dateBoost(b, { years: false })))
    }
  if (exp === 'when')
    for (const b of (process.env.B ?? '0.05,0.1,0.2').split(',').map(Number)) {
      print(`when ${b}`, await evaluate(dump, whenBoost(b)))
      print(`date 0.5 + when ${b}`, await evaluate(dump, both(dateBoost(0.5), whenBoost(b))))
    }
  if (exp === 'ent')
    for (const l of (process.env.L ?? '0.2,0.4').split(',').map(Number))
      for (const k of (process.env.K ?? '3,5').split(',').map(Number))
        for (const m of (process.env.M ?? '1,2').split(',').map(Number))
          print(`entities ${l} top ${k} in >= ${m}`, await evaluate(dump, entityExpansion(l, k, m)))
  if (exp === 'title') for (const w of (process.env.W ?? '1,1.5,2,3,4').split(',').map(Number)) print(`title ${w}`, await evaluate(dump, {}, w))
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.EXP === 'both') {
  const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
  /** CombMNZ-like: candidates found by both lists gain `b` × the best fused score. */
  const inBoth = (b: number): Variant => ({
    post(q, gated) {
      if (gated.length === 0) return gated
      const best = Math.max(...gated.map((c) => c.fused))
      return gated.map((c) => (c.positions[0] && c.positions[1] ? { ...c, fused: c.fused + b * best } : c))
    },
  })
  for (const b of (process.env.B2 ?? '0.05,0.1,0.2').split(',').map(Number))
    print(`date 0.5 + when 0.2 + both-lists ${b}`, await evaluate(dump, both(both(dateBoost(0.5), whenBoost(0.2)), inBoth(b))))
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.EXP === 'miss') {
  const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
  const { byConv, set } = await indexes(dump.set, 2)
  const convOfQuery = new Map(set.queries.map((q) => [q.id, convOf(q)]))
  const qtext = new Map(set.queries.map((q) => [q.id, q.text]))
  const dtext = new Map(set.docs.map((d) => [d.id, d.text]))
  const v = both(dateBoost(0.5), whenBoost(0.2))
  let shown = 0
  for (const q of dump.judged) {
    if (String(q.category) !== (process.env.CAT ?? '4')) continue
    const ids = rank(q, byConv.get(convOfQuery.get(q.id)!)!, dump, v)
    const rel = Object.keys(q.relevant ?? {})
    const missed = rel.filter((id) => !ids.includes(id))
    if (missed.length === 0) continue
    if (shown++ >= Number(process.env.N ?? 15)) break
    console.log(`Q ${qtext.get(q.id)}`)
    for (const id of missed) console.log(`   missed ${id}: ${(dtext.get(id) ?? '').slice(0, 160)}`)
    console.log(`   top1 ${ids[0]}: ${(dtext.get(ids[0] ?? '') ?? '').slice(0, 120)}`)
  }
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.EXP === 'next') {
  const dump = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Dump
  /**
   * Dialogue neighbours (measured, not in the product: needs a store lookup by source trace):
   * the turn after each of the top `k` candidates gains `l` × that candidate's fused score
   * (added as a candidate when the lists missed it). Ids: turns `conv:Dsession:turn`, facts `conv:Ssession:Fn`.
   */
  const next = (l: number, k: number, prev = 0): Variant => ({
    post(q, gated, index) {
      if (gated.length === 0) return gated
      const known = new Set(index.ids)
      const out = new Map(gated.map((c) => [c.id, { ...c }]))
      const top = gated
        .slice()
        .sort((a, b) => b.fused - a.fused)
        .slice(0, k)
      for (const c of top) {
        const m = /^(.*:(?:D\d+:|S\d+:F))(\d+)$/.exec(c.id)
        if (!m) continue
        for (const [delta, w] of [
          [1, l],
          [-1, prev],
        ] as const) {
          if (w === 0) continue
          const id = `${m[1]}${Number(m[2]) + delta}`
          if (!known.has(id)) continue
          const cur = out.get(id) ?? { id, fused: 0, positions: [null, null] }
          out.set(id, { ...cur, fused: cur.fused + w * c.fused })
        }
      }
      return [...out.values()]
    },
  })
  for (const k of (process.env.K ?? '3,5,10').split(',').map(Number))
    for (const l of (process.env.L ?? '0.3,0.5,0.7').split(',').map(Number))
      for (const p of (process.env.P ?? '0').split(',').map(Number))
        print(`next turn ${l} prev ${p} of top ${k}`, await evaluate(dump, both(both(dateBoost(0.5), whenBoost(0.2)), next(l, k, p))))
}
