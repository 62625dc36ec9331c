/**
 * The resource model (seed doc 003, DESIGN.md) as zod schemas: code, credentials,
 * cookies and other raw material that knowledge entries reference by id.
 * Each schema and its inferred type share a name.
 */
import { z } from 'zod'
import { Deleted, listPage } from './api.js'
import { KnowHubError } from './errors.js'
import { Owner, Scope } from './principal.js'
import { nullAsAbsent, nullAsDefault } from './validate.js'
import { RESOURCE_CONTENT_TYPES } from './vocabulary.js'

/** Largest `body`, in UTF-8 bytes (1 MiB). Larger bodies are refused with `too_large`. */
export const MAX_RESOURCE_BODY_BYTES = 1_048_576
/** Largest `secure_body`, in UTF-8 bytes (64 KiB). Larger secrets are refused with `too_large`. */
export const MAX_SECURE_BODY_BYTES = 65_536
/** Largest `metadata`, in bytes of JSON (16 KiB). */
export const MAX_METADATA_BYTES = 16_384
/** Longest resource id, in characters. */
export const MAX_RESOURCE_ID_LENGTH = 512

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._@+~-]{0,127}$/

/**
 * Why `id` is not a valid resource id, or undefined when it is. Ids are path-like:
 * segments separated by `/`, each starting with a letter, digit or `_` and made of
 * letters, digits and `. _ @ + ~ -`. So `..`, `.`, empty segments, a leading or
 * trailing `/`, backslashes, `%`, NUL and other control characters are all refused.
 */
export function resourceIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'resource id is empty'
  if (id.length > MAX_RESOURCE_ID_LENGTH) return `resource id is longer than ${MAX_RESOURCE_ID_LENGTH} characters`
  if (id.includes('\0')) return 'resource id contains a NUL character'
  if (id.includes('\\')) return 'resource id contains a backslash'
  if (id.startsWith('/')) return 'resource id starts with /'
  const segments = id.split('/')
  if (segments.length > 32) return 'resource id has more than 32 segments'
  for (const segment of segments) {
    if (segment === '') return 'resource id has an empty segment'
    if (segment === '.' || segment === '..') return 'resource id contains a . or .. segment'
    if (!SEGMENT.test(segment)) {
      return 'each segment of a resource id starts with a letter, digit or _ and holds only letters, digits and . _ @ + ~ -'
    }
  }
  return undefined
}

/**
 * A path-like resource id such as `code/selenium/login`. See {@link resourceIdProblem}.
 * @example
 * ResourceId.parse('credentials/website_a') // ok
 * ResourceId.safeParse('../etc/passwd').success // false
 */
export const ResourceId = z.string().superRefine((id, ctx) => {
  const problem = resourceIdProblem(id)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
})
export type ResourceId = z.infer<typeof ResourceId>

/**
 * Turns the raw (still percent-encoded) path after `/api/resource/` into a resource id:
 * decodes it once, then validates it, so `%2e%2e`, `%2F..`, `%00` and friends are
 * refused exactly like their decoded forms. Throws `validation_error`.
 * @example
 * resourceIdFromPath('code/selenium/login') // 'code/selenium/login'
 * resourceIdFromPath('code/%2e%2e/secret') // throws validation_error
 */
export function resourceIdFromPath(rawPath: string): string {
  let id: string
  try {
    id = decodeURIComponent(rawPath)
  } catch {
    throw new KnowHubError('validation_error', 'Invalid resource id: malformed percent-encoding', {
      issues: [{ path: 'id', message: 'malformed percent-encoding' }],
    })
  }
  const problem = resourceIdProblem(id)
  if (problem) throw new KnowHubError('validation_error', `Invalid resource id: ${problem}`, { issues: [{ path: 'id', message: problem }] })
  return id
}

export { RESOURCE_CONTENT_TYPES }
const CUSTOM_CONTENT_TYPE = /^x-[a-z0-9][a-z0-9._-]{0,62}$/

/**
 * What a resource holds: one of {@link RESOURCE_CONTENT_TYPES}, or a namespaced
 * custom type `x-…` (lower case, e.g. `x-har`, `x-acme.token`).
 */
export const ResourceContentType = z.union([
  z.enum(RESOURCE_CONTENT_TYPES),
  z.string().regex(CUSTOM_CONTENT_TYPE, `content_type is one of ${RESOURCE_CONTENT_TYPES.join(', ')} or a custom x-name`),
])
export type ResourceContentType = z.infer<typeof ResourceContentType>

const Timestamp = z.iso.datetime({ offset: true, message: 'expected an ISO 8601 date-time such as 2026-03-07T10:00:00Z' })

/**
 * A date-time as given: with `Z` or an offset as it is; without one (`2026-03-07T10:00:00`,
 * as Python's `datetime.isoformat()` writes a naive time) it is taken as UTC and stored
 * with `Z`, so `expired` never depends on the server's time zone.
 */
const TimestampInput = z.iso
  .datetime({ offset: true, local: true, message: 'expected an ISO 8601 date-time such as 2026-03-07T10:00:00Z (without an offset it is taken as UTC)' })
  .transform((value) => (/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(value) ? value : `${value}Z`))

const metadataSize = (value: object) => JSON.stringify(value).length <= MAX_METADATA_BYTES

/** Metadata with a few known fields, their timestamps parsed by `timestamp`; others kept as given. */
const metadataSchema = <T extends z.ZodType<string, string>>(timestamp: T) =>
  z
    .looseObject({
      language: z.string().min(1).max(64).optional(),
      acquired_at: timestamp.optional(),
      expires_at: timestamp.optional(),
    })
    .refine(metadataSize, `metadata is at most ${MAX_METADATA_BYTES} bytes of JSON`)

/**
 * Free-form metadata with a few known fields: `language` (of code), `acquired_at`,
 * and `expires_at` (a cookie or credential past this time is flagged `expired`).
 */
export const ResourceMetadata = metadataSchema(Timestamp)
export type ResourceMetadata = z.output<typeof ResourceMetadata>

/**
 * `metadata` as a save or update takes it: like {@link ResourceMetadata}, but a date-time
 * without an offset is accepted as UTC (and stored with `Z`).
 * @example
 * ResourceMetadataInput.parse({ expires_at: '2026-03-07T10:00:00' }) // { expires_at: '2026-03-07T10:00:00Z' }
 */
export const ResourceMetadataInput = metadataSchema(TimestampInput)
export type ResourceMetadataInput = z.input<typeof ResourceMetadataInput>

const Title = z.string().trim().min(1, 'title is required').max(500)

/**
 * The body of `POST /api/resource` and of `knowhub resource save`.
 * `scopes` default to the caller's own user scope, `owner` to the caller.
 * Sizes: `body` ≤ {@link MAX_RESOURCE_BODY_BYTES}, `secure_body` ≤ {@link MAX_SECURE_BODY_BYTES}
 * bytes (checked by the service, refused with `too_large`). `null` in an optional field
 * counts as absent (a Python agent's `None`).
 */
export const SaveResourceInput = z.strictObject({
  id: ResourceId,
  title: Title,
  body: nullAsDefault(z.string(), () => ''),
  secure_body: nullAsAbsent(z.string().min(1, 'secure_body cannot be empty (leave it out instead)')),
  content_type: nullAsDefault(ResourceContentType, () => 'text' as const),
  metadata: nullAsDefault(ResourceMetadataInput, () => ({})),
  scopes: nullAsAbsent(z.array(Scope).min(1).max(20)),
  owner: nullAsAbsent(Owner),
})
export type SaveResourceInput = z.input<typeof SaveResourceInput>

/**
 * The body of `PUT /api/resource/{id}`: the fields to change (owner or admin only).
 * `secure_body: null` removes the secret; `null` in any other field counts as absent
 * (keeps it). `metadata` replaces the whole object.
 */
export const UpdateResourceInput = z
  .strictObject({
    title: nullAsAbsent(Title),
    body: nullAsAbsent(z.string()),
    secure_body: z.string().min(1, 'secure_body cannot be empty (use null to remove it)').nullable().optional(),
    content_type: nullAsAbsent(ResourceContentType),
    metadata: nullAsAbsent(ResourceMetadataInput),
    scopes: nullAsAbsent(z.array(Scope).min(1).max(20)),
    owner: nullAsAbsent(Owner),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'nothing to change')
export type UpdateResourceInput = z.input<typeof UpdateResourceInput>

/** An array, or (from a query string) one comma-separated string. */
const commaList = <T extends z.ZodType<string, string>>(item: T) =>
  z.preprocess(
    (value) =>
      typeof value === 'string'
        ? value
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : value,
    z.array(item),
  )

/** Query of `GET /api/resource` (list). Every filter narrows within what the caller can see. */
export const ListResourcesInput = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  /** Only ids starting with this text, e.g. `code/selenium/`. */
  prefix: z.string().max(MAX_RESOURCE_ID_LENGTH).optional(),
  content_type: commaList(ResourceContentType).optional(),
  /** Only resources in any of these scopes (still within visibility). */
  scopes: commaList(Scope).optional(),
  owner: Owner.optional(),
  /** true: only expired ones; false: only those not expired (or without expires_at). */
  expired: z.union([z.boolean(), z.stringbool()]).optional(),
  cursor: z.string().max(1000).optional(),
})
export type ListResourcesInput = z.input<typeof ListResourcesInput>

/** What every view of a resource shows (no body, never the secret). */
export const ResourceSummary = z.object({
  id: ResourceId,
  title: z.string(),
  content_type: ResourceContentType,
  metadata: ResourceMetadata,
  scopes: z.array(Scope),
  owner: Owner,
  /** Whether a secure_body is stored (its value is shown only to callers allowed to read it). */
  has_secret: z.boolean(),
  /** True when `metadata.expires_at` is in the past. */
  expired: z.boolean(),
  version: z.number().int().min(1),
  created_at: z.string(),
  updated_at: z.string(),
})
export type ResourceSummary = z.output<typeof ResourceSummary>

/**
 * A resource as returned by get/save/update. `secure_body` is present only when the
 * caller asked for it and holds `secrets:read` in one of the resource's own scopes;
 * otherwise the key is absent (not empty, not null).
 */
export const Resource = ResourceSummary.extend({
  body: z.string(),
  secure_body: z.string().optional(),
})
export type Resource = z.output<typeof Resource>

/**
 * A referenced resource as `expand=resources` adds it to entries and search hits: what
 * the caller can see, never with its secret (the resource service builds this view).
 * @example
 * ExpandedResource.parse(entry.resources?.[0]) // id, title, body, … never secure_body
 */
export const ExpandedResource = Resource.omit({ secure_body: true })
export type ExpandedResource = z.output<typeof ExpandedResource>

/** A page of `GET /api/resource`: summaries (no body, never a secret). */
export const ResourceListPage = listPage(ResourceSummary)
export type ResourceListPage = z.output<typeof ResourceListPage>

/** The response of `DELETE /api/resource/{id}`: which owner's resource was deleted. */
export const ResourceDeleted = Deleted.extend({ owner: z.string() })
export type ResourceDeleted = z.output<typeof ResourceDeleted>

/** Query of `GET /api/secret-reads`: the audit of secret reads, newest first, within what the caller may see. */
export const SecretReadsQuery = z.strictObject({
  /** Only reads of this resource id. */
  resource: ResourceId.optional(),
  /** Only reads in this owner's namespace. */
  owner: Owner.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  /** The `next_before` of the previous page. */
  before: z.coerce.number().int().min(1).optional(),
})
export type SecretReadsQuery = z.input<typeof SecretReadsQuery>

/** One read of a secret: who (ids and permissions, the token id), which resource, through what, when. Never the secret. */
export const SecretReadEntry = z.object({
  seq: z.number().int(),
  resource_id: z.string(),
  owner: z.string(),
  /** `token:tok_…` or `local`. */
  caller: z.string(),
  principal: z.record(z.string(), z.unknown()),
  /** The surface: `api`, `mcp`, `tools`, `dashboard`, `backup`. */
  via: z.string(),
  /** The operation, e.g. `GET /api/resource/{id}`, `resource_get`, `POST /reveal`, `POST /api/admin/backup`. */
  route: z.string(),
  read_at: z.string(),
})
export type SecretReadEntry = z.output<typeof SecretReadEntry>

/** A page of the audit of secret reads. */
export const SecretReadPage = z.object({ items: z.array(SecretReadEntry), next_before: z.number().int().nullable() })
export type SecretReadPage = z.output<typeof SecretReadPage>
