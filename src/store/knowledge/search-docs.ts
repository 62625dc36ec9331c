/**
 * Upkeep of the stored full-text documents and search structures: the document format
 * version, rebuilding documents after a format change, and vacuuming/analysing.
 */
import { sql } from '../sql.js'
import { documentColumns, type KnowledgeContext, type SearchDocument } from './rows.js'

/** The full-text upkeep queries of the knowledge store. */
export interface KnowledgeSearchDocQueries {
  /** Merges GIN pending lists, vacuums the BM25 statistics and refreshes planner statistics (PGlite runs no autovacuum). */
  analyze(): Promise<void>
  /** The version of the stored full-text documents (undefined before the first check). */
  searchDocVersion(): Promise<number | undefined>
  setSearchDocVersion(version: number): Promise<void>
  /** Replaces stored full-text documents (after a change of their format). */
  setSearchDocs(items: Array<{ id: string; doc: SearchDocument }>): Promise<void>
}

/**
 * The full-text upkeep queries over a database. `hasTextIndex`: whether this session keeps
 * an in-memory index (which reads the change log).
 * @example
 * await searchDocQueries({ db, getDialect }, false).analyze()
 */
export function searchDocQueries({ db }: KnowledgeContext, hasTextIndex: boolean): KnowledgeSearchDocQueries {
  return {
    async analyze() {
      // Merge the GIN indexes' pending lists (searches scan them linearly), clear the dead
      // rows the BM25 statistics triggers leave (every write updates the stats row), and
      // refresh the planner's statistics. PGlite runs no autovacuum to do any of this.
      await db.query(sql`SELECT gin_clean_pending_list(i::regclass)
        FROM unnest(ARRAY['knowledge_search_idx', 'knowledge_scopes_idx', 'knowledge_types_idx']) AS i`)
      // Without an in-memory index nobody reads the change log (this session writes none, see
      // migration 0008): drop what sessions with an index left, unless a server process that
      // keeps one is registered (migration 0053; it prunes the log itself).
      if (!hasTextIndex) await db.query(sql`DELETE FROM knowledge_change WHERE NOT EXISTS (SELECT 1 FROM knowledge_change_reader)`)
      // Terms no entry of a scope has any more (a scope's rows outlive its entries).
      await db.query(sql`DELETE FROM knowledge_scope_term WHERE df = 0`)
      await db.query(sql`VACUUM knowledge_scope_stats, knowledge_scope_term, knowledge_change`)
      await db.query(sql`ANALYZE knowledge`)
    },

    async searchDocVersion() {
      const rows = await db.query<{ value: { version?: number } }>(sql`SELECT value FROM knowhub_meta WHERE key = 'fulltext'`)
      return rows[0]?.value.version
    },

    async setSearchDocVersion(version) {
      await db.query(sql`INSERT INTO knowhub_meta (key, value) VALUES ('fulltext', ${JSON.stringify({ version })}::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`)
    },

    async setSearchDocs(items) {
      await db.transaction(async (tx) => {
        for (const item of items) {
          const text = documentColumns(item.doc)
          await tx.query(sql`UPDATE knowledge SET search_doc = ${text.tsvector}, search_tf = ${text.tf}, search_len = ${text.length} WHERE id = ${item.id}`)
        }
      })
    },
  }
}
