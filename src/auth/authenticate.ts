/**
 * Who is calling. An {@link Authenticator} turns a Web `Request` into a {@link Caller}
 * or throws `unauthenticated`; the server's auth middleware runs one per realm (the API's
 * bearer tokens; the dashboard brings its own, e.g. a cookie session).
 *
 * {@link createAuthenticator} is the API's: a bearer token → its principal; in local mode
 * (no token exists) a request without a token is the local principal from the config.
 * In either mode, the server's local key (written into the embedded database's lock file,
 * readable only by the account that owns the data) is the local principal too: that is
 * how the one-shot CLI beside a running server acts as it would on the database itself.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Principal } from '../core/principal.js'
import type { VerifiedToken } from './tokens.js'

/** The caller of one request: its principal, and a key naming it in logs and rate limits. */
export interface Caller {
  principal: Principal
  /** `token:tok_…` for a token, `local` for the local principal. */
  key: string
}

/** Resolves the caller of a request, or throws `unauthenticated`. */
export type Authenticator = (request: Request) => Promise<Caller>

/** What the authenticator needs of the token service. */
export interface TokenVerifier {
  verify(token: string): Promise<VerifiedToken | undefined>
  hasAny(): Promise<boolean>
  /** How many tokens this process has created (local mode ends at once when one more is created). */
  createdHere?(): number
}

export interface AuthenticatorOptions {
  tokens: TokenVerifier
  /** The principal of local mode (the config's `principal`). */
  localPrincipal: Principal
  /**
   * True when the server started without any token: requests without a token are the
   * local principal until a token is created: at once when this process creates it, else
   * (another process: the CLI on the database, another server) within `recheckMs`.
   */
  localMode: boolean
  clock?: Clock
  /** How often local mode re-checks whether a token now exists (default 2000 ms). */
  recheckMs?: number
  /** A bearer credential that is the local principal in either mode (the server's local key). */
  localKey?: string
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest()

function bearer(request: Request): string | undefined {
  const header = request.headers.get('authorization')
  if (header === null) return undefined
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header)
  if (!match) throw new KnowHubError('unauthenticated', 'The Authorization header must be "Bearer <token>"')
  return match[1]
}

/**
 * @example
 * const authenticate = createAuthenticator({ tokens: hub.tokens, localPrincipal: hub.config.principal, localMode: !(await hub.tokens.hasAny()) })
 * const { principal } = await authenticate(request)
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const clock = options.clock ?? systemClock
  const recheckMs = options.recheckMs ?? 2000
  let local = options.localMode
  let checkedAt = clock.now().getTime()
  const createdBefore = options.tokens.createdHere?.() ?? 0
  const localKey = options.localKey ? digest(options.localKey) : undefined
  const localKeyLength = options.localKey?.length

  async function stillLocal(): Promise<boolean> {
    if (!local) return false
    // A token this process created (the API, the CLI beside the server through the local key) ends local mode at once:
    // anonymous loopback requests must not act as the local principal (the hub operator) a moment longer.
    if ((options.tokens.createdHere?.() ?? 0) > createdBefore) {
      local = false
      return false
    }
    const now = clock.now().getTime()
    if (now - checkedAt >= recheckMs) {
      checkedAt = now
      // Local mode ends for good once a token exists.
      if (await options.tokens.hasAny()) local = false
    }
    return local
  }

  return async (request) => {
    const token = bearer(request)
    if (token === undefined) {
      if (await stillLocal()) return { principal: options.localPrincipal, key: 'local' }
      throw new KnowHubError('unauthenticated', 'Send an API token: "Authorization: Bearer <token>" (create one with `knowhub token create`)')
    }
    // A credential of another length than the local key cannot be it: no digest to compare (the
    // key's length is public, its format fixed in serve.ts), one SHA-256 less a request.
    if (localKey && token.length === localKeyLength && timingSafeEqual(digest(token), localKey)) return { principal: options.localPrincipal, key: 'local' }
    const verified = await options.tokens.verify(token)
    if (!verified) throw new KnowHubError('unauthenticated', 'The API token is unknown, revoked or expired')
    return { principal: verified.principal, key: `token:${verified.id}` }
  }
}
