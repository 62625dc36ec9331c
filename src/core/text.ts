/**
 * Text segmentation for search, shared by full-text indexing, queries and the
 * offline embedder. Latin-script text is split into lower-cased words; CJK runs
 * are split into dictionary words (Intl.Segmenter, ICU) plus character bigrams,
 * so that Chinese queries match entries that share words but not whole phrases.
 */

import { stemmer } from 'stemmer'

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

const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/gu
const LETTER = /\p{L}/gu

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

/**
 * English stop words for full-text search: the Snowball list (as in PostgreSQL's
 * `english` configuration) plus the contractions in the form {@link latinWords}
 * gives them (apostrophes removed: "don't" → "dont").
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself ' +
    'it its itself they them their theirs themselves what which who whom this that these those am is are was were be ' +
    'been being have has had having do does did doing a an the and but if or because as until while of at by for with ' +
    'about against between into through during before after above below to from up down in out on off over under again ' +
    'further then once here there when where why how all any both each few more most other some such no nor not only ' +
    'own same so than too very s t can will just don should now ' +
    'im ive id youre youve youll youd hes shes theyre theyve theyll theyd weve dont doesnt didnt isnt arent wasnt ' +
    'werent cant couldnt wont wouldnt shouldnt havent hasnt hadnt thats theres whats heres wheres whos'
  ).split(' '),
)

/**
 * Irregular English forms and their base word (verbs' past forms, a few plurals): the
 * Porter stemmer leaves "went" and "go", "bought" and "buy" apart.
 */
const IRREGULAR_GROUPS =
  'arise arose arisen|awake awoke awoken|bear bore borne|beat beaten|become became|begin began begun|bend bent|' +
  'bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought|build built|burn burnt|' +
  'buy bought|catch caught|choose chose chosen|cling clung|come came|creep crept|deal dealt|dig dug|draw drew drawn|' +
  'dream dreamt|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|' +
  'find found|flee fled|fling flung|fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|' +
  'freeze froze frozen|get got gotten|give gave given|go went gone|grow grew grown|hang hung|hear heard|hide hid hidden|' +
  'hold held|keep kept|kneel knelt|know knew known|lay laid|lead led|lean leant|leap leapt|learn learnt|leave left|' +
  'lend lent|lie lain|light lit|lose lost|make made|mean meant|meet met|mistake mistook mistaken|overcome overcame|' +
  'pay paid|prove proven|ride rode ridden|ring rang rung|rise risen|run ran|say said|see saw seen|seek sought|' +
  'sell sold|send sent|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|sing sang sung|' +
  'sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed sped|spend spent|spin spun|spring sprang sprung|' +
  'stand stood|steal stole stolen|stick stuck|sting stung|stink stank stunk|strike struck stricken|strive strove striven|' +
  'swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn|tell told|' +
  'think thought|throw threw thrown|understand understood|undertake undertook undertaken|wake woke woken|wear wore worn|' +
  'weave wove woven|weep wept|win won|withdraw withdrew withdrawn|write wrote written|' +
  'child children|man men|woman women|person people|mouse mice|foot feet|tooth teeth|goose geese'

const IRREGULAR = new Map<string, string>()
for (const group of IRREGULAR_GROUPS.split('|')) {
  const [base, ...forms] = group.split(' ')
  for (const form of forms) IRREGULAR.set(form, base!)
}

const STEM_CACHE_LIMIT = 100_000
const stemCache = new Map<string, string>()
const ASCII_WORD = /^[a-z]+$/

/**
 * The search term of one lower-cased Latin word: irregular forms to their base, then the
 * Porter stem for plain ASCII words longer than two letters; other words unchanged.
 * @example
 * stemWord('went') // 'go'
 * stemWord('painting') // 'paint'
 */
export function stemWord(word: string): string {
  const base = IRREGULAR.get(word) ?? word
  if (base.length <= 2 || !ASCII_WORD.test(base)) return base
  let stemmed = stemCache.get(base)
  if (stemmed === undefined) {
    stemmed = stemmer(base)
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear()
    stemCache.set(base, stemmed)
  }
  return stemmed
}

/**
 * Full-text search terms of a text, in order: Latin words without English stop words,
 * stemmed ({@link stemWord}), then CJK words and bigrams ({@link segment}).
 * @example
 * searchTerms('Caroline went to the support groups') // ['carolin', 'go', 'support', 'group']
 */
export function searchTerms(text: string): string[] {
  const { latin, cjk } = segment(text)
  const terms: string[] = []
  for (const word of latin) if (!ENGLISH_STOP_WORDS.has(word)) terms.push(stemWord(word))
  for (const token of cjk) terms.push(token)
  return terms
}
