/**
 * Dashboard sessions (issue 27): signing in with an API token starts a server-side session;
 * the browser's cookie holds only the session id (`khs_` + 32 random bytes), so the token never
 * sits in a cookie jar. The database keeps the id's SHA-256, the token's id and the expiry:
 * every request resolves the session to its token and checks the token again (revoked or
 * expired ends the session at once), on any of N servers sharing the database.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import type { Queryable } from '../store/database.js'
import { sessionStore } from '../store/auth/sessions.js'
import type { VerifiedToken } from './tokens.js'

/** Shape of a session id: `khs_` and 43 base64url characters. */
export const SESSION_ID_PATTERN = /^khs_[A-Za-z0-9_-]{43}$/

const hash = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex')

export interface SessionServiceDeps {
  db: Queryable
  /** Resolves a token id to its principal while the token is active. */
  tokens: { verifyId(id: string): Promise<VerifiedToken | undefined> }
  clock?: Clock
  /** Session lifetime in ms (default 12 h; the token's own expiry still applies). */
  ttlMs?: number
}

/**
 * @example
 * const sessions = createSessionService({ db: store.db, tokens: hub.tokens })
 * const id = await sessions.start('tok_abc123def456')
 * await sessions.resolve(id) // { id: 'tok_abc123def456', principal: … }
 */
export function createSessionService(deps: SessionServiceDeps) {
  const repo = sessionStore(deps.db)
  const clock = deps.clock ?? systemClock
  const ttl = deps.ttlMs ?? 12 * 60 * 60 * 1000
  return {
    /** Starts a session for a token; returns the session id (the cookie's value), shown only here. */
    async start(tokenId: string): Promise<string> {
      const now = clock.now()
      await repo.prune(now)
      const id = `khs_${randomBytes(32).toString('base64url')}`
      await repo.insert({ id_hash: hash(id), token_id: tokenId, created_at: now, expires_at: new Date(now.getTime() + ttl) })
      return id
    },
    /** The token behind a live session, or undefined (unknown, expired, or its token revoked or expired). */
    async resolve(id: string): Promise<VerifiedToken | undefined> {
      if (!SESSION_ID_PATTERN.test(id)) return undefined
      const tokenId = await repo.tokenOf(hash(id), clock.now())
      return tokenId === undefined ? undefined : deps.tokens.verifyId(tokenId)
    },
    /** Ends a session (signing out). */
    async end(id: string): Promise<void> {
      if (SESSION_ID_PATTERN.test(id)) await repo.delete(hash(id))
    },
  }
}

export type SessionService = ReturnType<typeof createSessionService>
