/**
 * Dumps, for every judged query of a retrieval set, every candidate search finds with the gate off
 * (full-text and vector lists, no similarity floor), with the figures the precision gate can read
 * and whether the candidate is related: the data `scripts/gate-learn.ts` fits the precision gate's
 * learned checks on (docs/retrieval.md, "The learned relevance check", "The answer check").
 *
 *   npx tsx scripts/gate-features.ts --embedder sentence --embed-cache /tmp/small.vectors \
 *     --sets small-stores --out /tmp/features-sentence.jsonl [--limit N] [--absent]
 *
 * One JSON line per query: `{set, qid, conv, lang, kind, cjk, related[], anchored, now[],
 * candidates[]}`, each candidate `{doc, text_rank, text_score, strength, vector_rank, similarity,
 * fused}` in fused order; `anchored` says whether the query has an answer by the default gate's
 * anchor rule, `now` lists what the default search returns at top_k 5 and `kept` what the
 * precision gate's rules alone keep (without the learned checks, `learned: 0`: neither the check of
 * each kept candidate nor the answer check). `--absent` adds the
 * no-answer-en/zh topics searched in every conv (kind `absent`, no related entry).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { evalEmbedder, openEvalHub, type EvalEmbedderName } from '../src/app/eval.js'
import { loadConfig } from '../src/cli/config.js'
import { isLargelyCjk } from '../src/core/text/index.js'
import { convOf, loadRetrievalSet } from '../src/eval/dataset.js'
import { cachedEmbedder } from '../src/eval/embed-cache.js'
import { loadIntoKnowledge } from '../src/eval/harness.js'
import { DEFAULT_RELEVANCE_GATE } from '../src/knowledge/search/relevance.js'
import { createKnowledgeService } from '../src/knowledge/service.js'
import { ROOT, SETS, queryTexts } from './eval-sets.js'

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sets: { type: 'string', default: 'small-stores' },
      embedder: { type: 'string', default: 'sentence' },
      'embed-cache': { type: 'string' },
      limit: { type: 'string' },
      absent: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  })
  const base = await evalEmbedder(values.embedder as EvalEmbedderName, loadConfig().embedder)
  const embedder = values['embed-cache'] ? cachedEmbedder(base, values['embed-cache']) : base
  const lines: string[] = []
  for (const name of values.sets.split(',')) {
    const set = await loadRetrievalSet(SETS[name] ?? name)
    let judged = set.queries.filter((q) => set.qrels.has(q.id) || q.meta?.judged === 'complete')
    if (values.limit) judged = judged.slice(0, Number(values.limit))
    const hub = await openEvalHub({ embedder })
    try {
      const loaded = await loadIntoKnowledge(hub.knowledge, set, { searched: values.absent ? undefined : judged })
      // The fused list as a search at top_k <= 12 sees it (list depth 50, the embedder's similarity
      // floor), without the gate: a vector-only candidate under the floor is not eligible.
      const open = await createKnowledgeService({ store: hub.store, embedder, gate: false, searchCacheSize: 0 })
      // The background list: every similarity of the vector list (depth 50), none dropped.
      // The precision gate's rules without the learned check: what the check is learned on.
      const rules = await createKnowledgeService({
        store: hub.store,
        embedder,
        gate: { ...DEFAULT_RELEVANCE_GATE, own: { ...DEFAULT_RELEVANCE_GATE.own, learned: 0 } },
        searchCacheSize: 0,
      })
      const vectors = await createKnowledgeService({ store: hub.store, embedder, gate: false, minSimilarity: -2, searchCacheSize: 0 })
      const dump = async (
        q: { id: string; text: string; conv: string; lang: string; kind: string },
        principal: ReturnType<typeof loaded.principal>,
        related: string[],
      ) => {
        const all = await open.search({ q: q.text, top_k: 10, explain: true, rerank: false }, principal)
        const best = await open.search({ q: q.text, top_k: 1, mode: 'fulltext', explain: true, rerank: false }, principal)
        const vector = await vectors.search({ q: q.text, top_k: 50, mode: 'vector', explain: true, rerank: false }, principal)
        const recall = await hub.knowledge.search({ q: q.text, top_k: 10, mode: 'recall' }, principal)
        const now = await hub.knowledge.search({ q: q.text, top_k: 5 }, principal)
        const kept = await rules.search({ q: q.text, top_k: 5 }, principal)
        const doc = (id: string) => loaded.docOf.get(id) ?? id
        lines.push(
          JSON.stringify({
            set: name,
            qid: q.id,
            conv: q.conv,
            lang: q.lang,
            kind: q.kind,
            cjk: isLargelyCjk(q.text),
            related,
            anchored: recall.results.length > 0,
            now: now.results.map((r) => doc(r.id)),
            kept: kept.results.map((r) => doc(r.id)),
            best_strength: best.results[0]?.explain?.fulltext_strength ?? 0,
            vector_list: vector.results.map((r) => r.explain?.vector_similarity ?? 0),
            candidates: all.results.map((r) => ({
              doc: doc(r.id),
              text_rank: r.explain?.fulltext_rank ?? null,
              text_score: r.explain?.fulltext_score ?? null,
              strength: r.explain?.fulltext_strength ?? null,
              vector_rank: r.explain?.vector_rank ?? null,
              similarity: r.explain?.vector_similarity ?? null,
              fused: r.explain?.fused ?? null,
            })),
          }),
        )
      }
      for (const q of judged) {
        const related = [...(set.qrels.get(q.id) ?? new Map<string, number>())].filter(([, g]) => g > 0).map(([id]) => id)
        const meta = (q.meta ?? {}) as Record<string, unknown>
        await dump(
          { id: q.id, text: q.text, conv: convOf(q), lang: String(meta.lang ?? (isLargelyCjk(q.text) ? 'zh' : 'en')), kind: String(meta.kind ?? 'judged') },
          loaded.principalOf(q),
          related,
        )
      }
      if (values.absent) {
        const convs = [...new Set(set.docs.map((d) => convOf(d)))]
        for (const lang of ['en', 'zh']) {
          const texts = queryTexts(join(ROOT, 'bench', 'data', `no-answer-${lang}`, 'queries.jsonl'))
          for (const conv of convs)
            for (const [i, text] of texts.entries()) await dump({ id: `absent-${lang}-${i}`, text, conv, lang, kind: 'absent' }, loaded.principal(conv), [])
        }
      }
      console.error(`${name}: ${judged.length} queries dumped`)
    } finally {
      await hub.close()
    }
  }
  const out = values.out ?? '/dev/stdout'
  writeFileSync(out, lines.join('\n') + '\n')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
