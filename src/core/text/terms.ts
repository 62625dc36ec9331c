/**
 * Knowledge full-text search terms: what entries are indexed by and queries look for.
 */
import { aliasTerms, canonicalWord } from './aliases.js'
import { cjkSegments } from './cjk.js'
import { stemWord } from './stem.js'
import { SEARCH_STOP_WORDS } from './stop-words.js'
import { latinWords } from './tokenize.js'

/**
 * Full-text search terms of a text, in order: Latin words without the search stop words, each
 * replaced by its alias table's canonical name ({@link canonicalWord}) and stemmed
 * ({@link stemWord}); CJK words (canonical names too) and bigrams (`cjkSegments`); then the terms
 * the alias table's phrases add ({@link aliasTerms}). Entries and queries go through the same
 * function, so an alias finds its canonical name and the other way round.
 * @example
 * searchTerms('Caroline went to the support groups') // ['carolin', 'go', 'support', 'group']
 * searchTerms('postgres release notes') // ['postgresql', 'releas', 'note', 'changelog']
 */
export function searchTerms(text: string): string[] {
  const latin = latinWords(text)
  const terms: string[] = []
  for (const word of latin) if (!SEARCH_STOP_WORDS.has(word)) terms.push(stemWord(canonicalWord(word)))
  const { words, bigrams } = cjkSegments(text)
  for (const word of words) terms.push(canonicalWord(word))
  for (const gram of bigrams) terms.push(gram)
  for (const term of aliasTerms(latin)) terms.push(stemWord(term))
  return terms
}
