/**
 * A user's profile, current view (issue 31, seed 002): the user_profile entries about one user,
 * by category (preference, background, habit, constraint), with their confidence, and a timeline
 * of what changed. Served by `GET /api/users/{id}/profile`, the client, the `user_profile` tool
 * and the dashboard.
 */
import { z } from 'zod'
import { ROLES } from './actions.js'
import { Tags } from './knowledge.js'
import { Principal } from './principal.js'

/**
 * The caller as the hub sees it (`GET /api/me`): its principal and its role in the role table, to
 * check a token before using it.
 * @example
 * Me.parse({ principal: { user: 'ann', org: 'acme', permissions: ['read'] }, role: 'reader' })
 */
export const Me = z.object({ principal: Principal, role: z.enum(ROLES) }).meta({ id: 'Me' })
export type Me = z.output<typeof Me>

/** The categories of seed 002, in its order. */
export const PROFILE_CATEGORIES = ['preference', 'background', 'habit', 'constraint'] as const
export type ProfileCategory = (typeof PROFILE_CATEGORIES)[number]

/** One current profile entry. */
export const ProfileItem = z.object({
  id: z.string(),
  task: z.string(),
  content: z.string(),
  /** How sure the hub is (seed 002: rises as the user restates it, falls on a contradiction). */
  confidence: z.number(),
  score: z.number(),
  helpful: z.number().int(),
  harmful: z.number().int(),
  tags: Tags,
  scopes: z.array(z.string()),
  owner: z.string(),
  version: z.number().int(),
  /** When the fact became true (the source message's time when known), distinct from when it was recorded (`created_at`). */
  valid_from: z.string(),
  /** When it stops counting (retention), or null. */
  expires_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})
export type ProfileItem = z.infer<typeof ProfileItem>

/**
 * One change in the timeline: an entry recorded, an earlier text replaced (`changed`, with that
 * earlier text), superseded by a newer entry (at its `valid_to`), expired, archived, merged into
 * another entry.
 */
export const ProfileEvent = z.object({
  at: z.string(),
  id: z.string(),
  category: z.enum(PROFILE_CATEGORIES),
  event: z.enum(['recorded', 'changed', 'superseded', 'expired', 'archived', 'merged']),
  /** The version this event ended (`changed`) or the entry's version (others). */
  version: z.number().int(),
  /** The text at that point: for `changed`, the text that was replaced. */
  content: z.string(),
  /** Why (the edit's reason; `merged into …`; `superseded by …`). */
  reason: z.string(),
  /** The entry that superseded this one (`superseded`), else null. */
  superseded_by: z.string().nullable(),
})
export type ProfileEvent = z.infer<typeof ProfileEvent>

/**
 * The profile of one user.
 * @example
 * const profile = UserProfile.parse(await (await fetch(`${url}/api/users/bob/profile`)).json())
 * profile.categories.preference[0]?.content
 */
export const UserProfile = z.object({
  user: z.string(),
  categories: z.object({
    preference: z.array(ProfileItem),
    background: z.array(ProfileItem),
    habit: z.array(ProfileItem),
    constraint: z.array(ProfileItem),
  }),
  /** Oldest first. */
  timeline: z.array(ProfileEvent),
  /** Current entries, and every entry the timeline covers (current or not). */
  counts: z.object({ current: z.number().int(), entries: z.number().int() }),
})
export type UserProfile = z.infer<typeof UserProfile>

/**
 * The category of a profile entry: its `tags.category` when it is one of seed 002's, else
 * `background` (the folder layout files any other category in `profile.json`, the background).
 * @example
 * profileCategory({ category: 'habit' }) // 'habit'
 */
export function profileCategory(tags: Record<string, unknown>): ProfileCategory {
  const category = tags.category
  return typeof category === 'string' && (PROFILE_CATEGORIES as readonly string[]).includes(category) ? (category as ProfileCategory) : 'background'
}
