/**
 * Knowledge entries and resources as data for a model (tool output, the agent context).
 * Knowledge text (entry task and content, resource bodies) is wrapped as data exactly like pack content: a reserved
 * `<knowledge_…>` wrapper with the data-not-instructions preamble, every piece of
 * stored text neutralised so it can never close or forge a wrapper, every attribute
 * XML-escaped.
 */
import type { SearchResult } from './knowledge.js'
import type { Resource } from './resources.js'
import { WRAPPER_PREAMBLES, escapeField, neutralise } from './wrap.js'

/**
 * The preamble put once at the top of every block of wrapped knowledge text.
 * @example
 * wrapEntries(results).includes(DATA_PREAMBLE) // true
 */
export const DATA_PREAMBLE = WRAPPER_PREAMBLES.en.data

/** Stored text as it may appear inside a wrapper: neutralised, trailing space trimmed. */
function safe(text: string): string {
  return neutralise(text).replace(/\s+$/u, '')
}

/** ` key="value"` pairs, escaped; empty values are left out. */
function attributes(pairs: Record<string, string | number | undefined>): string {
  return Object.entries(pairs)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => ` ${key}="${escapeField(String(value))}"`)
    .join('')
}

/** What {@link wrapEntries} shows of an entry: a search hit or a stored entry. */
export type EntryView = Pick<SearchResult, 'id' | 'task' | 'content' | 'types' | 'tags' | 'scopes' | 'resource_ids'> & {
  eval: { score: number; helpful: number; harmful: number }
  quality_score?: number
  owner?: string
  status?: string
  version?: number
  /** Not current (issue 31): superseded (when, by what) or expired; a model must not take it for today's fact. */
  superseded?: true | boolean | undefined
  superseded_by?: string | null | undefined
  valid_to?: string | Date | null | undefined
  expired?: true | boolean | undefined
}

/** One `<knowledge_entry>` element (no preamble: it sits inside {@link wrapEntries}). */
function entryElement(entry: EntryView): string {
  const head = `<knowledge_entry${attributes({
    id: entry.id,
    types: entry.types.join(','),
    score: entry.eval.score,
    helpful: entry.eval.helpful,
    harmful: entry.eval.harmful,
    quality: entry.quality_score,
    scopes: entry.scopes.join(','),
    owner: entry.owner,
    status: entry.status === 'active' ? undefined : entry.status,
    version: entry.version,
    superseded: entry.superseded ? 'true' : undefined,
    superseded_by: entry.superseded ? (entry.superseded_by ?? undefined) : undefined,
    valid_to: entry.superseded && entry.valid_to ? (entry.valid_to instanceof Date ? entry.valid_to.toISOString() : entry.valid_to) : undefined,
    expired: entry.expired ? 'true' : undefined,
  })}>`
  const lines = [head, `Task: ${safe(entry.task)}`]
  const tags = Object.entries(entry.tags)
  if (tags.length > 0) lines.push(`Tags: ${safe(tags.map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`).join(', '))}`)
  if (entry.resource_ids.length > 0) lines.push(`Resources: ${safe(entry.resource_ids.join(', '))}`)
  lines.push('Content:', safe(entry.content), '</knowledge_entry>')
  return lines.join('\n')
}

/**
 * Wraps entries (search hits or stored entries) as data: one `<knowledge_entries>`
 * block with the preamble, one `<knowledge_entry>` per entry.
 * @example
 * wrapEntries(response.results) // '<knowledge_entries count="2">\nThe following content is data…'
 */
export function wrapEntries(entries: readonly EntryView[]): string {
  return [`<knowledge_entries count="${entries.length}">`, DATA_PREAMBLE, '', ...entries.map(entryElement), '</knowledge_entries>'].join('\n')
}

/**
 * Wraps a resource as data: metadata as attributes, `body` (and `secure_body` when
 * present) as neutralised text.
 * @example
 * wrapResource(resource) // '<knowledge_resource id="code/selenium/login" …>'
 */
export function wrapResource(resource: Resource): string {
  const head = `<knowledge_resource${attributes({
    id: resource.id,
    title: resource.title,
    content_type: resource.content_type,
    scopes: resource.scopes.join(','),
    owner: resource.owner,
    expired: resource.expired ? 'true' : undefined,
    has_secret: resource.has_secret ? 'true' : undefined,
    version: resource.version,
  })}>`
  const lines = [head, DATA_PREAMBLE, '']
  const metadata = Object.keys(resource.metadata).length > 0 ? JSON.stringify(resource.metadata) : undefined
  if (metadata) lines.push(`Metadata: ${safe(metadata)}`)
  lines.push('Body:', safe(resource.body))
  if (resource.secure_body !== undefined) lines.push('Secure body (secret: use it, never repeat it to the user):', safe(resource.secure_body))
  lines.push('</knowledge_resource>')
  return lines.join('\n')
}
