/**
 * Knowledge entries as the export format writes them (one JSONL line each), for tests that
 * import a known table: every field at a plain default, `fields` over them.
 */

/** The plain entry, in the export format's field order. */
const PLAIN_ENTRY = {
  id: '',
  message_id: '',
  types: ['tool'],
  task: '',
  tags: {},
  scopes: [],
  owner: 'user:u',
  content: '',
  resource_ids: [],
  source: { name: '', category: 'exp', urls: [], agent_id: '', submitted_by: '', message_id: '', trace_id: '' },
  eval: { score: 3, helpful: 0, harmful: 0, confidence: 0.5, helpful_history: [], harmful_history: [] },
  status: 'active',
  merged_into: null,
  version: 1,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  versions: [],
}

/**
 * One export line: an active, version-1 entry of type `tool` owned by `user:u`, created
 * 2026-01-01, with an empty source and no feedback, and `fields` in place of any of those.
 * @example
 * await knowledge.importJsonl([exportedEntry({ id: 'knowledge-20260101000000-0001', task: 'a', content: 'b', scopes: ['user:u'] })], admin)
 */
export function exportedEntry(fields: { id: string; task: string; content: string; scopes: string[] } & Record<string, unknown>): string {
  return JSON.stringify({ ...PLAIN_ENTRY, ...fields })
}
