import { segment } from '../core/text.js'
import type { Tags } from '../core/knowledge.js'
import type { SearchDocument, TextQuery } from '../store/knowledge.js'

/** Characters of content that go into the full-text index and the embedding. */
export const INDEXED_CONTENT_CHARS = 100_000
export const EMBEDDED_CHARS = 8_000

function tagText(tags: Tags): string {
  return Object.values(tags)
    .flatMap((value) => (Array.isArray(value) ? value : [String(value)]))
    .join(' ')
}

/** The full-text document of an entry: task and tags weigh more than content. */
export function searchDocument(task: string, content: string, tags: Tags): SearchDocument {
  const title = segment(`${task} ${tagText(tags)}`)
  const body = segment(content.slice(0, INDEXED_CONTENT_CHARS))
  return { titleLatin: title.latin.join(' '), titleCjk: title.cjk.join(' '), bodyLatin: body.latin.join(' '), bodyCjk: body.cjk.join(' ') }
}

/** The text embedded for an entry. */
export function embeddingText(task: string, content: string): string {
  return `${task}\n${content}`.slice(0, EMBEDDED_CHARS)
}

/** A full-text query from free text. */
export function textQuery(q: string): TextQuery {
  const { latin, cjk } = segment(q)
  return { latin: [...new Set(latin)], cjk: [...new Set(cjk)] }
}
