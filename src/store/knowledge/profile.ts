/**
 * The user_profile entries about one user, whatever the caller's scopes: the caller's right to
 * read them (the user, its org admin, the hub operator) is checked before (src/app/users.ts).
 */
import { sql } from '../sql.js'
import { COLUMNS, toRecord, type KnowledgeContext, type KnowledgeRecord } from './rows.js'

/** The profile query of the knowledge store. */
export interface KnowledgeProfileQueries {
  /**
   * Every user_profile entry owned by `subject` (`user:ID`) or scoped to it, any status,
   * oldest first. Unchecked: call only after the caller's reach was checked.
   */
  profileEntries(subject: string): Promise<KnowledgeRecord[]>
}

/**
 * The profile query over a database.
 * @example
 * const records = await profileQueries({ db, getDialect }).profileEntries('user:bob')
 */
export function profileQueries({ db }: KnowledgeContext): KnowledgeProfileQueries {
  return {
    async profileEntries(subject) {
      const rows = await db.query(sql`SELECT ${COLUMNS} FROM knowledge k
        WHERE 'user_profile' = ANY(k.types) AND (k.owner = ${subject} OR ${subject} = ANY(k.scopes))
        ORDER BY k.created_at, k.id`)
      return rows.map(toRecord)
    },
  }
}
