/**
 * Ranking candidates across packs: an optional embedder blended into the
 * lexical scores, then one order by group (persona, runtime, core views,
 * fallback, evidence) and normalised score.
 */
import type { Logger } from '../../core/logger.js'
import type { Embedder } from '../../embed/embedder.js'
import type { IndexedSection } from '../pack-index/pack-index.js'
import type { Candidate, PackPlan } from './types.js'

/** Most candidates whose similarity is blended in per call. */
const EMBED_SHORTLIST = 128
/** Characters of a section embedded (after its heading path). */
const EMBED_CHARS = 2000

/**
 * Blends embedder similarity into the normalised scores of the best lexical
 * candidates (not persona or core views, not layer subgraphs): `0.6 × lexical + 0.4 × cosine`.
 * Section vectors are kept in each pack index by model (`index.vectors`), so a
 * section is embedded once per index. An embedder failure is logged and the
 * lexical ranking stands.
 * @example
 * await blendEmbeddings(plans, task, embedder, logger)
 */
export async function blendEmbeddings(plans: readonly PackPlan[], task: string, embedder: Embedder, logger: Logger): Promise<void> {
  const pending: { plan: PackPlan; candidate: Candidate }[] = []
  for (const plan of plans)
    for (const candidate of plan.candidates) if (candidate.group !== 0 && candidate.group !== 2 && !candidate.section.layer) pending.push({ plan, candidate })
  if (pending.length === 0) return
  pending.sort((a, b) => b.candidate.norm - a.candidate.norm)
  const shortlist = pending.slice(0, EMBED_SHORTLIST)
  try {
    const query = await embedMissing(shortlist, task, embedder)
    if (!query) return
    for (const { plan, candidate } of shortlist) {
      const vector = plan.index.vectors.get(embedder.model)?.get(candidate.section.id)
      if (!vector || vector.length !== query.length) continue
      let dot = 0
      for (let i = 0; i < query.length; i++) dot += (query[i] ?? 0) * (vector[i] ?? 0)
      candidate.norm = 0.6 * candidate.norm + 0.4 * Math.max(0, dot)
    }
  } catch (error) {
    logger.warn('packs.resolve.embedder_failed', { error: error instanceof Error ? error.message : String(error) })
  }
}

/** Embeds the task and the shortlisted sections that have no vector yet (kept in their pack index); returns the task vector. */
async function embedMissing(
  shortlist: readonly { plan: PackPlan; candidate: Candidate }[],
  task: string,
  embedder: Embedder,
): Promise<Float32Array | undefined> {
  const missingVectors: { plan: PackPlan; section: IndexedSection }[] = []
  for (const { plan, candidate } of shortlist) {
    const vectors = plan.index.vectors.get(embedder.model)
    if (!vectors?.has(candidate.section.id)) missingVectors.push({ plan, section: candidate.section })
  }
  const texts = missingVectors.map(({ section }) => `${section.headingPath.join(' > ')}\n${section.text.slice(0, EMBED_CHARS)}`)
  // The task is a query, the sections documents: one request each for a model that embeds them differently.
  const [[query], vectors] = await Promise.all([
    embedder.embed([task], { kind: 'query' }),
    texts.length > 0 ? embedder.embed(texts, { kind: 'document' }) : Promise.resolve([]),
  ])
  if (!query) return undefined
  missingVectors.forEach(({ plan, section }, i) => {
    let byModel = plan.index.vectors.get(embedder.model)
    if (!byModel) plan.index.vectors.set(embedder.model, (byModel = new Map()))
    const vector = vectors[i]
    if (vector) byModel.set(section.id, vector)
  })
  return query
}

/** Splits listed in lime's manifest in its order (before unlisted files), then by path. */
function byPath(a: Candidate, b: Candidate): number {
  const [x, y] = [a.section.manifestOrder ?? Infinity, b.section.manifestOrder ?? Infinity]
  if (x !== y) return x - y
  return a.section.path < b.section.path ? -1 : a.section.path > b.section.path ? 1 : 0
}

/**
 * Every plan's candidates in one order: group first (persona, runtime, core,
 * fallback, evidence); persona sections by kind round (voice, values, taboos,
 * boundaries, usage); the others by the share of the task's concepts they
 * cover, then normalised score; then pack order, path, position in file.
 * @example
 * const ranked = rankCandidates(plans)
 */
export function rankCandidates(plans: readonly PackPlan[]): Candidate[] {
  const ranked = plans.flatMap((plan) => plan.candidates)
  ranked.sort(
    (a, b) =>
      a.group - b.group ||
      a.rank - b.rank ||
      Math.round(b.coverage * 100) - Math.round(a.coverage * 100) ||
      b.norm - a.norm ||
      a.packIndex - b.packIndex ||
      byPath(a, b) ||
      a.section.order - b.section.order,
  )
  return ranked
}

/**
 * A pack's chosen candidates in reading order: group, path, position in file.
 * @example
 * const pieces = readingOrder(chosen.map((c) => c.candidate))
 */
export function readingOrder(candidates: readonly Candidate[]): Candidate[] {
  return [...candidates].sort((a, b) => a.group - b.group || byPath(a, b) || a.section.order - b.section.order)
}
