/**
 * Knowledge full-text search terms: what entries are indexed by and queries look for.
 */
import { stemWord } from './stem.js'
import { SEARCH_STOP_WORDS } from './stop-words.js'
import { segment } from './tokenize.js'

/**
 * Full-text search terms of a text, in order: Latin words without the search stop words,
 * stemmed ({@link stemWord}), then CJK words and bigrams ({@link segment}).
 * @example
 * searchTerms('Caroline went to the support groups') // ['carolin', 'go', 'support', 'group']
 */
export function searchTerms(text: string): string[] {
  const { latin, cjk } = segment(text)
  const terms: string[] = []
  for (const word of latin) if (!SEARCH_STOP_WORDS.has(word)) terms.push(stemWord(word))
  for (const token of cjk) terms.push(token)
  return terms
}
