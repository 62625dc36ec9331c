/**
 * Validity in time of knowledge entries (issue 31, migration 0048): supersession, which closes
 * an entry and links the one that replaces it in one transaction, and retention (`expires_at`).
 * The service checks who may do it and says why not (src/knowledge/supersede.ts); these
 * queries only apply it, and only while the rows are still as the service read them.
 */
import type { WriteAccess } from '../../core/principal.js'
import { sql } from '../sql.js'
import {
  COLUMNS,
  embeddingSql,
  insertRecord,
  manageableSql,
  timestampParam,
  toRecord,
  type KnowledgeContext,
  type KnowledgeRecord,
  type SearchDocument,
} from './rows.js'

/** What a supersession changed: the closed entry and the one that supersedes it. */
export interface Supersession {
  old: KnowledgeRecord
  current: KnowledgeRecord
}

/** Why a supersession was not applied: an entry not visible (or not there), or one that changed since it was read. */
export type SupersedeRefusal = 'old_missing' | 'new_missing' | 'old_changed' | 'new_changed' | 'id_taken'

/** One supersession for {@link KnowledgeValidityQueries.supersede}. */
export interface SupersedeChange {
  oldId: string
  newId: string
  /** What the caller may change: both entries must be among it (its SQL, {@link manageableSql}). */
  access: WriteAccess
  /** When the old entry stopped being valid. */
  validTo: Date
  /** When the supersession is recorded (`updated_at` of both). */
  at: Date
  /** A new entry to insert first, in the same transaction (its id is `newId`). */
  insert?: { record: KnowledgeRecord; doc: SearchDocument; embedding: Float32Array | undefined }
}

/** The validity queries of the knowledge store. */
export interface KnowledgeValidityQueries {
  /**
   * In one transaction: inserts `insert` when given, then closes the old entry (`valid_to`,
   * `superseded_by`) and links the new one (`supersedes`), if the caller may change both and both are active, the
   * old one is current and the new one is current and supersedes nothing yet. Otherwise nothing
   * is written (an inserted entry neither) and the refusal says which check failed.
   */
  supersede(change: SupersedeChange): Promise<Supersession | { refused: SupersedeRefusal }>
  /** Sets (or clears, with null) the `expires_at` of an entry the caller may change; the record, or undefined when it may not. */
  setExpiry(id: string, access: WriteAccess, expiresAt: Date | null, at: Date): Promise<KnowledgeRecord | undefined>
}

/** Thrown inside the transaction to roll it back with a refusal. */
class Refused extends Error {
  constructor(readonly reason: SupersedeRefusal) {
    super(reason)
  }
}

/**
 * The validity queries over a database.
 * @example
 * const done = await validityQueries({ db, getDialect }).supersede({ oldId, newId, access: writeAccess(principal), validTo: now, at: now })
 */
export function validityQueries({ db, getDialect }: KnowledgeContext): KnowledgeValidityQueries {
  return {
    async supersede(change) {
      const { oldId, newId, access, validTo, at } = change
      try {
        return await db.transaction(async (tx) => {
          if (change.insert) {
            const { record, doc, embedding } = change.insert
            if (!(await insertRecord(tx, record, doc, embeddingSql(getDialect(), embedding), sql`ON CONFLICT (id) DO NOTHING`))) throw new Refused('id_taken')
          }
          // Both rows locked, in id order (two supersessions of the same pair queue instead of deadlocking).
          const locked = await tx.query<{ id: string; manage: boolean }>(sql`SELECT k.id, ${manageableSql(access)} AS manage FROM knowledge k
            WHERE k.id = ANY(${[oldId, newId]}::text[]) ORDER BY k.id FOR UPDATE`)
          const seen = new Set(locked.filter((row) => row.manage).map((row) => row.id))
          if (!seen.has(oldId)) throw new Refused('old_missing')
          if (!seen.has(newId)) throw new Refused('new_missing')
          const current = await tx.query(sql`UPDATE knowledge k SET supersedes = ${oldId}, updated_at = ${at.toISOString()}
            WHERE k.id = ${newId} AND k.status = 'active' AND k.valid_to IS NULL AND k.supersedes IS NULL AND ${manageableSql(access)}
            RETURNING ${COLUMNS}`)
          if (current.length === 0) throw new Refused('new_changed')
          const old =
            await tx.query(sql`UPDATE knowledge k SET valid_to = ${validTo.toISOString()}::timestamptz, superseded_by = ${newId}, updated_at = ${at.toISOString()}
            WHERE k.id = ${oldId} AND k.status = 'active' AND k.valid_to IS NULL AND ${manageableSql(access)}
            RETURNING ${COLUMNS}`)
          if (old.length === 0) throw new Refused('old_changed')
          return { old: toRecord(old[0]!), current: toRecord(current[0]!) }
        })
      } catch (error) {
        if (error instanceof Refused) return { refused: error.reason }
        throw error
      }
    },

    async setExpiry(id, access, expiresAt, at) {
      const rows = await db.query(sql`UPDATE knowledge k SET expires_at = ${timestampParam(expiresAt)}, updated_at = ${at.toISOString()}
        WHERE k.id = ${id} AND ${manageableSql(access)} RETURNING ${COLUMNS}`)
      return rows[0] ? toRecord(rows[0]) : undefined
    },
  }
}
