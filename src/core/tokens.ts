/**
 * API token shapes: what `knowhub token create` takes, and the view of a token that
 * `create`, `list` and `revoke` answer (never the token itself, except once at creation).
 * Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { Principal } from './principal.js'

/**
 * What `knowhub token create` takes: the principal's ids (at least one), its permissions
 * (default read + write), an optional name and expiry.
 * @example
 * CreateTokenInput.parse({ user: 'alice', org: 'acme' }) // permissions ['read', 'write']
 */
export const CreateTokenInput = z
  .strictObject({
    ...Principal.shape,
    permissions: Principal.shape.permissions.unwrap().min(1, 'give at least one permission').default(['read', 'write']),
    name: z.string().max(200).default(''),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((v) => Boolean(v.user ?? v.agent ?? v.project ?? v.team ?? v.org), {
    message: 'a token needs at least one of user, agent, project, team, org',
    path: ['user'],
  })
export type CreateTokenInput = z.input<typeof CreateTokenInput>

/**
 * What is worth pointing out about a token's permissions when it is created: `write`
 * without `secrets:read` (or `admin`) lets its holder store secrets (a resource's
 * `secure_body`) that it can never read back.
 * @example
 * tokenPermissionWarnings(['read', 'write']) // ['this token may store secrets … but not read them …']
 */
export function tokenPermissionWarnings(permissions: readonly string[]): string[] {
  const reads = permissions.includes('secrets:read') || permissions.includes('admin') || permissions.includes('hub:admin')
  if (permissions.includes('write') && !reads)
    return [
      'this token may store secrets (a resource secure_body, with write) but not read them back (no secrets:read): add --perm secrets:read if its holder should read what it stores',
    ]
  return []
}

/**
 * A token as listed: everything but the token (which is never stored).
 * @example
 * TokenInfo.parse(await tokens.revoke('tok_abc123def456')).status // 'revoked'
 */
export const TokenInfo = z.object({
  id: z.string(),
  name: z.string(),
  /** The first characters of the token, to recognise it. */
  prefix: z.string(),
  principal: Principal,
  status: z.enum(['active', 'revoked', 'expired']),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
})
export type TokenInfo = z.output<typeof TokenInfo>

/**
 * The response of `GET /api/tokens`: every token the caller may see, never the tokens themselves.
 * @example
 * const { items } = TokenList.parse(body)
 */
export const TokenList = z.object({ items: z.array(TokenInfo) })
export type TokenList = z.output<typeof TokenList>

/**
 * The result of `create`: the token itself appears here and nowhere else, ever.
 * @example
 * const { token } = CreatedToken.parse(await tokens.create({ user: 'alice' }))
 */
export const CreatedToken = TokenInfo.extend({ token: z.string() })
export type CreatedToken = z.output<typeof CreatedToken>
