/**
 * KnowHub as one system of the side-by-side (bench/peers/protocol.ts), in its own process: a fresh
 * embedded hub (the evaluation's: `openEvalHub`, no query-vector or response cache), the set
 * loaded by the evaluation's own `loadIntoKnowledge` (a conversation under `project:<conv>`, a
 * scope group under `team:scope-<g>`), and each query through `knowledge.search` — the API's
 * path, hybrid with the default rerank — as the principal of its conversation or group.
 *
 *   tsx bench/peers/knowhub-peer.ts --embedder openai --url http://127.0.0.1:P/v1   # multilingual-e5-small
 *   tsx bench/peers/knowhub-peer.ts --embedder sentence                            # the offline default
 *   tsx bench/peers/knowhub-peer.ts … --gate off                                   # diagnosis: no relevance gate
 *   tsx bench/peers/knowhub-peer.ts … --mode vector | --neighbours                 # diagnosis: vector only; dialogue neighbours on
 */
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { evalEmbedder, openEvalHub, type EvalHub } from '../../src/app/eval.js'
import { EmbedderConfig } from '../../src/core/config.js'
import { loadRetrievalSet, type RetrievalQuery } from '../../src/eval/dataset.js'
import { evalPrincipal, loadIntoKnowledge, type LoadedSet } from '../../src/eval/harness.js'
import { cpuSeconds, rssMb, type PeerAnswer, type PeerRequest } from './protocol.js'

const { values } = parseArgs({
  options: {
    embedder: { type: 'string', default: 'openai' },
    url: { type: 'string' },
    model: { type: 'string' },
    gate: { type: 'string', default: 'on' },
    mode: { type: 'string', default: 'hybrid' },
    neighbours: { type: 'boolean', default: false },
  },
})
const config =
  values.embedder === 'openai'
    ? EmbedderConfig.parse({ provider: 'openai', baseUrl: values.url, model: values.model ?? 'multilingual-e5-small-q4', timeoutMs: 600_000 })
    : EmbedderConfig.parse({ provider: values.embedder })
const embedder = await evalEmbedder(values.embedder === 'openai' ? 'config' : (values.embedder as 'sentence' | 'hashed'), config)
// Opened before the first request: the load measures storing, not opening a store.
const hub: EvalHub = await openEvalHub({ embedder, neighbours: values.neighbours, ...(values.gate === 'off' ? { service: { gate: false } } : {}) })
let loaded: LoadedSet | undefined
let queries = new Map<string, RetrievalQuery>()

async function answer(request: PeerRequest): Promise<PeerAnswer> {
  if (request.op === 'stats') return { cpu_s: cpuSeconds(), rss_mb: rssMb() }
  if (request.op === 'load') {
    const set = await loadRetrievalSet(request.set_dir)
    const searched = new Set(request.searched)
    loaded = await loadIntoKnowledge(hub.knowledge, set, { searched: set.queries.filter((q) => searched.has(q.id)) })
    queries = new Map(set.queries.map((q) => [q.id, q]))
    return { ok: true }
  }
  if (!loaded) return { error: 'search before load' }
  const query = request.query_id === undefined ? undefined : queries.get(request.query_id)
  const principal = query ? loaded.principalOf(query) : evalPrincipal(request.scope.replace(/^conv:/, ''))
  const response = await hub.knowledge.search({ q: request.q, top_k: request.k ?? 5, mode: values.mode as 'hybrid' | 'vector' | 'fulltext' }, principal)
  return { ids: response.results.map((r) => loaded!.docOf.get(r.id) ?? r.id) }
}

const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  if (line.trim() === '') continue
  let reply: PeerAnswer
  try {
    reply = await answer(JSON.parse(line) as PeerRequest)
  } catch (error) {
    reply = { error: (error as Error).stack ?? String(error) }
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`)
}
await hub.close()
