/**
 * Text analysis, once for every consumer (knowledge search, the hashed embedder, the
 * pack resolver): tokenising, CJK segmentation, stop words, stemming and BM25. Pure
 * functions, no I/O. Also the BPE token count of a text (countTokens: the pack resolver's and
 * the agent context's budgets).
 */
export { CJK_RUN, cjkBigrams, cjkSegments, cjkWords, hasCjk, isLargelyCjk, type CjkSegments } from './cjk.js'
export { latinWords, segment, type Segments } from './tokenize.js'
export {
  CJK_FUNCTION_WORDS,
  EMBEDDER_CJK_PARTICLES,
  EMBEDDER_STOP_WORDS,
  PACK_BIGRAM_PARTICLE,
  PACK_STOP_WORDS,
  PACK_ZH_STOP_WORDS,
  SEARCH_STOP_WORDS,
} from './stop-words.js'
export { IRREGULAR_FORMS, stemWord } from './stem.js'
export { searchTerms } from './terms.js'
export { aliasTerms, canonicalWord } from './aliases.js'
export { KNOWLEDGE_BM25, PACK_BM25, Bm25, bm25, bm25Bound, bm25Idf, type Bm25Params } from './bm25.js'
export { absoluteDate, asksWhen, dateMatches, mentionsTime, namedDates, type NamedDate } from './dates.js'
export { countTokens } from './token-count.js'
