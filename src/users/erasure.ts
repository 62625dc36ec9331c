/**
 * Forgetting a user and retention purges (issue 31), checked against the role × action table
 * (src/auth/policy.ts): `principals.forget` and `retention.purge` are the hub operator's across
 * the hub and an org admin's within its org; `profile.read` (./profile.ts) follows the same
 * membership rule (./access.ts).
 *
 * A forget erases in one transaction (src/store/users/erasure.ts), then rewrites the tables involved
 * so the bytes leave the database files, and empties this process's caches. Other KnowHub
 * processes on the same PostgreSQL never serve an erased entry (their caches are keyed by the
 * table's generation) and drop it from memory as their caches turn over (docs/operations.md).
 */
import { createHash } from 'node:crypto'
import { authorize } from '../auth/policy.js'
import type { TokenService } from '../auth/tokens.js'
import { reachUser } from './access.js'
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { ForgetSubject, PurgeInput, parseAge, type FileCleanup, type ForgetReceipt, type PurgeReceipt } from '../core/erasure.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { defaultOwnerOf, memberScopes, type Principal } from '../core/principal.js'
import { parseWith } from '../core/validate.js'
import type { KnowledgeService } from '../knowledge/service.js'
import { FORGET_TABLES, PURGE_TABLES, cleanupFiles, forgetUser, purgeEntries, type ErasureAudit } from '../store/users/erasure.js'
import type { Store } from '../store/store.js'

/** What the erasure operations need of a hub. */
export interface ErasureDeps {
  store: Pick<Store, 'db'>
  knowledge: Pick<KnowledgeService, 'refreshCaches'>
  tokens: Pick<TokenService, 'list' | 'forgetCached'>
  clock?: Clock
  logger?: Logger
}

/** Options of a forget. */
export interface ForgetOptions {
  /** Count what would go, change nothing. */
  dryRun?: boolean
  /** Rewrite the tables afterwards so the bytes leave the files (default true; see docs/operations.md). */
  cleanup?: boolean
  /** Forget a user of whom nothing is stored (record the erasure, rewrite the tables) instead of answering `not_found`. */
  force?: boolean
}

/** Who ran an erasure, for the audit: the caller's own id (`kind:id`), or `local`. */
const actorOf = (principal: Principal): string => defaultOwnerOf(principal) ?? 'local'

/** The erasure operations (see the module comment). */
export interface ErasureService {
  /** Erases everything about `user:ID` (see ForgetCounts); `dryRun` counts and changes nothing. */
  forget(subject: string, options: ForgetOptions | undefined, principal: Principal): Promise<ForgetReceipt>
  /** Deletes merged and archived entries older than the given ages, for good (`PurgeInput`). */
  purge(raw: unknown, principal: Principal): Promise<PurgeReceipt>
}

const SKIPPED: FileCleanup = { mode: 'skipped', tables: [], ms: 0, wal: 'skipped', waited_ms: 0, older_sessions: 0 }

/**
 * The erasure service over a hub's store, knowledge service and tokens.
 * @example
 * const erasure = erasureService(hub)
 * const receipt = await erasure.forget('user:bob', { dryRun: true }, hub.config.principal)
 */
export function erasureService(deps: ErasureDeps): ErasureService {
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? noopLogger
  const db = deps.store.db
  return {
    async forget(raw, options = {}, principal) {
      const subject = parseWith(ForgetSubject, raw, 'principal')
      await reachUser(deps.tokens, principal, subject, 'principals.forget')
      const started = performance.now()
      const at = clock.now()
      const dryRun = options.dryRun === true
      const audit: ErasureAudit = {
        kind: 'forget',
        subject: createHash('sha256').update(subject).digest('hex'),
        by: actorOf(principal),
        org: authorize(principal, 'principals.forget') === 'org' ? (principal.org ?? null) : null,
        at,
      }
      const outcome = await forgetUser(db, subject, { dryRun, force: options.force === true, audit })
      if (outcome.unknown && !dryRun && options.force !== true) {
        throw new KnowHubError(
          'not_found',
          `Nothing of ${subject} is stored (no entries, resources, tokens, feedback, goals, agent documents or audit rows): nothing was forgotten. Check the id (knowhub token list names the users with tokens); to record the erasure anyway, add --force (force=true).`,
          { principal: subject },
        )
      }
      let caches: string[] = []
      let cleanup = SKIPPED
      if (!dryRun) {
        deps.tokens.forgetCached(outcome.tokenIds)
        caches = [...(await deps.knowledge.refreshCaches(outcome.entryIds)), 'token_verifications']
        if (options.cleanup !== false) cleanup = await cleanupFiles(db, FORGET_TABLES)
      }
      const receipt: ForgetReceipt = {
        subject,
        dry_run: dryRun,
        erased: outcome.counts,
        housekeeping: { search_statistics: outcome.searchStatistics },
        cleanup,
        caches,
        at: at.toISOString(),
        ms: Math.round(performance.now() - started),
      }
      // Counts only: the subject is in the receipt the caller gets, never in the log.
      logger.info('erasure.forget', { dry_run: dryRun, by: audit.by, ...outcome.counts, cleanup_ms: cleanup.ms })
      return receipt
    },

    async purge(raw, principal) {
      const reach = authorize(principal, 'retention.purge')
      const input = parseWith(PurgeInput, raw, 'purge')
      const started = performance.now()
      const at = clock.now()
      const before = (age: string | undefined) => (age === undefined ? undefined : new Date(at.getTime() - parseAge(age)))
      const mergedBefore = before(input.merged_older_than)
      const archivedBefore = before(input.archived_older_than)
      const dryRun = input.dry_run === true
      const orgReach = reach === 'hub' ? undefined : memberScopes(principal)
      const outcome = await purgeEntries(db, {
        mergedBefore,
        archivedBefore,
        reach: orgReach,
        dryRun,
        audit: { kind: 'purge', subject: null, by: actorOf(principal), org: reach === 'hub' ? null : (principal.org ?? null), at },
      })
      const erased = outcome.counts.merged + outcome.counts.archived
      let cleanup = SKIPPED
      if (!dryRun && erased > 0) {
        await deps.knowledge.refreshCaches(outcome.entryIds)
        cleanup = await cleanupFiles(db, PURGE_TABLES)
      }
      logger.info('erasure.purge', { dry_run: dryRun, ...outcome.counts, cleanup_ms: cleanup.ms })
      return {
        dry_run: dryRun,
        reach: reach === 'hub' ? 'hub' : 'org',
        merged_before: mergedBefore?.toISOString() ?? null,
        archived_before: archivedBefore?.toISOString() ?? null,
        erased: outcome.counts,
        cleanup,
        at: at.toISOString(),
        ms: Math.round(performance.now() - started),
      }
    },
  }
}
