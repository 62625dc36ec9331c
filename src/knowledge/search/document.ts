/**
 * What an entry is indexed by: its full-text document (search terms per field)
 * and the text its embedding is made from.
 */
import { cjkSegments, searchTerms } from '../../core/text/index.js'
import type { Tags } from '../../core/knowledge.js'
import type { SearchDocument, TextQuery } from '../../store/knowledge/knowledge.js'

/** Characters of content that go into the full-text index and the embedding. */
export const INDEXED_CONTENT_CHARS = 100_000
export const EMBEDDED_CHARS = 8_000

/**
 * Version of the full-text document format (terms and fields). The service rebuilds
 * stored documents when it changes. 1: PostgreSQL `english`/`simple` configurations;
 * 2: KnowHub's own terms ({@link searchTerms}), BM25 statistics; 3: core's one stemmer
 * (its irregular-forms table no longer joins the ambiguous `left`, `led`, `lit`, `bore`); 4: the
 * alias table (core/text/aliases.ts: postgres → postgresql, 上线 → 部署, release notes → changelog). 5: general engineering shorthand (db → database, repo → repository, 报警 → 告警, …; issue 26).
 */
export const SEARCH_DOC_VERSION = 5

function tagText(tags: Tags): string {
  return Object.values(tags)
    .flatMap((value) => (Array.isArray(value) ? value : [String(value)]))
    .join(' ')
}

/**
 * The full-text document of an entry: task and tags are the title field (weighted up
 * at query time), content the body. An entry whose task is its whole content is
 * indexed once, as body, so that its words are not counted twice.
 * @example
 * searchDocument('Log in to site A', 'Use the test account', { domain: 'crawling' })
 * // { title: ['log', 'site', 'crawl'], body: ['use', 'test', 'account'] }
 */
export function searchDocument(task: string, content: string, tags: Tags): SearchDocument {
  const body = content.slice(0, INDEXED_CONTENT_CHARS)
  const title = task.trim() === body.trim() ? tagText(tags) : `${task} ${tagText(tags)}`
  return { title: searchTerms(title), body: searchTerms(body) }
}

/** The text embedded for an entry (the task once when it is the whole content). */
export function embeddingText(task: string, content: string): string {
  return (task.trim() === content.trim() ? content : `${task}\n${content}`).slice(0, EMBEDDED_CHARS)
}

/**
 * A full-text query from free text: its distinct search terms, and the terms that count in
 * its best possible score (all but the CJK bigrams that are not words: see `TextQuery`).
 */
export function textQuery(q: string): TextQuery {
  const terms = [...new Set(searchTerms(q))]
  const bigrams = new Set(cjkSegments(q).bigrams)
  return bigrams.size === 0 ? { terms } : { terms, boundTerms: terms.filter((term) => !bigrams.has(term)) }
}
