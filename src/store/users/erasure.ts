/**
 * All SQL of forgetting a user and of retention purges (issue 31), and the cleanup of the
 * database files afterwards.
 *
 * A forget runs in one transaction: either every row about the user goes, or none does. A dry
 * run runs the very same statements and rolls them back, so its counts are the real ones.
 * Deleting rows leaves their bytes in the table files (dead tuples, GIN keys, B-tree items) until
 * the pages are rewritten: {@link cleanupFiles} rewrites the tables involved (`VACUUM FULL`) and,
 * on the embedded database, moves the write-ahead log past the erased rows (docs/operations.md).
 */
import { combinedScore, harmfulCaseWeight } from '../../core/knowledge.js'
import type { FileCleanup, ForgetCounts } from '../../core/erasure.js'
import type { Database, Queryable } from '../database.js'
import { sql } from '../sql.js'
import { pollUntil } from '../wait.js'

/** Every table a purge may change (the entries, their history and statistics): the cleanup rewrites these. */
export const PURGE_TABLES = [
  'knowledge',
  'knowledge_version',
  'knowledge_feedback',
  'knowledge_score_vote',
  'knowledge_scope_term',
  'knowledge_scope_stats',
  'knowledge_change',
] as const

/** Every table a forget may change: the purge's, and the user's own rows elsewhere. */
export const FORGET_TABLES = [
  ...PURGE_TABLES,
  'resources',
  'goals',
  'agent_documents',
  'knowhub_token',
  'knowhub_dashboard_session',
  'knowhub_secret_reveal',
] as const

/** Thrown inside a dry run's transaction to roll it back with its counts. */
class DryRun<T> {
  constructor(readonly result: T) {}
}

/** Runs `fn` in a transaction; when `rollBack` (a flag, or asked once `fn` is done), rolls it back and still returns its result. */
async function inTransaction<T>(db: Database, rollBack: boolean | (() => boolean), fn: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      const result = await fn(tx)
      if (typeof rollBack === 'function' ? rollBack() : rollBack) throw new DryRun(result)
      return result
    })
  } catch (error) {
    if (error instanceof DryRun) return error.result as T
    throw error
  }
}

const n = (rows: Array<Record<string, unknown>>, key = 'n'): number => Number(rows[0]?.[key] ?? 0)

/** What a forget erased, plus the ids the caches must drop. */
export interface ForgetOutcome {
  counts: ForgetCounts
  /** Search statistics rows pruned on the way (anyone's emptied rows: not counted as the user's). */
  searchStatistics: number
  /** Nothing of the user was stored (every count 0): without `force` the transaction was rolled back. */
  unknown: boolean
  /** Ids of the entries deleted or changed (the record cache and in-memory index drop them). */
  entryIds: string[]
  /** Ids of the tokens deleted (the token verifier forgets them). */
  tokenIds: string[]
}

/** The erasure audit row of a forget or a purge. */
export interface ErasureAudit {
  kind: 'forget' | 'purge'
  /** SHA-256 (hex) of the forgotten `user:ID`; null for a purge. */
  subject: string | null
  by: string
  org: string | null
  at: Date
}

/** Drops the search statistics rows that count nothing any more (their term is a word someone wrote). */
async function pruneSearchStatistics(tx: Queryable): Promise<number> {
  const terms = await tx.query(sql`DELETE FROM knowledge_scope_term WHERE df <= 0 RETURNING 1`)
  const scopes = await tx.query(sql`DELETE FROM knowledge_scope_stats WHERE docs <= 0 RETURNING 1`)
  return terms.length + scopes.length
}

/** Re-scores entries after votes were removed: the owner's score combined with the remaining votes. */
async function rescore(tx: Queryable, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const [row] = await tx.query<{ owner_score: number }>(sql`SELECT owner_score FROM knowledge WHERE id = ${id} FOR UPDATE`)
    if (!row) continue
    const votes = await tx.query<{ score: number }>(sql`SELECT score FROM knowledge_score_vote WHERE knowledge_id = ${id}`)
    const score = combinedScore(
      Number(row.owner_score),
      votes.map((v) => Number(v.score)),
    )
    await tx.query(sql`UPDATE knowledge SET score = ${score} WHERE id = ${id}`)
  }
}

/**
 * Removes a user's helpful/harmful cases from other entries and lowers their counters to match:
 * `helpful`/`harmful` by the number of cases, `harmful_weight` by the weight those cases had
 * (a giver's n-th harmful case weighs 4^-(n-1); kept within [0, harmful]).
 */
async function removeFeedback(tx: Queryable, subject: string): Promise<{ cases: number; ids: string[] }> {
  const given = await tx.query<{ knowledge_id: string; helpful: number; harmful: number }>(sql`
    DELETE FROM knowledge_feedback WHERE giver = ${subject}
    RETURNING knowledge_id, (kind = 'helpful')::int AS helpful, (kind = 'harmful')::int AS harmful`)
  const byEntry = new Map<string, { helpful: number; harmful: number }>()
  for (const row of given) {
    const sum = byEntry.get(row.knowledge_id) ?? { helpful: 0, harmful: 0 }
    sum.helpful += Number(row.helpful)
    sum.harmful += Number(row.harmful)
    byEntry.set(row.knowledge_id, sum)
  }
  // Sorted: concurrent writers lock entry rows in one order.
  const ids = [...byEntry.keys()].sort()
  for (const id of ids) {
    const { helpful, harmful } = byEntry.get(id)!
    let weight = 0
    for (let k = 0; k < harmful; k++) weight += harmfulCaseWeight(k)
    await tx.query(sql`UPDATE knowledge SET
        helpful = GREATEST(0, helpful - ${helpful}::int),
        harmful = GREATEST(0, harmful - ${harmful}::int),
        harmful_weight = LEAST(GREATEST(0, harmful - ${harmful}::int)::double precision, GREATEST(0, harmful_weight - ${weight}::double precision))
      WHERE id = ${id}`)
  }
  return { cases: given.length, ids }
}

/**
 * Erases every row about `subject` (`user:ID`) in one transaction (see {@link ForgetCounts} for
 * what), records the erasure in `knowhub_erasure` (counts only), and returns the counts; with
 * `dryRun`, rolls everything back and returns the same counts.
 * @example
 * const { counts } = await forgetUser(store.db, 'user:bob', { dryRun: true, audit })
 */
export async function forgetUser(db: Database, subject: string, options: { dryRun: boolean; force?: boolean; audit: ErasureAudit }): Promise<ForgetOutcome> {
  const user = subject.slice('user:'.length)
  const only = [subject]
  // A user of whom nothing is stored changes nothing unless forced: the transaction is rolled back, as a dry run's.
  let unknown = false
  const outcome = await inTransaction(
    db,
    () => options.dryRun || (unknown && options.force !== true),
    async (tx) => {
      const tokens = await tx.query<{ id: string }>(sql`DELETE FROM knowhub_token WHERE principal->>'user' = ${user} RETURNING id`)
      const tokenIds = tokens.map((t) => t.id)
      const sessions = await tx.query(sql`DELETE FROM knowhub_dashboard_session WHERE token_id = ANY(${tokenIds}::text[]) RETURNING 1`)

      // Entries the user owns or that only the user can see, with their versions (their feedback and votes go by cascade).
      const owned = await tx.query<{ id: string }>(sql`SELECT id FROM knowledge WHERE owner = ${subject} OR scopes <@ ${only}::text[] ORDER BY id FOR UPDATE`)
      const ownedIds = owned.map((r) => r.id)
      const versions = n(await tx.query(sql`SELECT count(*)::int AS n FROM knowledge_version WHERE knowledge_id = ANY(${ownedIds}::text[])`))
      await tx.query(sql`DELETE FROM knowledge WHERE id = ANY(${ownedIds}::text[])`)
      // A merged original whose merge product went: active again would resurrect nothing of the user's, so it only loses the link.
      await tx.query(sql`UPDATE knowledge SET merged_into = NULL WHERE merged_into = ANY(${ownedIds}::text[])`)

      const feedback = await removeFeedback(tx, subject)
      const votes = await tx.query<{ knowledge_id: string }>(sql`DELETE FROM knowledge_score_vote WHERE voter = ${subject} RETURNING knowledge_id`)
      await rescore(tx, [...new Set(votes.map((v) => v.knowledge_id))].sort())

      // Shared with the user among other scopes: the user's scope goes (from every kept version too).
      const rescoped = await tx.query<{ id: string }>(
        sql`UPDATE knowledge SET scopes = array_remove(scopes, ${subject}) WHERE ${subject} = ANY(scopes) RETURNING id`,
      )
      await tx.query(sql`UPDATE knowledge_version SET scopes = array_remove(scopes, ${subject}) WHERE ${subject} = ANY(scopes) AND cardinality(scopes) > 1`)

      const resources = await tx.query<{ secret: boolean }>(
        sql`DELETE FROM resources WHERE owner = ${subject} OR scopes <@ ${only}::text[] RETURNING secure_body IS NOT NULL AS secret`,
      )
      const rescopedResources = await tx.query(sql`UPDATE resources SET scopes = array_remove(scopes, ${subject}) WHERE ${subject} = ANY(scopes) RETURNING 1`)

      const goals = await tx.query<{ trace_id: string }>(sql`DELETE FROM goals WHERE owner = ${subject} RETURNING trace_id`)
      const documents = await tx.query(sql`DELETE FROM agent_documents
      WHERE owner = ${subject} OR scopes <@ ${only}::text[] OR ${subject} = ANY(string_to_array(written_by, ' ')) RETURNING 1`)
      const rescopedDocuments = await tx.query(
        sql`UPDATE agent_documents SET scopes = array_remove(scopes, ${subject}) WHERE ${subject} = ANY(scopes) RETURNING 1`,
      )
      const callers = tokenIds.map((id) => `token:${id}`)
      const reads = await tx.query(sql`DELETE FROM knowhub_secret_reveal
      WHERE principal->>'user' = ${user} OR owner = ${subject} OR caller = ANY(${callers}::text[]) RETURNING 1`)
      const statistics = await pruneSearchStatistics(tx)

      const counts: ForgetCounts = {
        entries: ownedIds.length,
        versions,
        feedback_cases: feedback.cases,
        score_votes: votes.length,
        scopes_removed: rescoped.length + rescopedResources.length + rescopedDocuments.length,
        resources: resources.length,
        secrets: resources.filter((r) => r.secret).length,
        tokens: tokenIds.length,
        sessions: sessions.length,
        goal_trees: new Set(goals.map((g) => g.trace_id)).size,
        goals: goals.length,
        agent_documents: documents.length,
        secret_reads: reads.length,
      }
      unknown = Object.values(counts).every((count) => count === 0)
      await recordErasure(tx, options.audit, counts)
      const entryIds = [...new Set([...ownedIds, ...feedback.ids, ...votes.map((v) => v.knowledge_id), ...rescoped.map((r) => r.id)])]
      return { counts, searchStatistics: statistics, unknown: false, entryIds, tokenIds }
    },
  )
  return { ...outcome, unknown }
}

async function recordErasure(tx: Queryable, audit: ErasureAudit, counts: Record<string, number>): Promise<void> {
  await tx.query(sql`INSERT INTO knowhub_erasure (kind, subject, by, org, counts, at)
    VALUES (${audit.kind}, ${audit.subject}, ${audit.by}, ${audit.org}, ${JSON.stringify(counts)}::jsonb, ${audit.at.toISOString()})`)
}

/** What a purge erased. */
export interface PurgeOutcome {
  counts: { merged: number; archived: number; versions: number; feedback_cases: number }
  entryIds: string[]
}

/**
 * Deletes merged entries merged before `mergedBefore` (the merge product's creation; the
 * original's last change when the product is gone) and archived entries archived before
 * `archivedBefore`, among entries whose scopes meet `reach` (all of them when undefined), with
 * their versions, feedback and votes, in one transaction; with `dryRun`, rolled back.
 * @example
 * await purgeEntries(store.db, { mergedBefore: new Date(Date.now() - 90 * 86_400_000), dryRun: true, audit })
 */
export async function purgeEntries(
  db: Database,
  options: { mergedBefore?: Date | undefined; archivedBefore?: Date | undefined; reach?: readonly string[] | undefined; dryRun: boolean; audit: ErasureAudit },
): Promise<PurgeOutcome> {
  const reach = options.reach ? sql`AND k.scopes && ${[...options.reach]}::text[]` : sql``
  const merged = options.mergedBefore?.toISOString() ?? null
  const archived = options.archivedBefore?.toISOString() ?? null
  return inTransaction(db, options.dryRun, async (tx) => {
    const rows = await tx.query<{ id: string; status: string }>(sql`SELECT k.id, k.status FROM knowledge k
      WHERE ((k.status = 'merged' AND ${merged}::timestamptz IS NOT NULL
              AND COALESCE((SELECT m.created_at FROM knowledge m WHERE m.id = k.merged_into), k.updated_at) < ${merged}::timestamptz)
          OR (k.status = 'archived' AND ${archived}::timestamptz IS NOT NULL AND k.updated_at < ${archived}::timestamptz))
        ${reach}
      ORDER BY k.id FOR UPDATE OF k`)
    const ids = rows.map((r) => r.id)
    const versions = n(await tx.query(sql`SELECT count(*)::int AS n FROM knowledge_version WHERE knowledge_id = ANY(${ids}::text[])`))
    const cases = n(await tx.query(sql`SELECT count(*)::int AS n FROM knowledge_feedback WHERE knowledge_id = ANY(${ids}::text[])`))
    await tx.query(sql`DELETE FROM knowledge WHERE id = ANY(${ids}::text[])`)
    await pruneSearchStatistics(tx)
    const counts = {
      merged: rows.filter((r) => r.status === 'merged').length,
      archived: rows.filter((r) => r.status === 'archived').length,
      versions,
      feedback_cases: cases,
    }
    await recordErasure(tx, options.audit, counts)
    return { counts, entryIds: ids }
  })
}

/** One row of the erasure audit, as read back. */
export interface ErasureRecord {
  seq: number
  kind: 'forget' | 'purge'
  subject: string | null
  by: string
  org: string | null
  counts: Record<string, number>
  at: Date
}

/**
 * The erasure audit, newest first (`org`: rows of that org only).
 * @example
 * const [last] = await erasureLog(store.db, { limit: 1 })
 */
export async function erasureLog(db: Queryable, options: { org?: string | undefined; limit?: number } = {}): Promise<ErasureRecord[]> {
  const where = options.org !== undefined ? sql`WHERE org = ${options.org}` : sql``
  const rows = await db.query(sql`SELECT seq, kind, subject, by, org, counts, at FROM knowhub_erasure ${where} ORDER BY seq DESC LIMIT ${options.limit ?? 100}`)
  return rows.map((r) => ({
    seq: Number(r.seq),
    kind: r.kind as ErasureRecord['kind'],
    subject: (r.subject as string | null) ?? null,
    by: String(r.by),
    org: (r.org as string | null) ?? null,
    counts: r.counts as Record<string, number>,
    at: new Date(r.at as string),
  }))
}

/**
 * Rewrites the given tables so that erased rows leave the files (`VACUUM FULL`: a plain VACUUM
 * frees heap space but leaves GIN keys and index items; see docs/operations.md), then, on the
 * embedded database, switches the write-ahead log to new segments with recycling off and
 * checkpoints until every segment that held the erased rows is removed. On a PostgreSQL server a
 * CHECKPOINT is asked for (it needs the pg_checkpoint role or superuser; without it the old
 * files go at the server's next checkpoint). On a server it first waits (up to `waitMs`) for
 * other sessions' snapshots older than the erasure: `VACUUM FULL` copies every row such a
 * snapshot may still read. Runs outside any transaction; blocks writers to each table while it
 * is rewritten.
 * @example
 * const cleanup = await cleanupFiles(store.db, FORGET_TABLES)
 */
export async function cleanupFiles(db: Database, tables: readonly string[], options: { waitMs?: number } = {}): Promise<FileCleanup> {
  const started = performance.now()
  const waited = db.kind === 'pglite' ? { ms: 0, sessions: 0 } : await awaitOlderSnapshots(db, options.waitMs ?? SNAPSHOT_WAIT_MS)
  for (const table of tables) await db.query(sql.raw(`VACUUM FULL ${table}`))
  // Planner statistics hold sample values (histogram bounds of text columns): tables analyzed
  // before are analyzed again from what is left, and pg_statistic rewritten where this role may
  // (PGlite; a superuser on a server — others skip it with a warning).
  const analyzed = await db.query<{ tablename: string }>(
    sql`SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = current_schema() AND tablename = ANY(${[...tables]}::text[])`,
  )
  if (analyzed.length > 0) {
    for (const { tablename } of analyzed) await db.query(sql.raw(`ANALYZE ${tables.find((t) => t === tablename)!}`))
    await db.query(sql`VACUUM FULL pg_statistic`).catch(() => undefined)
  }
  let wal: FileCleanup['wal']
  if (db.kind === 'pglite') {
    await rotateWal(db)
    wal = 'rotated'
  } else {
    try {
      await db.query(sql`CHECKPOINT`)
      wal = 'checkpointed'
    } catch {
      wal = 'not_permitted'
    }
  }
  return { mode: 'full', tables: [...tables], ms: Math.round(performance.now() - started), wal, waited_ms: waited.ms, older_sessions: waited.sessions }
}

/** How long a cleanup on a server waits for snapshots older than the erasure (docs/operations.md). */
export const SNAPSHOT_WAIT_MS = 30_000

/**
 * Waits until no other session of this database holds a snapshot (or runs a transaction) from
 * before now, or `waitMs` passed: the time waited and how many such sessions were left. Uses
 * `age()` to compare transaction ids, so wraparound does not matter.
 */
async function awaitOlderSnapshots(db: Database, waitMs: number): Promise<{ ms: number; sessions: number }> {
  const [mark] = await db.query<{ xid: string }>(sql`SELECT (pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296)::text AS xid`)
  const olderSessions = async () =>
    (
      await db.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND (age(backend_xmin) > age(${mark!.xid}::xid) OR age(backend_xid) > age(${mark!.xid}::xid))`,
      )
    )[0]!.n
  const waited = await pollUntil(olderSessions, (n) => n === 0, waitMs)
  return { ms: waited.ms, sessions: waited.value }
}

/**
 * The embedded database (one process, its checkpoints run in this session): with
 * `wal_recycle = off`, switches to a new WAL segment and checkpoints, until the current segment
 * is newer than every segment that existed before (recycled segments keep old bytes in their
 * unused tail), so no segment with the erased rows is left in `pg_wal`.
 */
export async function rotateWal(db: Database): Promise<void> {
  const segment = async () => String((await db.query<{ name: string }>(sql`SELECT pg_walfile_name(pg_current_wal_lsn()) AS name`))[0]!.name)
  const existing = await db.query<{ name: string }>(sql`SELECT name FROM pg_ls_waldir() ORDER BY name DESC LIMIT 1`)
  const newest = existing[0]?.name ?? ''
  await db.query(sql`SET wal_recycle = off`)
  try {
    for (let round = 0; round < 256; round++) {
      await db.query(sql`SELECT pg_switch_wal()`)
      await db.query(sql`CHECKPOINT`)
      if ((await segment()) > newest) break
    }
    // The segment the last switch left is current and new; one more checkpoint removes the one before it.
    await db.query(sql`CHECKPOINT`)
  } finally {
    await db.query(sql`RESET wal_recycle`)
  }
}
