/**
 * Full-text search of knowledge entries, ranked by BM25: in an in-memory index when the
 * store has one (the embedded database's default), else in SQL over the stored term
 * frequencies, with the same formula and numbers as core's one scorer.
 */
import { bm25, type Bm25 } from '../../core/text/index.js'
import type { Queryable } from '../database.js'
import { sql, type Sql } from '../sql.js'
import type { SyncedTextIndex } from '../text-index/sync.js'
import {
  currentOnly,
  DEFAULT_TEXT_RANKING,
  planTextQuery,
  type EntryFilter,
  type RankedId,
  type TextQuery,
  type TextQueryPlan,
  type TextHits,
  type TextRanking,
  type WeightedTerm,
  textQueryBound,
} from '../text-index/query.js'
import { filterSql, type KnowledgeContext } from './rows.js'

/** The full-text queries of the knowledge store. */
export interface KnowledgeTextQueries {
  /**
   * Full-text search ranked by BM25 over the entries matching `filter`, best first (ties by
   * id). With an in-memory index (the embedded database's default) every match is scored;
   * in SQL the work is bounded by `ranking.candidates` (see {@link planTextQuery}).
   */
  searchText(query: TextQuery, filter: EntryFilter, limit: number, ranking?: TextRanking): Promise<RankedId[]>
  /**
   * {@link KnowledgeTextQueries.searchText} with the query's best possible score over the
   * visible entries ({@link textQueryBound}): the search's relevance gate reads hits' strength.
   */
  searchTextWithBound(query: TextQuery, filter: EntryFilter, limit: number, ranking?: TextRanking): Promise<TextHits>
  /**
   * With an in-memory full-text index: syncs it and returns the change-log position it
   * reflects, equal only while the table is unchanged (a cache key for search results).
   * With `now`, a number that also changes when an entry expires by then (issue 31): equal
   * only while the table is unchanged and no more entries have expired. Undefined when
   * searches run in SQL (no such guarantee across server processes).
   */
  searchGeneration(now?: Date): Promise<number | undefined>
}

/** Expired-entry counts a search generation tells apart at one change-log position (2^21: the product stays exact in a double). */
const EXPIRED_SPAN = 2_097_152

/** Hits by score, best first, ties by id (as the SQL orders them), at most `limit`. */
function bestFirst(rows: Array<{ id: string; score: number }>, limit: number): Array<{ id: string; score: number }> {
  return rows.sort((x, y) => Number(y.score) - Number(x.score) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)).slice(0, limit)
}

/** A lexeme quoted for tsquery input. */
function quoteLexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/** `a | b | …` (any) or `a & b & …` (every) over the terms, as tsquery input. */
function tsquery(terms: readonly WeightedTerm[], operator: '|' | '&'): string {
  return terms.map(({ term }) => quoteLexeme(term)).join(` ${operator} `)
}

/**
 * The BM25 score of candidate `c` in SQL: one summand per query term, reading the entry's
 * stored frequency of the term, written exactly as core's `Bm25.score` computes it
 * (`idf · (k1 + 1) · tf / (tf + base + perLength · length)`, the numbers from `scorer`).
 */
function scoreSql(plan: TextQueryPlan, scorer: Bm25): Sql {
  const summands = plan.terms.map(({ term, idf }) => {
    const tf = sql`(c.search_tf->>${term})::float8`
    return sql`coalesce(${idf * scorer.factor}::float8 * ${tf} / (${tf} + ${scorer.base}::float8 + ${scorer.perLength}::float8 * c.search_len), 0)`
  })
  return sql.join(summands, ' + ')
}

/** The columns {@link filterSql} reads, and those a candidate is scored on. */
const CANDIDATE_COLUMNS = sql`k.id, k.search_tf, k.search_len, k.scopes, k.status, k.visibility, k.tags, k.types, k.score, k.helpful, k.harmful_weight, k.valid_from, k.valid_to, k.expires_at`

/**
 * Whether a candidate scan filters visibility (scopes, status, types, scores) on the rows the
 * text index finds (a materialized step the planner cannot merge) rather than letting the
 * planner intersect the text index with the scopes index. That intersection reads the scopes
 * index over every visible entry — most of the table for most callers (75,000 rows and
 * 114 ms of 238 at 100k entries) — while the candidates are a few hundred rows. Rows first
 * when the caller sees at least a twentieth of the entries (`visibleDocs`, summed over the
 * visible scopes, against the table's estimated rows; a table never analyzed counts as
 * small): about `budget` × 20 rows read at most to find `budget` visible ones. A caller who
 * sees a small part of a large table keeps the planner's choice (the scopes index then is
 * selective).
 */
export function rowsFirst(visibleDocs: number, tableRows: number): boolean {
  return tableRows <= 0 || visibleDocs * 20 >= tableRows
}

/**
 * BM25 in SQL: statistics summed over the caller's visible scopes (`knowledge_scope_term`,
 * `knowledge_scope_stats`, migration 0009: nothing outside them moves a score), of current
 * entries only for a search of current entries (migration 0052, {@link currentOnly}),
 * candidates bounded by {@link planTextQuery}.
 */
async function searchTextSql(db: Queryable, query: TextQuery, filter: EntryFilter, limit: number, ranking: TextRanking): Promise<TextHits> {
  // Document frequencies of the query terms and the collection size over the visible scopes: index lookups.
  const current = currentOnly(filter.validity)
  const df = current ? sql`t.df - t.superseded_df` : sql`t.df`
  const stats = await db.query<{ term: string; df: number }>(sql`SELECT t.term, sum(${df})::int AS df
    FROM knowledge_scope_term t WHERE t.term = ANY(${query.terms}::text[]) AND t.scope = ANY(${filter.visible}::text[])
    GROUP BY t.term HAVING sum(${df}) > 0`)
  const [docCount, totalLen] = current ? [sql`docs - superseded_docs`, sql`total_len - superseded_len`] : [sql`docs`, sql`total_len`]
  const [collection] = await db.query<{ docs: string; total_len: string; rows: string | null }>(sql`SELECT coalesce(sum(${docCount}), 0) AS docs,
    coalesce(sum(${totalLen}), 0) AS total_len, (SELECT reltuples FROM pg_class WHERE oid = 'knowledge'::regclass) AS rows
    FROM knowledge_scope_stats WHERE scope = ANY(${filter.visible}::text[])`)
  const bound = textQueryBound(query.terms, stats, Number(collection!.docs), ranking, query.boundTerms)
  if (stats.length === 0) return { hits: [], bound }
  const docs = Math.max(1, Number(collection!.docs))
  const scorer = bm25(ranking, docs, Number(collection!.total_len))
  const plan = planTextQuery(
    stats.map((row) => ({ term: row.term, df: Number(row.df) })),
    docs,
    ranking,
  )
  const score = scoreSql(plan, scorer)
  const tableRows = Number(collection!.rows ?? -1)
  // Candidates: entries with one of the rarer terms (bounded, see planTextQuery), each scored on every term.
  const scored = (where: Sql) =>
    db.query<{ id: string; score: number }>(
      rowsFirst(Number(collection!.docs), tableRows)
        ? sql`WITH m AS MATERIALIZED (SELECT ${CANDIDATE_COLUMNS} FROM knowledge k WHERE ${where})
    SELECT c.id, (${score}) AS score FROM (SELECT k.id, k.search_tf, k.search_len FROM m k WHERE ${filterSql(filter)} LIMIT ${plan.budget}) c
    ORDER BY score DESC, c.id LIMIT ${limit}`
        : sql`SELECT c.id, (${score}) AS score
    FROM (SELECT k.id, k.search_tf, k.search_len FROM knowledge k WHERE ${where} AND ${filterSql(filter)} LIMIT ${plan.budget}) c
    ORDER BY score DESC, c.id LIMIT ${limit}`,
    )
  const anyCandidate = sql`k.search_doc @@ ${tsquery(plan.candidates, '|')}::tsquery`
  let rows: Array<{ id: string; score: number }>
  if (plan.sampled && plan.terms.length > 1) {
    // Common words only: sample the entries with every term first (the best BM25 scores
    // are among them), then entries with the rarest term.
    const every = sql`k.search_doc @@ ${tsquery(plan.terms, '&')}::tsquery`
    rows = await scored(every)
    if (rows.length < limit) rows = bestFirst([...rows, ...(await scored(sql`${anyCandidate} AND NOT (${every})`))], limit)
  } else {
    rows = await scored(anyCandidate)
  }
  // Entries with only the common terms score at most `plan.commonBound`: look at (a bounded
  // number of) them only when they could still enter the list.
  if (plan.common.length > 0 && !plan.sampled && (rows.length < limit || Number(rows[rows.length - 1]!.score) < plan.commonBound)) {
    const rest = await scored(sql`k.search_doc @@ ${tsquery(plan.common, '|')}::tsquery AND NOT (${anyCandidate})`)
    rows = bestFirst([...rows, ...rest], limit)
  }
  return { hits: rows.map((row) => ({ id: row.id, score: Number(row.score) })), bound }
}

/**
 * The full-text queries over a database, through `textIndex` when given.
 * @example
 * const hits = await textQueries({ db, getDialect }).searchText({ terms: ['selenium'] }, { visible }, 20)
 */
export function textQueries({ db, reads }: KnowledgeContext, textIndex?: SyncedTextIndex): KnowledgeTextQueries {
  const reader = reads ?? db
  return {
    async searchText(query, filter, limit, ranking = DEFAULT_TEXT_RANKING) {
      return (await this.searchTextWithBound(query, filter, limit, ranking)).hits
    },

    async searchTextWithBound(query, filter, limit, ranking = DEFAULT_TEXT_RANKING) {
      if (query.terms.length === 0) return { hits: [], bound: 0 }
      // Without an index, or while a server process builds its index: in SQL.
      if (!textIndex || !(await textIndex.ready())) return searchTextSql(reader, query, filter, limit, ranking)
      return textIndex.index.searchWithBound(query.terms, filter, limit, ranking, query.boundTerms)
    },

    async searchGeneration(now) {
      if (!textIndex?.cacheable) return undefined
      await textIndex.sync()
      if (!now) return textIndex.generation
      // With the entries expired by `now` (issue 31): a search at `now` sees no more of them.
      return textIndex.generation * EXPIRED_SPAN + (textIndex.index.expiredBy(now.getTime()) % EXPIRED_SPAN)
    },
  }
}
