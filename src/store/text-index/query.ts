/**
 * Full-text queries, shared by the SQL path (`knowledge.ts`) and the in-memory index
 * (`text-index.ts`): BM25 parameters, the query plan, and the filters every search applies.
 */
import type { KnowledgeStatus } from '../../core/knowledge.js'
import { bm25Bound, bm25Idf, KNOWLEDGE_BM25, type Bm25Params } from '../../core/text/index.js'

/** A full-text query: distinct search terms, normalised like the documents' terms. */
export interface TextQuery {
  terms: string[]
  /**
   * The terms whose best score counts in the query's bound even when no visible entry has
   * them (default: every term). A CJK query leaves out its character bigrams: most of them
   * span two words and exist nowhere, and would only dilute every entry's strength.
   */
  boundTerms?: string[]
}

/** BM25 parameters of full-text ranking (see {@link DEFAULT_TEXT_RANKING}). */
export interface TextRanking extends Bm25Params {
  /**
   * How many entries a query reads at most to find its candidates (see {@link planTextQuery});
   * `Infinity` scores every matching entry (exact, slow on large stores for common words).
   */
  candidates?: number
}

/** A query's rarest terms that are scored (a long pasted text would otherwise make a huge query). */
export const MAX_QUERY_TERMS = 32

/**
 * BM25 with the knowledge parameters of core's one scorer ({@link KNOWLEDGE_BM25}: k1 1.2,
 * b 0.5). A query scores at most about 250 entries per pass (see {@link planTextQuery}):
 * no LoCoMo figure changed, and a query of common words stays fast at 100k entries.
 */
export const DEFAULT_TEXT_RANKING: TextRanking = { ...KNOWLEDGE_BM25, candidates: 250 }

/** A query term with its document frequency and BM25 idf. */
export interface WeightedTerm {
  term: string
  df: number
  idf: number
}

/** How a full-text query is run: see {@link planTextQuery}. */
export interface TextQueryPlan {
  /** Every scored term (the rarest {@link MAX_QUERY_TERMS}), rarest first. */
  terms: WeightedTerm[]
  /** The rarer terms whose entries are the candidates. */
  candidates: WeightedTerm[]
  /** The common terms: they add to candidates' scores but do not make candidates themselves. */
  common: WeightedTerm[]
  /** The highest score an entry with only common terms can reach: Σ idf × (k1 + 1). */
  commonBound: number
  /** The most entries one candidate scan reads. */
  budget: number
  /** True when even the rarest term matches more entries than the budget: the candidates are a sample. */
  sampled: boolean
}

/**
 * Bounds the work of a full-text query (MaxScore-style). Its terms, rarest first, are
 * candidate terms while their summed document frequencies stay within the budget
 * (`ranking.candidates`; the rarest term always is one); the rest are common terms (low
 * idf: "the", a project's name). Only entries with a candidate term are scored, on every
 * term. Entries with common terms only can score at most `commonBound`; the store reads
 * them (again at most `budget`) only when the list is short or its last score is below
 * that bound, and not when the candidates are already a sample (the rarest term alone is
 * over the budget: a query of common words only; the store then samples the entries with
 * every term first, then those with the rarest). When every term fits the budget, or
 * when the candidates' scores clear the bound, the result is exactly BM25's; otherwise it
 * is BM25 over a bounded sample.
 * @example
 * planTextQuery([{ term: 'pgvector', df: 3 }, { term: 'use', df: 9000 }], 10_000, DEFAULT_TEXT_RANKING)
 * // candidates: pgvector; common: use
 */
export function planTextQuery(stats: ReadonlyArray<{ term: string; df: number }>, docs: number, ranking: TextRanking): TextQueryPlan {
  // BM25's idf (core's bm25Idf, never negative). The rarest terms first.
  const terms = stats
    .map((row) => ({ term: row.term, df: row.df, idf: bm25Idf(docs, row.df) }))
    .sort((a, b) => b.idf - a.idf || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, MAX_QUERY_TERMS)
  const budget = ranking.candidates ?? Infinity
  let postings = 0
  let split = 0
  while (split < terms.length && (split === 0 || postings + terms[split]!.df <= budget)) postings += terms[split++]!.df
  const common = terms.slice(split)
  return {
    terms,
    candidates: terms.slice(0, split),
    common,
    commonBound: common.reduce((sum, t) => sum + bm25Bound(ranking, t.idf), 0),
    budget: Number.isFinite(budget) ? Math.max(1, Math.floor(budget)) : 2_147_483_647,
    sampled: postings > budget,
  }
}

/**
 * The query's own best possible BM25 score over `docs` visible documents: Σ idf × (k1 + 1)
 * over its distinct terms (the {@link MAX_QUERY_TERMS} of highest idf), a term no visible
 * entry has counting at the idf of df 0 — when it is one of `boundTerms` (default: all). An entry's score divided by it is its full-text
 * *strength* (0-1), which the search's relevance gate compares across queries: a query whose
 * rare words appear nowhere has a high bound that common-word matches cannot approach.
 * @example
 * textQueryBound(['pgvector', 'zzz'], [{ term: 'pgvector', df: 3 }], 1000, DEFAULT_TEXT_RANKING)
 */
export function textQueryBound(
  terms: readonly string[],
  stats: ReadonlyArray<{ term: string; df: number }>,
  docs: number,
  ranking: Bm25Params,
  boundTerms: readonly string[] = terms,
): number {
  const df = new Map(stats.map((row) => [row.term, row.df]))
  const counted = new Set([...df.keys(), ...boundTerms.filter((term) => terms.includes(term))])
  const idfs = [...counted].map((term) => bm25Idf(docs, df.get(term) ?? 0)).sort((a, b) => b - a)
  return idfs.slice(0, MAX_QUERY_TERMS).reduce((sum, idf) => sum + bm25Bound(ranking, idf), 0)
}

/** A full-text search's hits and the query's best possible score (see {@link textQueryBound}). */
export interface TextHits {
  hits: RankedId[]
  bound: number
}

/**
 * Which entries a filter keeps by their validity in time (issue 31, migration 0048). By
 * default (absent, or `{}`): the current ones, not superseded (`valid_to` null) and, when
 * `now` is given, not expired at `now` (`expires_at` null or later).
 * @example
 * const filter: EntryFilter = { visible, validity: { now: clock.now() } }                 // current
 * const then: EntryFilter = { visible, validity: { asOf: new Date('2026-01-01') } }     // valid then
 */
export interface ValidityFilter {
  /** Leave out the entries expired at this time (absent: expiry is not checked). */
  now?: Date | undefined
  /**
   * What was valid at this time instead: `valid_from <= asOf < valid_to` (a superseded entry
   * counts until it was superseded) and not expired at `asOf`.
   */
  asOf?: Date | undefined
  /** Superseded entries too (the history): no condition on `valid_to`. */
  superseded?: boolean | undefined
  /** Expired entries too: no condition on `expires_at`. */
  expired?: boolean | undefined
}

/**
 * True when a filter's validity keeps current entries only (the default: not `asOf`, not
 * `superseded`). BM25's statistics of such a search count only entries that are not superseded
 * (issue 31): a replaced fact, which the search cannot return, does not lower the idf of the
 * words it shares with the fact that replaced it. A search of the history (`asOf`,
 * `superseded`) counts every entry, superseded ones included. Expiry is not read: it depends on
 * the time of the search.
 * @example
 * currentOnly(undefined) // true
 * currentOnly({ asOf: new Date('2026-01-01') }) // false
 */
export function currentOnly(validity: ValidityFilter | undefined): boolean {
  return validity?.asOf === undefined && validity?.superseded !== true
}

/** Every entry whatever its validity: exports, and reads that must see the history. */
export const ANY_VALIDITY: ValidityFilter = Object.freeze({ superseded: true, expired: true })

/** Filters shared by search and list. */
export interface EntryFilter {
  visible: readonly string[]
  types?: readonly string[] | undefined
  /** Narrow to entries in any of these scopes (still intersected with `visible`). */
  scopes?: readonly string[] | undefined
  /** Narrow to entries of these visibilities (seed 002: private, shared, org, public; src/core/visibility.ts). */
  visibility?: readonly string[] | undefined
  /** Narrow to entries with every one of these tags (a tag that is a list: holding the value; a number or boolean: as text). */
  tags?: Readonly<Record<string, string>> | undefined
  status?: readonly KnowledgeStatus[] | undefined
  minScore?: number | undefined
  /** Drop entries whose quality score is below 0. */
  nonNegativeQuality?: boolean | undefined
  /** Validity in time (default: current entries, see {@link ValidityFilter}). */
  validity?: ValidityFilter | undefined
}

export interface RankedId {
  id: string
  score: number
}

/** The visible entries at the places either side of one entry in its trace (none at a trace's ends). */
export interface TraceNeighbours {
  id: string
  previous: string[]
  next: string[]
}
