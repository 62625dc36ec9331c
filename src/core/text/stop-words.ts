/**
 * Stop words, by purpose. The lists differ on purpose, and each is used by one consumer:
 *
 * - {@link SEARCH_STOP_WORDS}: knowledge full-text search (the index and the query). The
 *   Snowball list, as in PostgreSQL's `english` configuration, so that BM25 statistics
 *   are those of content words.
 * - {@link EMBEDDER_STOP_WORDS}: features of the hashed n-gram embedder. Also drops
 *   conversational filler (`oh`, `okay`, `yeah`) and modal verbs, which would otherwise
 *   make every chat turn look alike.
 * - {@link PACK_STOP_WORDS}: task words of the pack resolver. A short list plus the
 *   request words of a task (`please`, `tell`, `show`, `find`, `use`, `need`, `want`)
 *   that say nothing about which section answers it.
 *
 * Chinese, by the same split: {@link PACK_ZH_STOP_WORDS} (pack task words: particles and
 * question words), {@link EMBEDDER_CJK_PARTICLES} (dropped from the embedder's CJK words
 * and characters) and {@link PACK_BIGRAM_PARTICLE} (a pack query bigram across a particle
 * matches nothing useful). Full-text search drops no Chinese words: BM25's idf already
 * weighs particles down, and bigrams need them.
 *
 * Every English list is written in the form `latinWords` gives words: lower case,
 * apostrophes removed (`don't` → `dont`).
 */

const words = (list: string): ReadonlySet<string> => new Set(list.split(' '))

/**
 * English stop words of knowledge full-text search: the Snowball list plus the
 * contractions in the form `latinWords` gives them.
 * @example
 * SEARCH_STOP_WORDS.has('the') // true
 */
export const SEARCH_STOP_WORDS: ReadonlySet<string> = words(
  'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself ' +
    'it its itself they them their theirs themselves what which who whom this that these those am is are was were be ' +
    'been being have has had having do does did doing a an the and but if or because as until while of at by for with ' +
    'about against between into through during before after above below to from up down in out on off over under again ' +
    'further then once here there when where why how all any both each few more most other some such no nor not only ' +
    'own same so than too very s t can will just don should now ' +
    'im ive id youre youve youll youd hes shes theyre theyve theyll theyd weve dont doesnt didnt isnt arent wasnt ' +
    'werent cant couldnt wont wouldnt shouldnt havent hasnt hadnt thats theres whats heres wheres whos',
)

/**
 * English stop words of the hashed embedder's features (see the module comment).
 * @example
 * EMBEDDER_STOP_WORDS.has('okay') // true
 */
export const EMBEDDER_STOP_WORDS: ReadonlySet<string> = words(
  'a an the and or but nor if then else so than too very just also only not no yes ' +
    'of to in on at by for with from into onto about as over under up down out off ' +
    'again further once here there when where why how what which who whom whose ' +
    'all any both each few more most other some such own same can will would shall should ' +
    'could may might must do does did doing done have has had having be is am are was were ' +
    'been being get got i me my mine myself we us our ours ourselves you your yours yourself ' +
    'yourselves he him his himself she her hers herself it its itself they them their theirs ' +
    'themselves this that these those im ive id youre youve youd hes shes theyre theyve weve ' +
    'dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt havent hasnt ' +
    'hadnt thats theres whats lets oh ok okay yeah hey hi',
)

/**
 * English stop words of pack task terms (see the module comment).
 * @example
 * PACK_STOP_WORDS.has('please') // true
 */
export const PACK_STOP_WORDS: ReadonlySet<string> = words(
  'a an and are as at be been but by can could do does did for from has have had how i if in into is it its me my of on or our ' +
    'should so than that the their them then there these they this those to us was we were what when where which who whom why will ' +
    'with would you your about please tell give show find get use using need want',
)

/**
 * Chinese stop words of pack task terms: particles, pronouns, request and question words.
 * @example
 * PACK_ZH_STOP_WORDS.has('如何') // true
 */
export const PACK_ZH_STOP_WORDS: ReadonlySet<string> = words(
  '的 了 是 在 和 与 或 及 等 也 都 就 而 被 把 对 从 到 为 以 之 其 这 那 个 一 不 有 我 你 他 她 它 们 吗 呢 吧 啊 请 给 要 会 能 如何 怎么 什么 哪些 一下 多少 是否 哪个 哪里 为何 怎样',
)

/**
 * Chinese particles and function words dropped from the hashed embedder's CJK words and
 * characters (a bigram of two of them is dropped too).
 * @example
 * EMBEDDER_CJK_PARTICLES.has('的') // true
 */
export const EMBEDDER_CJK_PARTICLES: ReadonlySet<string> = words(
  '的 了 着 过 地 得 吗 呢 吧 啊 呀 哦 嘛 么 是 在 和 与 及 或 也 就 都 而 把 被 这 那 个 之 于 以 其 很 还 又 一个 我们 你们 他们 什么 这个 那个',
)

/**
 * A particle inside a pack query bigram (`池的`, `度是`): such a bigram is not a query term.
 * @example
 * PACK_BIGRAM_PARTICLE.test('池的') // true
 */
export const PACK_BIGRAM_PARTICLE = /[的了是吗呢吧啊和与或及把被对]/u

/**
 * Chinese function words that are no evidence that an entry answers a question: the pack
 * resolver's Chinese stop words and the embedder's particles together. The relevance gate
 * lets a Chinese query's answer be anchored only by other terms (knowledge/search/relevance.ts).
 * @example
 * CJK_FUNCTION_WORDS.has('什么') // true
 */
export const CJK_FUNCTION_WORDS: ReadonlySet<string> = new Set([...PACK_ZH_STOP_WORDS, ...EMBEDDER_CJK_PARTICLES])
