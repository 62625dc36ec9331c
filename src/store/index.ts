/**
 * `knowhub/store`: the PostgreSQL storage layer (embedded PGlite with pgvector,
 * or a PostgreSQL server). SQL lives only here.
 */
export { openStore, type OpenStoreOptions, type Store, type VectorState } from './store.js'
export { openPGlite, openPostgres, type Database, type Queryable, type Row, type PGliteOptions, type PostgresOptions } from './database.js'
export { sql, Sql } from './sql.js'
export { migrate, loadMigrations, MIGRATIONS_DIR, type Migration } from './migrate.js'
export { vectorDialect, type VectorBackend, type VectorDialect, type VectorIndexInfo } from './knowledge/vectors.js'
export type { KnowledgeStore, KnowledgeRecord, EntryFilter, RankedId, SearchDocument, TextQuery, ImportItem } from './knowledge/knowledge.js'
