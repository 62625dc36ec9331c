/**
 * Vector storage, one module for both backends. With pgvector: a `vector(N)`
 * column with an HNSW index and the `<=>` cosine distance. Without it (e.g. a
 * PostgreSQL server lacking the extension): a `real[]` column and the exact
 * distance computed in SQL — correct, slower. The two differ only in column type,
 * index and distance expression.
 */
import { KnowHubError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Database, Queryable } from '../database.js'
import type { Sql } from '../sql.js'
import { sql } from '../sql.js'

export type VectorBackend = 'pgvector' | 'array'

/** What the vectors in the database were made with. */
export interface VectorIndexInfo {
  model: string
  dimension: number
  backend: VectorBackend
}

export interface VectorDialect {
  readonly backend: VectorBackend
  /** The query vector as a typed SQL parameter. */
  param(vector: Float32Array): Sql
  /** Cosine distance (0 = same direction) between a stored column and a query vector. */
  distance(column: Sql, query: Sql): Sql
}

/**
 * A vector as text for `vector` / `real[]` input. Nine significant digits name every float32
 * exactly (the columns hold float4), where `String` writes up to 17 digits of the double: a
 * third less text to send, and PostgreSQL's float parsing (software long double in PGlite's
 * WASM) was a fifth of an import's CPU.
 */
function format(vector: Float32Array, open: string, close: string): string {
  let text = open
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i]!
    text += (i === 0 ? '' : ',') + (value === 0 || !Number.isFinite(value) ? '0' : value.toPrecision(9))
  }
  return text + close
}

export function vectorDialect(backend: VectorBackend): VectorDialect {
  if (backend === 'pgvector') {
    return {
      backend,
      param: (vector) => sql`${format(vector, '[', ']')}::vector`,
      distance: (column, query) => sql`(${column} <=> ${query})`,
    }
  }
  return {
    backend,
    param: (vector) => sql`${format(vector, '{', '}')}::real[]`,
    // Vectors are L2-normalised, so cosine distance is 1 - dot product.
    distance: (column, query) => sql`(1 - (SELECT coalesce(sum(a * b), 0) FROM unnest(${column}, ${query}) AS t(a, b)))`,
  }
}

const META_KEY = 'embedding'
/** Memory for one HNSW index build (`knowhub reindex --vectors` on a server; a setting of that session only). */
const HNSW_BUILD_MEMORY = '256MB'
const CREATE_HNSW = 'CREATE INDEX IF NOT EXISTS knowledge_embedding_hnsw ON knowledge USING hnsw (embedding vector_cosine_ops)'

/**
 * Drops the HNSW index (kept only on PostgreSQL servers). The embedded database keeps none: its
 * server searches vectors in memory (`text-index/vectors.ts`), and one-shot commands scan them
 * exactly in SQL (about 80 ms at 10k entries of 512 numbers, against 57 ms through the index
 * at the same load), while upkeep of the index cost every save and every bulk load's build.
 */
export async function dropHnswIndex(db: Database): Promise<void> {
  await db.withLock('knowhub:migrate', (conn) => conn.exec('DROP INDEX IF EXISTS knowledge_embedding_hnsw'))
}

/**
 * Whether the vector extension is installed in this database: one catalog row. Cheaper than
 * {@link detectPgvector}, whose list of available extensions reads every extension's control file
 * (~30 ms of a PGlite restart); enough where pgvector is always available (PGlite).
 */
export async function pgvectorInstalled(db: Queryable): Promise<boolean> {
  return (await db.query(sql`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).length > 0
}

/**
 * Is the pgvector extension usable here? Creates it when available. Run it under the migration
 * lock ({@link detectPgvectorOnce}): two sessions running `CREATE EXTENSION IF NOT EXISTS` at
 * once can both miss the row and the second fail on the catalog's unique index, which read
 * as "not usable" and made that process store `real[]` vectors on a pgvector database.
 */
export async function detectPgvector(db: Queryable, logger: Logger): Promise<boolean> {
  const available = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'`)
  if ((available[0]?.n ?? 0) === 0) return false
  try {
    await db.query(sql`CREATE EXTENSION IF NOT EXISTS vector`)
    return true
  } catch (error) {
    // Someone else (a process not holding our lock: an older KnowHub, an administrator) may have created it meanwhile.
    if (await pgvectorInstalled(db).catch(() => false)) return true
    logger.warn('store.vector.extension_unavailable', { message: (error as Error).message })
    return false
  }
}

/** {@link detectPgvector} under the migration lock, so that processes opening one database together decide alike. */
export async function detectPgvectorOnce(db: Database, logger: Logger): Promise<boolean> {
  return db.withLock('knowhub:migrate', (conn) => detectPgvector(conn, logger))
}

export async function readVectorIndexInfo(db: Queryable): Promise<VectorIndexInfo | undefined> {
  const rows = await db.query<{ value: VectorIndexInfo }>(sql`SELECT value FROM knowhub_meta WHERE key = ${META_KEY}`)
  return rows[0]?.value
}

/** What {@link convertToPgvector} did. */
export interface VectorConversion {
  /** `converted`: real[] became vector(N) with HNSW; `already`: it was; `empty`: no vectors stored yet. */
  status: 'converted' | 'already' | 'empty'
  /** Entries whose stored vector was converted. */
  vectors: number
  info?: VectorIndexInfo
}

/**
 * Converts vectors stored as `real[]` (while the server lacked pgvector) to `vector(N)` with
 * the HNSW index, keeping every vector: one transaction under the migration lock, so a
 * failure (e.g. a vector of another length) changes nothing. The caller checks that the
 * extension exists. KnowHub processes that opened the database before keep the `real[]`
 * distance until restarted: run it with the servers stopped (docs/scale.md).
 */
export async function convertToPgvector(db: Database): Promise<VectorConversion> {
  return db.withLock('knowhub:migrate', async (conn) => {
    const stored = await readVectorIndexInfo(conn)
    if (!stored) return { status: 'empty', vectors: 0 }
    if (stored.backend === 'pgvector') return { status: 'already', vectors: 0, info: stored }
    if (!Number.isInteger(stored.dimension) || stored.dimension < 1 || stored.dimension > 16_000) {
      throw new KnowHubError('config_error', `Invalid stored embedding dimension ${stored.dimension}`)
    }
    const info: VectorIndexInfo = { ...stored, backend: 'pgvector' }
    await conn.exec('BEGIN')
    try {
      const rows = await conn.query<{ n: number }>(sql`SELECT count(embedding)::int AS n FROM knowledge`)
      await conn.exec(`SET LOCAL maintenance_work_mem = '${HNSW_BUILD_MEMORY}'`)
      await conn.exec(`ALTER TABLE knowledge ALTER COLUMN embedding TYPE vector(${stored.dimension}) USING embedding::vector(${stored.dimension})`)
      await conn.exec(CREATE_HNSW)
      await conn.query(sql`UPDATE knowhub_meta SET value = ${JSON.stringify(info)}::jsonb WHERE key = ${META_KEY}`)
      await conn.exec('COMMIT')
      return { status: 'converted', vectors: rows[0]?.n ?? 0, info }
    } catch (error) {
      await conn.exec('ROLLBACK')
      throw error
    }
  })
}

/**
 * Makes sure the `embedding` column exists on `knowledge` and says what it holds: the stored
 * model, dimension and backend when a column was made before (by this process or another), else
 * a new column for `info` (and with pgvector its HNSW index, unless `hnsw` is false: the
 * embedded database keeps none, see {@link dropHnswIndex}). With `rebuild`, drops the old
 * column and makes a new one for `info`. The check and the change happen under the migration
 * lock, so that processes opening a new database together make one column between them, of one
 * type (the losers read the winner's). The vectors live on the entry row so that pgvector's
 * filtered (iterative) index scan applies the visibility filter itself. Dimension and backend
 * come from code, never input.
 */
export async function ensureVectorColumn(
  db: Database,
  info: VectorIndexInfo,
  options: { rebuild?: boolean; hnsw?: boolean } = {},
): Promise<{ info: VectorIndexInfo; created: boolean }> {
  if (!Number.isInteger(info.dimension) || info.dimension < 1 || info.dimension > 16_000) {
    throw new KnowHubError('config_error', `Invalid embedding dimension ${info.dimension}`)
  }
  if (!options.rebuild) {
    // The common case (every start after the first) without waiting for the lock: once written, only a rebuild or a conversion changes it.
    const stored = await readVectorIndexInfo(db)
    if (stored) return { info: stored, created: false }
  }
  const column = info.backend === 'pgvector' ? `vector(${info.dimension})` : 'real[]'
  return db.withLock('knowhub:migrate', async (conn) => {
    if (!options.rebuild) {
      const stored = await readVectorIndexInfo(conn)
      if (stored) return { info: stored, created: false }
    }
    await conn.exec('BEGIN')
    try {
      if (options.rebuild) {
        await conn.exec('DROP INDEX IF EXISTS knowledge_embedding_hnsw')
        await conn.exec('ALTER TABLE knowledge DROP COLUMN IF EXISTS embedding')
      }
      await conn.exec(`ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS embedding ${column}`)
      if (info.backend === 'pgvector' && options.hnsw !== false) await conn.exec(CREATE_HNSW)
      await conn.query(sql`INSERT INTO knowhub_meta (key, value) VALUES (${META_KEY}, ${JSON.stringify(info)}::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`)
      await conn.exec('COMMIT')
      return { info, created: true }
    } catch (error) {
      await conn.exec('ROLLBACK')
      throw error
    }
  })
}
