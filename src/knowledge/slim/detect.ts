/**
 * Slimming, step one: near-duplicate detection over a window of the caller's visible
 * active entries (see slim.ts for the rules). Pure computation over loaded records and
 * their vectors, apart from loading the window.
 */
import { decodeCursor, encodeCursor } from '../../core/cursor.js'
import { KnowledgeId } from '../../core/knowledge.js'
import type { Principal } from '../../core/principal.js'
import type { SlimSkipped } from '../../core/slim.js'
import { segment } from '../../core/text/index.js'
import { l2normalize } from '../../embed/vector.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'
import type { Store } from '../../store/store.js'
import { mayManage } from '../../auth/policy.js'

/** Union-find over indexes 0..n-1. */
export function unionFind(n: number) {
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

function windowCursor(record: KnowledgeRecord): string {
  return encodeCursor(['slim', record.created_at.toISOString(), record.id])
}

export function windowPosition(cursor: string): { created_at: Date; id: string } {
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

/** An entry of the window with its normalised vector and word set. */
export interface WindowItem {
  record: KnowledgeRecord
  vector: Float32Array
  words: Set<string>
}

/** The compared window: its active entries (by id), whether older entries remain, and the cursor of the next window. */
export interface SlimWindow {
  items: WindowItem[]
  truncated: boolean
  next_cursor: string | null
}

/**
 * Loads a window of `limit` visible active entries, newest first (older than `before`), with their vectors.
 * @example
 * const window = await loadWindow(store, visible, 2000, undefined)
 */
export async function loadWindow(store: Store, visible: string[], limit: number, before: { created_at: Date; id: string } | undefined): Promise<SlimWindow> {
  const rows = await store.knowledge.vectors({ visible, status: ['active'] }, limit + 1, before)
  const truncated = rows.length > limit
  const window = rows.slice(0, limit)
  const loaded = new Map(
    (
      await store.knowledge.getMany(
        window.map((r) => r.id),
        visible,
      )
    ).map((r) => [r.id, r]),
  )
  // The next window starts half a window later (the last loaded entry of this one's newer half).
  const stride = Math.ceil(limit / 2)
  const resumeAt = truncated
    ? (window
        .slice(0, stride)
        .flatMap((row) => loaded.get(row.id) ?? [])
        .pop() ?? window.flatMap((row) => loaded.get(row.id) ?? []).pop())
    : undefined
  const items = window
    .flatMap((row) => {
      const record = loaded.get(row.id)
      return record && record.status === 'active' ? [{ record, vector: l2normalize(row.embedding), words: wordSet(record) }] : []
    })
    .sort((a, b) => (a.record.id < b.record.id ? -1 : 1))
  return { items, truncated, next_cursor: resumeAt ? windowCursor(resumeAt) : null }
}

/** Groups of near-duplicates (indexes into the window's items) and the groups left alone, with why. */
export interface DuplicateGroups {
  /** Groups the caller may merge: every member managed by the caller, one scope set. */
  mergeable: number[][]
  skipped: SlimSkipped[]
  /** The lowest pairwise cosine similarity within a group, rounded to 4 places. */
  similarity(group: number[]): number
}

/**
 * Pairs with cosine similarity ≥ `threshold` and word overlap ≥ `minOverlap` are joined;
 * groups are connected components. Groups with members the caller may not manage, or with
 * different scope sets, are reported as skipped.
 * @example
 * const { mergeable, skipped } = findDuplicates(window.items, principal, 0.9, 0.5)
 */
export function findDuplicates(items: readonly WindowItem[], principal: Principal, threshold: number, minOverlap: number): DuplicateGroups {
  const n = items.length
  const managed = items.map((item) => mayManage(principal, item.record))
  // A group key: one scope set and one owner. A merged entry has one owner, so merging entries
  // of several owners would hand the others' text to the lead's owner (who could then edit or
  // delete it): near-duplicates of different owners stay apart (`owners_differ`).
  const scopeKeys = items.map((item) => scopeKey(item.record.scopes))
  const groupKeys = items.map((item, i) => `${scopeKeys[i]}\n\n${item.record.owner}`)
  const all = unionFind(n)
  const mine = unionFind(n)
  const similarity = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const cos = dot(items[i]!.vector, items[j]!.vector)
      if (cos < threshold || jaccard(items[i]!.words, items[j]!.words) < minOverlap) continue
      similarity.set(`${i}:${j}`, cos)
      all.union(i, j)
      // Only entries with identical scopes merge: a merged text is readable exactly where each original was.
      if (managed[i] && managed[j] && groupKeys[i] === groupKeys[j]) mine.union(i, j)
    }
  }
  const pairCosine = (i: number, j: number) => similarity.get(`${Math.min(i, j)}:${Math.max(i, j)}`) ?? dot(items[i]!.vector, items[j]!.vector)
  return {
    mergeable: mine.groups(),
    skipped: skippedGroups(items, all.groups(), managed, scopeKeys, groupKeys),
    similarity(group) {
      let low = 1
      for (let a = 0; a < group.length; a++) for (let b = a + 1; b < group.length; b++) low = Math.min(low, pairCosine(group[a]!, group[b]!))
      return Math.round(low * 1e4) / 1e4
    },
  }
}

/** Near-duplicate groups that hold entries the caller may not manage, or several scope sets. */
function skippedGroups(items: readonly WindowItem[], groups: number[][], managed: boolean[], scopeKeys: string[], groupKeys: string[]): SlimSkipped[] {
  const skipped: SlimSkipped[] = []
  for (const group of groups) {
    const foreign = group.filter((i) => !managed[i]).map((i) => items[i]!.record.id)
    if (foreign.length === 0) continue
    skipped.push({
      ids: group.map((i) => items[i]!.record.id),
      reason: 'not_managed',
      message: `Left out ${foreign.join(', ')}: only the owner or an admin may merge an entry`,
    })
  }
  for (const group of groups) {
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
  for (const group of groups) {
    const own = group.filter((i) => managed[i])
    const owners = [...new Set(own.map((i) => items[i]!.record.owner))]
    if (owners.length < 2) continue
    // Within one scope set, more than one owner: each owner's part merges on its own.
    const sameScopes = new Map<string, number[]>()
    for (const i of own) sameScopes.set(scopeKeys[i]!, [...(sameScopes.get(scopeKeys[i]!) ?? []), i])
    for (const part of sameScopes.values()) {
      if (new Set(part.map((i) => groupKeys[i])).size < 2) continue
      skipped.push({
        ids: part.map((i) => items[i]!.record.id),
        reason: 'owners_differ',
        message:
          `Not merged across owners: ${part.map((i) => `${items[i]!.record.id} (${items[i]!.record.owner})`).join('; ')}. ` +
          'A merged entry has one owner, who could then edit or delete the others’ text; near-duplicates of one owner are merged among themselves.',
      })
    }
  }
  return skipped
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

/** The scope set of an entry, as a key (order and duplicates do not matter). */
function scopeKey(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join('\n')
}
