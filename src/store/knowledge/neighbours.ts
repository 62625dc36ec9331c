/**
 * Dialogue neighbours: for a set of entries, the entries before and after each in its
 * conversation (`source.trace_id`). A trace's order is creation order (`created_at`): the order
 * agents saved its entries, and the order of the lines of a JSONL import (each line keeps its
 * `created_at`). Entries of a trace created at the same moment hold one place in it (the same
 * turn saved twice, a near-duplicate): they are neighbours of the same entries, never of each
 * other. Only active entries the caller may see count, on both sides: the "next" place is the
 * next *visible* one, so nothing a caller sees depends on entries it cannot see.
 */
import { sql } from '../sql.js'
import type { TraceNeighbours, ValidityFilter } from '../text-index/query.js'
import type { SyncedTextIndex } from '../text-index/sync.js'
import { validitySql, type KnowledgeContext } from './rows.js'

export type { TraceNeighbours }

/** The neighbour queries of the knowledge store. */
export interface KnowledgeNeighbourQueries {
  /**
   * For each visible active entry of `ids` that has a `source.trace_id`: the visible active
   * entries of its trace at the previous and the next `created_at` (by id). One query.
   */
  traceNeighbours(ids: readonly string[], visible: readonly string[], validity?: ValidityFilter): Promise<TraceNeighbours[]>
}

/**
 * The neighbour queries over a database (index `knowledge_trace_idx`, migration 0021), or
 * over `textIndex` (the in-memory index) when given and ready: a search then asks the database
 * nothing.
 * @example
 * const { traceNeighbours } = neighbourQueries({ db, getDialect })
 * const around = await traceNeighbours(['knowledge-20260101000000-abcd'], visibleScopes(principal))
 */
export function neighbourQueries({ db, reads }: KnowledgeContext, textIndex?: SyncedTextIndex): KnowledgeNeighbourQueries {
  const reader = reads ?? db
  return {
    async traceNeighbours(ids, visible, validity) {
      if (ids.length === 0) return []
      if (textIndex && (await textIndex.ready())) return textIndex.index.traceNeighbours(ids, visible, validity)
      // Only entries valid as the search asks (issue 31) hold a place, on both sides.
      const valid = (alias: 'n' | 'm' | 'c') => {
        const condition = validitySql(alias, validity)
        return condition ? sql` AND ${condition}` : sql.empty
      }
      const place = (direction: 'previous' | 'next') => {
        const [compare, pick] = direction === 'previous' ? [sql.raw('<'), sql.raw('max')] : [sql.raw('>'), sql.raw('min')]
        return sql`ARRAY(SELECT n.id FROM knowledge n
          WHERE (n.source->>'trace_id') = (c.source->>'trace_id') AND n.status = 'active' AND n.scopes && ${visible}::text[]${valid('n')}
            AND n.created_at = (SELECT ${pick}(m.created_at) FROM knowledge m
              WHERE (m.source->>'trace_id') = (c.source->>'trace_id') AND m.status = 'active' AND m.scopes && ${visible}::text[]${valid('m')}
                AND m.created_at ${compare} c.created_at)
          ORDER BY n.id)`
      }
      const rows = await reader.query<{ id: string; previous: string[]; next: string[] }>(sql`
        SELECT c.id, ${place('previous')} AS previous, ${place('next')} AS next
        FROM knowledge c
        WHERE c.id = ANY(${ids}::text[]) AND c.status = 'active' AND c.scopes && ${visible}::text[]${valid('c')}
          AND coalesce(c.source->>'trace_id', '') <> ''`)
      return rows.map((r) => ({ id: r.id, previous: r.previous, next: r.next }))
    },
  }
}
