/**
 * What every resource operation shares: the dependencies with their defaults filled in,
 * the caller's access, and the checks (sizes, ids, owners, secrets nobody could read,
 * ownership) that reads and writes apply.
 */
import type { Clock } from '../core/clock.js'
import { systemClock } from '../core/clock.js'
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import { Owner, defaultOwnerOf, memberScopes, visibleScopes, type Principal } from '../core/principal.js'
import { MAX_RESOURCE_BODY_BYTES, MAX_SECURE_BODY_BYTES, ResourceId } from '../core/resources.js'
import { parseWith } from '../core/validate.js'
import type { ResourceAccess, ResourceRecord } from '../store/resources/resources.js'
import type { Store } from '../store/store.js'
import type { SecretBox } from './secrets.js'
import { mayManage } from '../auth/policy.js'

export interface ResourceServiceDeps {
  store: Store
  /** Encrypts and decrypts `secure_body` (see createSecretBox). */
  secrets: SecretBox
  logger?: Logger
  clock?: Clock
  /** Size limits in UTF-8 bytes (defaults: body 1 MiB, secure_body 64 KiB). */
  limits?: { bodyBytes?: number; secureBodyBytes?: number }
}

/** The resource service's dependencies, defaults filled in. */
export interface ResourceContext {
  store: Store
  secrets: SecretBox
  logger: Logger
  clock: Clock
  maxBodyBytes: number
  maxSecureBodyBytes: number
}

/**
 * @example
 * const ctx = resourceContext({ store, secrets: createSecretBox(key) })
 */
export function resourceContext(deps: ResourceServiceDeps): ResourceContext {
  return {
    store: deps.store,
    secrets: deps.secrets,
    logger: deps.logger ?? noopLogger,
    clock: deps.clock ?? systemClock,
    maxBodyBytes: deps.limits?.bodyBytes ?? MAX_RESOURCE_BODY_BYTES,
    maxSecureBodyBytes: deps.limits?.secureBodyBytes ?? MAX_SECURE_BODY_BYTES,
  }
}

/**
 * What the caller may see: rows in its visible scopes, and rows it owns.
 * @example
 * await store.resources.get(id, accessOf(principal))
 */
export function accessOf(principal: Principal): ResourceAccess {
  return { visible: visibleScopes(principal), own: memberScopes(principal) }
}

/**
 * The error of an id the caller cannot see (the same whether or not it exists).
 * @example
 * throw notFound('code/x')
 */
export function notFound(id: string): KnowHubError {
  return new KnowHubError('not_found', `No resource ${id}`, { id })
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * `too_large` when `body` or `secure_body` is over its limit.
 * @example
 * checkSizes(ctx, input)
 */
export function checkSizes(ctx: ResourceContext, input: { body?: string | undefined; secure_body?: string | null | undefined }): void {
  if (input.body !== undefined) {
    const bytes = byteLength(input.body)
    if (bytes > ctx.maxBodyBytes)
      throw new KnowHubError('too_large', `body is ${bytes} bytes; the limit is ${ctx.maxBodyBytes}`, { field: 'body', bytes, limit: ctx.maxBodyBytes })
  }
  if (typeof input.secure_body === 'string') {
    const bytes = byteLength(input.secure_body)
    if (bytes > ctx.maxSecureBodyBytes) {
      throw new KnowHubError('too_large', `secure_body is ${bytes} bytes; the limit is ${ctx.maxSecureBodyBytes}`, {
        field: 'secure_body',
        bytes,
        limit: ctx.maxSecureBodyBytes,
      })
    }
  }
}

/**
 * A valid resource id, or `validation_error`.
 * @example
 * validId('code/selenium/login')
 */
export function validId(id: string): string {
  return parseWith(ResourceId, id, 'resource id')
}

/**
 * A valid owner (`kind:id`) or undefined, or `validation_error`.
 * @example
 * validOwner(options.owner)
 */
export function validOwner(owner: string | undefined): string | undefined {
  return owner === undefined ? undefined : parseWith(Owner, owner, 'owner')
}

/**
 * The owner of a resource saved without one: the caller's user (else agent, else first) id.
 * @example
 * defaultOwner({ user: 'alice', permissions: ['write'] }) // 'user:alice'
 */
export function defaultOwner(principal: Principal): string {
  const owner = defaultOwnerOf(principal)
  if (!owner) throw new KnowHubError('forbidden', 'The caller has no user or agent id to own the resource')
  return owner
}

/**
 * A secret nobody could ever read (`public` never grants one) is refused.
 * @example
 * assertSecretReadable(true, ['public']) // throws validation_error
 */
export function assertSecretReadable(hasSecret: boolean, scopes: readonly string[]): void {
  if (hasSecret && scopes.every((s) => s === 'public')) {
    const message =
      'a resource whose only scope is public cannot hold a secure_body: nobody could ever read it (public never grants a secret). Add one of your own scopes, or leave secure_body out'
    throw new KnowHubError('validation_error', `Invalid resource: secure_body: ${message}`, { issues: [{ path: 'secure_body', message }] })
  }
}

/**
 * The resource `id` resolves to for this caller (see service.ts), and that it may change it.
 * @example
 * const record = await requireManaged(ctx, 'code/x', alice)
 */
export async function requireManaged(ctx: ResourceContext, id: string, principal: Principal, owner?: string): Promise<ResourceRecord> {
  const record = await ctx.store.resources.get(id, accessOf(principal), { owner })
  if (!record) throw notFound(id)
  if (!mayManage(principal, record)) {
    throw new KnowHubError('forbidden', `Only the owner (${record.owner}) or an admin may change resource ${id}`, { id, owner: record.owner })
  }
  return record
}
