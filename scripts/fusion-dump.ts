/**
 * Dumps the raw candidate lists of every judged query (and every no-answer query, in every
 * conv) of a retrieval set: the full-text hits with the query's bound and the vector hits, at
 * the search's default depths, plus the embedder's similarity floor. scripts/fusion-weights.ts
 * replays fusion and the relevance gate over these lists offline, so that fusion weights can be
 * compared without reloading the store (docs/retrieval-log.md, "Fusion weights").
 *
 *   npx tsx scripts/fusion-dump.ts --set turns-dev --embedder hashed --out /tmp/turns-hashed.json [--embed-cache /tmp/hashed.vectors]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/cli/config.js'
import { isLargelyCjk } from '../src/core/text/index.js'
import { visibleScopes, type Principal } from '../src/core/principal.js'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { convOf, loadRetrievalSet } from '../src/eval/dataset.js'
import { cachedEmbedder } from '../src/eval/embed-cache.js'
import { loadIntoKnowledge } from '../src/eval/harness.js'
import { textQuery } from '../src/knowledge/search/document.js'
import { DEFAULT_SEARCH_DEPTH } from '../src/knowledge/search/search.js'
import { DEFAULT_TEXT_RANKING } from '../src/store/knowledge/knowledge.js'

const ROOT = resolve(import.meta.dirname, '..')
export const SET_DIRS: Record<string, string> = {
  'turns-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'turns-dev'),
  'facts-dev': resolve(ROOT, '..', 'shared', 'corpus', 'locomo', 'facts-dev'),
  'zh-agent': join(ROOT, 'bench', 'data', 'zh-agent'),
}

/** One query's raw lists (document ids, not entry ids). */
export interface DumpedQuery {
  id: string
  text: string
  cjk: boolean
  floor: number | null
  bound: number
  text_hits: Array<[string, number]>
  vector_hits: Array<[string, number]>
  relevant?: Record<string, number>
  category?: unknown
}

export interface Dump {
  set: string
  embedder: string
  depth: { fulltext: number; vector: number }
  judged: DumpedQuery[]
  absent: Array<DumpedQuery & { lang: string }>
}

const noAnswer = (name: string) =>
  readFileSync(join(ROOT, 'bench', 'data', name, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text)

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string' }, embedder: { type: 'string' }, out: { type: 'string' }, 'embed-cache': { type: 'string' } },
  })
  const name = values.set ?? 'zh-agent'
  const set = await loadRetrievalSet(SET_DIRS[name] ?? name)
  const base = await evalEmbedder((values.embedder ?? 'hashed') as EvalEmbedderName, loadConfig().embedder)
  const embedder = values['embed-cache'] ? cachedEmbedder(base, values['embed-cache']) : base
  const hub = await openEvalHub({ embedder })
  try {
    const loaded = await loadIntoKnowledge(hub.knowledge, set)
    const depth = DEFAULT_SEARCH_DEPTH
    const lists = async (q: string, principal: Principal) => {
      const filter = { visible: visibleScopes(principal), minScore: 0, nonNegativeQuality: true }
      const [text, vector] = await Promise.all([
        hub.store.knowledge.searchTextWithBound(textQuery(q), filter, depth.fulltext, DEFAULT_TEXT_RANKING),
        embedder.embed([q], { kind: 'query' }).then(([v]) => hub.store.knowledge.searchVector(v!, filter, depth.vector)),
      ])
      const doc = (id: string) => loaded.docOf.get(id) ?? id
      return {
        text: q,
        cjk: isLargelyCjk(q),
        floor: embedder.similarityFloor?.(q) ?? null,
        bound: text.bound,
        text_hits: text.hits.map((h) => [doc(h.id), h.score] as [string, number]),
        vector_hits: vector.map((h) => [doc(h.id), h.score] as [string, number]),
      }
    }
    const judged: DumpedQuery[] = []
    for (const q of set.queries.filter((q) => set.qrels.has(q.id))) {
      const relevant = Object.fromEntries(set.qrels.get(q.id)!)
      judged.push({ id: q.id, ...(await lists(q.text, loaded.principalOf(q))), relevant, category: (q.meta as Record<string, unknown>).category })
    }
    const convs = [...new Set(set.docs.map((d) => convOf(d)))]
    const absent: Dump['absent'] = []
    for (const lang of ['en', 'zh'])
      for (const [i, q] of noAnswer(`no-answer-${lang}`).entries())
        for (const conv of convs) absent.push({ id: `${lang}-${i}-${conv}`, lang, ...(await lists(q, loaded.principal(conv))) })
    const dump: Dump = { set: name, embedder: embedder.model, depth, judged, absent }
    writeFileSync(values.out ?? `/tmp/fusion-${name}-${embedder.model}.json`, JSON.stringify(dump))
    console.log(`${name}: ${judged.length} judged, ${absent.length} absent searches, loaded in ${(loaded.loadMs / 1000).toFixed(1)} s (${embedder.model})`)
  } finally {
    await hub.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
