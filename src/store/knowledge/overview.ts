/**
 * SQL of the knowledge overview (the dashboard's first page): entries by status, type and
 * scope, saves and feedback per day — over what a principal sees only. The knowledge
 * service's `overview` (src/knowledge/entries/overview.ts) runs it.
 */
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'

/** Counts over the entries a principal sees. */
export interface KnowledgeOverviewCounts {
  total: number
  by_status: { status: string; count: number }[]
  by_type: { type: string; count: number }[]
  /** Only the scopes in `visible` (an entry's other scopes are not counted). */
  by_scope: { scope: string; count: number }[]
  saves_per_day: { day: string; count: number }[]
  feedback_per_day: { day: string; helpful: number; harmful: number }[]
}

export interface KnowledgeOverviewQueries {
  /** The overview of the entries whose scopes meet `visible`, days counted from `since`. */
  overview(visible: readonly string[], since: Date): Promise<KnowledgeOverviewCounts>
}

/**
 * The overview's queries over a database.
 * @example
 * const counts = await overviewQueries(store.db).overview(visibleScopes(principal), since)
 */
export function overviewQueries(db: Queryable): KnowledgeOverviewQueries {
  return {
    async overview(visible, since) {
      const vis = [...visible]
      const statuses = await db.query(sql`SELECT status, count(*)::int AS n FROM knowledge WHERE scopes && ${vis}::text[] GROUP BY status ORDER BY status`)
      const types = await db.query(sql`SELECT t AS type, count(*)::int AS n FROM knowledge, unnest(types) AS t
        WHERE scopes && ${vis}::text[] AND status = 'active' GROUP BY t ORDER BY n DESC, t`)
      const scopes = await db.query(sql`SELECT s AS scope, count(*)::int AS n FROM knowledge, unnest(scopes) AS s
        WHERE scopes && ${vis}::text[] AND status = 'active' AND s = ANY(${vis}::text[]) GROUP BY s ORDER BY n DESC, s`)
      const saves = await db.query(sql`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d, count(*)::int AS n FROM knowledge
        WHERE scopes && ${vis}::text[] AND created_at >= ${since.toISOString()} GROUP BY d ORDER BY d`)
      const feedback = await db.query(sql`SELECT to_char(f.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d,
          count(*) FILTER (WHERE f.kind = 'helpful')::int AS helpful, count(*) FILTER (WHERE f.kind = 'harmful')::int AS harmful
        FROM knowledge_feedback f JOIN knowledge k ON k.id = f.knowledge_id
        WHERE k.scopes && ${vis}::text[] AND f.created_at >= ${since.toISOString()} GROUP BY d ORDER BY d`)
      return {
        total: statuses.reduce((sum, row) => sum + Number(row.n), 0),
        by_status: statuses.map((row) => ({ status: String(row.status), count: Number(row.n) })),
        by_type: types.map((row) => ({ type: String(row.type), count: Number(row.n) })),
        by_scope: scopes.map((row) => ({ scope: String(row.scope), count: Number(row.n) })),
        saves_per_day: saves.map((row) => ({ day: String(row.d), count: Number(row.n) })),
        feedback_per_day: feedback.map((row) => ({ day: String(row.d), helpful: Number(row.helpful), harmful: Number(row.harmful) })),
      }
    },
  }
}
