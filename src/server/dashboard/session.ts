/**
 * The dashboard's sign-in: the session cookie (`kh_session`, HttpOnly, SameSite=Strict)
 * holds the API token a person signed in with, so the dashboard resolves every request
 * through the API's own authenticator — same principal, same revocation, same expiry,
 * and nothing kept in server memory (any of N servers behind a load balancer accepts
 * it). In local mode no cookie is needed: the API authenticator answers the local
 * principal, exactly as it does for a request without a token.
 *
 * Writes carry a CSRF token in the `x-csrf-token` header: derived from the session (a
 * SHA-256 of the token, or of a per-process secret in local mode), readable only by a
 * same-origin page through `GET /ui/me`. Cross-site forms cannot set the header, and the
 * cookie is never sent cross-site anyway.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Authenticator } from '../../auth/authenticate.js'
import { KnowHubError, isKnowHubError } from '../../core/errors.js'

/** The session cookie's name. */
export const SESSION_COOKIE = 'kh_session'
/** The header a write carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token'
/** How long the session cookie lives in the browser (the token's own expiry still applies). */
const SESSION_MAX_AGE_S = 12 * 60 * 60

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

/** The request the API's authenticator sees: the session's token as a bearer token, nothing else. */
function asApiRequest(request: Request, token: string | undefined): Request {
  return new Request(request.url, token ? { headers: { authorization: `Bearer ${token}` } } : {})
}

/**
 * The dashboard's authenticator over the API's: the session cookie's token as a bearer
 * token (a bearer header sent to the dashboard itself is ignored).
 * @example
 * const authenticate = sessionAuthenticator(createAuthenticator({ tokens: hub.tokens, localPrincipal, localMode }))
 */
export function sessionAuthenticator(api: Authenticator): Authenticator {
  return async (request) => {
    const token = readCookie(request, SESSION_COOKIE)
    try {
      return await api(asApiRequest(request, token))
    } catch (error) {
      if (!isKnowHubError(error, 'unauthenticated')) throw error
      throw new KnowHubError(
        'unauthenticated',
        token ? 'The session ended (its token was revoked or expired): sign in again' : 'Sign in with an API token (knowhub token create)',
      )
    }
  }
}

/**
 * The `Set-Cookie` value that starts a session with `token` (or ends it with `undefined`).
 * @example
 * sessionCookie('kh_…', { secure: false }) // 'kh_session=kh_…; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200'
 */
export function sessionCookie(token: string | undefined, options: { secure: boolean }): string {
  const parts = [`${SESSION_COOKIE}=${token ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${token ? SESSION_MAX_AGE_S : 0}`]
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
 * CSRF tokens bound to the session: SHA-256 of the session token (the same on every server),
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
