/**
 * A user's profile, current view (src/core/profile.ts): the current user_profile entries by
 * seed-002 category, highest confidence first, and a timeline of what changed — each entry
 * recorded, each earlier text it replaced (its versions), superseded by a newer entry (at its
 * `valid_to`), expired, archived or merged away. Current: active, not superseded, not expired.
 */
import { PROFILE_CATEGORIES, profileCategory, type ProfileEvent, type ProfileItem, type UserProfile } from '../../core/profile.js'
import type { KnowledgeVersion } from '../../core/knowledge.js'
import type { KnowledgeRecord } from '../../store/knowledge/knowledge.js'

const item = (r: KnowledgeRecord): ProfileItem => ({
  id: r.id,
  task: r.task,
  content: r.content,
  confidence: r.confidence,
  score: r.score,
  helpful: r.helpful,
  harmful: r.harmful,
  tags: r.tags,
  scopes: r.scopes,
  owner: r.owner,
  version: r.version,
  valid_from: r.valid_from.toISOString(),
  expires_at: r.expires_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
})

/** Whether an entry is part of the current view at `now`. */
const isCurrent = (r: KnowledgeRecord, now: Date): boolean =>
  r.status === 'active' && r.valid_to === null && (r.expires_at === null || r.expires_at.getTime() > now.getTime())

/**
 * The profile of `user` from its user_profile entries and their earlier versions.
 * @example
 * const profile = buildProfile('bob', records, await store.knowledge.versionsOf(records.map((r) => r.id)))
 */
export function buildProfile(
  user: string,
  records: readonly KnowledgeRecord[],
  versions: ReadonlyMap<string, KnowledgeVersion[]>,
  now: Date = new Date(),
): UserProfile {
  const categories = Object.fromEntries(PROFILE_CATEGORIES.map((c) => [c, [] as ProfileItem[]])) as UserProfile['categories']
  const timeline: ProfileEvent[] = []
  for (const r of records) {
    const category = profileCategory(r.tags)
    if (isCurrent(r, now)) categories[category].push(item(r))
    const earlier = versions.get(r.id) ?? []
    const first = earlier[0]
    // The first text was recorded when the entry was created; each later version replaced the one before.
    timeline.push({
      at: r.created_at.toISOString(),
      id: r.id,
      category,
      event: 'recorded',
      version: first?.version ?? r.version,
      content: first?.content ?? r.content,
      reason: '',
      superseded_by: null,
    })
    for (const [i, v] of earlier.entries()) {
      const next = earlier[i + 1]
      timeline.push({
        // A kept version is stamped with the time its text was written; it was replaced when the next text was written
        // (for the last one, the entry's last update: an approximation, feedback also moves it).
        at: next?.created_at ?? r.updated_at.toISOString(),
        id: r.id,
        category,
        event: 'changed',
        version: v.version,
        content: v.content,
        // A kept version carries the reason of the change that replaced it.
        reason: v.reason,
        superseded_by: null,
      })
    }
    const event = (kind: ProfileEvent['event'], at: Date, reason = '', supersededBy: string | null = null) =>
      timeline.push({ at: at.toISOString(), id: r.id, category, event: kind, version: r.version, content: r.content, reason, superseded_by: supersededBy })
    if (r.valid_to !== null) event('superseded', r.valid_to, r.superseded_by ? `superseded by ${r.superseded_by}` : 'no longer valid', r.superseded_by)
    if (r.expires_at !== null && r.expires_at.getTime() <= now.getTime()) event('expired', r.expires_at)
    if (r.status === 'archived') event('archived', r.updated_at)
    if (r.status === 'merged') event('merged', r.updated_at, `merged into ${r.merged_into ?? '(gone)'}`)
  }
  for (const list of Object.values(categories)) list.sort((a, b) => b.confidence - a.confidence || b.updated_at.localeCompare(a.updated_at))
  timeline.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id) || a.version - b.version)
  const current = Object.values(categories).reduce((sum, list) => sum + list.length, 0)
  return { user, categories, timeline, counts: { current, entries: records.length } }
}
