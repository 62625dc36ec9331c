/**
 * Text segmentation for search, shared by full-text indexing, queries and the
 * offline embedder. Latin-script text is split into lower-cased words; CJK runs
 * are split into dictionary words (Intl.Segmenter, ICU) plus character bigrams,
 * so that Chinese queries match entries that share words but not whole phrases.
 */

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/gu
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

let segmenter: Intl.Segmenter | undefined
function zhSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('zh', { granularity: 'word' })
  return segmenter
}

/** True when the text contains any CJK character. */
export function hasCjk(text: string): boolean {
  return CJK.test(text)
}

/** Lower-cased Latin/other-script words of the text, CJK runs removed. */
export function latinWords(text: string): string[] {
  const withoutCjk = text.replace(CJK_RUN, ' ').normalize('NFKC').toLowerCase()
  const words: string[] = []
  for (const match of withoutCjk.matchAll(WORD)) {
    const word = match[0].replace(/['’]s$/u, '').replace(/['’]/gu, '')
    if (word.length > 0) words.push(word)
  }
  return words
}

/** Dictionary words of the CJK runs in the text (single characters included). */
export function cjkWords(text: string): string[] {
  const words: string[] = []
  for (const run of text.normalize('NFKC').match(CJK_RUN) ?? []) {
    for (const part of zhSegmenter().segment(run)) {
      if (part.isWordLike) words.push(part.segment)
    }
  }
  return words
}

/** Overlapping character bigrams of each CJK run (a one-character run yields itself). */
export function cjkBigrams(text: string): string[] {
  const grams: string[] = []
  for (const run of text.normalize('NFKC').match(CJK_RUN) ?? []) {
    const chars = [...run]
    if (chars.length === 1) grams.push(run)
    for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i]! + chars[i + 1]!)
  }
  return grams
}

/** The pieces a text is indexed by: Latin words, CJK words and CJK bigrams. */
export interface Segments {
  latin: string[]
  cjk: string[]
}

/**
 * Segments text for full-text search.
 * @example
 * segment('用户偏好 TypeScript') // { latin: ['typescript'], cjk: ['用户', '偏好', '用户', '户偏', '偏好'] }
 */
export function segment(text: string): Segments {
  if (!hasCjk(text)) return { latin: latinWords(text), cjk: [] }
  const words = cjkWords(text)
  const known = new Set(words)
  return { latin: latinWords(text), cjk: [...words, ...cjkBigrams(text).filter((gram) => !known.has(gram))] }
}
