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

/**
 * BM25 prepared for one collection (see {@link bm25}). A class, so that the per-posting
 * {@link Bm25.score} call is a monomorphic method that the JIT inlines into hot loops.
 * @example
 * new Bm25(KNOWLEDGE_BM25, 1000, 24_000).score(2.3, 1, 20)
 */
export class Bm25 {
  /** Number of documents, at least 1. */
  readonly docs: number
  /** Mean document length, at least 1. */
  readonly avgLength: number
  /** k1 · (1 − b): the part of the denominator that does not depend on the length. */
  readonly base: number
  /** k1 · b / avgdl: the denominator's part per term of document length. */
  readonly perLength: number
  /** k1 + 1. */
  readonly factor: number

  constructor(
    readonly params: Readonly<Bm25Params>,
    docs: number,
    totalLength: number,
  ) {
    this.docs = Math.max(1, docs)
    this.avgLength = Math.max(1, totalLength / this.docs)
    this.base = params.k1 * (1 - params.b)
    this.perLength = (params.k1 * params.b) / this.avgLength
    this.factor = params.k1 + 1
  }

  /** {@link bm25Idf} over this collection. */
  idf(df: number): number {
    return bm25Idf(this.docs, df)
  }

  /** The score of a term of idf `idf` found `tf` times in a document of `length` terms. */
  score(idf: number, tf: number, length: number): number {
    return (idf * this.factor * tf) / (tf + this.base + this.perLength * length)
  }
}

/**
 * BM25 over a collection of `docs` documents of `totalLength` terms in all. The SQL path
 * (store/knowledge/search-text.ts) writes `score` with the same `factor`, `base` and
 * `perLength`.
 * @example
 * const scorer = bm25(KNOWLEDGE_BM25, 1000, 24_000)
 * scorer.score(scorer.idf(10), 2, 30)
 */
export function bm25(params: Readonly<Bm25Params>, docs: number, totalLength: number): Bm25 {
  return new Bm25(params, docs, totalLength)
}
