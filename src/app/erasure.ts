/**
 * Forgetting a user and retention purges (issue 31), checked against the role × action table
 * (src/auth/policy.ts): `principals.forget` and `retention.purge` are the hub operator's across
 * the hub and an org admin's within its org; `profile.read` (src/app/users.ts) follows the same
 * membership rule.
 *
 * Who belongs to an org: a user with a token of that org, or an id ending in `@org` (the rule of
 * src/auth/token-admin.ts). An org admin reaches a user only when every token of that user is of
 * its org: ids are global, and a user who also works in another org is the hub operator's to
 * forget. Anything out of reach answers exactly as an unknown user: `not_found`.
 *
 * A forget erases in one transaction (src/store/erasure.ts), then rewrites the tables involved
 * so the bytes leave the database files, and empties this process's caches. Other KnowHub
 * processes on the same PostgreSQL never serve an erased entry (their caches are keyed by the
 * table's generation) and drop it from memory as their caches turn over (docs/operations.md).
 */
import { createHash } from 'node:crypto'
import { authorize } from '../auth/policy.js'
import type { TokenService } from '../auth/tokens.js'
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { ForgetSubject, PurgeInput, parseAge, type FileCleanup, type ForgetReceipt, type PurgeReceipt } from '../core/erasure.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { defaultOwnerOf, memberScopes, type Principal } from '../core/principal.js'
import type { TokenInfo } from '../core/tokens.js'
import { parseWith } from '../core/validate.js'
import type { KnowledgeService } from '../knowledge/service.js'
import { FORGET_TABLES, PURGE_TABLES, cleanupFiles, forgetUser, purgeEntries, type ErasureAudit } from '../store/erasure.js'
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
}

/** The same answer for a user out of reach as for one that does not exist. */
const unknownUser = (subject: string) => new KnowHubError('not_found', `No principal ${subject}`, { principal: subject })

/**
 * Whether `user` is reachable for an org admin of `org`: a member (a token of the org, or an id
 * ending in `@org`) with no token of any other org.
 * @example
 * userInOrg(await tokens.list(), 'acme', 'bob') // true when bob's tokens are all acme's
 */
export function userInOrg(tokens: readonly TokenInfo[], org: string, user: string): boolean {
  const theirs = tokens.filter((t) => t.principal.user === user)
  if (theirs.some((t) => t.principal.org !== org || t.principal.permissions.includes('hub:admin'))) return false
  const suffix = `@${org}`
  return theirs.length > 0 || (user.endsWith(suffix) && user.length > suffix.length && !user.slice(0, -suffix.length).includes('@'))
}

/**
 * Resolves who a caller may name as a user (forget, profile): the hub operator anyone; an org
 * admin a user of its org (see {@link userInOrg}); otherwise `not_found`. Throws `forbidden`
 * first when the action reaches nothing for the caller's role.
 */
export async function reachUser(
  tokens: Pick<TokenService, 'list'>,
  principal: Principal,
  subject: string,
  action: 'principals.forget' | 'profile.read',
): Promise<void> {
  const reach = authorize(principal, action)
  const user = subject.slice('user:'.length)
  if (reach === 'hub') return
  if (reach === 'own' && principal.user === user) return
  if (reach === 'org' && (principal.user === user || userInOrg(await tokens.list(), principal.org!, user))) return
  throw unknownUser(subject)
}

/** Who ran an erasure, for the audit: the caller's own id (`kind:id`), or `local`. */
const actorOf = (principal: Principal): string => defaultOwnerOf(principal) ?? 'local'

/** The erasure operations (see the module comment). */
export interface ErasureService {
  /** Erases everything about `user:ID` (see ForgetCounts); `dryRun` counts and changes nothing. */
  forget(principal: Principal, subject: string, options?: ForgetOptions): Promise<ForgetReceipt>
  /** Deletes merged and archived entries older than the given ages, for good (`PurgeInput`). */
  purge(principal: Principal, raw: unknown): Promise<PurgeReceipt>
}

const SKIPPED: FileCleanup = { mode: 'skipped', tables: [], ms: 0, wal: 'skipped' }

/**
 * The erasure service over a hub's store, knowledge service and tokens.
 * @example
 * const erasure = erasureService(hub)
 * const receipt = await erasure.forget(hub.config.principal, 'user:bob', { dryRun: true })
 */
export function erasureService(deps: ErasureDeps): ErasureService {
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? noopLogger
  const db = deps.store.db
  return {
    async forget(principal, raw, options = {}) {
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
      const outcome = await forgetUser(db, subject, { dryRun, audit })
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
        cleanup,
        caches,
        at: at.toISOString(),
        ms: Math.round(performance.now() - started),
      }
      // Counts only: the subject is in the receipt the caller gets, never in the log.
      logger.info('erasure.forget', { dry_run: dryRun, by: audit.by, ...outcome.counts, cleanup_ms: cleanup.ms })
      return receipt
    },

    async purge(principal, raw) {
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
