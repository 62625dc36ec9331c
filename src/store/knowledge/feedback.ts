/**
 * Feedback of knowledge entries: atomic helpful/harmful counters and the history of cases
 * (each with its giver), and the entry's score as the owner's score combined with the
 * distinct voters' median (docs/feedback.md). Every change locks the entry's row first,
 * so concurrent feedback never loses a count or a vote.
 */
import { combinedScore, harmfulCaseWeight, type FeedbackRecord } from '../../core/knowledge.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import { COLUMNS, toRecord, type KnowledgeContext, type KnowledgeRecord } from './rows.js'

/** The feedback queries of the knowledge store. */
export interface KnowledgeFeedbackQueries {
  /**
   * Atomically adds one helpful or harmful case given by `giver.id` (a principal's `kind:id`).
   * A harmful case adds its weight to `harmful_weight`: 1 from a manager of the entry (its
   * owner or an admin, who can set its score anyway), else diminishing with the giver's
   * earlier harmful cases. Returns the updated record, or undefined if not visible.
   */
  addFeedback(
    id: string,
    visible: readonly string[],
    kind: 'helpful' | 'harmful',
    body: FeedbackRecord,
    giver: FeedbackGiver,
    at: Date,
  ): Promise<KnowledgeRecord | undefined>
  /** Sets the owner's score and recomputes the entry's score. Undefined if not visible. */
  setOwnerScore(id: string, visible: readonly string[], score: number, at: Date): Promise<KnowledgeRecord | undefined>
  /** Records (or replaces) `voter`'s score and recomputes the entry's score. Undefined if not visible. */
  voteScore(id: string, visible: readonly string[], voter: string, score: number, at: Date): Promise<KnowledgeRecord | undefined>
  /** The helpful and harmful cases of each entry, in the order they were given. */
  histories(ids: readonly string[]): Promise<Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>>
}

/** Who gives a case: a principal's `kind:id`, and whether it manages the entry (owner or admin). */
export interface FeedbackGiver {
  id: string
  manager: boolean
}

/** Appends one case to an entry's feedback history (no counter change); `giver` null when unknown (imports). */
export async function insertFeedback(
  q: Queryable,
  id: string,
  kind: 'helpful' | 'harmful',
  body: FeedbackRecord,
  at: string,
  giver: string | null = null,
): Promise<void> {
  await q.query(
    sql`INSERT INTO knowledge_feedback (knowledge_id, kind, body, giver, created_at) VALUES (${id}, ${kind}, ${JSON.stringify(body)}::jsonb, ${giver}, ${at})`,
  )
}

/** Locks a visible entry's row for the rest of the transaction; its owner's score, or undefined. */
async function lockVisible(q: Queryable, id: string, visible: readonly string[]): Promise<number | undefined> {
  const rows = await q.query<{ owner_score: number }>(
    sql`SELECT k.owner_score FROM knowledge k WHERE k.id = ${id} AND k.scopes && ${visible}::text[] FOR UPDATE`,
  )
  return rows[0] ? Number(rows[0].owner_score) : undefined
}

/** Recomputes a locked entry's score from its owner's score and its votes. */
async function rescore(q: Queryable, id: string, ownerScore: number, at: Date): Promise<KnowledgeRecord> {
  const votes = await q.query<{ score: number }>(sql`SELECT score FROM knowledge_score_vote WHERE knowledge_id = ${id}`)
  const score = combinedScore(
    ownerScore,
    votes.map((v) => Number(v.score)),
  )
  const rows = await q.query(sql`UPDATE knowledge k SET score = ${score}, updated_at = ${at.toISOString()} WHERE k.id = ${id} RETURNING ${COLUMNS}`)
  return toRecord(rows[0]!)
}

/**
 * The feedback queries over a database.
 * @example
 * const feedback = feedbackQueries({ db, getDialect })
 * await feedback.addFeedback(id, visible, 'helpful', { task, outcome }, { id: 'user:carol', manager: false }, new Date())
 */
export function feedbackQueries({ db }: KnowledgeContext): KnowledgeFeedbackQueries {
  return {
    async addFeedback(id, visible, kind, body, giver, at) {
      return db.transaction(async (tx) => {
        if ((await lockVisible(tx, id, visible)) === undefined) return undefined
        let counter = sql.raw('helpful = k.helpful + 1')
        if (kind === 'harmful') {
          const earlier = giver.manager
            ? [{ n: 0 }]
            : await tx.query<{ n: number }>(
                sql`SELECT count(*)::int AS n FROM knowledge_feedback WHERE knowledge_id = ${id} AND kind = 'harmful' AND giver = ${giver.id}`,
              )
          const weight = harmfulCaseWeight(Number(earlier[0]?.n ?? 0))
          counter = sql`harmful = k.harmful + 1, harmful_weight = k.harmful_weight + ${weight}::double precision`
        }
        const rows = await tx.query(sql`UPDATE knowledge k SET ${counter}, updated_at = ${at.toISOString()} WHERE k.id = ${id} RETURNING ${COLUMNS}`)
        await insertFeedback(tx, id, kind, body, at.toISOString(), giver.id)
        return toRecord(rows[0]!)
      })
    },

    async setOwnerScore(id, visible, score, at) {
      return db.transaction(async (tx) => {
        if ((await lockVisible(tx, id, visible)) === undefined) return undefined
        await tx.query(sql`UPDATE knowledge SET owner_score = ${score} WHERE id = ${id}`)
        return rescore(tx, id, score, at)
      })
    },

    async voteScore(id, visible, voter, score, at) {
      return db.transaction(async (tx) => {
        const ownerScore = await lockVisible(tx, id, visible)
        if (ownerScore === undefined) return undefined
        await tx.query(sql`INSERT INTO knowledge_score_vote (knowledge_id, voter, score, created_at) VALUES (${id}, ${voter}, ${score}, ${at.toISOString()})
          ON CONFLICT (knowledge_id, voter) DO UPDATE SET score = EXCLUDED.score, created_at = EXCLUDED.created_at`)
        return rescore(tx, id, ownerScore, at)
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
