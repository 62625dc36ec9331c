/**
 * Reading the knowledge change log (migrations 0006, 0053) on a PostgreSQL server, where
 * several processes write at once (issue 32: `search.fulltext: memory` on a server).
 *
 * On the embedded database one statement runs at a time, so the log's sequence numbers are
 * committed in order and "every row after the last one applied" is all there is to read. On a
 * server a transaction can take sequence number 10, another 11, and 11 commit first: a reader
 * that saw 11 must still look for 10. So a reader keeps the numbers it has not seen below its
 * position (gaps) and asks for them again on each read, until they appear or can no longer
 * appear. A gap found by a read whose snapshot had `xmax` X belongs to a transaction with an id
 * below X (it took its number before a later number was committed, and it had written a row,
 * so it had an id); once a later read's snapshot `xmin` reaches X, every such transaction has
 * ended, and a gap still unseen was rolled back. A full read of the table (a rebuild) waits the
 * same way for the transactions in flight when it began, so that its rows reflect every change
 * up to the log position it reports.
 *
 * Registration: a process that reads the log registers in `knowledge_change_reader` while it
 * runs (with a heartbeat); while any reader is registered every session logs (0053). Pruning:
 * readers delete rows far behind the top and record the highest pruned number; a reader that
 * had not read that far rebuilds.
 */
import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../../core/logger.js'
import type { Database } from '../database.js'
import { sql } from '../sql.js'
import { pollUntil } from '../wait.js'

/** Log rows read per query. */
const PAGE = 5_000
/** Unseen sequence numbers kept at most; past this the reader rebuilds instead. */
const MAX_GAPS = 20_000
/** Rows kept behind the log's top when pruning: a reader further behind rebuilds. */
export const KEEP_ROWS = 50_000
/** Prune at most once per this many applied rows. */
const PRUNE_EVERY = 5_000
/** How long a rebuild waits for older transactions before it goes on (and rebuilds again once they end). */
const WAIT_MS = 10_000
/** A reader refreshes its registration this often; one silent for {@link DEAD_AFTER_S} is taken for dead. */
const HEARTBEAT_MS = 60_000
const DEAD_AFTER_S = 600

/** What a read of the log found. */
export type LogRead = { kind: 'rebuild'; reason: string } | { kind: 'changes'; ids: string[]; more: boolean }

/**
 * A reader of the change log of a PostgreSQL server.
 * @example
 * const log = await ServerChangeLog.register(db, logger)
 * const position = await log.beforeRebuild() // then read the whole table
 * const read = await log.read()               // later: the ids changed since
 */
export class ServerChangeLog {
  private applied = 0
  /** Unseen sequence numbers below `applied`, each with the snapshot xmax of the read that found it missing. */
  private readonly gaps = new Map<number, bigint>()
  /** After a rebuild that stopped waiting: once xmin passes this, rebuild again. */
  private staleBefore: bigint | undefined
  private prunedAt = 0
  private lost = false
  private timer: NodeJS.Timeout | undefined

  private constructor(
    private readonly db: Database,
    private readonly name: string,
    private readonly logger: Logger,
  ) {}

  /** Registers this process as a reader (every session logs from now on) and starts its heartbeat. */
  static async register(db: Database, logger: Logger): Promise<ServerChangeLog> {
    const log = new ServerChangeLog(db, `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, logger)
    await db.query(sql`DELETE FROM knowledge_change_reader WHERE since < now() - make_interval(secs => ${DEAD_AFTER_S})`)
    await db.query(sql`INSERT INTO knowledge_change_reader (name) VALUES (${log.name}) ON CONFLICT (name) DO UPDATE SET since = now()`)
    log.timer = setInterval(() => void log.heartbeat(), HEARTBEAT_MS)
    log.timer.unref()
    return log
  }

  /** The last sequence number applied. */
  get position(): number {
    return this.applied
  }

  private async heartbeat(): Promise<void> {
    try {
      const rows = await this.db.query(sql`UPDATE knowledge_change_reader SET since = now() WHERE name = ${this.name} RETURNING name`)
      if (rows.length === 0) {
        // Taken for dead by another process: writes may have skipped the log meanwhile.
        await this.db.query(sql`INSERT INTO knowledge_change_reader (name) VALUES (${this.name}) ON CONFLICT (name) DO UPDATE SET since = now()`)
        this.lost = true
      }
    } catch (error) {
      this.logger.warn('store.text_index.heartbeat_failed', { message: (error as Error).message })
    }
  }

  /**
   * Before a full read of the table: the log position the read will reflect. Resolves once
   * the transactions in flight now have ended (or after a bound, and then a later read asks for
   * another rebuild), so that rows read afterwards reflect every change up to that position.
   */
  async beforeRebuild(): Promise<number> {
    const [top] = await this.db.query<{ position: string | null; xmax: string }>(
      sql`SELECT (SELECT max(seq) FROM knowledge_change)::text AS position, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
    )
    const xmax = BigInt(top!.xmax)
    const oldestRunning = async () =>
      BigInt((await this.db.query<{ xmin: string }>(sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`))[0]!.xmin)
    this.staleBefore = undefined
    if (!(await pollUntil(oldestRunning, (xmin) => xmin >= xmax, WAIT_MS)).done) {
      this.logger.warn('store.text_index.waiting', {
        message: 'a transaction older than the index rebuild is still open: the index rebuilds again once it ends',
      })
      this.staleBefore = xmax
    }
    this.applied = Number(top!.position ?? 0)
    this.gaps.clear()
    this.lost = false
    return this.applied
  }

  /** The entry ids changed since the last read (at most a page; `more` when there is more), or a reason to rebuild. */
  async read(): Promise<LogRead> {
    if (this.lost) return { kind: 'rebuild', reason: 'registration lost' }
    const gaps = [...this.gaps.keys()]
    const [row] = await this.db.query<{
      xmin: string
      xmax: string
      pruned: string
      after: string
      filled: string
    }>(sql`WITH s AS (SELECT pg_current_snapshot() AS snap)
      SELECT pg_snapshot_xmin(s.snap)::text AS xmin, pg_snapshot_xmax(s.snap)::text AS xmax,
        (SELECT seq FROM knowledge_change_pruned)::text AS pruned,
        (SELECT coalesce(json_agg(json_build_array(c.seq, c.id) ORDER BY c.seq), '[]')::text
          FROM (SELECT seq, id FROM knowledge_change WHERE seq > ${this.applied} ORDER BY seq LIMIT ${PAGE}) c) AS after,
        ${
          gaps.length > 0
            ? sql`(SELECT coalesce(json_agg(json_build_array(c.seq, c.id)), '[]')::text FROM knowledge_change c WHERE c.seq = ANY(${gaps}::int8[]))`
            : sql`'[]'`
        } AS filled
      FROM s`)
    const xmin = BigInt(row!.xmin)
    const xmax = BigInt(row!.xmax)
    const pruned = Number(row!.pruned ?? 0)
    if (this.staleBefore !== undefined && xmin >= this.staleBefore) return { kind: 'rebuild', reason: 'an older transaction ended' }
    if (pruned > this.applied) return { kind: 'rebuild', reason: 'the log was pruned past this reader' }
    for (const seq of this.gaps.keys()) if (seq <= pruned) return { kind: 'rebuild', reason: 'the log was pruned past an unseen change' }
    const after = JSON.parse(row!.after) as Array<[number, string | null]>
    const filled = JSON.parse(row!.filled) as Array<[number, string | null]>
    if (after.some(([, id]) => id === null) || filled.some(([, id]) => id === null)) return { kind: 'rebuild', reason: 'the table was truncated' }
    for (const [seq] of filled) this.gaps.delete(seq)
    let previous = this.applied
    for (const [seq] of after) {
      for (let missing = previous + 1; missing < seq; missing++) this.gaps.set(missing, xmax)
      previous = seq
    }
    if (this.gaps.size > MAX_GAPS) return { kind: 'rebuild', reason: 'too many unseen changes' }
    // Unseen numbers of transactions that have all ended: rolled back, never to appear.
    for (const [seq, stamp] of this.gaps) if (xmin >= stamp) this.gaps.delete(seq)
    if (after.length > 0) this.applied = after[after.length - 1]![0]
    const ids = [...new Set([...after, ...filled].map(([, id]) => id!))]
    return { kind: 'changes', ids, more: after.length === PAGE }
  }

  /** Deletes log rows far behind the top (not past this reader's position), at most every few thousand rows. */
  async prune(): Promise<void> {
    if (this.applied - this.prunedAt < PRUNE_EVERY) return
    this.prunedAt = this.applied
    await this.db.query(sql`WITH top AS (SELECT least(max(seq) - ${KEEP_ROWS}, ${this.applied}::int8) AS upto FROM knowledge_change),
      p AS (UPDATE knowledge_change_pruned SET seq = top.upto FROM top WHERE top.upto > knowledge_change_pruned.seq RETURNING knowledge_change_pruned.seq)
      DELETE FROM knowledge_change WHERE seq <= (SELECT seq FROM p)`)
  }

  /** Stops the heartbeat and unregisters (with no reader left, sessions stop logging). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.db.query(sql`DELETE FROM knowledge_change_reader WHERE name = ${this.name}`)
  }
}
