/**
 * Feedback of knowledge entries: atomic helpful/harmful counters and the history of cases
 * (each with its giver), and the entry's score as the owner's score combined with the
 * distinct voters' median (docs/feedback.md). Every change locks the entry's row first,
 * so concurrent feedback never loses a count or a vote.
 */
import { combinedScore, harmfulCaseWeight, type FeedbackRecord } from '../../core/knowledge.js'
import type { WriteAccess } from '../../core/principal.js'
import type { Queryable } from '../database.js'
import { sql } from '../sql.js'
import { COLUMNS, manageableSql, toRecord, writableSql, type KnowledgeContext, type KnowledgeRecord } from './rows.js'

/** The feedback queries of the knowledge store. */
export interface KnowledgeFeedbackQueries {
  /**
   * Atomically adds one helpful or harmful case given by `giver` (a principal's `kind:id`) to an
   * entry the caller may write (`access`). A harmful case adds its weight to `harmful_weight`: 1
   * from a manager of the entry (decided here, in SQL, from `access`: its owner or an admin, who
   * can set its score anyway), else diminishing with the giver's earlier harmful cases. Returns
   * the updated record, or undefined if the caller may not write it.
   */
  addFeedback(id: string, access: WriteAccess, kind: 'helpful' | 'harmful', body: FeedbackRecord, giver: string, at: Date): Promise<KnowledgeRecord | undefined>
  /** Sets the owner's score of an entry the caller may change, and recomputes the entry's score. Undefined if it may not. */
  setOwnerScore(id: string, access: WriteAccess, score: number, at: Date): Promise<KnowledgeRecord | undefined>
  /** Records (or replaces) `voter`'s score and recomputes the entry's score. Undefined if the caller may not write it. */
  voteScore(id: string, access: WriteAccess, voter: string, score: number, at: Date): Promise<KnowledgeRecord | undefined>
  /** The helpful and harmful cases of each entry visible through `visible`, in the order they were given. */
  histories(ids: readonly string[], visible: readonly string[]): Promise<Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>>
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

/**
 * Locks the row of an entry the caller may write (with `manage`: may change) for the rest of the
 * transaction; its owner's score and whether the caller manages it, or undefined.
 */
async function lockWritable(q: Queryable, id: string, access: WriteAccess, manage = false): Promise<{ ownerScore: number; manager: boolean } | undefined> {
  const rows = await q.query<{ owner_score: number; manager: boolean }>(
    sql`SELECT k.owner_score, ${manageableSql(access)} AS manager FROM knowledge k
      WHERE k.id = ${id} AND ${manage ? manageableSql(access) : writableSql(access)} FOR UPDATE`,
  )
  return rows[0] ? { ownerScore: Number(rows[0].owner_score), manager: rows[0].manager === true } : undefined
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
 * await feedback.addFeedback(id, writeAccess(carol), 'helpful', { task, outcome }, 'user:carol', new Date())
 */
export function feedbackQueries({ db }: KnowledgeContext): KnowledgeFeedbackQueries {
  return {
    async addFeedback(id, access, kind, body, giver, at) {
      return db.transaction(async (tx) => {
        const locked = await lockWritable(tx, id, access)
        if (!locked) return undefined
        let counter = sql.raw('helpful = k.helpful + 1')
        if (kind === 'harmful') {
          const earlier = locked.manager
            ? [{ n: 0 }]
            : await tx.query<{ n: number }>(
                sql`SELECT count(*)::int AS n FROM knowledge_feedback WHERE knowledge_id = ${id} AND kind = 'harmful' AND giver = ${giver}`,
              )
          const weight = harmfulCaseWeight(Number(earlier[0]?.n ?? 0))
          counter = sql`harmful = k.harmful + 1, harmful_weight = k.harmful_weight + ${weight}::double precision`
        }
        const rows = await tx.query(sql`UPDATE knowledge k SET ${counter}, updated_at = ${at.toISOString()} WHERE k.id = ${id} RETURNING ${COLUMNS}`)
        await insertFeedback(tx, id, kind, body, at.toISOString(), giver)
        return toRecord(rows[0]!)
      })
    },

    async setOwnerScore(id, access, score, at) {
      return db.transaction(async (tx) => {
        if (!(await lockWritable(tx, id, access, true))) return undefined
        await tx.query(sql`UPDATE knowledge SET owner_score = ${score} WHERE id = ${id}`)
        return rescore(tx, id, score, at)
      })
    },

    async voteScore(id, access, voter, score, at) {
      return db.transaction(async (tx) => {
        const locked = await lockWritable(tx, id, access)
        if (!locked) return undefined
        await tx.query(sql`INSERT INTO knowledge_score_vote (knowledge_id, voter, score, created_at) VALUES (${id}, ${voter}, ${score}, ${at.toISOString()})
          ON CONFLICT (knowledge_id, voter) DO UPDATE SET score = EXCLUDED.score, created_at = EXCLUDED.created_at`)
        return rescore(tx, id, locked.ownerScore, at)
      })
    },

    async histories(ids, visible) {
      const result = new Map<string, { helpful: FeedbackRecord[]; harmful: FeedbackRecord[] }>()
      for (const id of ids) result.set(id, { helpful: [], harmful: [] })
      if (ids.length === 0) return result
      const rows = await db.query<{ knowledge_id: string; kind: 'helpful' | 'harmful'; body: FeedbackRecord }>(
        sql`SELECT f.knowledge_id, f.kind, f.body FROM knowledge_feedback f JOIN knowledge k ON k.id = f.knowledge_id
          WHERE f.knowledge_id = ANY(${ids}::text[]) AND k.scopes && ${visible}::text[] ORDER BY f.seq`,
      )
      for (const row of rows) result.get(row.knowledge_id)?.[row.kind].push(row.body)
      return result
    },
  }
}
