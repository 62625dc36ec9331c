/**
 * Feedback of knowledge entries: atomic helpful/harmful counters and the history of cases.
 */
import type { FeedbackRecord } from '../../core/knowledge.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import { COLUMNS, toRecord, type KnowledgeContext, type KnowledgeRecord } from './rows.js'

/** The feedback queries of the knowledge store. */
export interface KnowledgeFeedbackQueries {
  /** Atomically adds one helpful or harmful case. Returns the updated record, or undefined if not visible. */
  addFeedback(id: string, visible: readonly string[], kind: 'helpful' | 'harmful', body: FeedbackRecord, at: Date): Promise<KnowledgeRecord | undefined>
  /** The helpful and harmful cases of each entry, in the order they were given. */
  histories(ids: readonly string[]): Promise<Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>>
}

/** Appends one case to an entry's feedback history (no counter change). */
export async function insertFeedback(q: Queryable, id: string, kind: 'helpful' | 'harmful', body: FeedbackRecord, at: string): Promise<void> {
  await q.query(sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, created_at) VALUES (${id}, ${kind}, ${JSON.stringify(body)}::jsonb, ${at})`)
}

/**
 * The feedback queries over a database.
 * @example
 * const feedback = feedbackQueries({ db, getDialect })
 * await feedback.addFeedback(id, visible, 'helpful', { task, outcome }, new Date())
 */
export function feedbackQueries({ db }: KnowledgeContext): KnowledgeFeedbackQueries {
  return {
    async addFeedback(id, visible, kind, body, at) {
      return db.transaction(async (tx) => {
        const counter = kind === 'helpful' ? sql.raw('helpful = k.helpful + 1') : sql.raw('harmful = k.harmful + 1')
        const rows = await tx.query(sql`UPDATE knowledge k SET ${counter}, updated_at = ${at.toISOString()}
          WHERE k.id = ${id} AND k.scopes && ${visible}::text[] RETURNING ${COLUMNS}`)
        if (rows.length === 0) return undefined
        await insertFeedback(tx, id, kind, body, at.toISOString())
        return toRecord(rows[0]!)
      })
    },

    async histories(ids) {
      const result = new Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>()
      for (const id of ids) result.set(id, { helpful: [], harmful: [] })
      if (ids.length === 0) return result
      const rows = await db.query<{ knowledge_id: string; kind: 'helpful' | 'harmful'; body: FeedbackRecord }>(
        sql`SELECT knowledge_id, kind, body FROM knowledge_feedback WHERE knowledge_id = ANY(${ids}::text[]) ORDER BY seq`,
      )
      for (const row of rows) result.get(row.knowledge_id)?.[row.kind].push(row.body)
      return result
    },
  }
}
