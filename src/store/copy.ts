/**
 * Copies a whole KnowHub database into an empty PostgreSQL server database (`knowhub migrate
 * --to`): every table the migrations made (entries with versions and feedback histories,
 * resources with their secrets still encrypted, tokens, metadata, and tables added later),
 * row for row in one target transaction, then checks counts and a sample of rows on both
 * sides. Tables that triggers derive (BM25 statistics, the change log) are rebuilt by the
 * target's own triggers. Vectors move between `vector(N)` and `real[]` as the target allows.
 *
 * Identifiers come from the database catalogue (our migrations' tables), never from input.
 */
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { Database, Queryable } from './database.js'
import { sql, type Sql } from './sql.js'
import type { Store } from './store.js'
import { readVectorIndexInfo } from './knowledge/vectors.js'

/** Tables that are not copied: bookkeeping of the target's own migrations, and trigger-derived data. */
const NOT_COPIED = new Set([
  'knowhub_migrations',
  'knowhub_meta',
  'knowledge_scope_term',
  'knowledge_scope_stats',
  'knowledge_term',
  'knowledge_text_stats',
  'knowledge_change',
  // The change log's readers (processes of the source) and its pruning mark (migration 0053).
  'knowledge_change_reader',
  'knowledge_change_pruned',
])
/** The vector settings are written by the target itself (its backend may differ). */
const OWN_META_KEYS = ['embedding']
const BATCH_ROWS = 500
const SAMPLE_ROWS = 25

export interface CopyProgress {
  table: string
  /** Rows copied so far, over all tables. */
  done: number
  total: number
}

export interface CopyReport {
  tables: Array<{ name: string; rows: number }>
  rows: number
  /** Rows compared field by field after the copy, over all tables. */
  sampled: number
}

interface Table {
  name: string
  columns: Array<{ name: string; vector: boolean }>
  key: string[]
}

const ident = (name: string): Sql => sql.raw(`"${name.replace(/"/g, '""')}"`)
const list = (names: string[]): Sql => sql.raw(names.map((n) => `"${n.replace(/"/g, '""')}"`).join(', '))

/** The copied tables in foreign-key order, with their columns and primary keys. */
async function tables(db: Queryable): Promise<Table[]> {
  const rows = await db.query<{ table: string; column: string; type: string; key: number | null }>(sql`
    SELECT c.relname AS table, a.attname AS column, t.typname AS type, array_position(k.conkey, a.attnum) AS key
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
    WHERE c.relkind = 'r'
    ORDER BY c.relname, a.attnum`)
  const byName = new Map<string, Table>()
  for (const row of rows) {
    if (NOT_COPIED.has(row.table)) continue
    const table = byName.get(row.table) ?? { name: row.table, columns: [], key: [] }
    byName.set(row.table, table)
    table.columns.push({ name: row.column, vector: row.type === 'vector' })
    if (row.key !== null) table.key[row.key - 1] = row.column
  }
  const edges = await db.query<{ child: string; parent: string }>(sql`
    SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
    WHERE k.contype = 'f' AND c.relname <> p.relname`)
  const ordered: Table[] = []
  const visit = (name: string, path: Set<string>): void => {
    const table = byName.get(name)
    if (!table || ordered.includes(table) || path.has(name)) return
    path.add(name)
    for (const edge of edges) if (edge.child === name) visit(edge.parent, path)
    ordered.push(table)
  }
  for (const name of [...byName.keys()].sort()) visit(name, new Set())
  for (const table of ordered) {
    if (table.key.length === 0) throw new KnowHubError('database_error', `Table ${table.name} has no primary key: cannot copy it in batches`)
  }
  return ordered
}

/** The columns as the copy reads them: vectors as real[] (JSON arrays), which both column types accept. */
function selectList(table: Table): Sql {
  return sql.raw(table.columns.map((c) => (c.vector ? `"${c.name}"::real[] AS "${c.name}"` : `"${c.name}"`)).join(', '))
}

/** One batch of rows after `after` (a JSON row holding the key), as JSON text, in key order. */
async function readBatch(db: Queryable, table: Table, after: string | undefined, limit: number): Promise<string | undefined> {
  const key = list(table.key)
  const where = after ? sql`WHERE (${key}) > (SELECT ${key} FROM json_populate_record(NULL::${ident(table.name)}, ${after}::json))` : sql.empty
  const rows = await db.query<{ batch: string | null }>(
    sql`SELECT json_agg(s)::text AS batch FROM (SELECT ${selectList(table)} FROM ${ident(table.name)} ${where} ORDER BY ${key} LIMIT ${limit}) s`,
  )
  return rows[0]?.batch ?? undefined
}

async function count(db: Queryable, table: Table): Promise<number> {
  const rows = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${ident(table.name)}`)
  return rows[0]?.n ?? 0
}

/** Moves each serial column's sequence past the copied values. */
async function advanceSequences(tx: Queryable, table: Table): Promise<void> {
  for (const column of table.columns) {
    const quoted = `"${table.name.replace(/"/g, '""')}"`
    const [row] = await tx.query<{ seq: string | null }>(sql`SELECT pg_get_serial_sequence(${quoted}, ${column.name}) AS seq`)
    if (!row?.seq) continue
    await tx.query(
      sql`SELECT setval(${row.seq}::regclass, (SELECT max(${ident(column.name)}) FROM ${ident(table.name)})) WHERE EXISTS (SELECT 1 FROM ${ident(table.name)})`,
    )
  }
}

/** A sample of rows read the same way on both sides, as JSON text in UTC. */
async function sample(db: Database, table: Table, keys: string): Promise<string> {
  const key = list(table.key)
  return db.transaction(async (tx) => {
    await tx.query(sql`SET LOCAL TIME ZONE 'UTC'`)
    const rows = await tx.query<{ rows: string | null }>(sql`SELECT json_agg(s)::text AS rows FROM (
      SELECT ${selectList(table)} FROM ${ident(table.name)}
      WHERE (${key}) IN (SELECT ${key} FROM json_populate_recordset(NULL::${ident(table.name)}, ${keys}::json))
      ORDER BY ${key}) s`)
    return rows[0]?.rows ?? '[]'
  })
}

async function verify(source: Database, target: Database, table: Table): Promise<number> {
  const [sourceCount, targetCount] = [await count(source, table), await count(target, table)]
  if (sourceCount !== targetCount) {
    throw new KnowHubError('database_error', `Copy check failed: table ${table.name} has ${sourceCount} rows here and ${targetCount} in the target`)
  }
  const picked = await source.query<{ keys: string | null }>(
    sql`SELECT json_agg(s)::text AS keys FROM (SELECT ${list(table.key)} FROM ${ident(table.name)} ORDER BY random() LIMIT ${SAMPLE_ROWS}) s`,
  )
  const keys = picked[0]?.keys
  if (!keys) return 0
  const [here, there] = [await sample(source, table, keys), await sample(target, table, keys)]
  if (here !== there) throw new KnowHubError('database_error', `Copy check failed: sampled rows of table ${table.name} differ in the target`)
  return (JSON.parse(keys) as unknown[]).length
}

/**
 * Copies `source` into `target`, which must be migrated and hold no rows. All or nothing:
 * the rows go in one transaction of the target. Both stores stay open (the caller closes).
 * @example
 * const report = await copyStore(hub.store, target, { onProgress: (p) => bar.update(p.done, p.total) })
 */
export async function copyStore(
  source: Store,
  target: Store,
  options: { onProgress?: (progress: CopyProgress) => void; logger?: Logger } = {},
): Promise<CopyReport> {
  const logger = options.logger ?? noopLogger
  const copied = await tables(source.db)
  const targetTables = new Set((await tables(target.db)).map((t) => t.name))
  for (const table of copied) {
    if (!targetTables.has(table.name))
      throw new KnowHubError('database_error', `The target database has no table ${table.name}: is it migrated by the same KnowHub version?`)
    const rows = await count(target.db, table)
    if (rows > 0) {
      throw new KnowHubError('conflict', `The target database is not empty (${table.name} holds ${rows} rows): migrate into a new, empty database`, {
        table: table.name,
        rows,
      })
    }
  }
  const info = await readVectorIndexInfo(source.db)
  if (info) {
    const state = await target.prepareVectors({ model: info.model, dimension: info.dimension })
    if (state.status !== 'ready') throw new KnowHubError('embedder_mismatch', 'The target database holds vectors of another embedder')
  }
  const counts = new Map<string, number>()
  for (const table of copied) counts.set(table.name, await count(source.db, table))
  const total = [...counts.values()].reduce((a, b) => a + b, 0)
  let done = 0
  options.onProgress?.({ table: copied[0]?.name ?? '', done, total })
  await target.db.transaction(async (tx) => {
    for (const table of copied) {
      let after: string | undefined
      for (;;) {
        const batch = await readBatch(source.db, table, after, BATCH_ROWS)
        if (!batch) break
        const rows = JSON.parse(batch) as Array<Record<string, unknown>>
        const columns = list(table.columns.map((c) => c.name))
        await tx.query(sql`INSERT INTO ${ident(table.name)} (${columns})
          SELECT ${columns} FROM json_populate_recordset(NULL::${ident(table.name)}, ${batch}::json)`)
        done += rows.length
        const last = rows[rows.length - 1]!
        after = JSON.stringify(Object.fromEntries(table.key.map((k) => [k, last[k]])))
        options.onProgress?.({ table: table.name, done, total })
      }
      await advanceSequences(tx, table)
    }
    const meta = await source.db.query<{ key: string; value: unknown }>(sql`SELECT key, value FROM knowhub_meta`)
    for (const row of meta) {
      if (OWN_META_KEYS.includes(row.key)) continue
      await tx.query(sql`INSERT INTO knowhub_meta (key, value) VALUES (${row.key}, ${JSON.stringify(row.value)}::jsonb)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`)
    }
  })
  await target.knowledge.analyze()
  let sampled = 0
  for (const table of copied) sampled += await verify(source.db, target.db, table)
  logger.info('store.copy.done', { rows: done, sampled })
  return { tables: copied.map((t) => ({ name: t.name, rows: counts.get(t.name) ?? 0 })), rows: done, sampled }
}

/**
 * Opens (and migrates) the PostgreSQL database at `databaseUrl`, copies `source` into it
 * with {@link copyStore}, and closes it.
 * @example
 * const report = await copyToServer(hub.store, 'postgres://knowhub@db/knowhub')
 */
export async function copyToServer(
  source: Store,
  databaseUrl: string,
  options: { onProgress?: (progress: CopyProgress) => void; logger?: Logger } = {},
): Promise<CopyReport> {
  const { openStore } = await import('./store.js')
  const target = await openStore({ databaseUrl, ...(options.logger ? { logger: options.logger } : {}) })
  try {
    return await copyStore(source, target, options)
  } finally {
    await target.close()
  }
}
