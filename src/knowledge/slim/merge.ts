/**
 * Slimming, step two: writing one merged entry for a group of near-duplicates. The
 * deterministic merge keeps the lead entry's text and appends, per other entry, the
 * sentences the text does not hold yet; counters are summed by the store under lock.
 */
import { newKnowledgeId } from '../../core/ids.js'
import { qualityScore } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { Embedder } from '../../embed/embedder.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { embeddingText, searchDocument } from '../search/document.js'

/** Lead entry first: best quality score, then longest content, then oldest, then id. */
export function byLead(a: KnowledgeRecord, b: KnowledgeRecord): number {
  return (
    qualityScore(b) - qualityScore(a) ||
    b.content.length - a.content.length ||
    a.created_at.getTime() - b.created_at.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )
}

function sentences(text: string): string[] {
  return text
    .split(/\n+/)
    .flatMap((line) => line.split(/(?<=[.!?;])\s+|(?<=[。！？；])/u))
    .map((s) => s.trim())
    .filter(Boolean)
}

function sentenceKey(sentence: string): string {
  return sentence
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/**
 * The lead entry's content, then — per other entry, in order — a paragraph of its
 * sentences that the text so far does not contain yet. Deterministic and lossless
 * in what it shows; the originals stay stored in full either way.
 */
export function mergeContent(lead: string, others: readonly string[]): string {
  const seen = new Set(sentences(lead).map(sentenceKey))
  const parts = [lead]
  for (const other of others) {
    const extra = sentences(other).filter((s) => {
      const key = sentenceKey(s)
      if (key === '' || seen.has(key)) return false
      seen.add(key)
      return true
    })
    if (extra.length > 0) parts.push(extra.join(' '))
  }
  return parts.join('\n\n')
}

export function unite<T>(lists: ReadonlyArray<readonly T[]>, max: number): T[] {
  return [...new Set(lists.flat())].slice(0, max)
}

/** The new entry for a group (lead first), with `written` content (the LLM's) or the deterministic merge. Counters are summed by the store under lock. */
export function mergedRecord(group: KnowledgeRecord[], now: Date, maxContentBytes: number, written?: string): KnowledgeRecord {
  const [lead, ...others] = group as [KnowledgeRecord, ...KnowledgeRecord[]]
  let content =
    written ??
    mergeContent(
      lead.content,
      others.map((o) => o.content),
    )
  if (Buffer.byteLength(content, 'utf8') > maxContentBytes) content = lead.content
  const tags: KnowledgeRecord['tags'] = {}
  for (const record of group) {
    for (const [key, value] of Object.entries(record.tags)) if (!(key in tags) && Object.keys(tags).length < 50) tags[key] = value
  }
  return {
    id: newKnowledgeId(now),
    message_id: lead.message_id,
    types: unite(
      group.map((r) => r.types),
      6,
    ),
    task: lead.task,
    tags,
    scopes: unite(
      group.map((r) => r.scopes),
      Number.MAX_SAFE_INTEGER,
    ),
    owner: lead.owner,
    content,
    resource_ids: unite(
      group.map((r) => r.resource_ids),
      100,
    ),
    // Each original's pins (issue 15.8); an id two originals pin differently keeps the lead's.
    resource_owners: Object.assign(
      {},
      ...[...group].reverse().map((r) => Object.fromEntries(r.resource_ids.map((id) => [id, r.resource_owners?.[id] ?? r.owner]))),
    ) as Record<string, string>,
    source: {
      ...lead.source,
      urls: unite(
        group.map((r) => r.source.urls ?? []),
        50,
      ),
    },
    score: Math.max(...group.map((r) => r.score)),
    helpful: group.reduce((sum, r) => sum + r.helpful, 0),
    harmful: group.reduce((sum, r) => sum + r.harmful, 0),
    confidence: Math.max(...group.map((r) => r.confidence)),
    status: 'active',
    merged_into: null,
    // Versions 1..n of the merged entry are the originals' texts ("merged from <id>").
    version: group.length + 1,
    created_at: now,
    updated_at: now,
    // Near-duplicates of one fact: it has held since the earliest of them; it expires when the
    // last of them would (never, when one of them never does). Slim merges current entries only.
    valid_from: new Date(Math.min(...group.map((r) => r.valid_from.getTime()))),
    valid_to: null,
    superseded_by: null,
    supersedes: null,
    expires_at: group.every((r) => r.expires_at) ? new Date(Math.max(...group.map((r) => r.expires_at!.getTime()))) : null,
  }
}

/**
 * Writes the merged entry of `records` (lead first) and marks them merged into it, in one
 * store transaction; a new id is drawn when the first is taken.
 * @returns the merged entry's id, or `changed` when a member changed meanwhile.
 * @example
 * const outcome = await writeMerge({ store, embedder }, records, writeAccess(principal), new Date(), 1_048_576)
 */
export async function writeMerge(
  deps: { store: Store; embedder: Embedder },
  records: KnowledgeRecord[],
  access: WriteAccess,
  now: Date,
  maxContentBytes: number,
  written?: string,
): Promise<{ id: string } | 'changed'> {
  const ids = records.map((r) => r.id)
  let record = mergedRecord(records, now, maxContentBytes, written)
  const [embedding] = await deps.embedder.embed([embeddingText(record.task, record.content)], { kind: 'document' })
  const doc = searchDocument(record.task, record.content, record.tags)
  let outcome = await deps.store.knowledge.merge({ record, doc, embedding }, ids, access)
  for (let attempt = 0; attempt < 8 && 'conflict' in outcome && outcome.conflict === 'id_taken'; attempt++) {
    record = { ...record, id: newKnowledgeId(now) }
    outcome = await deps.store.knowledge.merge({ record, doc, embedding }, ids, access)
  }
  return 'conflict' in outcome ? 'changed' : { id: outcome.id }
}
