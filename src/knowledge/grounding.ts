/**
 * Grounding (issue 43): whether a text the model wrote (an extracted entry, an evolved or merged
 * content) is supported by the text it came from (the conversation's turns; the old content and
 * the feedback), and which turns support it. The learning loop saves nothing as `active` that
 * this rule does not support. The rule, over the text's words (the one text analysis of
 * src/core/text: Latin words stemmed, Chinese by dictionary words):
 *
 * 1. **Sources that say nothing are left out**: a sentence that hedges (`maybe`, `I think`, `not
 *    sure`, `可能`, `也许`, `不确定` …) or is small talk (greetings, thanks, the weather, meals,
 *    the weekend) supports nothing: a careful person does not save a guess or chit-chat.
 * 2. **Numbers must appear**: every number of the text occurs in the sources.
 * 3. **Names must appear**: every name of the text (a word with a capital inside or in capitals,
 *    a capitalised word inside a sentence, a word with digits or `. / _ - :` inside, and any
 *    Latin word of a Chinese text) occurs in the sources.
 * 4. **Its words are covered**: the share of the text's content words (framing words such as
 *    `user`, `prefers`, `用户`, `偏好` and stop words left out) found in the sources is at least
 *    `minCoverage` (0.6). With a semantic embedding model configured, a text whose embedding is
 *    at least `minSimilarity` (0.85) similar to its sources' needs half that coverage: a
 *    paraphrase, or an answer in the other language, whose names and numbers hold.
 *
 * A text without any content word is not supported (`empty`).
 */
import type { Embedder } from '../embed/embedder.js'
import { cosine } from '../embed/vector.js'
import {
  canonicalWord,
  cjkBigrams,
  cjkWords,
  CJK_FUNCTION_WORDS,
  CJK_RUN,
  hasCjk,
  isLargelyCjk,
  latinWords,
  SEARCH_STOP_WORDS,
  stemWord,
} from '../core/text/index.js'

/** One text the checked text may rest on: a conversation turn, the old content, the feedback. */
export interface GroundingSource {
  /** Its position (a turn's index in the conversation). */
  index: number
  text: string
}

/** How strict the rule is, and the embedding similarity when a semantic model is configured. */
export interface GroundingOptions {
  /** Share of the content words that must occur in the sources (default 0.6). */
  minCoverage?: number
  /** Cosine similarity at which half the coverage suffices (default 0.85). */
  minSimilarity?: number
  /** The cosine similarity of the text to its sources' text, by a semantic embedding model; absent: none is configured. */
  similarity?: ((text: string, sources: string) => Promise<number>) | undefined
  /**
   * Whether hedged and small-talk sentences of the sources support nothing (rule 1; default
   * true). Evolve says false: the old content is knowledge already, its cautions included.
   */
  conversational?: boolean
}

/** Why a text is not supported. */
export type UngroundedReason = 'no_source' | 'empty' | 'numbers' | 'names' | 'coverage'

/** The verdict on one text. */
export interface Grounding {
  supported: boolean
  reason?: UngroundedReason
  /** Share of its content words found in the sources (0-1). */
  coverage: number
  /** Similarity to the sources by the embedding model, when one is configured. */
  similarity?: number
  /** Numbers, names or words not found (at most 10). */
  missing: string[]
  /** The sources that support it (their `index`), fewest first covering its words. */
  sources: number[]
  /** The text is in another language than its sources (Chinese against English or back). */
  otherLanguage: boolean
}

export const DEFAULT_MIN_COVERAGE = 0.6
export const DEFAULT_MIN_SIMILARITY = 0.85

const HEDGES_EN =
  /\b(maybe|perhaps|probably|possibly|might|i think|i guess|i suppose|i believe|not sure|unsure|no idea|i wonder|could be|seems? like|kind of|sort of|if i remember|rumou?r)\b/iu
const HEDGES_ZH = /可能|也许|或许|大概|好像|似乎|应该是|不确定|不太确定|我猜|我觉得|说不定|估计|听说/u
const SMALL_TALK_EN =
  /\b(hi|hello|hey|thanks|thank you|thx|good (morning|afternoon|evening|night)|how are you|bye|goodbye|see you|weather|sunny|raining|rainy|lunch|dinner|breakfast|coffee|weekend|holiday|tired|have a nice)\b/iu
const SMALL_TALK_ZH = /你好|您好|谢谢|多谢|再见|早上好|晚上好|下午好|天气|下雨|晴天|午饭|晚饭|早饭|午餐|晚餐|早餐|咖啡|周末|假期|好累|辛苦了/u

/** Words that frame a statement rather than carry its fact: not required to be in the sources. */
const FRAMING_EN = new Set(
  (
    'user users agent assistant team people person they he she we our us prefer prefers preferred preference preferences ' +
    'like likes liked want wants wanted wish use uses used using usual usually always often generally also should must ' +
    'need needs would like knowledge fact note notes mention mentioned say says said tell told state stated ' +
    'current currently now new instead rather'
  ).split(' '),
)
const FRAMING_ZH = new Set([
  '用户',
  '用',
  '使用',
  '偏好',
  '喜欢',
  '希望',
  '想要',
  '想',
  '需要',
  '总是',
  '通常',
  '一般',
  '我们',
  '他们',
  '团队',
  '目前',
  '现在',
  '改用',
])

/**
 * The sentences of a text that can support a fact: neither hedged nor small talk.
 * @example
 * supportingSentences('Thanks! I use pnpm. Maybe Docker too?') // ['I use pnpm']
 */
export function supportingSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !HEDGES_EN.test(s) && !HEDGES_ZH.test(s) && !isSmallTalk(s))
}

/** Small talk: a sentence that names a small-talk topic and has few other words. */
function isSmallTalk(sentence: string): boolean {
  if (!SMALL_TALK_EN.test(sentence) && !SMALL_TALK_ZH.test(sentence)) return false
  const words = latinWords(sentence).filter((w) => !SEARCH_STOP_WORDS.has(w)).length + cjkWords(sentence).length
  return words <= 8
}

/**
 * The numbers of a text, as written without thousands separators.
 * @example
 * numbersIn('port 8,080 on v2.3') // ['8080', '2.3']
 */
export function numbersIn(text: string): string[] {
  return [...text.matchAll(/\d+(?:[.,:]\d+)*/gu)].map((m) => m[0].replace(/(?<=\d),(?=\d{3}\b)/gu, ''))
}

/**
 * The names of a text (see the module comment, rule 3), in lower case.
 * @example
 * namesIn('The user moved CI to GitHub Actions on node:20') // ['ci', 'github', 'actions', 'node:20']
 */
export function namesIn(text: string): string[] {
  const chinese = isLargelyCjk(text)
  const names: string[] = []
  for (const sentence of text.replace(CJK_RUN, ' 。 ').split(/[.!?。！？；;\n]+/u)) {
    tokensOf(sentence).forEach((token, i) => {
      const inner = /[\p{L}\p{N}][._/:@-][\p{L}\p{N}]/u.test(token)
      const mixedCase = /\p{Ll}\p{Lu}/u.test(token) || (/^\p{Lu}{2,}/u.test(token) && token.length >= 2)
      const capitalised = i > 0 && /^\p{Lu}/u.test(token)
      const digits = /\p{L}/u.test(token) && /\p{N}/u.test(token)
      if (chinese || inner || mixedCase || capitalised || digits) names.push(token.toLowerCase())
    })
  }
  return [...new Set(names)].filter((n) => !/^\d+(?:[.,:]\d+)*$/u.test(n))
}

/** The content words of a text: Latin words stemmed (stop and framing words out), Chinese dictionary words (function and framing words out). */
function contentWords(text: string): { latin: string[]; cjk: string[] } {
  const latin = latinWords(text)
    .filter((w) => !SEARCH_STOP_WORDS.has(w) && !FRAMING_EN.has(w) && !/^\d+$/u.test(w))
    .map((w) => stemWord(canonicalWord(w)))
  const cjk = cjkWords(text).filter((w) => !CJK_FUNCTION_WORDS.has(w) && !FRAMING_ZH.has(w) && !/^[的了是在和与或也就都而]$/u.test(w))
  return { latin: [...new Set(latin)].filter((w) => !FRAMING_EN.has(w)), cjk: [...new Set(cjk)] }
}

/** The tokens of a text as names are cut (letters and digits, joined by `. / _ - : @`), lower case. */
function tokensOf(text: string): string[] {
  return [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}._/:@-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu)].map((m) => m[0])
}

/** What the sources offer: their supporting text, its stems, tokens, numbers and bigrams. */
interface SourceIndex {
  index: number
  text: string
  lower: string
  stems: Set<string>
  tokens: Set<string>
  numbers: Set<string>
  bigrams: Set<string>
}

function indexSource(source: GroundingSource, conversational: boolean): SourceIndex {
  const text = conversational ? supportingSentences(source.text).join('\n') : source.text
  const lower = text.toLowerCase()
  const tokens = new Set(tokensOf(lower.replace(CJK_RUN, ' ')))
  for (const token of [...tokens]) for (const part of token.split(/[._/:@-]/u)) tokens.add(part)
  return {
    index: source.index,
    text,
    lower,
    stems: new Set(latinWords(text).map((w) => stemWord(canonicalWord(w)))),
    tokens,
    numbers: new Set(numbersIn(text)),
    bigrams: new Set(cjkBigrams(text)),
  }
}

/** Whether one source holds a word of the text (a stem, a Chinese word or its bigrams, a name or a number). */
function holds(source: SourceIndex, kind: Kind, word: string): boolean {
  if (kind === 'latin') return source.stems.has(word)
  if (kind === 'number') return source.numbers.has(word)
  if (kind === 'name') return source.tokens.has(word) || source.stems.has(stemWord(canonicalWord(word))) || (word.length >= 4 && source.lower.includes(word))
  if (source.text.includes(word)) return true
  const grams = cjkBigrams(word)
  return word.length >= 3 && grams.every((g) => source.bigrams.has(g))
}

/** The fewest sources (greedy) that hold every word found, by index. */
function coveringSources(sources: readonly SourceIndex[], found: ReadonlyArray<[Kind, string]>): SourceIndex[] {
  const left = new Set(found.map(([kind, word]) => `${kind}\u0000${word}`))
  const chosen: SourceIndex[] = []
  while (left.size > 0) {
    let best: { source: SourceIndex; covers: string[] } | undefined
    for (const source of sources) {
      if (chosen.includes(source)) continue
      const covers = [...left].filter((key) => {
        const [kind, word] = key.split('\u0000') as [Kind, string]
        return holds(source, kind, word)
      })
      if (covers.length > (best?.covers.length ?? 0)) best = { source, covers }
    }
    if (!best) break
    chosen.push(best.source)
    for (const key of best.covers) left.delete(key)
  }
  return chosen.sort((a, b) => a.index - b.index)
}

type Kind = 'latin' | 'cjk' | 'name' | 'number'

/**
 * Whether `text` is supported by `sources` (the rule of the module comment), and by which.
 * @example
 * const g = await checkGrounding('The user prefers pnpm over npm.', [{ index: 0, text: 'I always use pnpm, never npm.' }])
 * g.supported // true; g.sources // [0]
 */
export async function checkGrounding(text: string, sources: readonly GroundingSource[], options: GroundingOptions = {}): Promise<Grounding> {
  const minCoverage = options.minCoverage ?? DEFAULT_MIN_COVERAGE
  const indexed = sources.map((s) => indexSource(s, options.conversational ?? true)).filter((s) => s.text.trim() !== '')
  // Secret markers and redactions stand for values the conversation held: not words to find.
  const clean = text.replace(/\[(?:SECRET_\d+|redacted|secret[^\]]{0,80})\]/gu, ' ')
  const sourceText = sources.map((s) => s.text).join('\n')
  const otherLanguage = hasCjk(sourceText) && isLargelyCjk(sourceText) !== isLargelyCjk(clean)
  const verdict = (fields: Partial<Grounding> & { supported: boolean }): Grounding => ({ coverage: 0, missing: [], sources: [], otherLanguage, ...fields })
  if (indexed.length === 0) return verdict({ supported: false, reason: 'no_source' })
  const anywhere = (kind: Kind, word: string): boolean => indexed.some((source) => holds(source, kind, word))
  const numbers = numbersIn(clean).filter((n) => !anywhere('number', n))
  if (numbers.length > 0) return verdict({ supported: false, reason: 'numbers', missing: numbers.slice(0, 10) })
  const names = namesIn(clean).filter((n) => !anywhere('name', n))
  if (names.length > 0) return verdict({ supported: false, reason: 'names', missing: names.slice(0, 10) })
  const { latin, cjk } = contentWords(clean)
  const words: Array<[Kind, string]> = [...latin.map((w): [Kind, string] => ['latin', w]), ...cjk.map((w): [Kind, string] => ['cjk', w])]
  if (words.length === 0) return verdict({ supported: false, reason: 'empty' })
  const found = words.filter(([kind, word]) => anywhere(kind, word))
  const coverage = found.length / words.length
  const support = coveringSources(indexed, found)
  const missing = words
    .filter((w) => !found.includes(w))
    .map(([, word]) => word)
    .slice(0, 10)
  let similarity: number | undefined
  if (coverage < minCoverage && coverage >= minCoverage / 2 && options.similarity) {
    similarity = await options.similarity(clean, (support.length > 0 ? support : indexed).map((s) => s.text).join('\n'))
  }
  const supported = coverage >= minCoverage || (similarity !== undefined && similarity >= (options.minSimilarity ?? DEFAULT_MIN_SIMILARITY))
  return verdict({
    supported,
    ...(supported ? {} : { reason: 'coverage' as const }),
    coverage: Math.round(coverage * 1000) / 1000,
    ...(similarity !== undefined ? { similarity: Math.round(similarity * 1000) / 1000 } : {}),
    missing,
    sources: support.map((s) => s.index),
  })
}

/**
 * The embedding similarity of grounding when the hub's embedder is a semantic model (an
 * OpenAI-compatible endpoint or a local ONNX model); undefined for the offline embedders, which
 * cannot tell a paraphrase from a different statement.
 * @example
 * embeddingSimilarity(hashedEmbedder) // undefined
 */
export function embeddingSimilarity(embedder: Pick<Embedder, 'model' | 'embed'> | undefined): GroundingOptions['similarity'] {
  if (!embedder || !/^(openai|local):/u.test(embedder.model)) return undefined
  return async (text, sources) => {
    const [a, b] = await embedder.embed([text, sources], { kind: 'document' })
    return a && b ? cosine(a, b) : 0
  }
}

/**
 * The grounding options of a hub: the configured thresholds, and the similarity of its embedder when it is a semantic model.
 * @example
 * const grounding = groundingOptions({ minCoverage: 0.6, minSimilarity: 0.85 }, embedder)
 */
export function groundingOptions(
  thresholds: { minCoverage: number; minSimilarity: number } | undefined,
  embedder: Pick<Embedder, 'model' | 'embed'>,
): GroundingOptions {
  return { ...thresholds, similarity: embeddingSimilarity(embedder) }
}

/**
 * Why a text is not supported, in words, naming its source (`the conversation`, `the entries`).
 * @example
 * ungroundedReason({ supported: false, reason: 'names', missing: ['docker'], coverage: 0, sources: [], otherLanguage: false })
 * // 'ungrounded: names not in the conversation (docker)'
 */
export function ungroundedReason(grounding: Grounding, source = 'the conversation'): string {
  const missing = grounding.missing.length > 0 ? ` (${grounding.missing.join(', ')})` : ''
  switch (grounding.reason) {
    case 'no_source':
      return `ungrounded: ${source} says nothing it could rest on but small talk or guesses`
    case 'empty':
      return 'ungrounded: it says nothing of its own'
    case 'numbers':
      return `ungrounded: numbers not in ${source}${missing}`
    case 'names':
      return `ungrounded: names not in ${source}${missing}`
    default:
      return `ungrounded: ${Math.round(grounding.coverage * 100)} % of its words are in ${source}${missing}`
  }
}
