/**
 * Side by side (issue 18): the retrieval sets of bench/eval.ts (LoCoMo turns and facts, read
 * in place from ../shared/corpus/locomo; KnowHub's zh-agent set) through KnowHub's hybrid
 * search and two in-process peers measured in the same run, with the same embedder:
 *
 * - MiniSearch (lexical BM25+, its default tokenizer and options);
 * - an in-memory hybrid: MiniSearch's top 50 and hnswlib-node's top 50 (cosine HNSW over
 *   KnowHub's own document vectors, M 16, ef 64), fused by reciprocal rank (k 60).
 *
 * Each query searches only its own haystack, as KnowHub's evaluation principal does: the
 * documents of its conversation, or of its scope group (`meta.scope`). Latency per query
 * includes embedding the query (KnowHub's query-vector cache is off in the evaluation hub).
 *
 * hnswlib-node builds native code at install (node-gyp: a C++ compiler and Node's headers), so it is
 * not among KnowHub's dependencies (issue 42: `npm install` needs no compiler): without it the hybrid
 * peer's row says "skipped: install hnswlib-node" and the rest runs. `npm install --no-save
 * hnswlib-node@3.0.0` adds it for a run.
 *
 *   npx tsx bench/peers.ts [--sets turns-dev,facts-dev,zh-agent] [--embedder hashed|sentence] [--limit N]
 */
import { existsSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import MiniSearch from 'minisearch'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { KnowHubConfig } from '../src/core/config.js'
import { convOf, inScopeGroup, loadRetrievalSet, type RetrievalSet } from '../src/eval/dataset.js'
import { loadIntoKnowledge, runRetrievalEval } from '../src/eval/harness.js'
import { mean, percentile, recallAtK } from '../src/eval/metrics.js'
import { embeddingText } from '../src/knowledge/search/document.js'
import { printTable, round, writeResults, type BenchResult } from './lib.js'

const ROOT = resolve(import.meta.dirname, '..')
const LOCOMO = resolve(ROOT, '..', 'shared', 'corpus', 'locomo')
const SETS: Record<string, string> = {
  'turns-dev': join(LOCOMO, 'turns-dev'),
  'facts-dev': join(LOCOMO, 'facts-dev'),
  'zh-agent': join(ROOT, 'bench', 'data', 'zh-agent'),
}
/** What the benchmark uses of hnswlib-node's index. */
interface HierarchicalNSW {
  initIndex(maxElements: number, m: number, efConstruction: number): void
  setEf(ef: number): void
  addPoint(point: number[], label: number): void
  searchKnn(query: number[], k: number): { neighbors: number[] }
}
type HnswConstructor = new (space: 'cosine', dimension: number) => HierarchicalNSW
/** The package, by a name TypeScript does not resolve: it is not a dependency. */
const HNSWLIB = 'hnswlib-node'
/** The line a skipped peer prints, and the note of its row. */
export const HNSW_SKIPPED = 'skipped: install hnswlib-node (npm install --no-save hnswlib-node@3.0.0; it builds native code with a C++ compiler)'

/**
 * hnswlib-node's index class when the package is installed (and built), else undefined.
 * @example
 * const Hnsw = await loadHnswlib() // undefined on a plain `npm install`
 */
export async function loadHnswlib(): Promise<HnswConstructor | undefined> {
  try {
    // CommonJS: its named exports come through the default import.
    const module = (await import(HNSWLIB)) as { default: { HierarchicalNSW: HnswConstructor } }
    return module.default.HierarchicalNSW
  } catch {
    return undefined
  }
}
const DEPTH = 50
const RRF_K = 60

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`

export interface PeersOptions {
  sets?: string[]
  embedder?: EvalEmbedderName
  limit?: number
}

/** One haystack of a peer: the documents a query may find, with a lexical and a vector index. */
interface Haystack {
  docs: number[]
  lexical: MiniSearch<{ id: number; text: string }>
  /** Absent without hnswlib-node. */
  vectors: HierarchicalNSW | undefined
}

/** The text KnowHub indexes for a document (task and content; see harness.ts). */
function docText(doc: RetrievalSet['docs'][number]): string {
  return doc.meta.task !== undefined ? `${doc.meta.task}\n${doc.text}` : doc.text
}

function buildHaystack(set: RetrievalSet, members: number[], vectors: Float32Array[], dimension: number, Hnsw: HnswConstructor | undefined): Haystack {
  const lexical = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], idField: 'id' })
  lexical.addAll(members.map((i) => ({ id: i, text: docText(set.docs[i]!) })))
  if (!Hnsw) return { docs: members, lexical, vectors: undefined }
  const index = new Hnsw('cosine', dimension)
  index.initIndex(Math.max(1, members.length), 16, 200)
  index.setEf(64)
  for (const i of members) index.addPoint(Array.from(vectors[i]!), i)
  return { docs: members, lexical, vectors: index }
}

/** Reciprocal rank fusion of ranked lists of document indexes. */
function rrf(lists: number[][], k: number): number[] {
  const score = new Map<number, number>()
  for (const list of lists) list.forEach((doc, rank) => score.set(doc, (score.get(doc) ?? 0) + 1 / (RRF_K + rank + 1)))
  return [...score.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)
    .map(([doc]) => doc)
}

export async function runPeersBench(options: PeersOptions = {}): Promise<BenchResult[]> {
  const results: BenchResult[] = []
  const embedderName = options.embedder ?? 'hashed'
  const Hnsw = await loadHnswlib()
  if (!Hnsw) console.error(`MiniSearch + hnswlib-node: ${HNSW_SKIPPED}`)
  for (const name of options.sets ?? Object.keys(SETS)) {
    const dir = SETS[name]
    if (!dir) throw new Error(`unknown set ${name} (known: ${Object.keys(SETS).join(', ')})`)
    if (!existsSync(join(dir, 'corpus.jsonl'))) throw new Error(`retrieval set ${name} is missing: expected ${dir}/corpus.jsonl`)
    const set = await loadRetrievalSet(dir)
    const embedder = await evalEmbedder(embedderName, KnowHubConfig.parse({}).embedder)
    let queries = set.queries.filter((q) => set.qrels.has(q.id))
    if (options.limit !== undefined) queries = queries.slice(0, options.limit)

    // KnowHub: the evaluation's own path (embedded store, hybrid search, default rerank).
    const hub = await openEvalHub({ embedder })
    let knowhub
    try {
      const loaded = await loadIntoKnowledge(hub.knowledge, set)
      knowhub = await runRetrievalEval({ knowledge: hub.knowledge, loaded, mode: 'hybrid', ...(options.limit ? { limit: options.limit } : {}) })
    } finally {
      await hub.close()
    }
    const knowhubLoad = load()

    // Peers: the same documents, vectors from the same embedder.
    const started = performance.now()
    const vectors: Float32Array[] = []
    for (let i = 0; i < set.docs.length; i += 64) {
      const texts = set.docs.slice(i, i + 64).map((doc) => {
        const task = doc.meta.task ?? doc.text
        return embeddingText(task, doc.text)
      })
      vectors.push(...(await embedder.embed(texts, { kind: 'document' })))
    }
    const byConv = new Map<string, number[]>()
    set.docs.forEach((doc, i) => {
      const conv = convOf(doc)
      byConv.set(conv, [...(byConv.get(conv) ?? []), i])
    })
    const haystacks = new Map<string, Haystack>()
    for (const [conv, members] of byConv) haystacks.set(`conv:${conv}`, buildHaystack(set, members, vectors, embedder.dimension, Hnsw))
    for (const group of new Map([...set.scopeGroups.values()].map((g) => [g.name, g])).values()) {
      const members = set.docs.flatMap((doc, i) => (inScopeGroup(doc, group) ? [i] : []))
      haystacks.set(`group:${group.name}`, buildHaystack(set, members, vectors, embedder.dimension, Hnsw))
    }
    const buildMs = performance.now() - started
    const haystackOf = (q: (typeof queries)[number]): Haystack => {
      const group = set.scopeGroups.get(q.id)
      return haystacks.get(group ? `group:${group.name}` : `conv:${convOf(q)}`)!
    }
    const hybridPeer = async (q: (typeof queries)[number]): Promise<number[]> => {
      const haystack = haystackOf(q)
      const lexical = haystack.lexical
        .search(q.text)
        .slice(0, DEPTH)
        .map((r) => r.id as number)
      const [vector] = await embedder.embed([q.text], { kind: 'query' })
      const k = Math.min(DEPTH, haystack.docs.length)
      const dense = haystack.vectors!.searchKnn(Array.from(vector!), k).neighbors
      return rrf([lexical, dense], 10)
    }
    const peers: Record<string, (q: (typeof queries)[number]) => Promise<number[]>> = {
      MiniSearch: async (q) =>
        haystackOf(q)
          .lexical.search(q.text)
          .slice(0, 10)
          .map((r) => r.id as number),
      ...(Hnsw ? { 'MiniSearch + hnswlib-node': hybridPeer } : {}),
    }
    const rows: Array<{ system: string; recall: number; p50: number; p95: number; note: string }> = [
      {
        system: `KnowHub hybrid`,
        recall: knowhub['recall@10'],
        p50: knowhub.latency_ms.p50,
        p95: knowhub.latency_ms.p95,
        note: `embedded store (PGlite), ${knowhub.docs} docs; ${knowhubLoad}`,
      },
    ]
    for (const [system, search] of Object.entries(peers)) {
      for (const q of queries.slice(0, 5)) await search(q)
      const times: number[] = []
      const recalls: number[] = []
      for (const q of queries) {
        const t0 = performance.now()
        const ranked = await search(q)
        times.push(performance.now() - t0)
        recalls.push(
          recallAtK(
            ranked.map((i) => set.docs[i]!.id),
            set.qrels.get(q.id)!,
            10,
          ),
        )
      }
      times.sort((a, b) => a - b)
      rows.push({
        system,
        recall: mean(recalls),
        p50: percentile(times, 50),
        p95: percentile(times, 95),
        note: `indexes built in ${round(buildMs / 1000, 1)} s; ${load()}`,
      })
    }
    for (const row of rows) {
      results.push({
        name: `${name} ${row.system} recall@10`,
        value: round(row.recall, 3),
        unit: 'ratio',
        note: `${queries.length} queries, ${embedder.model}`,
      })
      results.push({ name: `${name} ${row.system} p50`, value: round(row.p50, 2), unit: 'ms' })
      results.push({
        name: `${name} ${row.system} p95`,
        value: round(row.p95, 2),
        unit: 'ms',
        note: row === rows[0] ? row.note : `KnowHub's p50 is ${round(rows[0]!.p50 / row.p50, 1)}× this; ${row.note}`,
      })
    }
    if (!Hnsw) results.push({ name: `${name} MiniSearch + hnswlib-node recall@10`, value: NaN, unit: 'ratio', note: HNSW_SKIPPED })
    console.error(rows.map((r) => `${name} ${r.system}: recall@10 ${round(r.recall, 3)}, p50 ${round(r.p50, 2)} ms, p95 ${round(r.p95, 2)} ms`).join('\n'))
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { sets: { type: 'string' }, embedder: { type: 'string' }, limit: { type: 'string' } } })
  const results = await runPeersBench({
    ...(values.sets ? { sets: values.sets.split(',') } : {}),
    ...(values.embedder ? { embedder: values.embedder as EvalEmbedderName } : {}),
    ...(values.limit ? { limit: Number(values.limit) } : {}),
  })
  printTable('Side by side: KnowHub and in-process peers', results)
  console.log(`\nwrote ${writeResults('peers', results)}`)
}
