/**
 * Re-owning entries (an admin operation across scopes): every entry of one owner gets a
 * new owner and/or added scopes in one transaction, each keeping its previous version
 * with the reason, as an edit does.
 */
import { sql, type Sql } from '../sql.js'
import type { KnowledgeContext } from './rows.js'

/** One reown: from one owner to another (or the same), with scopes added. */
export interface ReownChange {
  from: string
  to: string
  /** Scopes added to every entry (kept once). */
  addScopes: readonly string[]
  /** The reason kept with each previous version. */
  reason: string
  at: Date
  /** Only entries visible through these scopes (an org admin's own ids); absent: every entry (the hub operator). */
  within?: readonly string[] | undefined
}

/** The reown queries of the knowledge store. */
export interface KnowledgeReownQueries {
  /** Entries owned by `from` (any status, any scope), and those a reown would change, by id. */
  reownPlan(change: Pick<ReownChange, 'from' | 'to' | 'addScopes' | 'within'>): Promise<{ owned: number; changing: string[] }>
  /**
   * Applies the reown: the owner becomes `to`, the `from` scope becomes the `to` scope, the added
   * scopes are appended, unpinned resource ids are pinned to `from` (they keep resolving to the
   * same resources), the version rises by one and the previous version is kept. Returns the ids changed.
   */
  reown(change: ReownChange): Promise<string[]>
}

/** The scopes after the change: `from` replaced by `to`, the added ones appended, each once, in order. */
function newScopes(change: Pick<ReownChange, 'from' | 'to' | 'addScopes'>): Sql {
  return sql`ARRAY(SELECT s FROM unnest(array_replace(k.scopes, ${change.from}::text, ${change.to}::text) || ${change.addScopes}::text[])
    WITH ORDINALITY AS t(s, n) GROUP BY s ORDER BY min(n))`
}

/** Entries of `from` in reach of the change (visible through `within`, when given). */
function ownedBy(change: Pick<ReownChange, 'from' | 'within'>): Sql {
  return change.within ? sql`k.owner = ${change.from} AND k.scopes && ${change.within}::text[]` : sql`k.owner = ${change.from}`
}

/** Entries of `from` that the change alters. */
function changing(change: Pick<ReownChange, 'from' | 'to' | 'addScopes' | 'within'>): Sql {
  return sql`${ownedBy(change)} AND (k.owner <> ${change.to} OR k.scopes IS DISTINCT FROM ${newScopes(change)})`
}

/**
 * The reown queries over a database.
 * @example
 * const ids = await reownQueries({ db, getDialect }).reown({ from: 'user:local', to: 'user:alice', addScopes: [], reason: 'reown', at: new Date() })
 */
export function reownQueries({ db }: KnowledgeContext): KnowledgeReownQueries {
  return {
    async reownPlan(change) {
      const owned = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM knowledge k WHERE ${ownedBy(change)}`)
      const rows = await db.query<{ id: string }>(sql`SELECT k.id FROM knowledge k WHERE ${changing(change)} ORDER BY k.id`)
      return { owned: owned[0]?.n ?? 0, changing: rows.map((r) => r.id) }
    },

    async reown(change) {
      return db.transaction(async (tx) => {
        await tx.query(sql`INSERT INTO knowledge_version (knowledge_id, version, task, content, types, tags, scopes, resource_ids, reason, created_at)
          SELECT k.id, k.version, k.task, k.content, k.types, k.tags, k.scopes, k.resource_ids, ${change.reason}, k.updated_at
          FROM knowledge k WHERE ${changing(change)}`)
        const pins = sql`(SELECT coalesce(jsonb_object_agg(r, ${change.from}::text), '{}'::jsonb) FROM unnest(k.resource_ids) AS r) || coalesce(k.resource_owners, '{}'::jsonb)`
        const rows = await tx.query<{ id: string }>(sql`UPDATE knowledge k SET owner = ${change.to}, scopes = ${newScopes(change)},
            resource_owners = ${pins}, version = k.version + 1, updated_at = ${change.at.toISOString()}
          WHERE ${changing(change)} RETURNING k.id`)
        return rows.map((r) => r.id).sort()
      })
    },
  }
}
