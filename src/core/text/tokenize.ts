/**
 * Tokenising: lower-cased Latin (and other non-CJK script) words, and the segments a
 * text is indexed by (those words plus CJK words and bigrams, see `cjk.ts`).
 */
import { CJK_RUN, cjkSegments } from './cjk.js'

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/**
 * Lower-cased Latin/other-script words of the text (NFKC), CJK runs removed; a final
 * possessive `'s` is dropped and other apostrophes removed (`don't` → `dont`).
 * @example
 * latinWords("Caroline's don't 用户") // ['caroline', 'dont']
 */
export function latinWords(text: string): string[] {
  const withoutCjk = text.replace(CJK_RUN, ' ').normalize('NFKC').toLowerCase()
  const words: string[] = []
  for (const match of withoutCjk.matchAll(WORD)) {
    const word = match[0].replace(/['’]s$/u, '').replace(/['’]/gu, '')
    if (word.length > 0) words.push(word)
  }
  return words
}

/** The pieces a text is indexed by: Latin words, CJK words and CJK bigrams. */
export interface Segments {
  latin: string[]
  cjk: string[]
}

/**
 * Segments text for full-text search: Latin words, then CJK words followed by the CJK
 * bigrams that are not also words.
 * @example
 * segment('用户偏好 TypeScript') // { latin: ['typescript'], cjk: ['用户', '偏好', '户偏'] }
 */
export function segment(text: string): Segments {
  const { words, bigrams } = cjkSegments(text)
  return { latin: latinWords(text), cjk: [...words, ...bigrams] }
}
