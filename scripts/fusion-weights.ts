/**
 * Replays score fusion and the relevance gate over the lists that scripts/fusion-dump.ts wrote,
 * for a grid of fusion weights, and prints recall@10 (hybrid, full-text, vector) and the
 * no-answer rates per set: how the per-embedder weights of docs/retrieval-log.md ("Fusion weights")
 * were chosen. Offline and fast: no store, no embedder.
 *
 *   npx tsx scripts/fusion-weights.ts /tmp/h17b-zh-agent-hashed.json /tmp/h17b-facts-dev-hashed.json …
 */
import { readFileSync } from 'node:fs'
import { recallAtK } from '../src/eval/metrics.js'
import { fusionFor } from '../src/knowledge/search/fusion-weights.js'
import { fuseScores } from '../src/knowledge/search/rank.js'
import { DEFAULT_RELEVANCE_GATE, gateCandidates, queryGate, type RelevanceGate } from '../src/knowledge/search/relevance.js'
import type { Dump, DumpedQuery } from './fusion-dump.js'

/** The gate under test (the default, changed by the grids below). */
export const GATE: RelevanceGate = { ...DEFAULT_RELEVANCE_GATE }

type Mode = 'hybrid' | 'fulltext' | 'vector'
/** The weights of the two lists for one query (a strategy). */
export type Weigh = (q: DumpedQuery) => { fulltext: number; vector: number }

/** The ranked document ids of one query, as search would return them (no feedback). */
export function replay(q: DumpedQuery, depth: Dump['depth'], mode: Mode, weigh: Weigh, gateOn = true): string[] {
  const w = weigh(q)
  const text = mode === 'vector' ? [] : q.text_hits.map(([id, score]) => ({ id, score }))
  const vector = mode === 'fulltext' ? [] : q.vector_hits.map(([id, score]) => ({ id, score }))
  const floor = q.floor ?? undefined
  const lists = [
    { ids: text, weight: w.fulltext, ...(text.length < depth.fulltext ? { floor: 0 } : {}) },
    { ids: vector, weight: w.vector, ...(vector.length < depth.vector && floor !== undefined ? { floor } : {}) },
  ]
  const fused = fuseScores(lists)
  if (!gateOn)
    return fused
      .filter((c) => c.positions[0] !== null || (c.positions[1]?.score ?? -Infinity) >= (floor ?? -Infinity))
      .slice(0, 10)
      .map((c) => c.id)
  const gate = queryGate(GATE, { cjk: q.cjk, fulltextOnly: mode === 'fulltext', floor })
  return gateCandidates(fused, q.bound, gate)
    .slice(0, 10)
    .map((c) => c.id)
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN)

/** Recall@10 of one mode over a dump's judged queries. */
export function recall(dump: Dump, mode: Mode, weigh: Weigh, gateOn = true): number {
  return mean(dump.judged.map((q) => recallAtK(replay(q, dump.depth, mode, weigh, gateOn), new Map(Object.entries(q.relevant ?? {})), 10)))
}

/** The share of absent-topic searches in `lang` that return anything. */
export function answered(dump: Dump, lang: string, weigh: Weigh, mode: Mode = 'hybrid'): number {
  const qs = dump.absent.filter((q) => q.lang === lang)
  return qs.filter((q) => replay(q, dump.depth, mode, weigh).length > 0).length / qs.length
}

/** Vector weight `a + b × overlap`, where overlap is the share of the vector list's first 10 that the full-text list's first 10 also holds. */
function agreement(a: number, b: number): Weigh {
  return (q) => {
    const text = new Set(q.text_hits.slice(0, 10).map(([id]) => id))
    const top = q.vector_hits.slice(0, 10)
    const overlap = top.length ? top.filter(([id]) => text.has(id)).length / top.length : 0
    return { fulltext: 1, vector: a + b * overlap }
  }
}

function main(): void {
  const dumps = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Dump)
  const fixed =
    (vector: number): Weigh =>
    () => ({ fulltext: 1, vector })
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`
  for (const dump of dumps) {
    console.log(
      `\n${dump.set} (${dump.embedder}); gate off: hybrid ${recall(dump, 'hybrid', fixed(0.5), false).toFixed(3)}, fulltext ${recall(dump, 'fulltext', fixed(0.5), false).toFixed(3)}`,
    )
    const cjkGrid = process.env.CJK ? process.env.CJK.split(',').map(Number) : [DEFAULT_RELEVANCE_GATE.minTextStrengthCjk]
    const followGrid = process.env.FOLLOW ? process.env.FOLLOW.split(',').map(Number) : [DEFAULT_RELEVANCE_GATE.followStrength]
    const weights = process.env.WEIGHTS ? process.env.WEIGHTS.split(',').map(Number) : [0, 0.1, 0.2, 0.3, 0.5, 0.7, 1]
    for (const cjk of dump.set === 'zh-agent' ? cjkGrid : [DEFAULT_RELEVANCE_GATE.minTextStrengthCjk])
      for (const follow of followGrid) {
        Object.assign(GATE, { minTextStrengthCjk: cjk, followStrength: follow })
        const ft = recall(dump, 'fulltext', fixed(0.5))
        const vec = recall(dump, 'vector', fixed(0.5))
        const na = (mode: Mode) => ['en', 'zh'].map((l) => pct(answered(dump, l, fixed(0.5), mode))).join(' / ')
        console.log(
          `  cjk ${cjk} follow ${follow}: fulltext ${ft.toFixed(3)} (no-answer EN/ZH ${na('fulltext')}), vector ${vec.toFixed(3)} (${na('vector')}), hybrid no-answer ${na('hybrid')}`,
        )
        for (const v of weights) console.log(`    vector weight ${v.toFixed(2)}: hybrid ${recall(dump, 'hybrid', fixed(v)).toFixed(3)}`)
        const learned: Weigh = (q) => fusionFor(dump.embedder, q.cjk)
        console.log(
          `    learned (fusionFor): hybrid ${recall(dump, 'hybrid', learned).toFixed(3)}, no-answer EN/ZH ${['en', 'zh'].map((l) => pct(answered(dump, l, learned))).join(' / ')}`,
        )
        if (process.env.AGREE)
          for (const [a, b] of process.env.AGREE.split(';').map((p) => p.split(',').map(Number)))
            console.log(`    agreement ${a} + ${b} × overlap@10: hybrid ${recall(dump, 'hybrid', agreement(a!, b!)).toFixed(3)}`)
      }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main()
