/**
 * CJK (Chinese, Japanese kana, Korean hangul) detection and segmentation: dictionary
 * words from `Intl.Segmenter` (ICU data inside Node) and overlapping character bigrams,
 * so that Chinese text matches text that shares words but not whole phrases.
 */

const CJK_CLASS = '\\u3040-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\uac00-\\ud7af'
const CJK = new RegExp(`[${CJK_CLASS}]`, 'u')
const CJK_CHAR = new RegExp(`[${CJK_CLASS}]`, 'gu')
/** Runs of CJK characters (global: use with `match`, `replace`, `matchAll`). */
export const CJK_RUN = new RegExp(`[${CJK_CLASS}]+`, 'gu')
const LETTER = /\p{L}/gu

let segmenter: Intl.Segmenter | undefined
function zhSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter('zh', { granularity: 'word' })
  return segmenter
}

/**
 * True when the text contains any CJK character.
 * @example
 * hasCjk('pnpm 部署') // true
 */
export function hasCjk(text: string): boolean {
  return CJK.test(text)
}

/**
 * True when at least a tenth of the text's letters are CJK (USE lite must not embed it;
 * n-gram vectors judge it differently).
 * @example
 * isLargelyCjk('用户偏好 TypeScript') // true
 */
export function isLargelyCjk(text: string): boolean {
  const cjk = text.match(CJK_CHAR)?.length ?? 0
  if (cjk === 0) return false
  const letters = text.match(LETTER)?.length ?? cjk
  return cjk / letters >= 0.1
}

/**
 * Dictionary words of the CJK runs in the text (single characters included).
 * @example
 * cjkWords('用户偏好 TypeScript') // ['用户', '偏好']
 */
export function cjkWords(text: string): string[] {
  const words: string[] = []
  for (const run of text.normalize('NFKC').match(CJK_RUN) ?? []) {
    for (const part of zhSegmenter().segment(run)) {
      if (part.isWordLike) words.push(part.segment)
    }
  }
  return words
}

/**
 * Overlapping character bigrams of each CJK run (a one-character run yields itself).
 * @example
 * cjkBigrams('用户偏好') // ['用户', '户偏', '偏好']
 */
export function cjkBigrams(text: string): string[] {
  const grams: string[] = []
  for (const run of text.normalize('NFKC').match(CJK_RUN) ?? []) {
    const chars = [...run]
    if (chars.length === 1) grams.push(run)
    for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i]! + chars[i + 1]!)
  }
  return grams
}

/** The CJK pieces of a text: dictionary words, and the bigrams that are not also a word. */
export interface CjkSegments {
  words: string[]
  bigrams: string[]
}

/**
 * Dictionary words and the character bigrams that are not one of those words (a bigram
 * that the segmenter also found as a word would count twice), in text order.
 * @example
 * cjkSegments('用户偏好') // { words: ['用户', '偏好'], bigrams: ['户偏'] }
 */
export function cjkSegments(text: string): CjkSegments {
  if (!hasCjk(text)) return { words: [], bigrams: [] }
  const words = cjkWords(text)
  const known = new Set(words)
  return { words, bigrams: cjkBigrams(text).filter((gram) => !known.has(gram)) }
}
