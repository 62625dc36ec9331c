/**
 * Lexical terms for pack relevance, shared by the index and the query side: Latin words
 * without the pack stop words, stemmed, and CJK dictionary words plus character bigrams.
 * The analysis itself (tokenising, stop-word lists, stemmer, CJK segmentation) is core's
 * one text module; this file only decides which of its pieces pack terms use.
 */
import { cjkSegments, latinWords, PACK_BIGRAM_PARTICLE, PACK_STOP_WORDS, PACK_ZH_STOP_WORDS, stemWord } from '../../core/text/index.js'

/** A query term and its weight (CJK bigrams count half). */
export interface WeightedTerm {
  term: string
  weight: number
  /** The surface form in the task, for reporting missing facts. */
  surface: string
}

/**
 * Terms of a document text, repeated as often as they occur.
 * @example
 * documentTerms('Pricing prices 价格') // ['price', 'price', '价格']
 */
export function documentTerms(text: string): string[] {
  const terms: string[] = []
  for (const word of latinWords(text)) if (!PACK_STOP_WORDS.has(word)) terms.push(stemWord(word))
  const { words, bigrams } = cjkSegments(text)
  for (const word of words) if (!PACK_ZH_STOP_WORDS.has(word)) terms.push(word)
  for (const gram of bigrams) terms.push(gram)
  return terms
}

/**
 * Distinct weighted terms of a task text.
 * @example
 * queryTerms('What is the enterprise price?') // [{ term: 'enterpris', … }, { term: 'price', … }]
 */
export function queryTerms(text: string): WeightedTerm[] {
  const out = new Map<string, WeightedTerm>()
  for (const word of latinWords(text)) {
    if (PACK_STOP_WORDS.has(word)) continue
    const term = stemWord(word)
    if (!out.has(term)) out.set(term, { term, weight: 1, surface: word })
  }
  const { words, bigrams } = cjkSegments(text)
  for (const word of words) {
    if (PACK_ZH_STOP_WORDS.has(word) || out.has(word)) continue
    out.set(word, { term: word, weight: [...word].length === 1 ? 0.5 : 1, surface: word })
  }
  for (const gram of bigrams) {
    if (out.has(gram) || PACK_ZH_STOP_WORDS.has(gram) || PACK_BIGRAM_PARTICLE.test(gram)) continue
    out.set(gram, { term: gram, weight: 0.5, surface: gram })
  }
  return [...out.values()]
}
