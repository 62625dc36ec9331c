/**
 * API tokens: each authenticates as one principal (user/agent/project/team/org ids
 * and permissions). A token is `kh_` + 32 random bytes in base64url, shown once at
 * creation; only its SHA-256 hash is stored, so a leaked database leaks no token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { Principal } from '../core/principal.js'
import { CreateTokenInput, type CreatedToken, type TokenInfo } from '../core/tokens.js'
import { parseWith } from '../core/validate.js'
import type { Queryable } from '../store/database.js'
import { tokenStore, type TokenRecord, type TokenStore } from '../store/auth/tokens.js'

/** Shape of a token: `kh_` and 43 base64url characters (32 bytes). */
export const TOKEN_PATTERN = /^kh_[A-Za-z0-9_-]{43}$/
const TOKEN_ID = /^tok_[a-z0-9]{12}$/

/** A verified token: its id (for logs and rate limits) and principal. */
export interface VerifiedToken {
  id: string
  principal: Principal
}

export interface TokenServiceDeps {
  db: Queryable
  clock?: Clock
  logger?: Logger
  /**
   * How long a verified token is remembered in memory, in ms (default 5000). A token
   * revoked by another process stops working within this time; one revoked through
   * this service stops at once.
   */
  cacheTtlMs?: number
}

/**
 * SHA-256 of a token, hex: what the database stores instead of the token.
 * @example
 * hashToken('kh_…') // '3f2a…' (64 hex characters)
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

function newTokenId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  let id = ''
  for (const byte of randomBytes(12)) id += alphabet[byte % alphabet.length]
  return `tok_${id}`
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null
}

/** The view of a stored token at `now` (its status follows from revocation and expiry). */
function tokenInfo(record: TokenRecord, now: Date): TokenInfo {
  const status = record.revoked_at ? 'revoked' : record.expires_at && record.expires_at <= now ? 'expired' : 'active'
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    principal: Principal.parse(record.principal),
    status,
    created_at: record.created_at.toISOString(),
    expires_at: iso(record.expires_at),
    last_used_at: iso(record.last_used_at),
    revoked_at: iso(record.revoked_at),
  }
}

/** A new token for a valid input: the record to store and the token to show once. */
function newToken(input: ReturnType<typeof CreateTokenInput.parse>, now: Date): { token: string; record: TokenRecord } {
  const expires = input.expires_at ? new Date(input.expires_at) : null
  if (expires && expires <= now) {
    throw new KnowHubError('validation_error', 'Invalid token: expires_at is in the past', {
      issues: [{ path: 'expires_at', message: 'must be in the future' }],
    })
  }
  const { name, expires_at: _expires, ...principalFields } = input
  const token = `kh_${randomBytes(32).toString('base64url')}`
  const record: TokenRecord = {
    id: newTokenId(),
    token_hash: hashToken(token),
    prefix: token.slice(0, 10),
    name,
    principal: Principal.parse(principalFields),
    created_at: now,
    expires_at: expires,
    last_used_at: null,
    revoked_at: null,
  }
  return { token, record }
}

/**
 * Verification with a short-lived memory of verified tokens (by hash): a revoked token
 * stops at once through `forget`, and within the TTL when revoked by another process.
 */
function createVerifier(repo: TokenStore, clock: Clock, ttl: number) {
  const cache = new Map<string, { verified: VerifiedToken; expiresAt: number | null; until: number }>()
  return {
    async verify(token: string): Promise<VerifiedToken | undefined> {
      if (!TOKEN_PATTERN.test(token)) return undefined
      const hash = hashToken(token)
      const now = clock.now()
      const cached = cache.get(hash)
      if (cached && cached.until > now.getTime()) {
        if (cached.expiresAt !== null && cached.expiresAt <= now.getTime()) return undefined
        return cached.verified
      }
      cache.delete(hash)
      const record = await repo.findByHash(hash)
      // The lookup is by hash; compare again in constant time for good measure.
      if (!record || !timingSafeEqual(Buffer.from(record.token_hash), Buffer.from(hash))) return undefined
      if (record.revoked_at || (record.expires_at && record.expires_at <= now)) return undefined
      const verified = { id: record.id, principal: Principal.parse(record.principal) }
      cache.set(hash, { verified, expiresAt: record.expires_at?.getTime() ?? null, until: now.getTime() + ttl })
      if (!record.last_used_at || now.getTime() - record.last_used_at.getTime() > 60_000) await repo.touch(record.id, now)
      return verified
    },
    /** Drops a token from memory (after revoking it). */
    forget(id: string): void {
      for (const [hash, entry] of cache) if (entry.verified.id === id) cache.delete(hash)
    },
  }
}

/**
 * Creates the token service over a database (the `knowhub_token` table, migration 0003).
 * @example
 * const tokens = createTokenService({ db: store.db })
 * const { token } = await tokens.create({ user: 'alice', org: 'acme', permissions: ['read', 'write'] })
 * await tokens.authenticate(token) // { user: 'alice', org: 'acme', permissions: ['read', 'write'] }
 */
export function createTokenService(deps: TokenServiceDeps) {
  const repo = tokenStore(deps.db)
  const clock = deps.clock ?? systemClock
  const logger = deps.logger ?? noopLogger
  const verifier = createVerifier(repo, clock, deps.cacheTtlMs ?? 5000)
  let createdHere = 0

  return {
    /** Creates a token. The returned `token` is the only copy: it cannot be shown again. */
    async create(raw: unknown): Promise<CreatedToken> {
      const now = clock.now()
      const { token, record } = newToken(parseWith(CreateTokenInput, raw, 'token'), now)
      await repo.insert(record)
      createdHere++
      logger.info('auth.token.created', { id: record.id, principal: { ...record.principal } })
      return { token, ...tokenInfo(record, now) }
    },

    /** The token's id and principal, or undefined when it is unknown, revoked or expired. */
    verify: verifier.verify,

    /** The id and principal of the token with this id while it is active (a dashboard session's token), or undefined. */
    async verifyId(id: string): Promise<VerifiedToken | undefined> {
      if (!TOKEN_ID.test(id)) return undefined
      const record = await repo.get(id)
      const now = clock.now()
      if (!record || record.revoked_at || (record.expires_at && record.expires_at <= now)) return undefined
      return { id: record.id, principal: Principal.parse(record.principal) }
    },

    /** The principal a token authenticates as, or undefined. */
    async authenticate(token: string): Promise<Principal | undefined> {
      return (await verifier.verify(token))?.principal
    },

    /** Every token (active, revoked, expired), newest first. Never the tokens themselves. */
    async list(): Promise<TokenInfo[]> {
      const now = clock.now()
      return (await repo.list()).map((r) => tokenInfo(r, now))
    },

    /** Revokes a token (idempotent). Throws `not_found` for an unknown id. */
    async revoke(id: string): Promise<TokenInfo> {
      if (!TOKEN_ID.test(id)) throw new KnowHubError('not_found', `No token ${id}`, { id })
      const record = await repo.revoke(id, clock.now())
      if (!record) throw new KnowHubError('not_found', `No token ${id}`, { id })
      verifier.forget(id)
      logger.info('auth.token.revoked', { id })
      return tokenInfo(record, clock.now())
    },

    /** Drops deleted tokens (a forgotten user's) from the memory of verified tokens: they stop at once here. */
    forgetCached(ids: readonly string[]): void {
      for (const id of ids) verifier.forget(id)
    },

    /** How many tokens this process has created: local mode ends at once when it creates one (not 2 s later). */
    createdHere: (): number => createdHere,

    /** Whether any active (not revoked, not expired) token exists. No token means local mode. */
    async hasAny(): Promise<boolean> {
      return repo.hasActive(clock.now())
    },
  }
}

export type TokenService = ReturnType<typeof createTokenService>
