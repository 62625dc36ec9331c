/**
 * Lexical terms for pack relevance: Latin words (lower-cased, stop words
 * dropped, Porter-stemmed) and CJK dictionary words plus character bigrams
 * (via core/text), shared by the index and the query side.
 */
import { stemmer } from 'stemmer'
import { cjkBigrams, cjkWords, hasCjk, latinWords } from '../core/text.js'

const EN_STOP = new Set(
  (
    'a an and are as at be been but by can could do does did for from has have had how i if in into is it its me my of on or our ' +
    'should so than that the their them then there these they this those to us was we were what when where which who whom why will ' +
    'with would you your about please tell give show find get use using need want'
  ).split(' '),
)
const ZH_STOP = new Set(
  '的 了 是 在 和 与 或 及 等 也 都 就 而 被 把 对 从 到 为 以 之 其 这 那 个 一 不 有 我 你 他 她 它 们 吗 呢 吧 啊 请 给 要 会 能 如何 怎么 什么 哪些 一下 多少 是否 哪个 哪里 为何 怎样 吗'.split(
    ' ',
  ),
)

// Bigrams across a particle ("池的", "度是") match nothing useful.
const PARTICLE = /[的了是吗呢吧啊和与或及把被对]/u

const stems = new Map<string, string>()
function stem(word: string): string {
  let out = stems.get(word)
  if (out === undefined) {
    out = /^[a-z]+$/u.test(word) && word.length > 3 ? stemmer(word) : word
    if (stems.size > 200_000) stems.clear()
    stems.set(word, out)
  }
  return out
}

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
  for (const word of latinWords(text)) if (!EN_STOP.has(word)) terms.push(stem(word))
  if (hasCjk(text)) {
    const words = cjkWords(text)
    const known = new Set(words)
    for (const word of words) if (!ZH_STOP.has(word)) terms.push(word)
    for (const gram of cjkBigrams(text)) if (!known.has(gram)) terms.push(gram)
  }
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
    if (EN_STOP.has(word)) continue
    const term = stem(word)
    if (!out.has(term)) out.set(term, { term, weight: 1, surface: word })
  }
  if (hasCjk(text)) {
    const words = cjkWords(text).filter((w) => !ZH_STOP.has(w))
    const known = new Set(words)
    for (const word of words) if (!out.has(word)) out.set(word, { term: word, weight: [...word].length === 1 ? 0.5 : 1, surface: word })
    for (const gram of cjkBigrams(text)) {
      if (known.has(gram) || out.has(gram) || ZH_STOP.has(gram) || PARTICLE.test(gram)) continue
      out.set(gram, { term: gram, weight: 0.5, surface: gram })
    }
  }
  return [...out.values()]
}
