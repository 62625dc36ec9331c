/**
 * The one BM25 scorer (Robertson–Spärck Jones idf, Lucene's non-negative form) of
 * KnowHub: the in-memory knowledge index, the pack section index and — as the same
 * formula written in SQL from the same numbers — the store's SQL full-text search.
 *
 *   idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))
 *   score(t, d) = idf · (k1 + 1) · tf / (tf + k1 · (1 − b) + k1 · b · |d| / avgdl)
 *
 * `N` documents, `df` of them with the term, `tf` the (weighted) frequency of the term in
 * the document, `|d|` its length in terms and `avgdl` the mean length (at least 1).
 */

/** BM25's two parameters. */
export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number
  /** Length normalisation, 0 (none) to 1 (full). */
  b: number
}

/**
 * Knowledge entries: k1 = 1.2 (the usual value) and b = 0.5 (entries are short and of
 * uneven length: full normalisation over-rewards the shortest; 0.5 measured better than
 * 0.75 on the retrieval sets of docs/retrieval.md).
 * @example
 * bm25(KNOWLEDGE_BM25, docs, totalLength)
 */
export const KNOWLEDGE_BM25: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.5 })

/**
 * Pack sections: the textbook k1 = 1.2, b = 0.75. Sections are split at headings and a
 * size limit, so their lengths vary less than entries' and full normalisation suits them.
 * @example
 * bm25(PACK_BM25, sections.length, totalLength)
 */
export const PACK_BM25: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.75 })

/**
 * BM25's idf of a term found in `df` of `docs` documents; never negative.
 * @example
 * bm25Idf(1000, 10) // ≈ 4.55
 */
export function bm25Idf(docs: number, df: number): number {
  return Math.log(1 + Math.max(0, docs - df + 0.5) / (df + 0.5))
}

/**
 * The highest score one term of idf `idf` can add (tf → ∞): idf · (k1 + 1).
 * @example
 * bm25Bound(KNOWLEDGE_BM25, 2) // 4.4
 */
export function bm25Bound(params: Bm25Params, idf: number): number {
  return idf * (params.k1 + 1)
}

/** BM25 prepared for one collection (see {@link bm25}). */
export interface Bm25 {
  readonly params: Readonly<Bm25Params>
  /** Mean document length, at least 1. */
  readonly avgLength: number
  /** k1 · (1 − b): the part of the denominator that does not depend on the length. */
  readonly base: number
  /** k1 · b / avgdl: the denominator's part per term of document length. */
  readonly perLength: number
  /** {@link bm25Idf} over this collection. */
  idf(df: number): number
  /** The score of a term of idf `idf` found `tf` times in a document of `length` terms. */
  score(idf: number, tf: number, length: number): number
}

/**
 * BM25 over a collection of `docs` documents of `totalLength` terms in all. The SQL path
 * (store/knowledge/search-text.ts) writes `score` with the same `base` and `perLength`.
 * @example
 * const scorer = bm25(KNOWLEDGE_BM25, 1000, 24_000)
 * scorer.score(scorer.idf(10), 2, 30)
 */
export function bm25(params: Readonly<Bm25Params>, docs: number, totalLength: number): Bm25 {
  const n = Math.max(1, docs)
  const avgLength = Math.max(1, totalLength / n)
  const base = params.k1 * (1 - params.b)
  const perLength = (params.k1 * params.b) / avgLength
  const factor = params.k1 + 1
  return {
    params,
    avgLength,
    base,
    perLength,
    idf: (df) => bm25Idf(n, df),
    score: (idf, tf, length) => (idf * factor * tf) / (tf + base + perLength * length),
  }
}
