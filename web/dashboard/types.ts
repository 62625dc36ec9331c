/** The shapes the dashboard reads (the server's zod schemas in src/core are the source of truth). */
export type Tags = Record<string, string | number | boolean | string[]>

export interface Explain {
  fulltext_rank: number | null
  fulltext_score: number | null
  vector_rank: number | null
  vector_similarity: number | null
  fused: number
  scope_priority: number
  fulltext_strength?: number | null
  /** What kept the result (issue 26): words, agreement, meaning, anchor, follows, neighbour, ungated. */
  evidence?: string
  background_similarity?: number
}

export interface SearchHit {
  id: string
  task: string
  content: string
  types: string[]
  tags: Tags
  scopes: string[]
  eval: { score: number; helpful: number; harmful: number; confidence: number }
  quality_score: number
  explain?: Explain
}

export interface Entry {
  id: string
  message_id: string
  types: string[]
  task: string
  tags: Tags
  scopes: string[]
  owner: string
  content: string
  resource_ids: string[]
  source: { name: string; category: string; urls: string[]; agent_id: string; submitted_by: string; timestamp?: string; message_id: string; trace_id: string }
  eval: {
    score: number
    helpful: number
    harmful: number
    confidence: number
    helpful_history: Record<string, unknown>[]
    harmful_history: Record<string, unknown>[]
  }
  status: 'active' | 'merged' | 'archived'
  merged_into: string | null
  version: number
  created_at: string
  updated_at: string
}

export interface Version {
  version: number
  task: string
  content: string
  types: string[]
  tags: Tags
  scopes: string[]
  reason: string
  created_at: string
}

export interface ResourceSummary {
  id: string
  title: string
  content_type: string
  owner: string
  scopes: string[]
  has_secret: boolean
  expired: boolean
  metadata: { expires_at?: string } & Record<string, unknown>
  created_at: string
  updated_at: string
}

export interface Resource extends ResourceSummary {
  body: string
  secure_body?: string
  /** The audit of secret reads (every surface), shown to the resource's owner and its org admin. */
  reveals?: { caller: string; via: string; route?: string; revealed_at: string }[]
}

export interface TokenInfo {
  id: string
  name: string
  prefix: string
  principal: Record<string, unknown> & { permissions: string[] }
  status: 'active' | 'revoked' | 'expired'
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
}

/** One current profile entry (src/core/profile.ts). */
export interface ProfileItem {
  id: string
  task: string
  content: string
  confidence: number
  score: number
  helpful: number
  harmful: number
  version: number
  updated_at: string
}

/** A user's profile, current view (`GET /ui/users/{id}/profile`). */
export interface UserProfile {
  user: string
  categories: Record<'preference' | 'background' | 'habit' | 'constraint', ProfileItem[]>
  timeline: { at: string; id: string; category: string; event: string; version: number; content: string; reason: string }[]
  counts: { current: number; entries: number }
}
