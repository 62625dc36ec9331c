/**
 * Knowledge slimming without an LLM (`POST /api/knowledge/slim`): find groups of
 * near-duplicate entries among those the caller can see, and merge each group into
 * one new entry deterministically. Nothing is deleted: the originals become
 * `merged` with a `merged_into` pointer and {@link unmergeKnowledge} restores them.
 *
 * Near-duplicates: two active entries whose stored vectors have cosine similarity
 * ≥ `threshold` AND whose word sets (task + content) overlap (Jaccard) ≥
 * `min_overlap`, AND whose scope sets are identical (a merge never changes who can
 * read a text: near-duplicates in different scopes are reported as `scopes_differ`);
 * groups are the connected components (union-find). Comparison is pairwise in memory
 * over a window of `limit` entries, newest first (default 2,000: 2 million pairs, 2-5 s
 * at 512 dimensions on a busy 2-core machine; at most 5,000: 12.5 million pairs).
 * When more entries exist (`truncated`), `next_cursor` continues with the next, older
 * window, which starts half a window later: neighbouring windows overlap by half, so
 * two entries fewer than `limit / 2` apart in age order always meet in some window.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { decodeCursor, encodeCursor } from '../core/cursor.js'
import { KnowHubError } from '../core/errors.js'
import { newKnowledgeId } from '../core/ids.js'
import { KnowledgeId, MAX_CONTENT_BYTES, qualityScore } from '../core/knowledge.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { assertWritableScopes, canManage, requirePermission, visibleScopes, type Principal } from '../core/principal.js'
import { SlimInput, type SlimGroup, type SlimResult, type SlimSkipped, type UnmergeResult } from '../core/slim.js'
import { segment } from '../core/text.js'
import { parseWith } from '../core/validate.js'
import type { Embedder } from '../embed/embedder.js'
import { l2normalize } from '../embed/vector.js'
import type { KnowledgeRecord } from '../store/knowledge.js'
import type { Store } from '../store/store.js'
import { embeddingText, searchDocument } from './document.js'

export interface SlimDeps {
  store: Store
  embedder: Embedder
  logger?: Logger
  clock?: Clock
  /** Largest merged content in UTF-8 bytes (default 1 MiB); beyond it the lead entry's text is kept alone. */
  maxContentBytes?: number
}

/** Union-find over indexes 0..n-1. */
function unionFind(n: number) {
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    let root = i
    while (parent[root] !== root) root = parent[root]!
    while (parent[i] !== root) {
      const next = parent[i]!
      parent[i] = root
      i = next
    }
    return root
  }
  return {
    union(a: number, b: number) {
      const ra = find(a)
      const rb = find(b)
      if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb)
    },
    /** Components with at least two members, each sorted, ordered by their first member. */
    groups(): number[][] {
      const byRoot = new Map<number, number[]>()
      for (let i = 0; i < n; i++) {
        const root = find(i)
        const members = byRoot.get(root) ?? []
        members.push(i)
        byRoot.set(root, members)
      }
      return [...byRoot.values()].filter((g) => g.length > 1)
    },
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

function wordSet(record: KnowledgeRecord): Set<string> {
  const { latin, cjk } = segment(`${record.task}\n${record.content}`)
  return new Set([...latin, ...cjk])
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1
  let shared = 0
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  for (const word of small) if (large.has(word)) shared++
  return shared / (a.size + b.size - shared)
}

/** Lead entry first: best quality score, then longest content, then oldest, then id. */
function byLead(a: KnowledgeRecord, b: KnowledgeRecord): number {
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

function unite<T>(lists: ReadonlyArray<readonly T[]>, max: number): T[] {
  return [...new Set(lists.flat())].slice(0, max)
}

/** The new entry for a group (lead first). Counters are summed by the store under lock. */
function mergedRecord(group: KnowledgeRecord[], now: Date, maxContentBytes: number): KnowledgeRecord {
  const [lead, ...others] = group as [KnowledgeRecord, ...KnowledgeRecord[]]
  let content = mergeContent(
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
  }
}

/** The scope set of an entry, as a key (order and duplicates do not matter). */
function scopeKey(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join('\n')
}

function windowCursor(record: KnowledgeRecord): string {
  return encodeCursor(['slim', record.created_at.toISOString(), record.id])
}

function windowPosition(cursor: string): { created_at: Date; id: string } {
  return decodeCursor(
    cursor,
    (value) => {
      if (value.length !== 3 || value[0] !== 'slim' || typeof value[1] !== 'string' || typeof value[2] !== 'string') return undefined
      const at = new Date(value[1])
      return Number.isFinite(at.getTime()) && KnowledgeId.safeParse(value[2]).success ? { created_at: at, id: value[2] } : undefined
    },
    'Invalid slim options: cursor: pass the next_cursor of a previous run',
  )
}

async function readyVectors(store: Store, embedder: Embedder): Promise<void> {
  const state = store.vectorState() ?? (await store.prepareVectors(embedder))
  if (state.status === 'mismatch') {
    throw new KnowHubError(
      'embedder_mismatch',
      `The knowledge base was indexed with ${state.stored.model} (${state.stored.dimension} dimensions) but the configured embedder is ${state.wanted.model} (${state.wanted.dimension}). Run \`knowhub reindex\` first.`,
      { stored: state.stored, wanted: state.wanted },
    )
  }
}

/**
 * Finds near-duplicate entries the caller can see and merges each group the caller may
 * manage (owner or admin of every member, all in the same scopes, which the caller may
 * write) into one new entry in those scopes: counters summed, feedback histories
 * concatenated, sources, types, tags and resource_ids united, score and confidence the
 * maximum. The originals become
 * `merged` (pointing at the new entry); nothing is deleted. With `dry_run` only the plan
 * is returned.
 * @example
 * const plan = await slimKnowledge({ store, embedder }, { dry_run: true }, principal)
 * const done = await slimKnowledge({ store, embedder }, { threshold: 0.92 }, principal)
 */
export async function slimKnowledge(deps: SlimDeps, body: unknown, principal: Principal): Promise<SlimResult> {
  requirePermission(principal, 'write')
  const input = parseWith(SlimInput, body ?? {}, 'slim options')
  const { store, embedder } = deps
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ?? systemClock
  const maxContentBytes = deps.maxContentBytes ?? MAX_CONTENT_BYTES
  await readyVectors(store, embedder)
  const visible = visibleScopes(principal)

  const before = input.cursor !== undefined ? windowPosition(input.cursor) : undefined
  const rows = await store.knowledge.vectors({ visible, status: ['active'] }, input.limit + 1, before)
  const truncated = rows.length > input.limit
  const window = rows.slice(0, input.limit)
  const loaded = new Map(
    (
      await store.knowledge.getMany(
        window.map((r) => r.id),
        visible,
      )
    ).map((r) => [r.id, r]),
  )
  // The next window starts half a window later (the last loaded entry of this one's newer half).
  const stride = Math.ceil(input.limit / 2)
  const resumeAt = truncated
    ? (window
        .slice(0, stride)
        .flatMap((row) => loaded.get(row.id) ?? [])
        .pop() ?? window.flatMap((row) => loaded.get(row.id) ?? []).pop())
    : undefined
  const nextCursor = resumeAt ? windowCursor(resumeAt) : null
  const items = window
    .flatMap((row) => {
      const record = loaded.get(row.id)
      return record && record.status === 'active' ? [{ record, vector: l2normalize(row.embedding), words: wordSet(record) }] : []
    })
    .sort((a, b) => (a.record.id < b.record.id ? -1 : 1))
  const n = items.length
  const managed = items.map((item) => canManage(principal, item.record.owner))
  const scopeKeys = items.map((item) => scopeKey(item.record.scopes))

  const all = unionFind(n)
  const mine = unionFind(n)
  const similarity = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const cos = dot(items[i]!.vector, items[j]!.vector)
      if (cos < input.threshold || jaccard(items[i]!.words, items[j]!.words) < input.min_overlap) continue
      similarity.set(`${i}:${j}`, cos)
      all.union(i, j)
      // Only entries with identical scopes merge: a merged text is readable exactly where each original was.
      if (managed[i] && managed[j] && scopeKeys[i] === scopeKeys[j]) mine.union(i, j)
    }
  }
  const pairCosine = (i: number, j: number) => similarity.get(`${Math.min(i, j)}:${Math.max(i, j)}`) ?? dot(items[i]!.vector, items[j]!.vector)
  const minSimilarity = (group: number[]) => {
    let low = 1
    for (let a = 0; a < group.length; a++) for (let b = a + 1; b < group.length; b++) low = Math.min(low, pairCosine(group[a]!, group[b]!))
    return Math.round(low * 1e4) / 1e4
  }

  const skipped: SlimSkipped[] = []
  for (const group of all.groups()) {
    const foreign = group.filter((i) => !managed[i]).map((i) => items[i]!.record.id)
    if (foreign.length === 0) continue
    skipped.push({
      ids: group.map((i) => items[i]!.record.id),
      reason: 'not_managed',
      message: `Left out ${foreign.join(', ')}: only the owner or an admin may merge an entry`,
    })
  }
  for (const group of all.groups()) {
    const own = group.filter((i) => managed[i])
    const scopeSets = [...new Set(own.map((i) => scopeKeys[i]!))]
    if (scopeSets.length < 2) continue
    skipped.push({
      ids: own.map((i) => items[i]!.record.id),
      reason: 'scopes_differ',
      message:
        `Not merged across scopes: ${own.map((i) => `${items[i]!.record.id} (${items[i]!.record.scopes.join(', ')})`).join('; ')}. ` +
        'A merge would change who can read these texts; near-duplicates with identical scopes are merged among themselves. Align the scopes first (PATCH scopes) to merge them.',
    })
  }

  const groups: SlimGroup[] = []
  let mergedCount = 0
  for (const group of mine.groups()) {
    const records = group.map((i) => items[i]!.record).sort(byLead)
    const ids = records.map((r) => r.id)
    const scopes = unite(
      records.map((r) => r.scopes),
      Number.MAX_SAFE_INTEGER,
    )
    try {
      assertWritableScopes(principal, scopes)
    } catch (error) {
      skipped.push({
        ids,
        reason: 'scopes_not_writable',
        message: `Not merged: the merged entry would be in ${scopes.join(', ')}, and ${(error as Error).message}`,
      })
      continue
    }
    const groupSimilarity = minSimilarity(group)
    if (input.dry_run) {
      groups.push({ kept_id: null, merged_ids: ids, similarity: groupSimilarity })
      continue
    }
    const now = clock.now()
    let record = mergedRecord(records, now, maxContentBytes)
    const [embedding] = await embedder.embed([embeddingText(record.task, record.content)])
    const doc = searchDocument(record.task, record.content, record.tags)
    let outcome = await store.knowledge.merge({ record, doc, embedding }, ids, visible)
    for (let attempt = 0; attempt < 8 && 'conflict' in outcome && outcome.conflict === 'id_taken'; attempt++) {
      record = { ...record, id: newKnowledgeId(now) }
      outcome = await store.knowledge.merge({ record, doc, embedding }, ids, visible)
    }
    if ('conflict' in outcome) {
      skipped.push({ ids, reason: 'changed', message: 'Not merged: an entry of the group changed (no longer active or visible) during the run' })
      continue
    }
    groups.push({ kept_id: outcome.id, merged_ids: ids, similarity: groupSimilarity })
    mergedCount += ids.length
    logger.info('knowledge.slim.merged', { id: outcome.id, merged_ids: ids, similarity: groupSimilarity })
  }
  logger.info('knowledge.slim.done', { dry_run: input.dry_run, considered: n, groups: groups.length, merged: mergedCount, skipped: skipped.length })
  return {
    dry_run: input.dry_run,
    threshold: input.threshold,
    min_overlap: input.min_overlap,
    considered: n,
    truncated,
    next_cursor: nextCursor,
    groups,
    merged: mergedCount,
    skipped,
  }
}

/**
 * Undoes a merge made by {@link slimKnowledge}: the originals become active again,
 * exactly as they were, and the merged entry is archived (kept, hidden). The caller
 * must manage the merged entry and every original.
 * @example
 * await unmergeKnowledge({ store, embedder }, 'knowledge-20260306120000-ab12', principal)
 */
export async function unmergeKnowledge(deps: SlimDeps, mergedEntryId: string, principal: Principal): Promise<UnmergeResult> {
  requirePermission(principal, 'write')
  parseWith(KnowledgeId, mergedEntryId, 'knowledge id')
  const { store } = deps
  const logger = deps.logger ?? noopLogger
  const clock = deps.clock ?? systemClock
  const visible = visibleScopes(principal)
  const record = await store.knowledge.get(mergedEntryId, visible)
  if (!record) throw new KnowHubError('not_found', `No knowledge entry ${mergedEntryId}`, { id: mergedEntryId })
  if (!canManage(principal, record.owner)) {
    throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may unmerge entry ${mergedEntryId}`, {
      id: mergedEntryId,
      owner: record.owner,
    })
  }
  const { records, total } = await store.knowledge.mergedFrom(mergedEntryId, visible)
  if (total === 0)
    throw new KnowHubError('conflict', `Nothing is merged into entry ${mergedEntryId}: it is not the result of a merge, or it was unmerged already`, {
      id: mergedEntryId,
    })
  if (records.length < total)
    throw new KnowHubError('forbidden', `Some entries merged into ${mergedEntryId} are not visible to you; ask their owner or an admin`, { id: mergedEntryId })
  const foreign = records.filter((r) => !canManage(principal, r.owner)).map((r) => r.id)
  if (foreign.length > 0) throw new KnowHubError('forbidden', `You may not restore ${foreign.join(', ')}: only the owner or an admin may`, { ids: foreign })
  if (record.status !== 'active')
    throw new KnowHubError('conflict', `Entry ${mergedEntryId} is ${record.status}; only an active merged entry can be unmerged`, {
      id: mergedEntryId,
      status: record.status,
    })
  const ids = records.map((r) => r.id)
  if (!(await store.knowledge.unmerge(mergedEntryId, ids, visible, clock.now()))) {
    throw new KnowHubError('conflict', `Entry ${mergedEntryId} or its originals changed during the unmerge; try again`, { id: mergedEntryId })
  }
  logger.info('knowledge.slim.unmerged', { id: mergedEntryId, restored_ids: ids })
  return { id: mergedEntryId, status: 'archived', restored_ids: ids }
}
