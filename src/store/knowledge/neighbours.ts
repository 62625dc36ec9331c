/**
 * Dialogue neighbours: for a set of entries, the entry before and the entry after each in its
 * conversation (`source.trace_id`). A trace's order is creation order, `(created_at, id)`: the
 * order agents saved its entries, and the order of the lines of a JSONL import (each line keeps
 * its `created_at`). Only active entries the caller may see count, on both sides: the "next"
 * entry is the next *visible* one, so nothing a caller sees depends on entries it cannot see.
 */
import { sql } from '../sql.js'
import type { KnowledgeContext } from './rows.js'

/** The visible entries either side of one entry in its trace (null at a trace's ends). */
export interface TraceNeighbours {
  id: string
  previous: string | null
  next: string | null
}

/** The neighbour queries of the knowledge store. */
export interface KnowledgeNeighbourQueries {
  /**
   * For each visible active entry of `ids` that has a `source.trace_id`: the previous and next
   * visible active entries of its trace in creation order `(created_at, id)`. One query.
   */
  traceNeighbours(ids: readonly string[], visible: readonly string[]): Promise<TraceNeighbours[]>
}

/**
 * The neighbour queries over a database (index `knowledge_trace_idx`, migration 0021).
 * @example
 * const { traceNeighbours } = neighbourQueries({ db, getDialect })
 * const around = await traceNeighbours(['knowledge-20260101000000-abcd'], visibleScopes(principal))
 */
export function neighbourQueries({ db }: KnowledgeContext): KnowledgeNeighbourQueries {
  return {
    async traceNeighbours(ids, visible) {
      if (ids.length === 0) return []
      const rows = await db.query<{ id: string; previous: string | null; next: string | null }>(sql`
        SELECT c.id,
          (SELECT p.id FROM knowledge p
            WHERE (p.source->>'trace_id') = (c.source->>'trace_id') AND p.status = 'active' AND p.scopes && ${visible}::text[]
              AND (p.created_at, p.id) < (c.created_at, c.id)
            ORDER BY p.created_at DESC, p.id DESC LIMIT 1) AS previous,
          (SELECT n.id FROM knowledge n
            WHERE (n.source->>'trace_id') = (c.source->>'trace_id') AND n.status = 'active' AND n.scopes && ${visible}::text[]
              AND (n.created_at, n.id) > (c.created_at, c.id)
            ORDER BY n.created_at, n.id LIMIT 1) AS next
        FROM knowledge c
        WHERE c.id = ANY(${ids}::text[]) AND c.status = 'active' AND c.scopes && ${visible}::text[]
          AND coalesce(c.source->>'trace_id', '') <> ''`)
      return rows.map((r) => ({ id: r.id, previous: r.previous, next: r.next }))
    },
  }
}
