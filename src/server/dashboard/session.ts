/**
 * The dashboard's sign-in: the session cookie (`kh_session`, HttpOnly, SameSite=Strict)
 * holds a server-side session id (src/auth/sessions.ts), never the API token a person signed
 * in with. Each request resolves the session to its token in the database and checks that
 * token again — same principal, same revocation, same expiry as the API — and any of N servers
 * behind a load balancer accepts it. Signing out ends the session on the server. In local mode
 * no cookie is needed: the API authenticator answers the local principal, exactly as it does
 * for a request without a token.
 *
 * Writes carry a CSRF token in the `x-csrf-token` header: derived from the session (a
 * SHA-256 of the session id, or of a per-process secret in local mode), readable only by a
 * same-origin page through `GET /ui/me`. Cross-site forms cannot set the header, and the
 * cookie is never sent cross-site anyway.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Authenticator } from '../../auth/authenticate.js'
import type { SessionService } from '../../auth/sessions.js'
import { KnowHubError, isKnowHubError } from '../../core/errors.js'

/** The session cookie's name. */
export const SESSION_COOKIE = 'kh_session'
/** The header a write carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token'
/** How long a session lives (the token's own expiry still applies). */
export const SESSION_MAX_AGE_S = 12 * 60 * 60

/**
 * The value of one cookie of a request, or undefined.
 * @example
 * readCookie(new Request('http://x/', { headers: { cookie: 'a=1; kh_session=kh_abc' } }), 'kh_session') // 'kh_abc'
 */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at < 0) continue
    if (part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim()
      return value === '' ? undefined : value
    }
  }
  return undefined
}

/**
 * The dashboard's authenticator: the session cookie's session, resolved on the server to its
 * token (a bearer header sent to the dashboard itself is ignored); without a cookie, the API's
 * authenticator on a request without a token (the local principal in local mode).
 * @example
 * const authenticate = sessionAuthenticator(apiAuthenticate, createSessionService({ db, tokens }))
 */
export function sessionAuthenticator(api: Authenticator, sessions: Pick<SessionService, 'resolve'>): Authenticator {
  return async (request) => {
    const session = readCookie(request, SESSION_COOKIE)
    if (session !== undefined) {
      const verified = await sessions.resolve(session)
      if (!verified) throw new KnowHubError('unauthenticated', 'The session ended (signed out, timed out, or its token was revoked or expired): sign in again')
      return { principal: verified.principal, key: `token:${verified.id}` }
    }
    try {
      return await api(new Request(request.url))
    } catch (error) {
      if (!isKnowHubError(error, 'unauthenticated')) throw error
      throw new KnowHubError('unauthenticated', 'Sign in with an API token (yours, on the server machine: knowhub token create --me)')
    }
  }
}

/**
 * The `Set-Cookie` value that starts a session with its id (or ends it with `undefined`).
 * @example
 * sessionCookie('khs_…', { secure: false }) // 'kh_session=khs_…; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200'
 */
export function sessionCookie(sessionId: string | undefined, options: { secure: boolean }): string {
  const parts = [`${SESSION_COOKIE}=${sessionId ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${sessionId ? SESSION_MAX_AGE_S : 0}`]
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}

/** Derives and checks CSRF tokens. */
export interface CsrfTokens {
  /** The CSRF token of a request's session. */
  tokenFor(request: Request): string
  /** Throws `forbidden` unless the request carries its session's CSRF token. */
  check(request: Request): void
}

/**
 * CSRF tokens bound to the session: SHA-256 of the session id (the same on every server),
 * or of a random per-process secret in local mode (no cookie).
 * @example
 * const csrf = createCsrfTokens()
 * csrf.check(request) // throws forbidden without the right x-csrf-token header
 */
export function createCsrfTokens(): CsrfTokens {
  const localSecret = randomBytes(32).toString('base64url')
  const tokenFor = (request: Request) => {
    const session = readCookie(request, SESSION_COOKIE)
    const basis = session ? `session:${session}` : `local:${localSecret}`
    return createHash('sha256').update(`knowhub-dashboard-csrf\0${basis}`).digest('base64url')
  }
  return {
    tokenFor,
    check(request) {
      const sent = request.headers.get(CSRF_HEADER) ?? ''
      const expected = tokenFor(request)
      if (sent.length !== expected.length || !timingSafeEqual(Buffer.from(sent), Buffer.from(expected))) {
        throw new KnowHubError('forbidden', 'This dashboard request lacks its CSRF token: reload the page')
      }
    },
  }
}
