/**
 * All SQL about goal trees (seed 003). A tree is `(owner, trace_id)`: every query names
 * the owner, and the service only ever passes owners the caller may act as.
 */
import type { Database } from '../database.js'
import { sql } from '../sql.js'

/** The states of a goal. */
export type GoalStatus = 'pending' | 'in_progress' | 'completed' | 'abandoned'

/** One stored goal. */
export interface GoalRecord {
  owner: string
  trace_id: string
  goal_id: string
  parent_id: string | null
  position: number
  description: string
  status: GoalStatus
  focused: boolean
  knowledge_ids: string[]
  summary: string | null
  created_at: Date
  updated_at: Date
}

/** The goal queries. */
export interface GoalStore {
  /** Which of `candidates` own a tree with this trace id (in no particular order). */
  owners(traceId: string, candidates: readonly string[]): Promise<string[]>
  /** The goals of a tree, in creation order. */
  tree(owner: string, traceId: string): Promise<GoalRecord[]>
  /** Inserts a goal; false when its id is taken in the tree. */
  insert(record: GoalRecord): Promise<boolean>
  /** Sets a goal's status and summary (and unfocuses it when it is finished); undefined when there is no such goal. */
  setStatus(owner: string, traceId: string, goalId: string, status: GoalStatus, summary: string | null, at: Date): Promise<GoalRecord | undefined>
  /** Focuses a goal (in progress, the tree's only focus) and attaches knowledge ids, in one transaction. */
  focus(owner: string, traceId: string, goalId: string, knowledgeIds: readonly string[], at: Date): Promise<GoalRecord | undefined>
}

const COLUMNS = sql.raw('owner, trace_id, goal_id, parent_id, position, description, status, focused, knowledge_ids, summary, created_at, updated_at')

function toRecord(row: Record<string, unknown>): GoalRecord {
  return {
    ...(row as unknown as GoalRecord),
    position: Number(row.position),
    knowledge_ids: (row.knowledge_ids as string[] | null) ?? [],
    created_at: new Date(row.created_at as string | Date),
    updated_at: new Date(row.updated_at as string | Date),
  }
}

/**
 * The goal queries over a database.
 * @example
 * const goals = goalStore(store.db)
 * const tree = await goals.tree('user:alice', 'trace-1')
 */
export function goalStore(db: Pick<Database, 'query' | 'transaction'>): GoalStore {
  return {
    async owners(traceId, candidates) {
      if (candidates.length === 0) return []
      const rows = await db.query<{ owner: string }>(sql`SELECT DISTINCT owner FROM goals WHERE trace_id = ${traceId} AND owner = ANY(${candidates}::text[])`)
      return rows.map((row) => row.owner)
    },
    async tree(owner, traceId) {
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM goals WHERE owner = ${owner} AND trace_id = ${traceId} ORDER BY position, goal_id`)
      return rows.map(toRecord)
    },
    async insert(r) {
      const rows = await db.query(sql`INSERT INTO goals (${COLUMNS})
        VALUES (${r.owner}, ${r.trace_id}, ${r.goal_id}, ${r.parent_id}, ${r.position}, ${r.description}, ${r.status}, ${r.focused},
          ${r.knowledge_ids}::text[], ${r.summary}, ${r.created_at.toISOString()}, ${r.updated_at.toISOString()})
        ON CONFLICT (owner, trace_id, goal_id) DO NOTHING RETURNING goal_id`)
      return rows.length > 0
    },
    async setStatus(owner, traceId, goalId, status, summary, at) {
      const finished = status === 'completed' || status === 'abandoned'
      const rows = await db.query(sql`UPDATE goals SET status = ${status}, summary = COALESCE(${summary}, summary),
          focused = CASE WHEN ${finished} THEN false ELSE focused END, updated_at = ${at.toISOString()}
        WHERE owner = ${owner} AND trace_id = ${traceId} AND goal_id = ${goalId} RETURNING ${COLUMNS}`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },
    async focus(owner, traceId, goalId, knowledgeIds, at) {
      return db.transaction(async (tx) => {
        const target = await tx.query(sql`SELECT goal_id FROM goals WHERE owner = ${owner} AND trace_id = ${traceId} AND goal_id = ${goalId} FOR UPDATE`)
        if (target.length === 0) return undefined
        await tx.query(sql`UPDATE goals SET focused = false, updated_at = ${at.toISOString()} WHERE owner = ${owner} AND trace_id = ${traceId} AND focused`)
        const rows = await tx.query(sql`UPDATE goals SET focused = true, knowledge_ids = ${knowledgeIds}::text[],
            status = CASE WHEN status = 'pending' THEN 'in_progress' ELSE status END, updated_at = ${at.toISOString()}
          WHERE owner = ${owner} AND trace_id = ${traceId} AND goal_id = ${goalId} RETURNING ${COLUMNS}`)
        return rows[0] ? toRecord(rows[0]) : undefined
      })
    },
  }
}
